// A whole Work lifecycle over real HTTP against the simulator: adopt → plan → complete → settle → accept/rework.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ACCEPTANCE_REMINDERS } from '../../src/core/review/finalize';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';

let h: EngineHarness;
const S = 'session-1';

beforeEach(async () => {
  h = await startEngineHarness();
});
afterEach(async () => {
  await h.close();
});

function commentsOf(taskId: string): string[] {
  return h.sim.listComments(taskId).map((c) => c.title);
}

describe('work lifecycle', () => {
  it('runs a human task from Dida to acceptance and turns an owner comment into rework', async () => {
    const list = h.sim.seedProject({ name: '工作清单' });
    const human = h.sim.seedTask({ projectId: list.id, title: '整理发布说明', content: '请按模块分组', priority: 3, items: [{ title: '收集变更' }, { title: '写草稿' }] });
    const draft = h.sim.seedTask({ projectId: list.id, title: '以后再说', priority: 0 });

    // Opening the list writes nothing to Dida.
    h.sim.resetCounters();
    const queue = await h.engine.queue(list.id);
    expect(Object.keys(h.sim.counters()).filter((r) => !r.startsWith('GET'))).toEqual([]);
    expect(queue.ranked.map((r) => r.candidate.title)).toEqual(['整理发布说明']);
    expect(queue.skipped.map((s) => [s.candidate.title, s.reason])).toEqual([['以后再说', 'draft']]);

    const work = await h.engine.switchTo(S, list.id, human.id);
    expect(work.steps.map((s) => [s.title, s.origin, s.status])).toEqual([
      ['收集变更', 'human', 'pending'],
      ['写草稿', 'human', 'pending'],
    ]);

    await h.engine.changeSteps(S, [{ op: 'update', step: '收集变更', status: 'in_progress' }, { op: 'add', title: '核对链接' }]);
    const mid = h.sim.getTask(human.id);
    expect(mid?.items?.map((i) => i.title)).toEqual(['收集变更', '写草稿', '核对链接']);
    // The body stays where the person wrote it: a checklist task keeps its content, so nothing is moved or copied.
    expect(`${mid?.content ?? ''}|${mid?.desc ?? ''}`.split('请按模块分组')).toHaveLength(2);

    await h.engine.changeSteps(S, [
      { op: 'update', step: '收集变更', status: 'completed', resolution: '从提交记录整理出 12 条变更' },
      { op: 'update', step: '写草稿', status: 'completed', resolution: '草稿已写好并自查' },
      { op: 'update', step: '核对链接', status: 'skipped', resolution: '本次没有外部链接' },
    ]);
    // Not finalized before the session settles.
    expect(h.sim.getTask(human.id)?.status).toBe(0);

    const settled = await h.engine.settle(S);
    expect(settled.map((r) => r.outcome.status)).toEqual(['finalized']);

    const done = h.sim.getTask(human.id);
    expect(done?.status).toBe(2);
    expect(done?.items?.map((i) => [i.title, i.status])).toEqual([
      ['收集变更', 1],
      ['写草稿', 1],
      ['核对链接', 0],
    ]);
    // The human body survives exactly once.
    expect(`${done?.content ?? ''}|${done?.desc ?? ''}`.split('请按模块分组').length - 1).toBe(1);
    // Progress waits in the outbox and goes out coalesced at settle: a step's start and finish are one note.
    expect(commentsOf(human.id)).toEqual([
      '🤖 test-host 开始处理（会话 1）',
      '已完成：收集变更\n结果：从提交记录整理出 12 条变更\n\n已完成：写草稿\n结果：草稿已写好并自查\n\n已跳过：核对链接\n原因：本次没有外部链接\n\n全部步骤都已处理，已提交验收（🧑‍🔬 待验收：整理发布说明）。',
    ]);

    const acceptance = h.sim.listTasks(list.id).find((t) => t.title === '🧑‍🔬 待验收：整理发布说明');
    expect(acceptance).toBeTruthy();
    expect(acceptance?.reminders).toEqual(ACCEPTANCE_REMINDERS);
    expect(acceptance?.priority).toBe(3);
    expect(acceptance?.content).toContain('✅ 收集变更：从提交记录整理出 12 条变更');
    expect(acceptance?.content).toContain('⏭️ 核对链接（未做：本次没有外部链接）');
    expect(acceptance?.content).not.toMatch(/[0-9a-f]{24}/);
    expect(new Date(acceptance?.dueDate?.replace(/(\d{2})(\d{2})$/, '$1:$2') ?? '').getTime()).toBe(h.clock.now + 3 * 60_000);

    // Settling again does nothing new.
    const again = await h.engine.settle(S);
    expect(again.every((r) => r.outcome.status !== 'finalized')).toBe(true);
    expect(h.sim.listTasks(list.id).filter((t) => t.title.startsWith('🧑‍🔬')).length).toBe(1);

    // A comment from someone else is ignored; the owner's comment becomes rework.
    h.sim.addComment(list.id, acceptance!.id, '我觉得挺好', { userId: 555 });
    let report = await h.engine.sync(list.id);
    expect(report.reworks).toEqual([]);
    h.sim.addComment(list.id, acceptance!.id, '第二节补充数据库迁移说明', { userId: Number(h.sim.userId) });
    report = await h.engine.sync(list.id);
    expect(report.reworks).toHaveLength(1);
    const rework = h.sim.listTasks(list.id).find((t) => t.title === '返工：整理发布说明');
    expect(rework?.items?.map((i) => i.title)).toEqual(['第二节补充数据库迁移说明']);
    expect(h.sim.getTask(acceptance!.id)?.status).toBe(2);
    expect(commentsOf(acceptance!.id).filter((c) => c.startsWith('已收到你的反馈'))).toHaveLength(1);

    // Idempotent across restarts: more syncs create nothing new.
    await h.engine.sync(list.id);
    await h.engine.sync(list.id);
    expect(h.sim.listTasks(list.id).filter((t) => t.title.startsWith('返工')).length).toBe(1);
    expect(commentsOf(acceptance!.id).filter((c) => c.startsWith('已收到你的反馈'))).toHaveLength(1);
    // The draft was never touched.
    expect(h.sim.getTask(draft.id)?.etag).toBe(draft.etag);
  });

  it('marks the acceptance accepted when the person completes it', async () => {
    const list = h.sim.seedProject({ name: 'accept' });
    const agentWork = await h.engine.createWork(S, list.id, { title: '加一个健康检查接口', steps: ['写接口', '写测试'], level: 'high' });
    await h.engine.changeSteps(S, [
      { op: 'update', step: '写接口', status: 'completed', resolution: '新增 /healthz' },
      { op: 'update', step: '写测试', status: 'completed', resolution: '单测通过' },
    ]);
    await h.engine.settle(S);
    const acceptance = h.sim.listTasks(list.id).find((t) => t.title.startsWith('🧑‍🔬'));
    expect(acceptance?.priority).toBe(5);
    await h.gateway.completeTask(list.id, acceptance!.id);
    const report = await h.engine.sync(list.id);
    expect(report.accepted).toEqual([agentWork.taskId]);
    const state = await h.state();
    expect(state.works[agentWork.taskId]?.outcome).toBe('accepted');
  });
});

describe('a settled Work whose session ended before settling', () => {
  it('is finalized by a later sync once it has been left alone for a while, but a Work nobody worked on never is', async () => {
    const list = h.sim.seedProject({ name: 'orphan' });
    const task = h.sim.seedTask({ projectId: list.id, title: '遗留任务', priority: 3, items: [{ title: '唯一一步' }] });
    const ticked = h.sim.seedTask({ projectId: list.id, title: '人自己勾完的任务', priority: 3, items: [{ title: '人做的一步' }] });
    await h.engine.sync(list.id);
    await h.engine.switchTo(S, list.id, task.id);
    await h.engine.changeSteps(S, [{ op: 'update', step: '唯一一步', status: 'completed', resolution: '做完了' }]);
    // The person ticks every item of another task in the app; no agent worked on it.
    h.sim.editTask(ticked.id, { items: (h.sim.getTask(ticked.id)?.items ?? []).map((i) => ({ ...i, status: 1 })) });
    // The session ends without settling. A sync soon after leaves the Work alone (a live turn may still add steps).
    await h.engine.sync(list.id);
    expect(h.sim.getTask(task.id)?.status).toBe(0);
    h.clock.now += 11 * 60_000;
    const report = await h.engine.sync(list.id);
    expect(report.finalized).toEqual([task.id]);
    expect(h.sim.getTask(task.id)?.status).toBe(2);
    expect(h.sim.listTasks(list.id).filter((t) => t.title.startsWith('🧑‍🔬')).map((t) => t.title)).toEqual(['🧑‍🔬 待验收：遗留任务']);
    expect(h.sim.getTask(ticked.id)?.status).toBe(0);
  });
});

describe('re-syncing an unchanged list', () => {
  it('neither writes to Dida nor takes the state lock, and a person edit is still picked up', async () => {
    const list = h.sim.seedProject({ name: 'steady' });
    const task = h.sim.seedTask({ projectId: list.id, title: '稳定的任务', priority: 3, items: [{ title: '一步' }] });
    await h.engine.sync(list.id);
    let updates = 0;
    const update = h.deps.state.update;
    h.deps.state.update = (fn) => {
      updates++;
      return update(fn);
    };
    h.sim.resetCounters();
    await h.engine.sync(list.id);
    await h.engine.sync(list.id);
    expect(updates).toBe(0);
    expect(Object.keys(h.sim.counters())).toEqual(['GET /project/{pid}/data']);
    h.sim.editTask(task.id, { title: '人改过的标题' });
    const report = await h.engine.sync(list.id);
    expect(report.updated).toEqual([task.id]);
    expect(updates).toBe(1);
    expect((await h.state()).works[task.id]?.title).toBe('人改过的标题');
  });
});
