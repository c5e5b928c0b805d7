// The shared moves of every Work operation (src/core/work/work-io.ts): keys, step ids, the revision check of a save and
// a restore, the retries of withWork, and over the simulator (every variant) a 404 confirmed before a task counts as
// deleted, completing the bundle's own tasks that may be gone, and the comments of a task that may be gone.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LockLostError } from '../../src/core/work/task-writer';
import {
  commentsIfAny,
  completeOwnTask,
  ConcurrentChangeError,
  keyOf,
  loadWork,
  lockKeyOf,
  readTask,
  restoreWork,
  saveWork,
  stepIdFactory,
  withWork,
  workIn,
} from '../../src/core/work/work-io';
import { emptyEngineState } from '../../src/core/work/work-state';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';
import { makeStep, makeWork } from '../helpers/work-fixtures';

describe('keys and step ids', () => {
  it('a Work key is its task id, plus #occurrence; its lock is work-<key>', () => {
    expect(keyOf({ taskId: 't9', occurrence: '' })).toBe('t9');
    expect(keyOf({ taskId: 't9', occurrence: '2026-12-01' })).toBe('t9#2026-12-01');
    expect(lockKeyOf('t9#2026-12-01')).toBe('work-t9#2026-12-01');
  });

  it('without a generator given, ids are s + 6 base-32 characters, distinct, never one the state already has', () => {
    const state = emptyEngineState();
    const taken = Array.from({ length: 50 }, (_, i) => makeStep({ id: `s${String(i).padStart(6, '0')}`, title: `t${i}` }));
    state.works.t1 = makeWork(taken);
    const next = stepIdFactory({} as never, state);
    const ids = Array.from({ length: 300 }, () => next());
    for (const id of ids) expect(id).toMatch(/^s[0-9a-v]{6}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.some((id) => taken.some((s) => s.id === id))).toBe(false);
    const counter = () => 'fixed';
    expect(stepIdFactory({ newStepId: counter } as never, state)).toBe(counter);
    expect(stepIdFactory({} as never)()).toMatch(/^s[0-9a-v]{6}$/);
  });
});

describe('loading and saving', () => {
  let h: EngineHarness;
  beforeEach(async () => {
    h = await startEngineHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  const seed = (fields: Parameters<typeof makeWork>[1] = {}) =>
    h.deps.state.update((s) => {
      s.works[fields.taskId ?? 't1'] = makeWork([], { rev: 4, ...fields });
    });

  it('a missing Work is work_not_found', async () => {
    await expect(loadWork(h.deps, 'nope')).rejects.toMatchObject({ code: 'work_not_found', message: 'No Work has id nope; call todo_work list to see the current Works.' });
    expect(() => workIn(emptyEngineState(), 'nope')).toThrow(/No Work has id nope/);
  });

  it('a save takes the next revision and the time, runs the extra change in the same write, and can be repeated', async () => {
    await seed();
    const work = await loadWork(h.deps, 't1');
    h.clock.now += 5000;
    work.title = '新';
    const state = await saveWork(h.deps, work, (s) => {
      s.owners.p1 = 'me';
    });
    expect(state.works.t1).toMatchObject({ title: '新', rev: 5, updatedAt: h.clock.now });
    expect(state.owners.p1).toBe('me');
    expect(work.rev).toBe(5);
    // The record saved is a copy: a later change of the object is not in the state until saved again.
    work.title = '再改';
    expect((await h.state()).works.t1?.title).toBe('新');
    await saveWork(h.deps, work);
    expect((await h.state()).works.t1).toMatchObject({ title: '再改', rev: 6 });
  });

  it('a record saved by someone else since it was loaded is not overwritten', async () => {
    await seed();
    const mine = await loadWork(h.deps, 't1');
    const theirs = await loadWork(h.deps, 't1');
    theirs.title = '他们的';
    await saveWork(h.deps, theirs);
    mine.title = '我的';
    const refused = saveWork(h.deps, mine);
    await expect(refused).rejects.toBeInstanceOf(ConcurrentChangeError);
    await expect(refused).rejects.toMatchObject({ name: 'ConcurrentChangeError', key: 't1', message: 'The Work t1 was changed by another process meanwhile; the operation is retried.' });
    expect((await h.state()).works.t1?.title).toBe('他们的');
  });

  it('a record never loaded is saved over whatever is there, above its revision', async () => {
    await seed({ rev: 9 });
    const fresh = makeWork([], { rev: 2, title: '新建' });
    await saveWork(h.deps, fresh);
    expect((await h.state()).works.t1).toMatchObject({ title: '新建', rev: 10 });
    const newer = makeWork([], { taskId: 't2', rev: 7 });
    await saveWork(h.deps, newer);
    expect((await h.state()).works.t2?.rev).toBe(8);
  });

  it('a restore puts the earlier record back with the revision check kept, and the object follows it', async () => {
    await seed({ title: '原来' });
    const work = await loadWork(h.deps, 't1');
    const previous = structuredClone(work);
    work.title = '改了';
    await saveWork(h.deps, work);
    await restoreWork(h.deps, work, previous, (s) => {
      s.owners.p1 = 'back';
    });
    expect((await h.state()).works.t1).toMatchObject({ title: '原来', rev: 6 });
    expect((await h.state()).owners.p1).toBe('back');
    expect(work).toMatchObject({ title: '原来', rev: 6 });
    // Another save of the object goes through (its revision is the stored one) …
    await saveWork(h.deps, work);
    // … and a stale copy does not.
    const stale = await loadWork(h.deps, 't1');
    await saveWork(h.deps, await loadWork(h.deps, 't1'));
    await expect(restoreWork(h.deps, stale, previous)).rejects.toBeInstanceOf(ConcurrentChangeError);
  });

  it('withWork retries a concurrent change or a lost lock up to three times in all, logging each; other errors at once', async () => {
    const logs: string[] = [];
    h.deps.log = (line) => logs.push(line);
    let calls = 0;
    const result = await withWork(h.deps, 't1', async (lock) => {
      expect(lock.compromised).toBeInstanceOf(AbortSignal);
      calls++;
      if (calls === 1) throw new ConcurrentChangeError('t1');
      if (calls === 2) throw new LockLostError('t1');
      return 'done';
    });
    expect([result, calls]).toEqual(['done', 3]);
    expect(logs).toEqual([new ConcurrentChangeError('t1').message, new LockLostError('t1').message]);

    calls = 0;
    await expect(
      withWork(h.deps, 't1', async () => {
        calls++;
        throw new ConcurrentChangeError('t1');
      }),
    ).rejects.toBeInstanceOf(ConcurrentChangeError);
    expect(calls).toBe(3);

    calls = 0;
    await expect(
      withWork(h.deps, 't1', async () => {
        calls++;
        throw new Error('plain');
      }),
    ).rejects.toThrow('plain');
    expect(calls).toBe(1);
    calls = 0;
    await expect(
      withWork(h.deps, 't1', async () => {
        calls++;
        throw 'not an error';
      }),
    ).rejects.toBe('not an error');
    expect(calls).toBe(1);
  });
});

describe('tasks that may be gone', () => {
  let h: EngineHarness;
  let projectId: string;
  beforeEach(async () => {
    h = await startEngineHarness();
    projectId = h.sim.seedProject({ name: 'io' }).id;
  });
  afterEach(async () => {
    await h.close();
  });

  async function adopted() {
    const task = h.sim.seedTask({ projectId, title: '读', priority: 3, items: [{ title: '一' }] });
    await h.engine.sync(projectId);
    return { task, work: await loadWork(h.deps, task.id) };
  }

  it('a task read fresh; a 404 for a task the list still shows is the fault it is, the Work stays open', async () => {
    const { task, work } = await adopted();
    expect((await readTask(h.deps, work)).id).toBe(task.id);
    h.sim.injectFault({ route: 'GET /project/{pid}/task/{tid}', kind: 'status', status: 404 });
    await expect(readTask(h.deps, work)).rejects.toMatchObject({ name: 'DidaError', code: 'not_found' });
    expect((await h.state()).works[task.id]?.phase).toBe('open');
    h.sim.injectFault({ route: 'GET /project/{pid}/task/{tid}', kind: 'status', status: 500 });
    await expect(readTask(h.deps, work)).rejects.toMatchObject({ name: 'DidaError' });
    expect((await h.state()).works[task.id]?.phase).toBe('open');
  });

  it('a transient failure never closes a Work, even for a task the list no longer shows', async () => {
    const { task, work } = await adopted();
    h.sim.removeTask(task.id);
    h.sim.injectFault({ route: 'GET /project/{pid}/task/{tid}', kind: 'status', status: 500 });
    await expect(readTask(h.deps, work)).rejects.toMatchObject({ name: 'DidaError' });
    expect((await h.state()).works[task.id]?.phase).toBe('open');
  });

  it('a task deleted in Dida closes its Work as deleted', async () => {
    const { task, work } = await adopted();
    // Another task stays in the list: the look-up is for this task, not for any.
    h.sim.seedTask({ projectId, title: '别的' });
    h.sim.removeTask(task.id);
    await expect(readTask(h.deps, work)).rejects.toMatchObject({ code: 'work_deleted_remotely', message: `The Dida task of Work ${task.id} was deleted in Dida; call todo_work list to pick other work.` });
    expect((await h.state()).works[task.id]).toMatchObject({ phase: 'closed', outcome: 'deleted' });
  });

  it('completing an own task: done; already gone; already completed; a 404 while it is still open is thrown', async () => {
    const a = h.sim.seedTask({ projectId, title: '🙋 a' });
    await completeOwnTask(h.deps, projectId, a.id);
    expect(h.sim.getTask(a.id)?.status).toBe(2);

    const gone = h.sim.seedTask({ projectId, title: '🙋 gone' });
    h.sim.removeTask(gone.id);
    await expect(completeOwnTask(h.deps, projectId, gone.id)).resolves.toBeUndefined();

    const done = h.sim.seedTask({ projectId, title: '🙋 done', status: 2 });
    h.sim.injectFault({ route: 'POST /project/{pid}/task/{tid}/complete', kind: 'status', status: 404 });
    await expect(completeOwnTask(h.deps, projectId, done.id)).resolves.toBeUndefined();

    const open = h.sim.seedTask({ projectId, title: '🙋 open' });
    h.sim.injectFault({ route: 'POST /project/{pid}/task/{tid}/complete', kind: 'status', status: 404 });
    await expect(completeOwnTask(h.deps, projectId, open.id)).rejects.toMatchObject({ code: 'not_found', route: 'POST /project/{pid}/task/{tid}/complete' });
    expect(h.sim.getTask(open.id)?.status).toBe(0);

    h.sim.injectFault({ route: 'POST /project/{pid}/task/{tid}/complete', kind: 'status', status: 500 });
    await expect(completeOwnTask(h.deps, projectId, open.id)).rejects.toMatchObject({ name: 'DidaError' });
    // A failure other than a 404 is thrown, also for a task already completed (only a 404 is looked into).
    const doneAlready = h.sim.seedTask({ projectId, title: '🙋 done 2', status: 2 });
    h.sim.injectFault({ route: 'POST /project/{pid}/task/{tid}/complete', kind: 'status', status: 500 });
    await expect(completeOwnTask(h.deps, projectId, doneAlready.id)).rejects.toMatchObject({ name: 'DidaError' });
    h.sim.injectFault({ route: 'POST /project/{pid}/task/{tid}/complete', kind: 'status', status: 404 });
    h.sim.injectFault({ route: 'GET /project/{pid}/task/{tid}', kind: 'status', status: 500 });
    await expect(completeOwnTask(h.deps, projectId, open.id)).rejects.toMatchObject({ name: 'DidaError', route: 'GET /project/{pid}/task/{tid}' });
  });

  it('the comments of a task, none once it is gone; other faults are thrown', async () => {
    const t = h.sim.seedTask({ projectId, title: 'c' });
    h.sim.addComment(projectId, t.id, '你好');
    expect((await commentsIfAny(h.deps, projectId, t.id)).map((c) => c.title)).toEqual(['你好']);
    h.sim.injectFault({ route: 'GET /project/{pid}/task/{tid}/comments', kind: 'status', status: 500 });
    await expect(commentsIfAny(h.deps, projectId, t.id)).rejects.toMatchObject({ name: 'DidaError' });
    // A task gone answers its comments with 404 (some variants still list them for a while).
    h.sim.injectFault({ route: 'GET /project/{pid}/task/{tid}/comments', kind: 'status', status: 404 });
    expect(await commentsIfAny(h.deps, projectId, t.id)).toEqual([]);
  });
});

describe('two bundle versions sharing one state folder', () => {
  let h: EngineHarness;
  beforeEach(async () => {
    h = await startEngineHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  it('what a later version recorded on a Work survives this version working on it (a step changed, a wait, the claim)', async () => {
    const list = h.sim.seedProject({ name: 'l' });
    const task = h.sim.seedTask({ projectId: list.id, title: '两个版本', priority: 3, items: [{ title: '一' }, { title: '二' }] });
    await h.engine.sync(list.id);
    // A later dida-todo (another dsh process on this machine) wrote fields this version does not know.
    await h.deps.state.update((state) => {
      const work = state.works[task.id] as Record<string, unknown> & (typeof state.works)[string];
      work.laterField = { asked: 'which account?' };
      (work.steps[0] as Record<string, unknown>).laterStep = 7;
    });
    await h.engine.switchTo('session-1', list.id, task.id);
    await h.engine.changeSteps('session-1', [{ op: 'update', step: '一', status: 'completed', resolution: '好了' }]);
    await h.engine.waitForHuman('session-1', '要哪个账号？');
    const work = (await h.state()).works[task.id] as Record<string, unknown> & (Awaited<ReturnType<EngineHarness['state']>>['works'])[string];
    expect(work.laterField).toEqual({ asked: 'which account?' });
    expect((work.steps[0] as Record<string, unknown>).laterStep).toBe(7);
    // Control: this version's own changes were made and written.
    expect(work.steps[0]!.status).toBe('completed');
    expect(work.waiting?.applied).toBe(true);
    expect(h.sim.getTask(task.id)?.priority).toBe(0);
  });
});
