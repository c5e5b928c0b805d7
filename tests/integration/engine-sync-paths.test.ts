// The paths one sync takes after it read the list (src/core/engine/sync.ts), each seen from the sync's report and the
// simulator's Dida: late feedback reaching the rework Work, Works finalized by a sync (left finalizing, or settled and
// left by their session), a finalize that fails, a recurring Work superseded by its next occurrence, Works that left
// the open list, and a read that changes nothing (the state is not rewritten).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { formatDidaDate } from '../../src/dida/dida-date';
import { ORPHANED_SETTLE_MS } from '../../src/core/engine/sync';
import { processAcceptance } from '../../src/core/review/acceptance';
import { finalizeWork } from '../../src/core/review/finalize';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';

describe('what one sync does after the read', () => {
  let h: EngineHarness;
  let projectId: string;
  const S = 'session-1';

  beforeEach(async () => {
    h = await startEngineHarness();
    projectId = h.sim.seedProject({ name: '同步' }).id;
  });
  afterEach(async () => {
    await h.close();
  });

  /** A Work of the person's, its one step completed by session S (not settled). */
  async function done(title: string) {
    const task = h.sim.seedTask({ projectId, title, priority: 3, items: [{ title: '一' }] });
    await h.engine.sync(projectId);
    await h.engine.switchTo(S, projectId, task.id);
    await h.engine.changeSteps(S, [{ op: 'update', step: '一', status: 'completed', resolution: '好了' }]);
    return task;
  }
  const reviews = (title: string) => h.sim.listTasks(projectId, { includeCompleted: true }).filter((t) => t.title === `🧑‍🔬 待验收：${title}`);

  it('a comment written while a rework was cut short reaches the rework Work when a sync finishes it', async () => {
    const task = await done('部署');
    const outcome = await finalizeWork(h.deps, task.id);
    if (outcome.status !== 'finalized') throw new Error('not finalized');
    const reviewId = outcome.acceptanceTaskId;
    h.sim.addComment(projectId, reviewId, '第一条');
    // The review todo could not be completed: the rework was filed, the review is not closed yet.
    h.sim.injectFault({ route: 'POST /project/{pid}/task/{tid}/complete', kind: 'status', status: 500 });
    await expect(processAcceptance(h.deps, task.id, true)).rejects.toBeDefined();
    const reworkId = (await h.state()).works[task.id]!.acceptance!.reworkTaskId!;
    // Control: the rework was cut short (the review todo is still open, its record not closed).
    expect(h.sim.getTask(reviewId)?.status).toBe(0);
    expect((await h.state()).works[task.id]!.acceptance!.closed).toBe(false);
    h.sim.addComment(projectId, reviewId, '第二条\n细节');
    const report = await h.engine.sync(projectId);
    expect(report.reworks).toEqual([reworkId]);
    expect(h.sim.getTask(reworkId)?.items?.map((i) => i.title)).toEqual(['第一条', '第二条']);
    expect(h.sim.getTask(reworkId)?.desc).toBe('第一条\n\n第二条\n细节');
    expect(h.sim.getTask(reviewId)?.status).toBe(2);
    expect((await h.state()).works[reworkId]!.steps.map((s) => [s.title, s.origin])).toEqual([['第一条', 'human'], ['第二条', 'human']]);
    // Nothing more to add: the next sync writes nothing to the rework task.
    await h.engine.sync(projectId);
    expect(h.sim.getTask(reworkId)?.items).toHaveLength(2);
  });

  it('late feedback on a review after its rework is added by the sync, once, and not once the rework Work closed', async () => {
    const task = await done('上线');
    const outcome = await finalizeWork(h.deps, task.id);
    if (outcome.status !== 'finalized') throw new Error('not finalized');
    const reviewId = outcome.acceptanceTaskId;
    h.sim.addComment(projectId, reviewId, '第一条');
    const filed = await h.engine.sync(projectId);
    const reworkId = filed.reworks[0]!;
    expect(h.sim.getTask(reviewId)?.status).toBe(2);
    h.sim.addComment(projectId, reviewId, '还有一条');
    const first = await h.engine.sync(projectId);
    expect(first.updated).toContain(reworkId);
    expect(h.sim.getTask(reworkId)?.items?.map((i) => i.title)).toEqual(['第一条', '还有一条']);
    const again = await h.engine.sync(projectId);
    expect(again.updated).not.toContain(reworkId);
    h.sim.addComment(projectId, reviewId, '第三条');
    await h.deps.state.update((s) => {
      s.works[reworkId]!.phase = 'closed';
    });
    const closed = await h.engine.sync(projectId);
    expect(closed.updated).not.toContain(reworkId);
    expect(h.sim.getTask(reworkId)?.items).toHaveLength(2);
  });

  it('a settled Work its session left is finalized by a sync after ten minutes, not before; one nobody worked on never', async () => {
    const task = await done('遗留');
    const untouched = h.sim.seedTask({ projectId, title: '人勾完的', priority: 3, items: [{ title: '一', status: 2 }] });
    await h.engine.sync(projectId);
    h.clock.now += ORPHANED_SETTLE_MS - 1_000;
    const early = await h.engine.sync(projectId);
    expect(early.finalized).toEqual([]);
    h.clock.now += 2_000;
    const late = await h.engine.sync(projectId);
    expect(late.finalized).toEqual([task.id]);
    expect(reviews('遗留')).toHaveLength(1);
    expect(reviews('人勾完的')).toEqual([]);
    expect((await h.state()).works[untouched.id]?.phase).toBe('open');
    expect(ORPHANED_SETTLE_MS).toBe(10 * 60_000);
  });

  it('a Work left finalizing is finalized by the next sync; a finalize that fails is the sync’s error and is tried again', async () => {
    const task = await done('中断');
    await h.deps.state.update((s) => {
      s.works[task.id]!.phase = 'finalizing';
    });
    h.sim.injectFault({ route: 'POST /task', kind: 'status', status: 500 });
    const failed = await h.engine.sync(projectId);
    expect(failed.finalized).toEqual([]);
    expect(failed.errors).toEqual([expect.stringContaining('500')]);
    expect((await h.state()).works[task.id]?.finalize?.attempts).toBe(1);
    const next = await h.engine.sync(projectId);
    expect(next.finalized).toEqual([task.id]);
    expect(next.errors).toEqual([]);
    expect(reviews('中断')).toHaveLength(1);
  });

  it('a settled Work whose task the person deleted before its review is closed, and no review todo is filed', async () => {
    const task = await done('删掉的');
    h.sim.removeTask(task.id);
    // Control: the attempt does file a review todo before it finds the task gone (else nothing is attacked here).
    let creates = 0;
    const off = h.sim.onRequest((req) => {
      if (req.route === 'POST /task') creates++;
    });
    const outcome = await finalizeWork(h.deps, task.id);
    off();
    expect(creates).toBe(1);
    expect(outcome).toEqual({ status: 'not_ready', code: 'work_closed', message: `The Dida task of Work ${task.id} was deleted in Dida; call todo_work list to pick other work.` });
    const state = await h.state();
    expect(state.works[task.id]).toMatchObject({ phase: 'closed', outcome: 'deleted' });
    expect(state.works[task.id]?.acceptance).toBeUndefined();
    // The review todo the attempt had filed is removed again: no reminder about a Work the person deleted.
    expect(reviews('删掉的')).toEqual([]);
    expect(Object.values(state.ownTasks)).not.toContain('acceptance');
    expect(await h.engine.sync(projectId)).toMatchObject({ rebuilt: [], errors: [] });
  });

  it('a recurring Work still open when Dida moved on to the next occurrence is superseded by the new one', async () => {
    const start = h.clock.now - 60 * 60_000;
    const task = h.sim.seedTask({ projectId, title: '每日', priority: 3, repeatFlag: 'RRULE:FREQ=DAILY;INTERVAL=1', startDate: formatDidaDate(start), dueDate: formatDidaDate(start), timeZone: 'Asia/Shanghai', isAllDay: false, items: [{ title: '看' }] });
    const first = (await h.engine.sync(projectId)).adopted[0]!;
    const other = h.sim.seedTask({ projectId, title: '另一件', priority: 3 });
    await h.engine.sync(projectId);
    // The person completed this occurrence in Dida: it moved to the next day.
    h.sim.editTask(task.id, { startDate: formatDidaDate(start + 86_400_000), dueDate: formatDidaDate(start + 86_400_000) });
    const report = await h.engine.sync(projectId);
    const second = report.adopted[0]!;
    expect(second).not.toBe(first);
    expect(second.startsWith(task.id)).toBe(true);
    expect(report.closed).toEqual([first]);
    const state = await h.state();
    expect(state.works[first]).toMatchObject({ phase: 'closed', outcome: 'superseded' });
    expect(state.works[second]?.phase).toBe('open');
    expect(state.works[other.id]?.phase).toBe('open');
  });

  it('Works that left the open list: completed, deleted, and a look that failed (looked at again next time)', async () => {
    const completed = h.sim.seedTask({ projectId, title: '做完了', priority: 3 });
    const deleted = h.sim.seedTask({ projectId, title: '删了', priority: 3 });
    await h.engine.sync(projectId);
    h.sim.editTask(completed.id, { status: 2 });
    h.sim.removeTask(deleted.id);
    const report = await h.engine.sync(projectId);
    expect(report.closed.sort()).toEqual([completed.id, deleted.id].sort());
    expect(report.errors).toEqual([]);
    const state = await h.state();
    expect(state.works[completed.id]).toMatchObject({ phase: 'closed', outcome: 'completed_by_human' });
    expect(state.works[deleted.id]).toMatchObject({ phase: 'closed', outcome: 'deleted' });
    const unsure = h.sim.seedTask({ projectId, title: '看不清', priority: 3 });
    await h.engine.sync(projectId);
    h.sim.editTask(unsure.id, { status: 2 });
    h.sim.injectFault({ route: 'GET /project/{pid}/task/{tid}', kind: 'status', status: 500 });
    const failed = await h.engine.sync(projectId);
    expect(failed.closed).toEqual([]);
    expect(failed.errors).toEqual([expect.stringContaining('500')]);
    expect((await h.state()).works[unsure.id]?.phase).toBe('open');
    const next = await h.engine.sync(projectId);
    expect(next.closed).toEqual([unsure.id]);
  });

  it("a sync of one list leaves another list's reviews and progress comments to that list's sync", async () => {
    const other = h.sim.seedProject({ name: '别的' }).id;
    const theirs = h.sim.seedTask({ projectId: other, title: '那边', priority: 3, items: [{ title: '一' }] });
    await h.engine.sync(other);
    await h.engine.switchTo(S, other, theirs.id);
    await h.engine.changeSteps(S, [{ op: 'update', step: '一', status: 'completed', resolution: '好了' }]);
    const outcome = await finalizeWork(h.deps, theirs.id);
    if (outcome.status !== 'finalized') throw new Error('not finalized');
    h.sim.addComment(other, outcome.acceptanceTaskId, '再改改');
    await h.deps.state.update((s) => {
      s.outbox.push({ id: 'o-other', kind: 'note', projectId: other, taskId: theirs.id, workKey: theirs.id, text: '那边的进展', createdAt: h.clock.now, uncertain: false, attempts: 0 });
    });
    const mine = await h.engine.sync(projectId);
    expect(mine.reworks).toEqual([]);
    expect(h.sim.listComments(theirs.id).map((c) => c.title)).not.toContain('那边的进展');
    const theirsSync = await h.engine.sync(other);
    expect(theirsSync.reworks).toHaveLength(1);
    expect(h.sim.listComments(theirs.id).map((c) => c.title)).toContain('那边的进展');
  });

  it('a review rebuilt from Dida is looked at in the same sync: feedback already there becomes rework at once', async () => {
    const { getLocale } = await import('../../src/core/text/locale');
    const review = h.sim.seedTask({ projectId, title: '🧑‍🔬 待验收：丢了记录的', priority: 3 });
    h.sim.addComment(projectId, review.id, getLocale('zh').t('dida.acceptance.anchor'), { userId: 7007 });
    h.clock.now += 1_000;
    h.sim.addComment(projectId, review.id, '按钮颜色不对', { userId: 7007 });
    const report = await h.engine.sync(projectId);
    expect(report.rebuilt).toEqual(['review todo "丢了记录的"']);
    expect(report.reworks).toHaveLength(1);
    expect(h.sim.getTask(report.reworks[0]!)?.items?.map((i) => i.title)).toEqual(['按钮颜色不对']);
  });

  it('a Work shown open again in the list but completed when looked at on its own is not re-opened', async () => {
    const S2 = 'session-2';
    const work = await h.engine.createWork(S2, projectId, { title: '复开', steps: ['做'] });
    await h.engine.changeSteps(S2, [{ op: 'update', step: '做', status: 'completed', resolution: '做了' }]);
    await h.engine.settle(S2);
    h.sim.editTask(work.taskId, { status: 0 });
    // Between the list's read and the look at the task, it is completed again.
    const off = h.sim.onRequest((req) => {
      if (req.route === 'GET /project/{pid}/task/{tid}' && req.path.includes(work.taskId)) h.sim.editTask(work.taskId, { status: 2 });
    });
    const report = await h.engine.sync(projectId);
    off();
    expect(report.reopened).toEqual([]);
    expect((await h.state()).works[work.taskId]?.phase).toBe('accepting');
    // Control: shown open and open when looked at, it is re-opened.
    h.sim.editTask(work.taskId, { status: 0 });
    expect((await h.engine.sync(projectId)).reopened).toEqual([work.taskId]);
  });

  it("the bundle's own create whose answer was lost is found by its marker: a Work is taken up as the agent's, other kinds only recorded", async () => {
    const made = h.sim.seedTask({ projectId, title: '模型的工作', priority: 3, sortOrder: -777, items: [{ title: '第一步' }] });
    const reminder = h.sim.seedTask({ projectId, title: '🙋 需要你处理：别的', priority: 3, sortOrder: -778 });
    const person = h.sim.seedTask({ projectId, title: '模型的工作', priority: 3, sortOrder: -779 });
    await h.deps.state.update((s) => {
      s.pendingCreates['work:777'] = { kind: 'work', projectId, title: '模型的工作', marker: -777, startedAt: h.clock.now };
      s.pendingCreates['reminder:778'] = { kind: 'reminder', projectId, title: '🙋 需要你处理：别的', marker: -778, startedAt: h.clock.now, forKey: 'x' };
    });
    const report = await h.engine.sync(projectId);
    const state = await h.state();
    expect(state.works[made.id]).toMatchObject({ origin: 'agent', rev: 0, phase: 'open' });
    expect(state.works[made.id]?.steps.map((s) => [s.title, s.origin])).toEqual([['第一步', 'agent']]);
    expect(state.pendingCreates['work:777']).toBeUndefined();
    // The reminder's create stays pending for its own code to finish; it never becomes a Work.
    expect(state.works[reminder.id]).toBeUndefined();
    expect(state.pendingCreates['reminder:778']).toBeDefined();
    // The same title without the marker is the person's own task.
    expect(state.works[person.id]).toMatchObject({ origin: 'human' });
    expect(report.adopted.sort()).toEqual([made.id, person.id].sort());
  });

  it('a bundle task a record still names is not rebuilt, even when the list of own tasks lost it', async () => {
    const task = await done('已知的');
    const outcome = await finalizeWork(h.deps, task.id);
    if (outcome.status !== 'finalized') throw new Error('not finalized');
    // Known only as the Work's review.
    await h.deps.state.update((s) => {
      delete s.works[task.id]!.finalize;
      s.ownTasks = {};
    });
    expect((await h.engine.sync(projectId)).rebuilt).toEqual([]);
    // Known only as the review a finalize attempt filed.
    await h.deps.state.update((s) => {
      const w = s.works[task.id]!;
      w.phase = 'finalizing';
      w.finalize = { attempts: 0, acceptanceTaskId: outcome.acceptanceTaskId };
      delete w.acceptance;
      s.ownTasks = {};
    });
    expect((await h.engine.sync(projectId)).rebuilt).toEqual([]);
    expect(Object.values((await h.state()).works).filter((w) => w.rebuilt)).toEqual([]);
  });

  it('a read that changes nothing does not rewrite the state; a comment waiting for the list makes it write', async () => {
    const task = h.sim.seedTask({ projectId, title: '安静', priority: 3, items: [{ title: '一' }] });
    await h.engine.sync(projectId);
    const update = vi.spyOn(h.deps.state, 'update');
    await h.engine.sync(projectId);
    expect(update).not.toHaveBeenCalled();
    // A Work left finalizing counts as unchanged too (the sync finalizes it, it does not fold the task in).
    h.sim.editTask(task.id, { title: '改了' });
    await h.engine.sync(projectId);
    expect(update).toHaveBeenCalled();
    expect((await h.state()).works[task.id]?.title).toBe('改了');
    update.mockClear();
    await h.deps.state.update((s) => {
      s.outbox.push({ id: 'o1', kind: 'note', projectId, taskId: task.id, workKey: task.id, text: '进展', createdAt: h.clock.now, uncertain: false, attempts: 0 });
    });
    update.mockClear();
    await h.engine.sync(projectId);
    expect(update).toHaveBeenCalled();
  });
});
