// Finalization on its own, over the real HTTP gateway and the simulator: why a Work may not be sent for review, the
// review todo as filed, each stage done once across failures and retries, and the person's edit that stops it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acceptanceTitle } from '../../src/core/review/acceptance-report';
import { ACCEPTANCE_REMINDERS, finalizeBlocker, finalizeWork } from '../../src/core/review/finalize';
import { STRAY_KEEP_MS } from '../../src/core/review/stray-reviews';
import { getLocale } from '../../src/core/text/locale';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';
import { makeStep, makeWork } from '../helpers/work-fixtures';

describe('why a Work is not sent for review', () => {
  const done = [makeStep({ id: 'a', title: '一', status: 'completed' }), makeStep({ id: 'b', title: '二', status: 'skipped' })];

  it('closed, waiting, a draft, kept open, re-opened, not settled — in that order; a settled Work has no blocker', () => {
    const code = (fields: Parameters<typeof makeWork>[1], steps = done) => finalizeBlocker(makeWork(steps, fields))?.code;
    expect(code({ phase: 'closed', priority: 0 })).toBe('work_closed');
    expect(code({ waiting: { reason: 'r', previousPriority: 3, applied: true, since: 0 }, priority: 0 })).toBe('waiting_for_human');
    expect(code({ priority: 0, keepOpen: true })).toBe('draft');
    expect(code({ priority: -1 })).toBe('draft');
    expect(code({ keepOpen: true, reopened: true })).toBe('keep_open');
    expect(finalizeBlocker(makeWork(done, { reopened: true }))?.message).toContain('re-opened');
    expect(code({}, [...done, makeStep({ id: 'c', title: '三', status: 'in_progress' }), makeStep({ id: 'd', title: '四' })])).toBe('not_settled');
    expect(finalizeBlocker(makeWork([...done, makeStep({ id: 'c', title: '三' })]))?.message).toBe('Work t1 still has 1 unsettled step(s).');
    expect(code({ priority: 1 })).toBeUndefined();
  });
});

describe('finalizing', () => {
  let h: EngineHarness;
  let projectId: string;
  let logs: string[];
  const S = 'session-1';
  const zh = getLocale('zh');

  beforeEach(async () => {
    h = await startEngineHarness();
    projectId = h.sim.seedProject({ name: '智能体工作' }).id;
    logs = [];
    h.deps.log = (line) => logs.push(line);
  });
  afterEach(async () => {
    await h.close();
  });

  /** A person's task with two items the session completed and skipped. */
  async function settledWork(title = '部署', last: 'completed' | 'skipped' = 'skipped') {
    const task = h.sim.seedTask({ projectId, title, priority: 3, items: [{ title: '申请权限' }, { title: '上线' }] });
    await h.engine.sync(projectId);
    await h.engine.switchTo(S, projectId, task.id);
    await h.engine.changeSteps(S, [
      { op: 'update', step: '申请权限', status: 'completed', resolution: '已申请' },
      { op: 'update', step: '上线', status: last, resolution: '不需要' },
    ]);
    return task;
  }
  const reviews = () => h.sim.listTasks(projectId, { includeCompleted: true }).filter((t) => t.title.startsWith('🧑‍🔬'));

  it('files one review todo due in three minutes with its reminders, completes the Work and says so on it; the owner known, no anchor', async () => {
    const task = await settledWork();
    const outcome = await finalizeWork(h.deps, task.id);
    expect(outcome.status).toBe('finalized');
    const [review] = reviews();
    expect(outcome).toEqual({ status: 'finalized', acceptanceTaskId: review!.id });
    expect(review!.title).toBe(acceptanceTitle(zh, { title: '部署' }));
    expect(review!.priority).toBe(3);
    expect(review!.reminders).toEqual(ACCEPTANCE_REMINDERS);
    expect(review!.isAllDay).toBe(false);
    expect(review!.timeZone).toBe('Asia/Shanghai');
    expect(Date.parse(review!.dueDate!.replace(/\+0000$/, 'Z'))).toBe(h.clock.now + 3 * 60_000);
    expect(review!.startDate).toBe(review!.dueDate);
    // The claim's answer named the owner: the todo's report tells the person how to ask for rework.
    expect(h.sim.listComments(review!.id)).toEqual([]);
    expect(h.sim.getTask(task.id)?.status).toBe(2);
    expect(h.sim.listComments(task.id).at(-1)?.title).toContain(zh.t('dida.comment.summary', { acceptanceTitle: review!.title }));
    const work = (await h.state()).works[task.id]!;
    expect(work.phase).toBe('accepting');
    const owner = (await h.state()).owners[projectId];
    expect(owner).toBeDefined();
    expect(work.acceptance).toEqual({ taskId: review!.id, ownerUserId: owner, handledCommentIds: [], closed: false });
    // Its comments are first read after the usual gap, as if a look had been made at filing.
    expect(work.commentLook).toEqual({ first: h.clock.now, at: h.clock.now, version: expect.any(String), scope: `review ${review!.id}` });
    expect((await h.state()).ownTasks[review!.id]).toBe('acceptance');
    expect(await finalizeWork(h.deps, task.id)).toEqual({ status: 'already', acceptanceTaskId: review!.id });
  });

  it('with the owner not known yet, the review todo gets an anchor whose author is the owner; its first look is not skipped', async () => {
    const task = await settledWork();
    await h.deps.state.update((state) => {
      delete state.owners[projectId];
    });
    expect((await finalizeWork(h.deps, task.id)).status).toBe('finalized');
    const [review] = reviews();
    const [anchor] = h.sim.listComments(review!.id);
    expect(anchor?.title).toBe(zh.t('dida.acceptance.anchor'));
    const work = (await h.state()).works[task.id]!;
    expect(work.acceptance).toMatchObject({ taskId: review!.id, anchorCommentId: anchor!.id, ownerUserId: String(anchor!.userId), closed: false });
    expect((await h.state()).owners[projectId]).toBe(String(anchor!.userId));
    expect(work.commentLook).toBeUndefined();
  });

  it('a Work that is not ready is left as it is', async () => {
    const task = h.sim.seedTask({ projectId, title: '没做完', priority: 3, items: [{ title: '一' }] });
    await h.engine.sync(projectId);
    h.sim.resetCounters();
    expect(await finalizeWork(h.deps, task.id)).toMatchObject({ status: 'not_ready', code: 'not_settled' });
    expect(h.sim.totalRequests()).toBe(0);
  });

  it('a failure keeps what was done; the retry files nothing twice and finds its anchor instead of posting another', async () => {
    const task = await settledWork();
    // The owner not known: the review todo gets its anchor.
    await h.deps.state.update((state) => {
      delete state.owners[projectId];
    });
    h.sim.injectFault({ route: 'POST /project/{pid}/task/{tid}/complete', kind: 'status', status: 503, times: 2 });
    expect((await finalizeWork(h.deps, task.id)).status).toBe('failed');
    const failed = await finalizeWork(h.deps, task.id);
    expect(failed.status).toBe('failed');
    let work = (await h.state()).works[task.id]!;
    expect(work.phase).toBe('finalizing');
    expect(work.finalize).toMatchObject({ attempts: 2, lastError: expect.any(String), acceptanceTaskId: expect.any(String), anchorCommentId: expect.any(String) });
    expect(logs.some((l) => l.startsWith(`finalizing Work ${task.id} failed`))).toBe(true);
    // The anchor's record is lost as if the process had died right after posting it: the retry finds it by its text.
    await h.deps.state.update((state) => {
      delete state.works[task.id]!.finalize!.anchorCommentId;
      delete state.owners[projectId];
    });
    expect((await finalizeWork(h.deps, task.id)).status).toBe('finalized');
    const [review] = reviews();
    expect(reviews()).toHaveLength(1);
    expect(h.sim.listComments(review!.id)).toHaveLength(1);
    work = (await h.state()).works[task.id]!;
    expect(work.finalize?.lastError).toBeUndefined();
    expect(h.sim.getTask(task.id)?.status).toBe(2);
  });

  it('an item the person adds while the review todo is being filed stops it: the todo is removed and the Work is open again', async () => {
    const task = await settledWork();
    const off = h.sim.onRequest((req) => {
      if (req.route === 'POST /task') {
        off();
        const items = h.sim.getTask(task.id)!.items ?? [];
        h.sim.editTask(task.id, { items: [...items, { id: 'person-1', title: '再检查一遍', status: 0 }] });
      }
    }, 'after');
    expect(await finalizeWork(h.deps, task.id)).toMatchObject({ status: 'not_ready', code: 'not_settled' });
    expect(reviews().filter((t) => !h.sim.getDeletedTask(t.id))).toHaveLength(0);
    const state = await h.state();
    expect(state.works[task.id]!.phase).toBe('open');
    expect(state.works[task.id]!.finalize).toBeUndefined();
    expect(Object.values(state.ownTasks)).not.toContain('acceptance');
    expect(state.strayTasks).toEqual([]);
    expect(h.sim.getTask(task.id)?.status).toBe(0);
  });

  it('a review todo already gone when it is taken back is simply forgotten', async () => {
    const task = await settledWork();
    h.sim.injectFault({ route: 'DELETE /project/{pid}/task/{tid}', kind: 'status', status: 404 });
    const off = h.sim.onRequest((req) => {
      if (req.route === 'POST /task') {
        off();
        h.sim.editTask(task.id, { items: [...(h.sim.getTask(task.id)!.items ?? []), { id: 'person-1', title: '补一项', status: 0 }] });
      }
    }, 'after');
    expect(await finalizeWork(h.deps, task.id)).toMatchObject({ status: 'not_ready' });
    expect(logs.filter((l) => l.startsWith('a review todo filed too early'))).toEqual([]);
    expect(Object.values((await h.state()).ownTasks)).not.toContain('acceptance');
    expect((await h.state()).strayTasks).toEqual([]);
  });

  it('a lock lost on the way is not a failure to count: it is given up and redone, and nothing is filed twice', async () => {
    const task = await settledWork();
    const lost = {
      ...h.deps,
      locks: { withLock: <T>(key: string, fn: (lock: { compromised: AbortSignal; stillHeld(): boolean }) => Promise<T>) => h.deps.locks.withLock(key, (lock) => fn({ compromised: lock.compromised, stillHeld: () => false })) },
    };
    await expect(finalizeWork(lost, task.id)).rejects.toMatchObject({ name: 'LockLostError' });
    expect(reviews()).toHaveLength(1);
    expect(h.sim.getTask(task.id)?.status).toBe(0);
    expect((await h.state()).works[task.id]!.finalize?.attempts ?? 0).toBe(0);
    expect((await finalizeWork(h.deps, task.id)).status).toBe('finalized');
    expect(reviews()).toHaveLength(1);
  });

  it('a closed Work whose completion was written is already finalized', async () => {
    const task = await settledWork();
    await finalizeWork(h.deps, task.id);
    await h.deps.state.update((state) => {
      state.works[task.id]!.phase = 'closed';
    });
    h.sim.resetCounters();
    expect((await finalizeWork(h.deps, task.id)).status).toBe('already');
    expect(h.sim.totalRequests()).toBe(0);
  });

  /**
   * A settled Work whose review is stopped by the person's item added right after the review todo is filed, while
   * Dida refuses the delete of that todo `times` times (500).
   */
  async function reviewStoppedWhileDeletesFail(times: number) {
    const task = await settledWork();
    h.sim.injectFault({ route: 'DELETE /project/{pid}/task/{tid}', kind: 'status', status: 500, times });
    const off = h.sim.onRequest((req) => {
      if (req.route === 'POST /task') {
        off();
        h.sim.editTask(task.id, { items: [...(h.sim.getTask(task.id)!.items ?? []), { id: 'person-1', title: '补一项', status: 0 }] });
      }
    }, 'after');
    expect(await finalizeWork(h.deps, task.id)).toMatchObject({ status: 'not_ready' });
    return task;
  }
  const deletes = () => h.sim.counters()['DELETE /project/{pid}/task/{tid}'] ?? 0;

  it('a review todo that cannot be removed is logged and stays known as the bundle’s own', async () => {
    await reviewStoppedWhileDeletesFail(Infinity);
    expect(logs.some((l) => l.startsWith('a review todo filed too early could not be removed'))).toBe(true);
    expect(Object.values((await h.state()).ownTasks)).toContain('acceptance');
  });

  it('a review todo that could not be removed is removed by a later sync, so it stops reminding the person', async () => {
    const task = await reviewStoppedWhileDeletesFail(Infinity);
    const [stray] = reviews();
    expect(stray?.status).toBe(0);
    // While Dida still refuses, each sync tries again, says so, and neither adopts the todo nor rebuilds a review from it.
    h.sim.resetCounters();
    const refused = await h.engine.sync(projectId);
    expect(deletes()).toBe(1);
    expect(refused.errors.some((e) => e.startsWith('a review todo that no longer applies could not be removed'))).toBe(true);
    expect(refused).toMatchObject({ adopted: [], rebuilt: [] });
    expect(h.sim.getTask(stray!.id)?.status).toBe(0);
    h.sim.clearFaults();
    const cleaned = await h.engine.sync(projectId);
    expect(cleaned.errors).toEqual([]);
    expect(h.sim.getTask(stray!.id)).toBeUndefined();
    const state = await h.state();
    expect(state.strayTasks).toEqual([]);
    expect(state.ownTasks[stray!.id]).toBeUndefined();
    expect(state.works[task.id]).toMatchObject({ phase: 'open' });
    // Once removed, it is not tried again.
    h.sim.resetCounters();
    await h.engine.sync(projectId);
    expect(deletes()).toBe(0);
  });

  it('a stray review todo the person completed meanwhile costs no request; re-opened, it is removed at the next sync', async () => {
    await reviewStoppedWhileDeletesFail(1);
    const [stray] = reviews();
    expect((await h.state()).strayTasks.map((s) => s.taskId)).toEqual([stray!.id]);
    h.sim.editTask(stray!.id, { status: 2 });
    h.sim.resetCounters();
    await h.engine.sync(projectId);
    expect(deletes()).toBe(0);
    expect(h.sim.counters()['GET /project/{pid}/task/{tid}/comments'] ?? 0).toBe(0);
    let state = await h.state();
    expect(state.strayTasks.map((s) => s.taskId)).toEqual([stray!.id]);
    expect(state.ownTasks[stray!.id]).toBe('acceptance');
    // Re-opened by the person: never taken for their task or for a lost review, and removed (it would remind for ever).
    h.sim.editTask(stray!.id, { status: 0 });
    expect(await h.engine.sync(projectId)).toMatchObject({ adopted: [], rebuilt: [] });
    expect(h.sim.getTask(stray!.id)).toBeUndefined();
    state = await h.state();
    expect(state.strayTasks).toEqual([]);
    // Forgotten once the list has not shown it for a month (completed or deleted for good).
    await reviewStoppedWhileDeletesFail(1);
    const [later] = reviews();
    h.sim.editTask(later!.id, { status: 2 });
    h.clock.now += STRAY_KEEP_MS + 1;
    await h.engine.sync(projectId);
    expect((await h.state()).strayTasks).toEqual([]);
    expect((await h.state()).ownTasks[later!.id]).toBe('acceptance');
  });

  it('what the person wrote on a stray review todo (they took it for the review) goes to the Work as steps, not away with the todo', async () => {
    const task = await reviewStoppedWhileDeletesFail(1);
    const [stray] = reviews();
    const owner = Number((await h.state()).owners[projectId]);
    h.sim.addComment(projectId, stray!.id, '标题再短一点\n最好十个字以内', { userId: owner });
    h.sim.addComment(projectId, stray!.id, '路过', { userId: 990011 });
    await h.engine.sync(projectId);
    expect(h.sim.getTask(stray!.id)).toBeUndefined();
    const work = (await h.state()).works[task.id]!;
    expect(work.steps.filter((s) => s.origin === 'human' && s.status === 'pending').map((s) => s.title)).toContain('标题再短一点');
    expect(h.sim.getTask(task.id)?.items?.map((i) => i.title)).toContain('标题再短一点');
    expect(h.sim.getTask(task.id)?.content ?? h.sim.getTask(task.id)?.desc ?? '').toContain('最好十个字以内');
    // Nobody else's comment is taken, and nothing twice.
    expect(work.steps.map((s) => s.title)).not.toContain('路过');
    await h.engine.sync(projectId);
    expect((await h.state()).works[task.id]!.steps.filter((s) => s.title === '标题再短一点')).toHaveLength(1);
  });

  it('words on a stray review todo whose Work is no longer open: the todo is completed, not removed, so they stay in Dida', async () => {
    const task = await reviewStoppedWhileDeletesFail(1);
    const [stray] = reviews();
    const owner = Number((await h.state()).owners[projectId]);
    h.sim.addComment(projectId, stray!.id, '我觉得可以了', { userId: owner });
    // The person completed the Work itself in Dida.
    h.sim.editTask(task.id, { status: 2 });
    await h.engine.sync(projectId);
    expect((await h.state()).works[task.id]).toMatchObject({ phase: 'closed', outcome: 'completed_by_human' });
    expect(h.sim.getTask(stray!.id)?.status).toBe(2);
    expect(h.sim.listComments(stray!.id).map((c) => c.title)).toContain('我觉得可以了');
    expect((await h.state()).strayTasks).toEqual([]);
    expect((await h.state()).ownTasks[stray!.id]).toBe('acceptance');
  });

  it('a Work the person renames while it is being sent for review gets a review todo with the new title', async () => {
    // (Every step completed: a rename is the person's edit, and it would reopen a skipped step.)
    const task = await settledWork('旧名字', 'completed');
    const off = h.sim.onRequest((req) => {
      if (req.route === 'POST /task') {
        off();
        h.sim.editTask(task.id, { title: '新名字' });
      }
    }, 'after');
    expect((await finalizeWork(h.deps, task.id)).status).toBe('finalized');
    expect(reviews().map((t) => t.title)).toEqual([acceptanceTitle(zh, { title: '新名字' })]);
  });

  it('a review todo that cannot be renamed keeps its old title, and the Work is still sent for review', async () => {
    const task = await settledWork('旧名字', 'completed');
    const off = h.sim.onRequest((req) => {
      if (req.route === 'POST /task') {
        off();
        h.sim.editTask(task.id, { title: '新名字' });
        // The Work's items are already ticked (nothing to write), so the next update is the review todo's rename.
        h.sim.injectFault({ route: 'POST /task/{tid}', kind: 'status', status: 500 });
      }
    }, 'after');
    expect((await finalizeWork(h.deps, task.id)).status).toBe('finalized');
    expect(reviews().map((t) => t.title)).toEqual([acceptanceTitle(zh, { title: '旧名字' })]);
    expect(logs.some((l) => l.startsWith('the review todo keeps its old title'))).toBe(true);
    expect(h.sim.getTask(task.id)?.status).toBe(2);
  });
});
