// changeSteps (src/core/steps/step-ops.ts) over the simulator: Works sent for review refuse changes, an interrupted
// finalization goes back to open, the re-opened mark and the directory, a refused write put back with its notes, an
// unknown outcome kept, and a change Dida does not show written not at all.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { changeSteps } from '../../src/core/steps/step-ops';
import { WorkError } from '../../src/core/work/engine-context';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';

let h: EngineHarness;
const S = 'session-1';

beforeEach(async () => {
  h = await startEngineHarness();
});
afterEach(async () => {
  await h.close();
});

async function openWork() {
  const list = h.sim.seedProject({ name: 'l' });
  const task = h.sim.seedTask({ projectId: list.id, title: '写周报', priority: 3, items: [{ title: '汇总' }] });
  await h.engine.sync(list.id);
  await h.engine.switchTo(S, list.id, task.id);
  return { list, task };
}

async function refusal(promise: Promise<unknown>): Promise<WorkError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof WorkError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

function writes(): number {
  return Object.entries(h.sim.counters())
    .filter(([route]) => !route.startsWith('GET'))
    .reduce((sum, [, n]) => sum + n, 0);
}

describe('changeSteps', () => {
  it('refuses a Work sent for review or closed, and one whose review todo is filed', async () => {
    const { task } = await openWork();
    for (const patch of [{ phase: 'accepting' as const }, { phase: 'closed' as const }, { phase: 'finalizing' as const, finalize: { attempts: 1, acceptanceTaskId: 'r1' } }]) {
      await h.deps.state.update((s) => {
        Object.assign(s.works[task.id]!, patch);
      });
      const error = await refusal(changeSteps(h.deps, task.id, [{ op: 'add', title: '再一步' }]));
      expect(error.code).toBe('work_closed');
      expect(error.message).toBe(`The Work ${task.id} is already sent for review; create a new Work for further changes.`);
    }
  });

  it('a Work whose finalization had not filed its review yet goes back to open with the change', async () => {
    const { task } = await openWork();
    await h.deps.state.update((s) => {
      Object.assign(s.works[task.id]!, { phase: 'finalizing', finalize: { attempts: 1 }, reopened: true });
    });
    const result = await changeSteps(h.deps, task.id, [{ op: 'add', title: '再一步' }], { cwd: '/work/repo' });
    expect(result.work.phase).toBe('open');
    const work = (await h.state()).works[task.id]!;
    expect(work).toMatchObject({ phase: 'open', dir: '/work/repo' });
    expect(work.reopened).toBeUndefined();
    expect(h.sim.getTask(task.id)?.items?.map((i) => i.title)).toEqual(['汇总', '再一步']);
    expect(result).toMatchObject({ wrote: true });
  });

  it('an empty call keeps the re-opened mark and the directory', async () => {
    const { task } = await openWork();
    await h.deps.state.update((s) => {
      Object.assign(s.works[task.id]!, { reopened: true, dir: '/a' });
    });
    const result = await changeSteps(h.deps, task.id, []);
    expect(result).toMatchObject({ transitions: [], wrote: false });
    expect((await h.state()).works[task.id]).toMatchObject({ reopened: true, dir: '/a' });
  });

  it('a step started only (not shown in Dida) writes nothing, but its note waits in the outbox', async () => {
    const { task } = await openWork();
    h.sim.resetCounters();
    const result = await changeSteps(h.deps, task.id, [{ op: 'update', step: '汇总', status: 'in_progress' }]);
    expect(result.wrote).toBe(false);
    expect(result.transitions.map((t) => [t.from, t.to])).toEqual([['pending', 'in_progress']]);
    expect(writes()).toBe(0);
    const state = await h.state();
    expect(state.works[task.id]?.steps[0]).toMatchObject({ status: 'in_progress', startedNoted: true });
    expect(state.outbox.map((e) => [e.workKey, e.kind, e.text])).toEqual([[task.id, 'started', '开始处理：汇总']]);
  });

  it('a write Dida refuses puts the record and its notes back', async () => {
    const { task } = await openWork();
    const before = (await h.state()).works[task.id]!;
    h.sim.injectFault({ route: 'POST /task/{tid}', kind: 'status', status: 400 });
    await expect(changeSteps(h.deps, task.id, [{ op: 'update', step: '汇总', status: 'completed', resolution: '汇总好了' }])).rejects.toThrow();
    const state = await h.state();
    expect(state.works[task.id]?.steps).toEqual(before.steps);
    expect(state.outbox).toEqual([]);
    expect(h.sim.getTask(task.id)?.items?.[0]?.status).toBe(0);
  });

  it('a write whose outcome is unknown keeps the change and its note for the next write', async () => {
    const { task } = await openWork();
    h.sim.injectFault({ route: 'POST /task/{tid}', kind: 'status', status: 500 });
    await expect(changeSteps(h.deps, task.id, [{ op: 'update', step: '汇总', status: 'completed', resolution: '汇总好了' }])).rejects.toThrow();
    const state = await h.state();
    expect(state.works[task.id]?.steps[0]).toMatchObject({ status: 'completed', resolution: '汇总好了' });
    expect(state.outbox.map((e) => e.kind)).toEqual(['completed']);
  });

  it('a lock lost before the write (another process took the Work over): Dida is not written, the change waits as intent', async () => {
    const { task } = await openWork();
    const lost = {
      ...h.deps,
      locks: { withLock: <T>(key: string, fn: (lock: { compromised: AbortSignal; stillHeld(): boolean }) => Promise<T>) => h.deps.locks.withLock(key, (lock) => fn({ compromised: lock.compromised, stillHeld: () => false })) },
    };
    h.sim.resetCounters();
    await expect(changeSteps(lost, task.id, [{ op: 'update', step: '汇总', status: 'completed', resolution: '汇总好了' }])).rejects.toMatchObject({ name: 'LockLostError' });
    expect(writes()).toBe(0);
    expect(h.sim.getTask(task.id)?.items?.[0]?.status).toBe(0);
    expect((await h.state()).works[task.id]?.steps[0]).toMatchObject({ status: 'completed' });
    // The next write, with the lock held, carries it.
    await changeSteps(h.deps, task.id, []);
    expect(h.sim.getTask(task.id)?.items?.[0]?.status).toBe(1);
  });
});

