// src/core/engine/sync.ts over the simulator: an unchanged list is not rewritten (and what counts as a change), a read
// naming neither the list nor a task, Works gone from the list (completed, deleted, a failed look), an orphaned settled
// Work finalized after its time, reviews and reminders nobody knows, a re-opened Work, problems left for the next sync.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DidaError } from '../../src/dida/dida-error';
import { ORPHANED_SETTLE_MS, syncList } from '../../src/core/engine/sync';
import type { EngineDeps } from '../../src/core/work/engine-context';
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

/** The harness's deps with a state port that counts its writes. */
function counted(): { deps: EngineDeps; writes: () => number } {
  let writes = 0;
  const state = h.deps.state;
  const deps: EngineDeps = {
    ...h.deps,
    state: {
      read: () => state.read(),
      update: (fn) => {
        writes += 1;
        return state.update(fn);
      },
    },
  };
  return { deps, writes: () => writes };
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

describe('an unchanged list', () => {
  it('is not rewritten; a changed task, a new task or a waiting comment rewrites it', async () => {
    const list = h.sim.seedProject({ name: 'l' });
    const task = h.sim.seedTask({ projectId: list.id, title: '修复登录', priority: 3 });
    const { deps, writes } = counted();
    const first = await syncList(deps, list.id);
    expect(first.adopted).toEqual([task.id]);
    expect(writes()).toBe(1);
    const again = await syncList(deps, list.id);
    expect(again).toMatchObject({ adopted: [], updated: [], closed: [], errors: [] });
    expect(again.tasks.map((t) => t.id)).toEqual([task.id]);
    expect(writes()).toBe(1);
    // The person edits the task: its version changes, so the list is folded in again.
    h.sim.editTask(task.id, { content: '手机上' });
    expect((await syncList(deps, list.id)).updated).toEqual([task.id]);
    expect(writes()).toBe(2);
    expect(await syncList(deps, list.id)).toMatchObject({ updated: [] });
    expect(writes()).toBe(2);
    // A new task.
    const other = h.sim.seedTask({ projectId: list.id, title: '另一个', priority: 1 });
    expect((await syncList(deps, list.id)).adopted).toEqual([other.id]);
    expect(writes()).toBe(3);
  });

  it('the bundle’s own tasks and finalizing Works count as unchanged; a Work of a task that came back does not', async () => {
    const list = h.sim.seedProject({ name: 'l' });
    const work = await h.engine.createWork(S, list.id, { title: '加日志', steps: ['加'] });
    await h.engine.changeSteps(S, [{ op: 'update', step: '加', status: 'completed', resolution: '加好了' }]);
    await h.engine.settle(S);
    const review = h.sim.listTasks(list.id).find((t) => t.title.startsWith('🧑‍🔬'));
    expect(review).toBeDefined();
    const { deps, writes } = counted();
    await syncList(deps, list.id, { looks: 'paced' });
    const base = writes();
    // Only the review todo is open: the bundle's own task, nothing to fold in.
    await syncList(deps, list.id, { looks: 'paced' });
    expect(writes()).toBe(base);
    // The person re-opens the Work: its record is not open, so the list is read as changed and the Work reopened.
    h.sim.editTask(work.taskId, { status: 0 });
    const report = await syncList(deps, list.id, { looks: 'paced' });
    expect(report.reopened).toEqual([work.taskId]);
    expect(writes()).toBeGreaterThan(base);
  });
});

describe('reading the list', () => {
  it('an answer that names neither the list nor a task is not taken as an empty list', async () => {
    const list = h.sim.seedProject({ name: 'l' });
    const task = h.sim.seedTask({ projectId: list.id, title: 'x', priority: 3 });
    await h.engine.sync(list.id);
    h.sim.injectFault({ route: 'GET /project/{pid}/data', kind: 'empty', status: 200 });
    const error = await failure(syncList(h.deps, list.id));
    expect(error).toBeInstanceOf(DidaError);
    expect(error).toMatchObject({ code: 'invalid_response' });
    // Nothing was closed for it.
    expect((await h.state()).works[task.id]?.phase).toBe('open');
    // A list that is really gone is list_missing, after asking for the lists.
    h.sim.injectFault({ route: 'GET /project/{pid}/data', kind: 'empty', status: 200 });
    const gone = await failure(syncList(h.deps, 'aaaaaaaaaaaaaaaaaaaaaaaa'));
    expect(gone).toBeInstanceOf(WorkError);
    expect(gone).toMatchObject({ code: 'list_missing' });
  });

  it('an empty list that Dida names is read as empty', async () => {
    const list = h.sim.seedProject({ name: 'empty' });
    const report = await syncList(h.deps, list.id);
    expect(report).toMatchObject({ projectId: list.id, tasks: [], adopted: [], errors: [] });
  });
});

describe('Works gone from the list', () => {
  it('a failed look is left for the next sync; then the Work is closed as completed', async () => {
    const list = h.sim.seedProject({ name: 'l' });
    const task = h.sim.seedTask({ projectId: list.id, title: 'x', priority: 3 });
    await h.engine.sync(list.id);
    await h.gateway.completeTask(list.id, task.id);
    h.sim.injectFault({ route: 'GET /project/{pid}/task/{tid}', kind: 'status', status: 500 });
    const report = await syncList(h.deps, list.id);
    expect(report.closed).toEqual([]);
    expect(report.errors).toHaveLength(1);
    expect((await h.state()).works[task.id]?.phase).toBe('open');
    const next = await syncList(h.deps, list.id);
    expect(next).toMatchObject({ closed: [task.id], errors: [] });
    expect((await h.state()).works[task.id]).toMatchObject({ phase: 'closed', outcome: 'completed_by_human', updatedAt: h.clock.now });
  });

  it('only Works of this list are looked at, and closed ones are not looked at again', async () => {
    const a = h.sim.seedProject({ name: 'a' });
    const b = h.sim.seedProject({ name: 'b' });
    const ta = h.sim.seedTask({ projectId: a.id, title: 'in a', priority: 3 });
    const tb = h.sim.seedTask({ projectId: b.id, title: 'in b', priority: 3 });
    await h.engine.sync(a.id);
    await h.engine.sync(b.id);
    await h.gateway.deleteTask(b.id, tb.id);
    h.sim.resetCounters();
    expect((await syncList(h.deps, a.id)).closed).toEqual([]);
    expect(h.sim.counters()['GET /project/{pid}/task/{tid}']).toBeUndefined();
    expect((await syncList(h.deps, b.id)).closed).toEqual([tb.id]);
    expect((await h.state()).works[tb.id]).toMatchObject({ phase: 'closed', outcome: 'deleted' });
    h.sim.resetCounters();
    expect((await syncList(h.deps, b.id)).closed).toEqual([]);
    expect(h.sim.counters()['GET /project/{pid}/task/{tid}']).toBeUndefined();
    expect((await h.state()).works[ta.id]?.phase).toBe('open');
  });
});

describe('a settled Work its session left behind', () => {
  async function settledBySession() {
    const list = h.sim.seedProject({ name: 'l' });
    const work = await h.engine.createWork(S, list.id, { title: '加日志', steps: ['加'] });
    await h.engine.changeSteps(S, [{ op: 'update', step: '加', status: 'completed', resolution: '加好了' }]);
    return { list, work };
  }

  it('is finalized by sync once untouched for its time, not before', async () => {
    const { list, work } = await settledBySession();
    const updatedAt = (await h.state()).works[work.taskId]!.updatedAt;
    h.clock.now = updatedAt + ORPHANED_SETTLE_MS - 1;
    expect((await syncList(h.deps, list.id)).finalized).toEqual([]);
    expect((await h.state()).works[work.taskId]?.phase).toBe('open');
    h.clock.now = updatedAt + ORPHANED_SETTLE_MS;
    const report = await syncList(h.deps, list.id);
    expect(report.finalized).toEqual([work.taskId]);
    expect((await h.state()).works[work.taskId]?.phase).toBe('accepting');
    expect(ORPHANED_SETTLE_MS).toBe(10 * 60_000);
  });

  it('a Work with a step still open, or one no session worked on, is never finalized by sync', async () => {
    const list = h.sim.seedProject({ name: 'l' });
    const ticked = h.sim.seedTask({ projectId: list.id, title: '人勾完了', priority: 3, items: [{ title: 'a', status: 1 }] });
    const work = await h.engine.createWork(S, list.id, { title: '还有一步', steps: ['一', '二'] });
    await h.engine.changeSteps(S, [{ op: 'update', step: '一', status: 'completed', resolution: '好了' }]);
    h.clock.now += ORPHANED_SETTLE_MS * 3;
    const report = await syncList(h.deps, list.id);
    expect(report.finalized).toEqual([]);
    const state = await h.state();
    expect(state.works[work.taskId]?.phase).toBe('open');
    expect(state.works[ticked.id]?.phase).toBe('open');
  });
});

describe('bundle tasks nobody knows', () => {
  it('a 🙋 reminder is recorded as the bundle’s own; a review todo is rebuilt with its owner from the anchor', async () => {
    const list = h.sim.seedProject({ name: 'l' });
    const reminder = h.sim.seedTask({ projectId: list.id, title: '🙋 需要你处理：旧的', priority: 3 });
    const review = h.sim.seedTask({ projectId: list.id, title: '🧑‍🔬 待验收：旧工作', priority: 5 });
    const { getLocale } = await import('../../src/core/text/locale');
    const anchor = h.sim.addComment(list.id, review.id, getLocale('zh').t('dida.acceptance.anchor'), { userId: 7007 });
    h.sim.addComment(list.id, review.id, 'unrelated', { userId: 8008 });
    const report = await syncList(h.deps, list.id);
    const state = await h.state();
    expect(state.ownTasks[reminder.id]).toBe('reminder');
    expect(state.works[reminder.id]).toBeUndefined();
    expect(state.ownTasks[review.id]).toBe('acceptance');
    expect(state.works[review.id]).toMatchObject({
      taskId: review.id,
      projectId: list.id,
      title: '旧工作',
      priority: 5,
      phase: 'accepting',
      mode: 'direct',
      steps: [],
      rebuilt: true,
      acceptance: { taskId: review.id, ownerUserId: '7007', anchorCommentId: anchor.id, handledCommentIds: [], closed: false },
    });
    expect(state.owners[list.id]).toBe(state.works[review.id]?.acceptance?.ownerUserId);
    expect(report.rebuilt).toEqual(['review todo "旧工作"']);
    expect(state.rebuilt).toEqual([{ at: h.clock.now, what: 'review todo "旧工作"' }]);
    // Rebuilt once: the next sync knows it. A review todo in English without an anchor gets the list's known owner.
    const enReview = h.sim.seedTask({ projectId: list.id, title: '🧑‍🔬 To review: old work', priority: 1 });
    const next = await syncList(h.deps, list.id);
    expect(next.rebuilt).toEqual(['review todo "old work"']);
    const later = await h.state();
    expect(later.works[enReview.id]).toMatchObject({ title: 'old work', phase: 'accepting' });
    expect(later.works[enReview.id]?.acceptance?.ownerUserId).toBe(state.owners[list.id]);
    expect(later.works[enReview.id]?.acceptance?.anchorCommentId).toBeUndefined();
    expect(later.works[review.id]?.acceptance?.anchorCommentId).toBe(anchor.id);
  });

  it('a review todo of a known Work is not rebuilt', async () => {
    const list = h.sim.seedProject({ name: 'l' });
    await h.engine.createWork(S, list.id, { title: '加日志', steps: ['加'] });
    await h.engine.changeSteps(S, [{ op: 'update', step: '加', status: 'completed', resolution: '加好了' }]);
    await h.engine.settle(S);
    const report = await syncList(h.deps, list.id);
    expect(report.rebuilt).toEqual([]);
    expect((await h.state()).rebuilt).toEqual([]);
  });
});

describe('a Work the person re-opens', () => {
  it('after they completed it themselves: a new round, the items they added merged in', async () => {
    const list = h.sim.seedProject({ name: 'l' });
    const task = h.sim.seedTask({ projectId: list.id, title: '写周报', priority: 3 });
    await h.engine.sync(list.id);
    await h.gateway.completeTask(list.id, task.id);
    expect((await syncList(h.deps, list.id)).closed).toEqual([task.id]);
    h.sim.editTask(task.id, { status: 0, items: [{ title: '再补一段', status: 0 }] });
    const report = await syncList(h.deps, list.id);
    expect(report.reopened).toEqual([task.id]);
    const work = (await h.state()).works[task.id]!;
    expect(work).toMatchObject({ phase: 'open', round: 2, reopened: true });
    expect(work.outcome).toBeUndefined();
    expect(work.steps.map((s) => [s.title, s.status])).toEqual([['再补一段', 'pending']]);
  });

  it('a deleted Work that comes back is not re-opened', async () => {
    const list = h.sim.seedProject({ name: 'l' });
    const task = h.sim.seedTask({ projectId: list.id, title: '写周报', priority: 3 });
    await h.engine.sync(list.id);
    await h.state();
    await h.deps.state.update((s) => {
      const w = s.works[task.id]!;
      w.phase = 'closed';
      w.outcome = 'deleted';
    });
    const report = await syncList(h.deps, list.id);
    expect(report.reopened).toEqual([]);
    expect((await h.state()).works[task.id]).toMatchObject({ phase: 'closed', outcome: 'deleted' });
  });

  it('a failed look at the re-opened task is reported and left for the next sync', async () => {
    const list = h.sim.seedProject({ name: 'l' });
    const task = h.sim.seedTask({ projectId: list.id, title: '写周报', priority: 3 });
    await h.engine.sync(list.id);
    await h.gateway.completeTask(list.id, task.id);
    await syncList(h.deps, list.id);
    h.sim.editTask(task.id, { status: 0 });
    h.sim.injectFault({ route: 'GET /project/{pid}/task/{tid}', kind: 'status', status: 500 });
    const report = await syncList(h.deps, list.id);
    expect(report.reopened).toEqual([]);
    expect(report.errors).toHaveLength(1);
    expect((await syncList(h.deps, list.id)).reopened).toEqual([task.id]);
  });
});

describe('what sync carries on', () => {
  it('a claim whose holder went quiet past its lease is said once in Dida and the Work goes back to the queue', async () => {
    // Dida stamps comments with the real time: the engine's clock starts there.
    h.clock.now = Date.now();
    const list = h.sim.seedProject({ name: 'l' });
    const task = h.sim.seedTask({ projectId: list.id, title: '修复登录', priority: 3, items: [{ title: '复现' }, { title: '修好' }] });
    await h.engine.sync(list.id);
    await h.engine.switchTo(S, list.id, task.id);
    await h.engine.changeSteps(S, [{ op: 'update', step: '复现', status: 'completed', resolution: '复现了' }]);
    const claimed = (await h.state()).works[task.id]!.claim!;
    expect(claimed.holder).toBe('test-host#1');
    h.clock.now += 29 * 60_000;
    expect((await syncList(h.deps, list.id)).released).toEqual([]);
    h.clock.now = claimed.at + 31 * 60_000;
    const said = h.sim.listComments(task.id).length;
    const report = await syncList(h.deps, list.id);
    expect(report.released).toEqual([task.id]);
    const comments = h.sim.listComments(task.id).map((c) => c.title);
    expect(comments).toHaveLength(said + 1);
    expect(comments.at(-1)).toBe('🤖 test-host 上的会话 1 已停止：31 分钟没有进展，已完成 1/2 步，最后完成的是「复现」。这项工作已回到队列。');
    expect((await h.state()).works[task.id]?.claim).toBeUndefined();
    // Said once.
    h.clock.now += 60 * 60_000;
    expect((await syncList(h.deps, list.id)).released).toEqual([]);
    expect(h.sim.listComments(task.id)).toHaveLength(said + 1);
  });

  it('a change whose write had an unknown outcome is written at the next sync', async () => {
    const list = h.sim.seedProject({ name: 'l' });
    const task = h.sim.seedTask({ projectId: list.id, title: '写周报', priority: 3, items: [{ title: '汇总' }] });
    await h.engine.sync(list.id);
    await h.engine.switchTo(S, list.id, task.id);
    h.sim.injectFault({ route: 'POST /task/{tid}', kind: 'status', status: 500 });
    await expect(h.engine.changeSteps(S, [{ op: 'add', title: '配图' }])).rejects.toThrow();
    expect(h.sim.getTask(task.id)?.items?.map((i) => i.title)).toEqual(['汇总']);
    const report = await syncList(h.deps, list.id);
    expect(report.errors).toEqual([]);
    expect(h.sim.getTask(task.id)?.items?.map((i) => i.title)).toEqual(['汇总', '配图']);
    // Carried once: nothing is pending any more.
    h.sim.resetCounters();
    await syncList(h.deps, list.id);
    expect(h.sim.counters()['POST /task/{tid}']).toBeUndefined();
  });

  it('a Work waiting for the person keeps its pending change until it is resumed', async () => {
    const list = h.sim.seedProject({ name: 'l' });
    const task = h.sim.seedTask({ projectId: list.id, title: '写周报', priority: 3, items: [{ title: '汇总' }] });
    await h.engine.sync(list.id);
    await h.engine.switchTo(S, list.id, task.id);
    h.sim.injectFault({ route: 'POST /task/{tid}', kind: 'status', status: 500 });
    await expect(h.engine.changeSteps(S, [{ op: 'add', title: '配图' }])).rejects.toThrow();
    await h.deps.state.update((s) => {
      s.works[task.id]!.waiting = { reason: 'r', previousPriority: 3, applied: false, since: h.clock.now };
    });
    await syncList(h.deps, list.id);
    expect(h.sim.getTask(task.id)?.items?.map((i) => i.title)).toEqual(['汇总']);
  });

  it('a progress comment whose post failed is posted at the next sync, once', async () => {
    const list = h.sim.seedProject({ name: 'l' });
    const task = h.sim.seedTask({ projectId: list.id, title: '写周报', priority: 3, items: [{ title: '汇总' }] });
    await h.engine.sync(list.id);
    await h.engine.switchTo(S, list.id, task.id);
    await h.engine.changeSteps(S, [{ op: 'update', step: '汇总', status: 'completed', resolution: '汇总好了' }]);
    expect((await h.state()).outbox.map((e) => e.kind)).toEqual(['completed']);
    h.clock.now += 60 * 60_000;
    const report = await syncList(h.deps, list.id);
    expect(report.errors).toEqual([]);
    expect(h.sim.listComments(task.id).filter((c) => c.title.startsWith('已完成：汇总'))).toHaveLength(1);
    expect((await h.state()).outbox).toEqual([]);
    await syncList(h.deps, list.id);
    expect(h.sim.listComments(task.id).filter((c) => c.title.startsWith('已完成：汇总'))).toHaveLength(1);
  });
});

