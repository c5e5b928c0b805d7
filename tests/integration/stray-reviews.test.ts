// Review todos that stopped applying and could not be removed then (src/core/review/stray-reviews.ts), over the real
// HTTP gateway and the simulator: remembered once, removed by their own list's sync only, a 404 counting as removed,
// a failure kept for the next time without taking the others with it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rememberStrayReview, removeStrayReviews } from '../../src/core/review/stray-reviews';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';

describe('stray review todos', () => {
  let h: EngineHarness;
  beforeEach(async () => {
    h = await startEngineHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  /** A todo of the bundle in `projectId`, known as its own and remembered as stray. */
  async function stray(projectId: string, title = '🧑‍🔬 待验收：部署') {
    const task = h.sim.seedTask({ projectId, title });
    await h.deps.state.update((state) => {
      state.ownTasks[task.id] = 'acceptance';
    });
    await rememberStrayReview(h.deps, projectId, task.id);
    return task;
  }
  const openIds = (projectId: string) => new Set(h.sim.listTasks(projectId).map((t) => t.id));
  const deletes = () => h.sim.counters()['DELETE /project/{pid}/task/{tid}'] ?? 0;

  it('is remembered once, however often it is remembered', async () => {
    const list = h.sim.seedProject({ name: '清单' }).id;
    const task = await stray(list);
    await rememberStrayReview(h.deps, list, task.id);
    expect((await h.state()).strayTasks).toEqual([{ projectId: list, taskId: task.id, since: h.clock.now }]);
  });

  it('only its own list’s sync removes it; a 404 counts as removed', async () => {
    const list = h.sim.seedProject({ name: '清单' }).id;
    const elsewhere = h.sim.seedProject({ name: '别的清单' }).id;
    const mine = await stray(list);
    const theirs = await stray(elsewhere);
    h.sim.injectFault({ route: 'DELETE /project/{pid}/task/{tid}', kind: 'status', status: 404, times: 1 });
    h.sim.resetCounters();
    expect(await removeStrayReviews(h.deps, await h.state(), list, openIds(list))).toEqual([]);
    expect(deletes()).toBe(1);
    const state = await h.state();
    expect(state.strayTasks.map((s) => s.taskId)).toEqual([theirs.id]);
    expect(state.ownTasks[mine.id]).toBeUndefined();
    expect(state.ownTasks[theirs.id]).toBe('acceptance');
    expect(h.sim.getTask(theirs.id)?.status).toBe(0);
  });

  it('one that fails again stays for the next time, and the others are still removed', async () => {
    const list = h.sim.seedProject({ name: '清单' }).id;
    const first = await stray(list, '🧑‍🔬 待验收：一');
    const second = await stray(list, '🧑‍🔬 待验收：二');
    h.sim.injectFault({ route: 'DELETE /project/{pid}/task/{tid}', kind: 'status', status: 500, times: 1 });
    const errors = await removeStrayReviews(h.deps, await h.state(), list, openIds(list));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^a review todo that no longer applies could not be removed \(will retry\): /);
    const state = await h.state();
    expect(state.strayTasks.map((s) => s.taskId)).toEqual([first.id]);
    expect(h.sim.getTask(first.id)?.status).toBe(0);
    expect(h.sim.getTask(second.id)).toBeUndefined();
    expect(state.ownTasks[first.id]).toBe('acceptance');
    expect(state.ownTasks[second.id]).toBeUndefined();
    expect(await removeStrayReviews(h.deps, await h.state(), list, openIds(list))).toEqual([]);
    expect((await h.state()).strayTasks).toEqual([]);
  });

  it('the owner’s words on one that names no Work (an older record): completed, not removed, and still the bundle’s own', async () => {
    const list = h.sim.seedProject({ name: '清单' }).id;
    const task = await stray(list);
    await h.deps.state.update((state) => {
      state.owners[list] = String(h.sim.userId);
    });
    h.sim.addComment(list, task.id, '这个我看过了');
    h.sim.resetCounters();
    expect(await removeStrayReviews(h.deps, await h.state(), list, openIds(list))).toEqual([]);
    expect(deletes()).toBe(0);
    expect(h.sim.getTask(task.id)?.status).toBe(2);
    expect(h.sim.listComments(task.id).map((c) => c.title)).toEqual(['这个我看过了']);
    const state = await h.state();
    expect(state.strayTasks).toEqual([]);
    expect(state.ownTasks[task.id]).toBe('acceptance');
  });

  it('nothing remembered: no request and no state write', async () => {
    const list = h.sim.seedProject({ name: '清单' }).id;
    const before = await h.state();
    h.sim.resetCounters();
    expect(await removeStrayReviews(h.deps, before, list, new Set(['x']))).toEqual([]);
    expect(h.sim.totalRequests()).toBe(0);
    expect(await h.state()).toEqual(before);
  });
});
