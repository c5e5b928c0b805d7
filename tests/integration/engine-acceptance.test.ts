// The review after finalization (src/core/review/acceptance.ts) over the simulator: pending, accepted (completed or
// removed, a read that missed an open todo), the owner's feedback as one rework Work (titles, body, priority, order,
// what is ignored), an interrupted rework finished once, and late feedback added to the rework Work.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reworkTitle } from '../../src/core/review/acceptance-report';
import { lateFeedback, ownerFeedback, processAcceptance } from '../../src/core/review/acceptance';
import { finalizeWork } from '../../src/core/review/finalize';
import { getLocale } from '../../src/core/text/locale';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';
import { makeWork } from '../helpers/work-fixtures';

const zh = getLocale('zh');
const STRANGER = 424242;

describe('review of a finalized Work', () => {
  let h: EngineHarness;
  let projectId: string;
  const S = 'session-1';

  beforeEach(async () => {
    h = await startEngineHarness();
    projectId = h.sim.seedProject({ name: '验收' }).id;
  });
  afterEach(async () => {
    await h.close();
  });

  /** A Work sent for review; returns its task and review todo ids. */
  async function inReview(title = '部署', priority = 3) {
    const task = h.sim.seedTask({ projectId, title, priority, items: [{ title: '一' }] });
    await h.engine.sync(projectId);
    await h.engine.switchTo(S, projectId, task.id);
    await h.engine.changeSteps(S, [{ op: 'update', step: '一', status: 'completed', resolution: '好了' }]);
    const outcome = await finalizeWork(h.deps, task.id);
    if (outcome.status !== 'finalized') throw new Error(`not finalized: ${JSON.stringify(outcome)}`);
    return { taskId: task.id, reviewId: outcome.acceptanceTaskId };
  }
  const ack = (title: string) => zh.t('dida.comment.reworkAck', { reworkTitle: reworkTitle(zh, { title }) });
  const reworkTasks = (title: string) => h.sim.listTasks(projectId, { includeCompleted: true }).filter((t) => t.title === reworkTitle(zh, { title }));

  it('skipped unless in review; pending while the todo is open without feedback', async () => {
    const { taskId, reviewId } = await inReview();
    expect(await processAcceptance(h.deps, taskId, true)).toEqual({ status: 'pending' });
    // The list's read missed the todo, but it is still open: not an accept.
    expect(await processAcceptance(h.deps, taskId, false)).toEqual({ status: 'pending' });
    expect((await h.state()).works[taskId]?.phase).toBe('accepting');
    // Only the bundle's own texts, a stranger's comment and one of zero-width spaces (once taken for feedback): nothing to do.
    h.sim.addComment(projectId, reviewId, zh.t('dida.acceptance.anchor'));
    h.sim.addComment(projectId, reviewId, '改一下', { userId: STRANGER });
    h.sim.addComment(projectId, reviewId, '\u200b\u200b');
    h.sim.addComment(projectId, reviewId, ' \u2060\u200b ');
    expect(await processAcceptance(h.deps, taskId, true)).toEqual({ status: 'pending' });
    await h.deps.state.update((s) => {
      s.works[taskId]!.phase = 'open';
    });
    expect(await processAcceptance(h.deps, taskId, true)).toEqual({ status: 'skipped' });
  });

  it('a completed review todo is accepted once; a removed one too', async () => {
    const first = await inReview('甲');
    h.sim.editTask(first.reviewId, { status: 2 });
    expect(await processAcceptance(h.deps, first.taskId, false)).toEqual({ status: 'accepted' });
    const work = (await h.state()).works[first.taskId]!;
    expect([work.phase, work.outcome, work.acceptance?.closed]).toEqual(['closed', 'accepted', true]);
    expect(await processAcceptance(h.deps, first.taskId, false)).toEqual({ status: 'skipped' });

    const second = await inReview('乙');
    h.sim.removeTask(second.reviewId);
    expect(await processAcceptance(h.deps, second.taskId, false)).toEqual({ status: 'accepted' });
    expect((await h.state()).works[second.taskId]?.outcome).toBe('accepted');
  });

  it('a failed read of a missing review todo is not taken for an accept', async () => {
    const { taskId } = await inReview();
    h.sim.injectFault({ route: 'GET /project/{pid}/task/{tid}', kind: 'status', status: 500 });
    await expect(processAcceptance(h.deps, taskId, false)).rejects.toBeDefined();
    expect((await h.state()).works[taskId]?.phase).toBe('accepting');
  });

  it("the owner's feedback becomes one rework Work: a human step per comment in order, the whole text as its body", async () => {
    const { taskId, reviewId } = await inReview('部署', 5);
    h.sim.addComment(projectId, reviewId, '  按钮颜色不对\n改成蓝色  ');
    h.sim.addComment(projectId, reviewId, '别人的意见', { userId: STRANGER });
    h.sim.addComment(projectId, reviewId, '\n\n  日志   太多  ');
    h.sim.addComment(projectId, reviewId, '按钮颜色不对');
    const outcome = await processAcceptance(h.deps, taskId, true);
    const [rework] = reworkTasks('部署');
    expect(outcome).toEqual({ status: 'rework', reworkKey: rework!.id, feedback: 3 });
    expect(rework!.priority).toBe(5);
    expect(rework!.items?.map((i) => i.title)).toEqual(['按钮颜色不对', '日志 太多', '按钮颜色不对 (3)']);
    expect(rework!.desc).toBe('按钮颜色不对\n改成蓝色\n\n日志   太多\n\n按钮颜色不对');
    const state = await h.state();
    const reworkWork = state.works[rework!.id]!;
    expect(reworkWork.reworkOf).toBe(taskId);
    expect(reworkWork.steps.map((s) => [s.title, s.origin])).toEqual([
      ['按钮颜色不对', 'human'],
      ['日志 太多', 'human'],
      ['按钮颜色不对 (3)', 'human'],
    ]);
    const work = state.works[taskId]!;
    expect([work.phase, work.outcome, work.acceptance?.closed, work.acceptance?.reworkTaskId]).toEqual(['closed', 'rework', true, rework!.id]);
    expect(work.acceptance?.handledCommentIds).toHaveLength(3);
    expect(h.sim.getTask(reviewId)?.status).toBe(2);
    expect(h.sim.listComments(reviewId).filter((c) => c.title === ack('部署'))).toHaveLength(1);
    expect(Object.keys(state.pendingCreates)).toEqual([]);
  });

  it('feedback written just before the todo was completed is still rework; a draft review reworks at low priority', async () => {
    const { taskId, reviewId } = await inReview('草稿活', 3);
    await h.deps.state.update((s) => {
      s.works[taskId]!.priority = 0;
    });
    h.sim.addComment(projectId, reviewId, '还差测试');
    h.sim.editTask(reviewId, { status: 2 });
    const outcome = await processAcceptance(h.deps, taskId, false);
    expect(outcome).toMatchObject({ status: 'rework', feedback: 1 });
    expect(reworkTasks('草稿活')[0]?.priority).toBe(1);
  });

  it('a rework cut short after it was filed is finished by the next look: one rework task, one acknowledgement', async () => {
    const { taskId, reviewId } = await inReview();
    h.sim.addComment(projectId, reviewId, '再检查一遍');
    h.sim.injectFault({ route: 'POST /project/{pid}/task/{tid}/complete', kind: 'status', status: 500 });
    await expect(processAcceptance(h.deps, taskId, true)).rejects.toBeDefined();
    const cut = (await h.state()).works[taskId]!;
    expect(cut.phase).toBe('accepting');
    expect(cut.acceptance?.reworkTaskId).toBeDefined();
    const again = await processAcceptance(h.deps, taskId, true);
    expect(again).toEqual({ status: 'rework', reworkKey: cut.acceptance!.reworkTaskId, feedback: 0 });
    expect(reworkTasks('部署')).toHaveLength(1);
    expect(h.sim.listComments(reviewId).filter((c) => c.title === ack('部署'))).toHaveLength(1);
    expect(h.sim.getTask(reviewId)?.status).toBe(2);
  });

  it('late feedback on a review still open after its rework was filed is added to the rework Work once', async () => {
    const { taskId, reviewId } = await inReview();
    h.sim.addComment(projectId, reviewId, '第一条');
    h.sim.injectFault({ route: 'POST /project/{pid}/task/{tid}/complete', kind: 'status', status: 500 });
    await expect(processAcceptance(h.deps, taskId, true)).rejects.toBeDefined();
    const reworkId = (await h.state()).works[taskId]!.acceptance!.reworkTaskId!;
    // Nothing new: the rework task is not written at all.
    let writes = 0;
    const off = h.sim.onRequest((req) => {
      if (req.route === 'POST /task/{tid}') writes++;
    });
    const revBefore = (await h.state()).works[reworkId]!.rev;
    expect(await lateFeedback(h.deps, taskId)).toBe(0);
    off();
    expect(writes).toBe(0);
    expect((await h.state()).works[reworkId]!.rev).toBe(revBefore);
    h.sim.addComment(projectId, reviewId, '第一条');
    h.sim.addComment(projectId, reviewId, '第一条');
    h.sim.addComment(projectId, reviewId, '第二条\n细节');
    expect(await lateFeedback(h.deps, taskId)).toBe(3);
    const rework = (await h.state()).works[reworkId]!;
    // Titles already taken are numbered on: (2), then (3).
    expect(rework.steps.map((s) => [s.title, s.status, s.origin])).toEqual([
      ['第一条', 'pending', 'human'],
      ['第一条 (2)', 'pending', 'human'],
      ['第一条 (3)', 'pending', 'human'],
      ['第二条', 'pending', 'human'],
    ]);
    expect(rework.nextStepNumber).toBe(5);
    expect(h.sim.getTask(reworkId)?.items?.map((i) => i.title)).toEqual(['第一条', '第一条 (2)', '第一条 (3)', '第二条']);
    expect(h.sim.getTask(reworkId)?.desc).toBe('第一条\n\n第一条\n\n第一条\n\n第二条\n细节');
    expect(rework.pendingDesc).toBeUndefined();
    expect(await lateFeedback(h.deps, taskId)).toBe(0);
    // A rework Work no longer open takes no more feedback.
    h.sim.addComment(projectId, reviewId, '第三条');
    await h.deps.state.update((s) => {
      s.works[reworkId]!.phase = 'closed';
    });
    expect(await lateFeedback(h.deps, taskId)).toBe(0);
    expect((await h.state()).works[reworkId]!.steps).toHaveLength(4);
  });

  it('no late feedback without a rework, and none for a Work that was never reviewed', async () => {
    const { taskId, reviewId } = await inReview();
    h.sim.addComment(projectId, reviewId, '意见');
    expect(await lateFeedback(h.deps, taskId)).toBe(0);
    expect((await h.state()).works[taskId]?.acceptance?.handledCommentIds).toEqual([]);
  });
});

describe('ownerFeedback', () => {
  const deps = { locale: zh } as Parameters<typeof ownerFeedback>[0];
  const at = (s: number) => `2026-11-30T02:00:${String(s).padStart(2, '0')}.000+0000`;
  const review = (fields: Partial<NonNullable<ReturnType<typeof makeWork>['acceptance']>> = {}) =>
    makeWork([], { phase: 'accepting', acceptance: { taskId: 'r1', ownerUserId: 'owner', anchorCommentId: 'a', handledCommentIds: ['h'], closed: false, ...fields } });

  it('only the owner’s unhandled comments from the anchor on, oldest first (ties by id), never the anchor itself', () => {
    const comments = [
      { id: 'a', title: zh.t('dida.acceptance.anchor'), userId: 'owner', createdTime: at(10) },
      { id: 'before', title: '早了', userId: 'owner', createdTime: at(9) },
      { id: 'z', title: '同时 z', userId: 'owner', createdTime: at(10) },
      { id: 'late', title: '晚的', userId: 'owner', createdTime: at(30) },
      { id: 'y', title: '同时 y', userId: 'owner', createdTime: at(10) },
      { id: 'h', title: '处理过', userId: 'owner', createdTime: at(20) },
      { id: 'x', title: '别人', userId: 'other', createdTime: at(20) },
    ];
    expect(ownerFeedback(deps, review(), comments).map((c) => c.id)).toEqual(['y', 'z', 'late']);
  });

  it('without a known owner there is no feedback; without the anchor in the list every owner comment counts', () => {
    const comments = [{ id: 'c', title: '意见', userId: 'owner', createdTime: at(1) }];
    expect(ownerFeedback(deps, review({ ownerUserId: undefined }), comments)).toEqual([]);
    expect(ownerFeedback(deps, makeWork([]), comments)).toEqual([]);
    expect(ownerFeedback(deps, review({ anchorCommentId: 'gone' }), comments).map((c) => c.id)).toEqual(['c']);
  });
});
