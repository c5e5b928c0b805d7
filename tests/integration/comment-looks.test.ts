// Background syncs (the poller, a turn's read) read the comments of review todos and waiting Works on a schedule
// instead of on every poll, over the simulator: the requests they make, and that an accept, a rework comment, an answer
// and a priority set back still arrive — at once where Dida shows a change, within the schedule's gap where it does not.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MINUTE, REVIEW_LOOK_SPACING_MS, REVIEW_LOOKS_PER_SYNC } from '../../src/core/phone/comment-looks';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';

let h: EngineHarness;
const S = 'session-1';
const COMMENT_READS = 'GET /project/{pid}/task/{tid}/comments';

beforeEach(async () => {
  h = await startEngineHarness();
});
afterEach(async () => {
  await h.close();
});

/** `n` agent Works sent for review; returns the list and the review todos' ids. */
async function reviews(n: number) {
  const list = h.sim.seedProject({ name: '评审' });
  for (let i = 1; i <= n; i++) {
    await h.engine.createWork(S, list.id, { title: `工作 ${i}`, steps: ['做'] });
    await h.engine.changeSteps(S, [{ op: 'update', step: '做', status: 'completed', resolution: '做完了' }]);
    await h.engine.settle(S);
  }
  const todos = h.sim.listTasks(list.id).filter((t) => t.title.startsWith('🧑‍🔬'));
  expect(todos).toHaveLength(n);
  return { list, todos };
}

/** Comment reads of one sync (and its report). */
async function readsOf(projectId: string, looks: 'paced' | 'all') {
  h.sim.resetCounters();
  const report = await h.engine.sync(projectId, { looks });
  return { reads: h.sim.counters()[COMMENT_READS] ?? 0, report };
}

describe('paced looks at review todos', () => {
  it('a review just filed is not read (no comment can be there yet); later at most REVIEW_LOOKS_PER_SYNC a sync and one a minute, oldest first; a full sync reads them all', async () => {
    const { list } = await reviews(5);
    expect((await readsOf(list.id, 'paced')).reads).toBe(0);
    h.clock.now += 2 * MINUTE - 1_000;
    expect((await readsOf(list.id, 'paced')).reads).toBe(0);
    h.clock.now += 1_000;
    // Polls every few seconds: one review read, then none until a minute passed since.
    const burst: number[] = [];
    for (let i = 0; i < 6; i++) burst.push((await readsOf(list.id, 'paced')).reads);
    expect(burst).toEqual([REVIEW_LOOKS_PER_SYNC, 0, 0, 0, 0, 0]);
    const minutes: number[] = [];
    for (let i = 0; i < 5; i++) {
      h.clock.now += REVIEW_LOOK_SPACING_MS;
      minutes.push((await readsOf(list.id, 'paced')).reads);
    }
    // One a minute, the oldest look first: the other four in turn, then the first again (its gap has long passed).
    expect(minutes).toEqual([1, 1, 1, 1, 1]);
    // Control: a sync someone waits for reads every review, every time.
    expect((await readsOf(list.id, 'all')).reads).toBe(5);
    expect((await readsOf(list.id, 'all')).reads).toBe(5);
    // Half an hour on, the gap is ten minutes: each review once, one a minute.
    h.clock.now += 31 * MINUTE;
    const later: number[] = [];
    for (let i = 0; i < 7; i++) {
      later.push((await readsOf(list.id, 'paced')).reads);
      h.clock.now += REVIEW_LOOK_SPACING_MS;
    }
    expect(later).toEqual([1, 1, 1, 1, 1, 0, 0]);
  });

  it('an owner comment on a review becomes rework at the next look, not before its gap; a full sync sees it at once', async () => {
    const { list, todos } = await reviews(1);
    await readsOf(list.id, 'paced');
    h.sim.addComment(list.id, todos[0]!.id, '标题改短一点', { userId: Number(h.sim.userId) });
    expect((await readsOf(list.id, 'paced')).report.reworks).toEqual([]);
    h.clock.now += 2 * MINUTE;
    expect((await readsOf(list.id, 'paced')).report.reworks).toHaveLength(1);
    expect(h.sim.listTasks(list.id).some((t) => t.title === '返工：工作 1')).toBe(true);
  });

  it('a full sync reads a comment written just after a paced look', async () => {
    const { list, todos } = await reviews(1);
    await readsOf(list.id, 'paced');
    h.sim.addComment(list.id, todos[0]!.id, '再补一个测试', { userId: Number(h.sim.userId) });
    expect((await readsOf(list.id, 'all')).report.reworks).toHaveLength(1);
  });

  it('a review todo Dida shows changed is read at once, and one completed in Dida is an accept at once', async () => {
    const { list, todos } = await reviews(2);
    await readsOf(list.id, 'paced');
    // The person edits the first todo (a comment that changes the task's etag, where Dida does that, looks the same).
    h.sim.editTask(todos[0]!.id, { content: `${todos[0]!.content ?? ''}\n看过了` });
    h.sim.addComment(list.id, todos[0]!.id, '第二段再清楚些', { userId: Number(h.sim.userId) });
    const changed = await readsOf(list.id, 'paced');
    expect(changed.reads).toBe(1);
    expect(changed.report.reworks).toHaveLength(1);
    // The second is completed on the phone: accepted at the next paced sync, gap or not.
    await h.gateway.completeTask(list.id, todos[1]!.id);
    const accepted = await readsOf(list.id, 'paced');
    expect(accepted.report.accepted).toHaveLength(1);
  });
});

describe('paced looks across lists and kinds', () => {
  it('a sync of one list leaves the looks of another alone, and an answer does not take a review\'s turn', async () => {
    const { list, todos } = await reviews(1);
    const other = h.sim.seedProject({ name: '别的' });
    const task = h.sim.seedTask({ projectId: other.id, title: '部署', priority: 5, items: [{ title: '申请权限' }] });
    await h.engine.sync(other.id);
    await h.engine.switchTo('session-2', other.id, task.id);
    await h.engine.waitForHuman('session-2', '需要账号');
    // The first list's sync reads nothing (its review was just filed); the other list's wait is still unlooked.
    expect((await readsOf(list.id, 'paced')).reads).toBe(0);
    expect((await h.engine.getWork(task.id)).commentLook).toBeUndefined();
    expect((await readsOf(other.id, 'paced')).reads).toBe(2);
    // One list with a review and a wait both due by time: both are read in one sync.
    const here = h.sim.seedTask({ projectId: list.id, title: '上线', priority: 5, items: [{ title: '发版' }] });
    await h.engine.sync(list.id);
    await h.engine.switchTo('session-3', list.id, here.id);
    await h.engine.waitForHuman('session-3', '哪天发版');
    await readsOf(list.id, 'paced');
    h.clock.now += 11 * MINUTE;
    expect((await readsOf(list.id, 'paced')).reads).toBe(3);
    // The review is looked at again (its todo changed) after the wait was: the wait's look is the older one now.
    h.clock.now += 30_000;
    h.sim.editTask(todos[0]!.id, { content: '看过了' });
    expect((await readsOf(list.id, 'paced')).reads).toBe(1);
    h.clock.now += 2 * MINUTE;
    expect((await readsOf(list.id, 'paced')).reads).toBe(3);
  });

  it('a review that ended drops its look', async () => {
    const { list, todos } = await reviews(1);
    await readsOf(list.id, 'paced');
    const key = (await h.state()).works[Object.keys((await h.state()).works)[0]!]!;
    expect(key.commentLook).toBeDefined();
    await h.gateway.completeTask(list.id, todos[0]!.id);
    expect((await readsOf(list.id, 'paced')).report.accepted).toHaveLength(1);
    expect(Object.values((await h.state()).works).map((w) => w.commentLook)).toEqual([undefined]);
  });
});

describe('paced looks at a Work that waits for the person', () => {
  async function askedWork() {
    const list = h.sim.seedProject({ name: '问答' });
    const task = h.sim.seedTask({ projectId: list.id, title: '部署', priority: 5, items: [{ title: '申请权限' }] });
    await h.engine.sync(list.id);
    await h.engine.switchTo(S, list.id, task.id);
    await h.engine.waitForHuman(S, '需要数据库的只读账号');
    const work = await h.engine.getWork(task.id);
    return { list, task, reminderId: work.waiting!.reminderTaskId! };
  }

  it('is looked at on every paced sync for ten minutes, so an answer arrives with the next poll', async () => {
    const { list, reminderId } = await askedWork();
    expect((await readsOf(list.id, 'paced')).reads).toBe(2);
    h.clock.now += 9 * MINUTE;
    expect((await readsOf(list.id, 'paced')).reads).toBe(2);
    h.sim.addComment(list.id, reminderId, '账号是 readonly');
    expect((await readsOf(list.id, 'paced')).report.answered).toHaveLength(1);
  });

  it('after ten minutes it is looked at once a minute; a priority set back is read at once', async () => {
    const { list, task } = await askedWork();
    await readsOf(list.id, 'paced');
    h.clock.now += 11 * MINUTE;
    expect((await readsOf(list.id, 'paced')).reads).toBe(2);
    expect((await readsOf(list.id, 'paced')).reads).toBe(0);
    h.sim.editTask(task.id, { priority: 3 });
    expect((await readsOf(list.id, 'paced')).report.resumed).toHaveLength(1);
  });

  it('an answer ends the looks; a second wait of the Work starts its schedule afresh', async () => {
    const { list, task, reminderId } = await askedWork();
    await readsOf(list.id, 'paced');
    h.clock.now += 20 * MINUTE;
    h.sim.addComment(list.id, reminderId, '账号是 readonly');
    expect((await readsOf(list.id, 'paced')).report.answered).toHaveLength(1);
    expect((await h.engine.getWork(task.id)).commentLook).toBeUndefined();
    // A wait that ends without a sync looking (the agent resumes it itself) leaves its look; the next wait is new.
    await h.engine.waitForHuman(S, '还需要写权限吗');
    await readsOf(list.id, 'paced');
    h.clock.now += 20 * MINUTE;
    await readsOf(list.id, 'paced');
    await h.engine.resume(S);
    expect((await h.engine.getWork(task.id)).commentLook).toBeDefined();
    await h.engine.waitForHuman(S, '还需要读写权限吗');
    expect((await h.engine.getWork(task.id)).waiting?.applied).toBe(true);
    expect((await readsOf(list.id, 'paced')).reads).toBe(2);
    expect((await readsOf(list.id, 'paced')).reads).toBe(2);
  });

  it('a comment on the Work itself, where Dida does not show a change, is read within a minute', async () => {
    const { list, task } = await askedWork();
    await readsOf(list.id, 'paced');
    h.clock.now += 11 * MINUTE;
    await readsOf(list.id, 'paced');
    h.sim.addComment(list.id, task.id, '用只读账号就行');
    expect((await readsOf(list.id, 'paced')).report.answered).toEqual([]);
    h.clock.now += MINUTE;
    expect((await readsOf(list.id, 'paced')).report.answered).toHaveLength(1);
  });
});
