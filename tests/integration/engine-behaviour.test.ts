// Engine behaviour over real HTTP against the simulator: bindings, sync, human edits, waiting, keepOpen, remote closes, recurrence, time gates.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bindList, resolveBinding } from '../../src/core/queue/bindings';
import { WorkError } from '../../src/core/work/engine-context';
import { REMINDER_TRIGGERS } from '../../src/core/phone/waiting';
import { formatDidaDate } from '../../src/dida/dida-date';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';
import { memoryConfig } from '../helpers/dsh-fakes';

let h: EngineHarness;
const S = 'session-1';
const DAY = 24 * 60 * 60_000;

beforeEach(async () => {
  h = await startEngineHarness();
});
afterEach(async () => {
  await h.close();
});


async function code(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof WorkError) return error.code;
    throw error;
  }
  return 'ok';
}

function comments(taskId: string): string[] {
  return h.sim.listComments(taskId).map((c) => c.title);
}

/** Syncs the list (a Work exists only once synced) and makes the task the session's current Work. */
async function pick(projectId: string, taskId: string) {
  await h.engine.sync(projectId);
  return h.engine.switchTo(S, projectId, taskId);
}

function writes(): Record<string, number> {
  return Object.fromEntries(Object.entries(h.sim.counters()).filter(([route]) => !route.startsWith('GET')));
}

describe('bindings', () => {
  it('binds by a unique name, creates exactly that name when none exists, refuses an ambiguous name', async () => {
    const config = memoryConfig();
    const existing = h.sim.seedProject({ name: '工作' });
    h.sim.seedProject({ name: '工作', closed: true });
    const bound = await bindList(h.gateway, config, '/repo/a', { name: '工作' });
    expect(bound).toMatchObject({ created: false, project: { id: existing.id } });
    expect((await resolveBinding(config, '/repo/a/src'))?.projectId).toBe(existing.id);

    const before = h.sim.listProjects().length;
    const made = await bindList(h.gateway, config, '/repo/b', { name: '  新清单  ' });
    expect(made.created).toBe(true);
    expect(made.project.name).toBe('新清单');
    expect(h.sim.listProjects()).toHaveLength(before + 1);
    expect(h.sim.listProjects().filter((p) => p.name === '新清单')).toHaveLength(1);
    // Binding the same name again reuses it.
    expect((await bindList(h.gateway, config, '/repo/c', { name: '新清单' })).created).toBe(false);

    h.sim.seedProject({ name: '重名' });
    h.sim.seedProject({ name: '重名' });
    const count = h.sim.listProjects().length;
    expect(await code(bindList(h.gateway, config, '/repo/d', { name: '重名' }))).toBe('list_ambiguous');
    expect(h.sim.listProjects()).toHaveLength(count);
    expect(await resolveBinding(config, '/repo/d')).toBeUndefined();

    // A name that only differs by case, width or punctuation, or a small edit, is a typo: refused, nothing created.
    for (const typo of ['新清丹', '新 清单', '新清单！']) {
      expect(await code(bindList(h.gateway, config, '/repo/e', { name: typo }))).toBe('list_near_miss');
    }
    expect(h.sim.listProjects()).toHaveLength(count);
    expect(await resolveBinding(config, '/repo/e')).toBeUndefined();
    const meant = await bindList(h.gateway, config, '/repo/e', { name: '新清丹' }, { allowNearName: true });
    expect(meant.created).toBe(true);
    expect(h.sim.listProjects()).toHaveLength(count + 1);
  });

  it('binds by id only to an existing open list', async () => {
    const config = memoryConfig();
    const open = h.sim.seedProject({ name: 'open' });
    const closed = h.sim.seedProject({ name: 'archived', closed: true });
    expect((await bindList(h.gateway, config, '/r', { id: open.id })).binding).toMatchObject({ projectId: open.id, label: 'open' });
    expect(await code(bindList(h.gateway, config, '/r2', { id: closed.id }))).toBe('list_closed');
    expect(await code(bindList(h.gateway, config, '/r3', { id: 'no-such-list' }))).toBe('list_missing');
    expect(config.value.bindings.map((b) => b.projectId)).toEqual([open.id]);
  });

  it('sync reports a bound list that was deleted or archived', async () => {
    const gone = h.sim.seedProject({ name: 'gone' });
    h.sim.seedTask({ projectId: gone.id, title: 'x', priority: 3 });
    const archived = h.sim.seedProject({ name: 'archived' });
    await h.engine.sync(gone.id);
    h.sim.deleteProject(gone.id);
    h.sim.closeProject(archived.id);
    expect(await code(h.engine.sync(gone.id))).toBe('list_missing');
    expect(await code(h.engine.sync(archived.id))).toBe('list_closed');
  });
});

describe('sync', () => {
  it('adopts human tasks without writing anything; drafts stay drafts; bundle tasks are never adopted', async () => {
    const list = h.sim.seedProject({ name: 'l' });
    const a = h.sim.seedTask({ projectId: list.id, title: '修复登录', content: '手机上登录失败', priority: 5, items: [{ title: '复现' }], tags: ['bug'] });
    const draft = h.sim.seedTask({ projectId: list.id, title: '想法', priority: 0 });
    const acceptanceLike = h.sim.seedTask({ projectId: list.id, title: '🧑‍🔬 待验收：旧的', priority: 3 });
    const reminderLike = h.sim.seedTask({ projectId: list.id, title: '🙋 需要你处理：旧的', priority: 3 });
    const snapshot = h.sim.listTasks(list.id).map((t) => [t.id, t.etag]);

    h.sim.resetCounters();
    const queue = await h.engine.queue(list.id);
    await h.engine.sync(list.id);
    expect(writes()).toEqual({});
    expect(h.sim.listTasks(list.id).map((t) => [t.id, t.etag])).toEqual(snapshot);
    expect(h.sim.listComments(a.id)).toEqual([]);

    const state = await h.state();
    expect(Object.values(state.works).filter((w) => w.phase === 'open').map((w) => w.taskId).sort()).toEqual([a.id, draft.id].sort());
    expect(state.works[a.id]).toMatchObject({ origin: 'human', priority: 5, body: '手机上登录失败' });
    // A review todo no record knows (a lost state file) is rebuilt as a review, never adopted as work; a reminder is left alone.
    expect(state.works[acceptanceLike.id]).toMatchObject({ phase: 'accepting', rebuilt: true, title: '旧的', steps: [] });
    expect(state.works[reminderLike.id]).toBeUndefined();
    expect(state.rebuilt.map((r) => r.what)).toEqual(['review todo "旧的"']);
    expect(queue.ranked.map((r) => r.candidate.taskId)).toEqual([a.id]);
    expect(queue.skipped.map((s) => [s.candidate.taskId, s.reason])).toEqual([[draft.id, 'draft']]);

    // A draft is never finalized, even when settled.
    await pick(list.id, draft.id);
    await h.engine.changeSteps(S, [{ op: 'add', title: '记下来', status: 'in_progress' }]);
    await h.engine.changeSteps(S, [{ op: 'update', step: '记下来', status: 'completed', resolution: '已记录' }]);
    const settled = await h.engine.settle(S);
    expect(settled).toEqual([]);
    expect(h.sim.getTask(draft.id)?.status).toBe(0);
    expect(h.sim.listTasks(list.id).filter((t) => t.title.startsWith('🧑‍🔬'))).toHaveLength(1);
  });

  it('never adopts the acceptance todo it filed itself', async () => {
    const list = h.sim.seedProject({ name: 'l' });
    await h.engine.createWork(S, list.id, { title: '加日志', steps: ['加'] });
    await h.engine.changeSteps(S, [{ op: 'update', step: '加', status: 'completed', resolution: '加好了' }]);
    await h.engine.settle(S);
    await h.engine.sync(list.id);
    await h.engine.sync(list.id);
    const state = await h.state();
    expect(Object.values(state.works).map((w) => w.title)).toEqual(['加日志']);
    expect(Object.values(state.ownTasks)).toEqual(['acceptance']);
  });
});

describe('human edits in the Dida app', () => {
  async function workWithSkippedStep() {
    const list = h.sim.seedProject({ name: 'l' });
    const task = h.sim.seedTask({ projectId: list.id, title: '写周报', content: '本周重点', priority: 3 });
    await pick(list.id, task.id);
    await h.engine.changeSteps(S, [{ op: 'add', title: '汇总' }, { op: 'add', title: '配图' }]);
    await h.engine.changeSteps(S, [
      { op: 'update', step: '汇总', status: 'completed', resolution: '汇总完成' },
      { op: 'update', step: '配图', status: 'skipped', resolution: '没有合适的图' },
    ]);
    await h.engine.keepOpen(task.id, true);
    return { list, task };
  }

  it.each([
    ['title', { title: '写周报（含下周计划）' }],
    ['content', { content: '本周重点，另外请配图' }],
  ])('editing the %s reopens skipped steps and clears keepOpen', async (_field, patch) => {
    const { list, task } = await workWithSkippedStep();
    expect(await h.engine.settle(S)).toEqual([]);
    h.sim.editTask(task.id, patch);
    const report = await h.engine.sync(list.id);
    expect(report.updated).toEqual([task.id]);
    const work = await h.engine.getWork(task.id);
    expect(work.keepOpen).toBe(false);
    expect(work.steps.map((s) => [s.title, s.status])).toEqual([
      ['汇总', 'completed'],
      ['配图', 'pending'],
    ]);
    // Not finalizable until the reopened step is settled again.
    expect((await h.engine.settle(S)).map((r) => r.outcome.status)).toEqual([]);
    expect(h.sim.getTask(task.id)?.status).toBe(0);
    // The person's edit survives the next write.
    await h.engine.changeSteps(S, [{ op: 'update', step: '配图', status: 'completed', resolution: '补了两张图' }]);
    expect(h.sim.getTask(task.id)).toMatchObject(patch);
  });

  it('the same edit seen inside a step change (no sync) also reopens skipped steps', async () => {
    const { task } = await workWithSkippedStep();
    h.sim.editTask(task.id, { title: '写周报 v2' });
    const result = await h.engine.changeSteps(S, [{ op: 'add', title: '校对' }]);
    expect(result.work.steps.find((s) => s.title === '配图')?.status).toBe('pending');
    expect(result.work.keepOpen).toBe(false);
    expect(h.sim.getTask(task.id)?.title).toBe('写周报 v2');
  });

  it('our own writes are not mistaken for human edits', async () => {
    const { list, task } = await workWithSkippedStep();
    for (let i = 0; i < 3; i++) await h.engine.sync(list.id);
    const work = await h.engine.getWork(task.id);
    expect(work.keepOpen).toBe(true);
    expect(work.steps.find((s) => s.title === '配图')?.status).toBe('skipped');
    const desc = h.sim.getTask(task.id)?.desc ?? '';
    expect(desc.split('本周重点').length - 1).toBe(1);
  });

  it('items a person adds mid-work are imported and kept on the next write', async () => {
    const list = h.sim.seedProject({ name: 'l' });
    const task = h.sim.seedTask({ projectId: list.id, title: '整理', priority: 3, items: [{ title: '第一步' }] });
    await pick(list.id, task.id);
    await h.engine.changeSteps(S, [{ op: 'add', title: '第二步', status: 'in_progress' }]);
    const current = h.sim.getTask(task.id)!;
    h.sim.editTask(task.id, { items: [...(current.items ?? []), { title: '人加的一步', status: 0 }, { title: '人加且已做', status: 1 }] });

    await h.engine.changeSteps(S, [{ op: 'update', step: '第二步', status: 'completed', resolution: '完成' }, { op: 'add', title: '第三步' }]);
    expect(h.sim.getTask(task.id)?.items?.map((i) => [i.title, i.status])).toEqual([
      ['第一步', 0],
      ['第二步', 1],
      ['人加的一步', 0],
      ['人加且已做', 1],
      ['第三步', 0],
    ]);
    const work = await h.engine.getWork(task.id);
    expect(work.steps.map((s) => [s.title, s.origin, s.status])).toEqual([
      ['第一步', 'human', 'pending'],
      ['第二步', 'agent', 'completed'],
      ['人加的一步', 'human', 'pending'],
      ['人加且已做', 'human', 'completed'],
      ['第三步', 'agent', 'pending'],
    ]);
    // The person's item cannot be renamed or deleted by the agent.
    expect(await code(h.engine.changeSteps(S, [{ op: 'delete', step: '人加的一步' }]))).toBe('human_item_readonly');
    // Another write keeps everything (ids were re-matched after Dida rewrote them).
    await h.engine.changeSteps(S, [{ op: 'update', step: '人加的一步', status: 'in_progress' }]);
    expect(h.sim.getTask(task.id)?.items?.map((i) => i.title)).toEqual(['第一步', '第二步', '人加的一步', '人加且已做', '第三步']);
    expect((await h.engine.getWork(task.id)).steps).toHaveLength(5);
  });

  it('a person ticking an item in Dida completes the step; unticking one the agent completed reopens it', async () => {
    const list = h.sim.seedProject({ name: 'l' });
    const task = h.sim.seedTask({ projectId: list.id, title: '两步', priority: 3, items: [{ title: 'A' }, { title: 'B' }] });
    await pick(list.id, task.id);
    await h.engine.changeSteps(S, [{ op: 'update', step: 'A', status: 'completed', resolution: 'A 完成' }]);
    const items = h.sim.getTask(task.id)!.items!;
    h.sim.editTask(task.id, { items: [{ ...items[0], status: 0 }, { ...items[1], status: 1 }] });
    await h.engine.sync(list.id);
    const work = await h.engine.getWork(task.id);
    expect(work.steps.map((s) => [s.title, s.status])).toEqual([
      ['A', 'pending'],
      ['B', 'completed'],
    ]);
    // The next write keeps the person's untick.
    await h.engine.changeSteps(S, [{ op: 'add', title: 'C' }]);
    expect(h.sim.getTask(task.id)?.items?.map((i) => [i.title, i.status])).toEqual([
      ['A', 0],
      ['B', 1],
      ['C', 0],
    ]);
  });
});

describe('waiting for a person', () => {
  async function waitingWork() {
    const list = h.sim.seedProject({ name: 'l' });
    const task = h.sim.seedTask({ projectId: list.id, title: '部署', priority: 5 });
    await pick(list.id, task.id);
    await h.engine.changeSteps(S, [{ op: 'add', title: '申请权限', status: 'in_progress' }]);
    await h.engine.waitForHuman(S, '需要你在控制台开通部署权限');
    return { list, task };
  }

  it('sets priority 0, files a 🙋 reminder, comments the reason, and the queue skips it', async () => {
    const { list, task } = await waitingWork();
    expect(h.sim.getTask(task.id)?.priority).toBe(0);
    const reminders = h.sim.listTasks(list.id).filter((t) => t.title.startsWith('🙋'));
    expect(reminders.map((t) => t.title)).toEqual(['🙋 需要你处理：部署']);
    expect(reminders[0]).toMatchObject({ reminders: REMINDER_TRIGGERS, priority: 5, content: '需要你在控制台开通部署权限\n\n在这条提醒下留言回答，智能体就会带着你的回答继续。' });
    expect(comments(task.id).filter((c) => c.includes('需要你帮忙：需要你在控制台开通部署权限'))).toHaveLength(1);
    // Steps are not faked complete.
    expect((await h.engine.getWork(task.id)).steps.map((s) => s.status)).toEqual(['in_progress']);
    // Asking again changes nothing.
    await h.engine.waitForHuman(S, '需要你在控制台开通部署权限');
    expect(h.sim.listTasks(list.id).filter((t) => t.title.startsWith('🙋'))).toHaveLength(1);
    expect(comments(task.id).filter((c) => c.includes('需要你帮忙'))).toHaveLength(1);

    const queue = await h.engine.queue(list.id);
    expect(queue.ranked).toEqual([]);
    expect(queue.skipped.map((s) => [s.candidate.taskId, s.reason])).toEqual([[task.id, 'waiting_for_human']]);
    // The reminder is not a Work.
    expect(Object.keys((await h.state()).works)).toEqual([task.id]);
    // Settling never finalizes a waiting Work.
    await h.engine.changeSteps(S, [{ op: 'update', step: '申请权限', status: 'skipped', resolution: '等待权限' }]).catch(() => undefined);
    expect(await h.engine.settle(S)).toEqual([]);
  });

  it('resumes on an explicit call: priority restored, reminder completed, one resumed comment', async () => {
    const { list, task } = await waitingWork();
    const reminderId = (await h.engine.getWork(task.id)).waiting?.reminderTaskId;
    await h.engine.resume(S);
    expect(h.sim.getTask(task.id)?.priority).toBe(5);
    expect(h.sim.getTask(reminderId!)?.status).toBe(2);
    expect(comments(task.id).filter((c) => c === '已恢复处理。')).toHaveLength(1);
    expect((await h.engine.getWork(task.id)).waiting).toBeUndefined();
    expect(await code(h.engine.resume(S))).toBe('not_waiting');
    const queue = await h.engine.queue(list.id);
    expect(queue.ranked.map((r) => r.candidate.taskId)).toEqual([task.id]);
    expect(comments(task.id).filter((c) => c === '已恢复处理。')).toHaveLength(1);
  });

  it('resumes when the person restores the priority in Dida', async () => {
    const { list, task } = await waitingWork();
    const reminderId = (await h.engine.getWork(task.id)).waiting?.reminderTaskId;
    // A sync while still waiting does nothing.
    let report = await h.engine.sync(list.id);
    expect(report.resumed).toEqual([]);
    h.sim.editTask(task.id, { priority: 3 });
    report = await h.engine.sync(list.id);
    expect(report.resumed).toEqual([task.id]);
    expect(h.sim.getTask(task.id)?.priority).toBe(3);
    expect(h.sim.getTask(reminderId!)?.status).toBe(2);
    expect(comments(task.id).filter((c) => c === '已恢复处理。')).toHaveLength(1);
    const work = await h.engine.getWork(task.id);
    expect(work.waiting).toBeUndefined();
    expect(work.priority).toBe(3);
    report = await h.engine.sync(list.id);
    expect(report.resumed).toEqual([]);
    expect(comments(task.id).filter((c) => c === '已恢复处理。')).toHaveLength(1);
  });
});

describe('keepOpen', () => {
  it('blocks finalization until cleared', async () => {
    const list = h.sim.seedProject({ name: 'l' });
    const work = await h.engine.createWork(S, list.id, { title: '持续优化', steps: ['第一轮'] });
    await h.engine.keepOpen(work.taskId, true);
    await h.engine.changeSteps(S, [{ op: 'update', step: '第一轮', status: 'completed', resolution: '完成第一轮' }]);
    expect(await h.engine.settle(S)).toEqual([]);
    await h.engine.sync(list.id);
    expect(h.sim.getTask(work.taskId)?.status).toBe(0);
    expect(h.sim.listTasks(list.id).some((t) => t.title.startsWith('🧑‍🔬'))).toBe(false);
    await h.engine.keepOpen(work.taskId, false);
    expect((await h.engine.settle(S)).map((r) => r.outcome.status)).toEqual(['finalized']);
    expect(h.sim.getTask(work.taskId)?.status).toBe(2);
  });
});

describe('Works closed in Dida meanwhile', () => {
  async function started() {
    const list = h.sim.seedProject({ name: 'l' });
    const task = h.sim.seedTask({ projectId: list.id, title: '任务', priority: 3 });
    await pick(list.id, task.id);
    await h.engine.changeSteps(S, [{ op: 'add', title: '一步', status: 'in_progress' }]);
    return { list, task };
  }

  it('a Work completed in Dida: the step change reports work_completed_remotely and writes nothing', async () => {
    const { task } = await started();
    await h.gateway.completeTask(task.projectId, task.id);
    const etag = h.sim.getTask(task.id)?.etag;
    const count = comments(task.id).length;
    expect(await code(h.engine.changeSteps(S, [{ op: 'update', step: '一步', status: 'completed', resolution: '完成' }]))).toBe('work_completed_remotely');
    expect(h.sim.getTask(task.id)?.etag).toBe(etag);
    expect(comments(task.id)).toHaveLength(count);
    expect(await h.engine.getWork(task.id)).toMatchObject({ phase: 'closed', outcome: 'completed_by_human' });
    expect(await h.engine.currentWork(S)).toBeUndefined();
  });

  it('a Work deleted in Dida: the step change reports work_deleted_remotely', async () => {
    const { task } = await started();
    await h.gateway.deleteTask(task.projectId, task.id);
    expect(await code(h.engine.changeSteps(S, [{ op: 'add', title: '再一步' }]))).toBe('work_deleted_remotely');
    expect(await h.engine.getWork(task.id)).toMatchObject({ phase: 'closed', outcome: 'deleted' });
  });

  it('sync closes Works completed or deleted in Dida', async () => {
    const { list, task } = await started();
    const other = h.sim.seedTask({ projectId: list.id, title: '另一个', priority: 3 });
    await h.engine.sync(list.id);
    await h.gateway.completeTask(list.id, task.id);
    await h.gateway.deleteTask(list.id, other.id);
    const report = await h.engine.sync(list.id);
    expect(report.closed.sort()).toEqual([task.id, other.id].sort());
    const state = await h.state();
    expect(state.works[task.id]).toMatchObject({ phase: 'closed', outcome: 'completed_by_human' });
    expect(state.works[other.id]).toMatchObject({ phase: 'closed', outcome: 'deleted' });
    expect(await h.engine.settle(S)).toEqual([]);
    expect(h.sim.listTasks(list.id, { includeCompleted: true }).filter((t) => t.title.startsWith('🧑‍🔬'))).toEqual([]);
  });
});

describe('recurring tasks', () => {
  it('files one acceptance per occurrence and adopts the next occurrence as a new Work', async () => {
    const list = h.sim.seedProject({ name: 'l' });
    // 09:00 in Asia/Shanghai on the harness day (clock: 10:00 Shanghai).
    const start = h.clock.now - 60 * 60_000;
    const task = h.sim.seedTask({
      projectId: list.id,
      title: '每日巡检',
      priority: 3,
      repeatFlag: 'RRULE:FREQ=DAILY;INTERVAL=1',
      startDate: formatDidaDate(start),
      dueDate: formatDidaDate(start),
      timeZone: 'Asia/Shanghai',
      isAllDay: false,
      items: [{ title: '看监控' }],
    });
    const queue = await h.engine.queue(list.id);
    const first = `${task.id}#2026-11-30`;
    expect(queue.ranked.map((r) => r.candidate.taskId)).toEqual([first]);
    await h.engine.switchTo(S, list.id, first);
    await h.engine.changeSteps(S, [{ op: 'update', step: '看监控', status: 'completed', resolution: '一切正常' }]);
    expect((await h.engine.settle(S)).map((r) => [r.key, r.outcome.status])).toEqual([[first, 'finalized']]);

    // Dida completed this occurrence and moved the task to the next day.
    const moved = h.sim.getTask(task.id)!;
    expect(moved.status).toBe(0);
    expect(moved.startDate).toBe(formatDidaDate(start + DAY));
    const acceptances = () => h.sim.listTasks(list.id, { includeCompleted: true }).filter((t) => t.title === '🧑‍🔬 待验收：每日巡检');
    expect(acceptances()).toHaveLength(1);
    // Settling and syncing again file nothing more for this occurrence.
    await h.engine.settle(S);
    const report = await h.engine.sync(list.id);
    const second = `${task.id}#2026-12-01`;
    expect(report.adopted).toEqual([second]);
    expect(acceptances()).toHaveLength(1);
    const state = await h.state();
    expect(state.works[first]?.phase).toBe('accepting');
    expect(state.works[second]).toMatchObject({ phase: 'open', occurrence: '2026-12-01' });
    expect(state.works[second]?.steps.map((s) => s.status)).toEqual(['pending']);

    // The next day, the next occurrence runs and gets its own acceptance.
    h.clock.now += DAY;
    const next = await h.engine.queue(list.id);
    expect(next.ranked.map((r) => r.candidate.taskId)).toEqual([second]);
    await h.engine.switchTo(S, list.id, second);
    await h.engine.changeSteps(S, [{ op: 'update', step: '看监控', status: 'completed', resolution: '有一个告警，已处理' }]);
    expect((await h.engine.settle(S)).map((r) => [r.key, r.outcome.status])).toEqual([[second, 'finalized']]);
    const all = acceptances();
    expect(all).toHaveLength(2);
    expect(new Set(all.map((t) => t.id)).size).toBe(2);
    const after = await h.state();
    expect(after.works[first]?.acceptance?.taskId).not.toBe(after.works[second]?.acceptance?.taskId);
    await h.engine.sync(list.id);
    await h.engine.settle(S);
    expect(acceptances()).toHaveLength(2);
  });
});

describe('time gate', () => {
  it('skips a task dated tomorrow until its day comes', async () => {
    const list = h.sim.seedProject({ name: 'l' });
    const tomorrow = h.sim.seedTask({ projectId: list.id, title: '明天做', priority: 5, startDate: formatDidaDate(h.clock.now + DAY), isAllDay: false, timeZone: 'Asia/Shanghai' });
    const today = h.sim.seedTask({ projectId: list.id, title: '今天做', priority: 1 });
    let queue = await h.engine.queue(list.id);
    expect(queue.ranked.map((r) => r.candidate.taskId)).toEqual([today.id]);
    expect(queue.skipped.map((s) => [s.candidate.taskId, s.reason, s.gate?.reason])).toEqual([[tomorrow.id, 'time_gate', 'not_today']]);
    h.clock.now += DAY;
    queue = await h.engine.queue(list.id);
    expect(queue.ranked.map((r) => r.candidate.taskId)).toEqual([tomorrow.id, today.id]);
  });
});
