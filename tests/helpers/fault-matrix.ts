// The fault matrix: every Dida fault kind at every request position of the engine's operations; then a retry must converge.
// The test files engine-faults-{steps,review,sessions}.test.ts each run the operations of one concern, so they run in parallel.
import { afterAll, describe, expect, it } from 'vitest';
import { bindList, type ConfigPort } from '../../src/core/queue/bindings';
import { WorkError } from '../../src/core/work/engine-context';
import { defaultConfig, type DidaTodoConfig } from '../../src/store/config-schema';
import { findBinding } from '../../src/store/config-bindings';
import type { StepChange } from '../../src/core/work/step-change';
import { isDidaError } from '../../src/dida/dida-error';
import { startSimulator, type SimFault, type Simulator } from '../../src/sim/simulator';
import { startEngineHarness, type EngineHarness } from './engine-harness';

const S = 'session-1';
const TITLE = '整理发布说明';
const BODY = '请按模块分组';
const HUMAN_ITEM = '收集变更';
const ACCEPTANCE = `🧑‍🔬 待验收：${TITLE}`;
const REWORK = `返工：${TITLE}`;
const FEEDBACK = '第二节补充数据库迁移说明';
const PROGRESS = /^(开始处理|已完成|已跳过)：/;

/** An in-memory config.yaml per harness, for the bind scenario. */
const configs = new WeakMap<EngineHarness, ConfigPort>();
function configFor(h: EngineHarness): ConfigPort {
  let port = configs.get(h);
  if (!port) {
    let config: DidaTodoConfig = defaultConfig();
    port = { read: async () => structuredClone(config), update: async (fn) => (config = fn(structuredClone(config))) };
    configs.set(h, port);
  }
  return port;
}

const FAULTS: Array<[string, Omit<SimFault, 'skip' | 'times'>]> = [
  ['401', { kind: 'status', status: 401 }],
  ['403', { kind: 'status', status: 403 }],
  ['404', { kind: 'status', status: 404 }],
  ['429', { kind: 'status', status: 429, retryAfter: 1 }],
  ['500', { kind: 'status', status: 500 }],
  ['503', { kind: 'status', status: 503 }],
  ['timeout', { kind: 'timeout' }],
  ['drop', { kind: 'drop' }],
  ['truncate', { kind: 'truncate' }],
  ['400', { kind: 'status', status: 400 }],
  ['empty', { kind: 'empty', status: 201 }],
];

interface Ctx {
  listId: string;
  taskId: string;
  extra: Record<string, string>;
}

interface Scenario {
  name: string;
  /**
   * Which test file runs it: the operations that write steps and progress; those that settle a Work and follow its
   * review; or those that make, bind, claim, park and resume Works (the sessions' side).
   */
  concern: 'steps' | 'review' | 'sessions';
  /** Brings the world to just before the operation. */
  setup(h: EngineHarness): Promise<Ctx>;
  /** The operation; resolves false (or throws) when it did not complete. */
  op(h: EngineHarness, ctx: Ctx): Promise<boolean>;
  /** What a caller does after faults clear: call again / settle again / sync again. */
  retry(h: EngineHarness, ctx: Ctx): Promise<void>;
  /** The converged world. */
  check(h: EngineHarness, ctx: Ctx): Promise<void>;
  /** Faults besides a 404 on cleanup that the operation may absorb and still complete. */
  tolerates?: string[];
  /** Needs a simulator of its own per cell (the operation depends on account-wide state, e.g. list names). */
  ownSimulator?: boolean;
}

async function humanWork(h: EngineHarness): Promise<Ctx> {
  const list = h.sim.seedProject({ name: '工作清单' });
  const task = h.sim.seedTask({ projectId: list.id, title: TITLE, content: BODY, priority: 3, items: [{ title: HUMAN_ITEM }], tags: ['发布'] });
  await h.engine.sync(list.id);
  await h.engine.switchTo(S, list.id, task.id);
  await h.engine.changeSteps(S, [{ op: 'add', title: '写草稿' }]);
  return { listId: list.id, taskId: task.id, extra: {} };
}

async function settledWork(h: EngineHarness): Promise<Ctx> {
  const ctx = await humanWork(h);
  await h.engine.changeSteps(S, [
    { op: 'update', step: HUMAN_ITEM, status: 'completed', resolution: '整理出 12 条变更' },
    { op: 'update', step: '写草稿', status: 'skipped', resolution: '已有草稿' },
  ]);
  return ctx;
}

async function finalized(h: EngineHarness): Promise<boolean> {
  return (await h.engine.settle(S)).some((r) => r.outcome.status === 'finalized' || r.outcome.status === 'already');
}

function acceptances(h: EngineHarness, ctx: Ctx) {
  return h.sim.listTasks(ctx.listId, { includeCompleted: true }).filter((t) => t.title === ACCEPTANCE);
}

/** Calls step changes again the way a model would: a step that already exists is not added twice. */
async function changeAgain(h: EngineHarness, changes: Parameters<EngineHarness['engine']['changeSteps']>[1]): Promise<void> {
  try {
    await h.engine.changeSteps(S, changes);
  } catch (error) {
    if (!(error instanceof WorkError && error.code === 'duplicate_step')) throw error;
    await h.engine.changeSteps(S, changes.filter((c) => c.op !== 'add'));
  }
}

async function expectFinalizedOnce(h: EngineHarness, ctx: Ctx): Promise<void> {
  const task = h.sim.getTask(ctx.taskId);
  expect(task?.status).toBe(2);
  expect(acceptances(h, ctx)).toHaveLength(1);
  const acceptance = acceptances(h, ctx)[0]!;
  // An anchor only where the owner was not known when the review was filed (a claim's answer names them); never two.
  expect(h.sim.listComments(acceptance.id).filter((c) => c.title.startsWith('需要返工时')).length).toBeLessThanOrEqual(1);
  expect(h.sim.listComments(ctx.taskId).filter((c) => c.title.includes('全部步骤都已处理'))).toHaveLength(1);
  const work = (await h.state()).works[ctx.taskId];
  expect(work?.phase).toBe('accepting');
  expect(work?.acceptance?.taskId).toBe(acceptance.id);
}

/** The step changes of the changeSteps scenarios, and what Dida shows once the rest are done. */
const FIRST_CHANGES: StepChange[] = [
  { op: 'update', step: HUMAN_ITEM, status: 'completed', resolution: '整理出 12 条变更' },
  { op: 'update', step: '写草稿', status: 'in_progress' },
  { op: 'add', title: '核对链接' },
];
const LAST_CHANGES: StepChange[] = [
  { op: 'update', step: '写草稿', status: 'completed', resolution: '草稿写好了' },
  { op: 'update', step: '核对链接', status: 'completed', resolution: '链接都能打开' },
];
const ALL_TICKED = [
  [HUMAN_ITEM, 1],
  ['写草稿', 1],
  ['核对链接', 1],
];

const SCENARIOS: Scenario[] = [
  {
    name: 'changeSteps',
    concern: 'steps',
    setup: humanWork,
    op: async (h) => {
      await h.engine.changeSteps(S, FIRST_CHANGES);
      return true;
    },
    retry: async (h) => {
      await changeAgain(h, FIRST_CHANGES);
      await h.engine.changeSteps(S, LAST_CHANGES);
      expect(await finalized(h)).toBe(true);
    },
    check: async (h, ctx) => {
      expect(h.sim.getTask(ctx.taskId)?.items?.map((i) => [i.title, i.status])).toEqual(ALL_TICKED);
      const work = (await h.state()).works[ctx.taskId];
      expect(work?.steps.filter((s) => s.status !== 'deleted').map((s) => [s.title, s.origin])).toEqual([
        [HUMAN_ITEM, 'human'],
        ['写草稿', 'agent'],
        ['核对链接', 'agent'],
      ]);
      await expectFinalizedOnce(h, ctx);
    },
  },
  {
    // A tool call: no request before its result; the faults hit the background writer's flush, which keeps the
    // change and tells the model (news) instead of throwing. It completes only when Dida shows everything.
    name: 'changeSteps in the background (the writer’s flush)',
    concern: 'steps',
    setup: humanWork,
    op: async (h, ctx) => {
      await h.engine.changeSteps(
        S,
        FIRST_CHANGES,
        undefined,
        { background: true },
      );
      const before = h.sim.totalRequests();
      await h.engine.flushComments();
      const state = await h.state();
      const work = state.works[ctx.taskId]!;
      const written = work.pendingSince === undefined && !work.writeFailure && state.outbox.length === 0;
      // A write that did not go through is told to the model at its next call (a comment that did not is kept).
      if (work.pendingSince !== undefined) expect(work.news?.failure).toBeDefined();
      expect(h.sim.totalRequests()).toBeGreaterThan(before);
      return written;
    },
    retry: async (h) => {
      await changeAgain(h, FIRST_CHANGES);
      await h.engine.changeSteps(
        S,
        LAST_CHANGES,
        undefined,
        { background: true },
      );
      expect(await finalized(h)).toBe(true);
    },
    check: async (h, ctx) => {
      expect(h.sim.getTask(ctx.taskId)?.items?.map((i) => [i.title, i.status])).toEqual(ALL_TICKED);
      await expectFinalizedOnce(h, ctx);
      expect((await h.state()).works[ctx.taskId]?.pendingSince).toBeUndefined();
    },
  },
  {
    name: 'settle (finalization)',
    concern: 'review',
    setup: settledWork,
    op: finalized,
    retry: async (h, ctx) => {
      if (!(await finalized(h))) await h.engine.sync(ctx.listId);
      await h.engine.sync(ctx.listId);
      await h.engine.settle(S);
    },
    check: async (h, ctx) => {
      expect(h.sim.getTask(ctx.taskId)?.items?.map((i) => [i.title, i.status])).toEqual([
        [HUMAN_ITEM, 1],
        ['写草稿', 0],
      ]);
      await expectFinalizedOnce(h, ctx);
    },
  },
  {
    name: 'processAcceptance (rework)',
    concern: 'review',
    setup: async (h) => {
      const ctx = await settledWork(h);
      expect(await finalized(h)).toBe(true);
      const acceptance = acceptances(h, ctx)[0]!;
      h.sim.addComment(ctx.listId, acceptance.id, FEEDBACK, { userId: Number(h.sim.userId) });
      ctx.extra.acceptanceId = acceptance.id;
      return ctx;
    },
    op: async (h, ctx) => {
      const report = await h.engine.sync(ctx.listId);
      return report.reworks.length === 1 && report.errors.length === 0;
    },
    retry: async (h, ctx) => {
      await h.engine.sync(ctx.listId);
      await h.engine.sync(ctx.listId);
    },
    check: async (h, ctx) => {
      const reworks = h.sim.listTasks(ctx.listId, { includeCompleted: true }).filter((t) => t.title === REWORK);
      expect(reworks).toHaveLength(1);
      expect(reworks[0]?.items?.map((i) => i.title)).toEqual([FEEDBACK]);
      expect(h.sim.getTask(ctx.extra.acceptanceId!)?.status).toBe(2);
      expect(h.sim.listComments(ctx.extra.acceptanceId!).filter((c) => c.title.startsWith('已收到你的反馈'))).toHaveLength(1);
      const state = await h.state();
      const reworkWorks = Object.values(state.works).filter((w) => w.title === REWORK);
      expect(reworkWorks).toHaveLength(1);
      expect(reworkWorks[0]).toMatchObject({ taskId: reworks[0]!.id, phase: 'open', reworkOf: ctx.taskId });
      expect(state.works[ctx.taskId]).toMatchObject({ phase: 'closed', outcome: 'rework' });
      expect(acceptances(h, ctx)).toHaveLength(1);
    },
  },
  {
    name: 'sync (a person added an item)',
    concern: 'steps',
    setup: async (h) => {
      const ctx = await humanWork(h);
      const task = h.sim.getTask(ctx.taskId)!;
      h.sim.editTask(ctx.taskId, { items: [...(task.items ?? []), { title: '人加的一步', status: 0 }] });
      return ctx;
    },
    op: async (h, ctx) => {
      const report = await h.engine.sync(ctx.listId);
      return report.errors.length === 0 && report.updated.includes(ctx.taskId);
    },
    retry: async (h, ctx) => {
      await h.engine.sync(ctx.listId);
    },
    check: async (h, ctx) => {
      const work = (await h.state()).works[ctx.taskId];
      expect(work?.steps.filter((s) => s.status !== 'deleted').map((s) => [s.title, s.origin])).toEqual([
        [HUMAN_ITEM, 'human'],
        ['写草稿', 'agent'],
        ['人加的一步', 'human'],
      ]);
      expect(h.sim.getTask(ctx.taskId)?.items?.map((i) => i.title)).toEqual([HUMAN_ITEM, '写草稿', '人加的一步']);
    },
  },
  {
    name: 'createWork',
    concern: 'sessions',
    setup: humanWork,
    // Dida created the task but the answer was cut off: the engine finds it instead of leaving an orphan.
    tolerates: ['truncate'],
    op: async (h, ctx) => {
      await h.engine.createWork(S, ctx.listId, { title: '新需求', steps: ['第一步', '第二步'], level: 'high' });
      return true;
    },
    retry: async (h, ctx) => {
      const known = Object.values((await h.state()).works).some((w) => w.title === '新需求');
      if (!known) await h.engine.createWork(S, ctx.listId, { title: '新需求', steps: ['第一步', '第二步'], level: 'high' });
    },
    check: async (h, ctx) => {
      const created = h.sim.listTasks(ctx.listId, { includeCompleted: true }).filter((t) => t.title === '新需求');
      expect(created).toHaveLength(1);
      expect(created[0]?.items?.map((i) => i.title)).toEqual(['第一步', '第二步']);
      const works = Object.values((await h.state()).works).filter((w) => w.title === '新需求');
      expect(works).toHaveLength(1);
      expect(works[0]?.steps.map((s) => [s.title, s.origin])).toEqual([
        ['第一步', 'agent'],
        ['第二步', 'agent'],
      ]);
      expect((await h.engine.currentWork(S))?.taskId).toBe(created[0]?.id);
    },
  },
  {
    name: 'bindList',
    concern: 'sessions',
    ownSimulator: true,
    setup: humanWork,
    op: async (h, ctx) => {
      await bindList(h.gateway, configFor(h), '/work/bound', { name: '新列表' });
      ctx.extra.bound = 'yes';
      return true;
    },
    retry: async (h) => {
      await bindList(h.gateway, configFor(h), '/work/bound', { name: '新列表' });
    },
    check: async (h) => {
      const lists = h.sim.listProjects().filter((p) => p.name === '新列表');
      expect(lists).toHaveLength(1);
      expect(findBinding(await configFor(h).read(), '/work/bound')?.projectId).toBe(lists[0]?.id);
    },
  },
  {
    name: 'waitForHuman',
    concern: 'sessions',
    setup: humanWork,
    op: async (h) => {
      await h.engine.waitForHuman(S, '需要你开通发布权限');
      return true;
    },
    retry: async (h) => {
      await h.engine.waitForHuman(S, '需要你开通发布权限');
    },
    check: async (h, ctx) => {
      expect(h.sim.getTask(ctx.taskId)?.priority).toBe(0);
      const reminders = h.sim.listTasks(ctx.listId, { includeCompleted: true }).filter((t) => t.title.startsWith('🙋'));
      expect(reminders).toHaveLength(1);
      expect(reminders[0]).toMatchObject({ status: 0, priority: 3 });
      expect(h.sim.listComments(ctx.taskId).filter((c) => c.title.startsWith('需要你帮忙：需要你开通发布权限'))).toHaveLength(1);
      const work = (await h.state()).works[ctx.taskId];
      expect(work?.waiting).toMatchObject({ applied: true, previousPriority: 3, reminderTaskId: reminders[0]!.id });
      expect(work?.steps.map((s) => s.status)).toEqual(['pending', 'pending']);
      const queue = await h.engine.queue(ctx.listId);
      expect(queue.skipped.map((s) => s.reason)).toEqual(['waiting_for_human']);
    },
  },
  {
    name: 'resume',
    concern: 'sessions',
    setup: async (h) => {
      const ctx = await humanWork(h);
      await h.engine.waitForHuman(S, '需要你开通发布权限');
      ctx.extra.reminderId = (await h.state()).works[ctx.taskId]!.waiting!.reminderTaskId!;
      return ctx;
    },
    op: async (h) => {
      await h.engine.resume(S);
      return true;
    },
    retry: async (h, ctx) => {
      try {
        await h.engine.resume(S);
      } catch (error) {
        if (!(error instanceof WorkError && error.code === 'not_waiting')) throw error;
      }
      await h.engine.sync(ctx.listId);
    },
    check: async (h, ctx) => {
      expect(h.sim.getTask(ctx.taskId)?.priority).toBe(3);
      expect(h.sim.getTask(ctx.extra.reminderId!)?.status).toBe(2);
      expect(h.sim.listComments(ctx.taskId).filter((c) => c.title === '已恢复处理。')).toHaveLength(1);
      const work = (await h.state()).works[ctx.taskId];
      expect(work?.waiting).toBeUndefined();
      expect(work?.priority).toBe(3);
      const queue = await h.engine.queue(ctx.listId);
      expect(queue.ranked.map((r) => r.candidate.taskId)).toEqual([ctx.taskId]);
    },
  },
  {
    name: 'switchTo',
    concern: 'sessions',
    setup: async (h) => {
      const list = h.sim.seedProject({ name: '工作清单' });
      const task = h.sim.seedTask({ projectId: list.id, title: TITLE, content: BODY, priority: 3, items: [{ title: HUMAN_ITEM }], tags: ['发布'] });
      await h.engine.sync(list.id);
      return { listId: list.id, taskId: task.id, extra: {} };
    },
    op: async (h, ctx) => (await h.engine.switchTo(S, ctx.listId, ctx.taskId)).taskId === ctx.taskId,
    retry: async (h, ctx) => {
      await h.engine.switchTo(S, ctx.listId, ctx.taskId);
    },
    check: async (h, ctx) => {
      expect((await h.engine.currentWork(S))?.taskId).toBe(ctx.taskId);
      expect(h.sim.listComments(ctx.taskId).filter((c) => c.title.startsWith('🤖'))).toHaveLength(1);
    },
  },
  {
    name: 'changeSteps (the person unticked and added meanwhile)',
    concern: 'steps',
    setup: async (h) => {
      const ctx = await humanWork(h);
      await h.engine.changeSteps(S, [{ op: 'update', step: HUMAN_ITEM, status: 'completed', resolution: '整理出 12 条变更' }]);
      const task = h.sim.getTask(ctx.taskId)!;
      h.sim.editTask(ctx.taskId, { items: [...(task.items ?? []).map((i) => (i.title === HUMAN_ITEM ? { ...i, status: 0 } : i)), { title: '人加的一步', status: 0 }] });
      return ctx;
    },
    op: async (h) => {
      await h.engine.changeSteps(S, [{ op: 'update', step: '写草稿', status: 'completed', resolution: '草稿写好了' }]);
      return true;
    },
    retry: async (h) => {
      await h.engine.changeSteps(S, [{ op: 'update', step: '写草稿', status: 'completed', resolution: '草稿写好了' }]);
      await h.engine.sync((await h.engine.currentWork(S))!.projectId);
    },
    check: async (h, ctx) => {
      expect(h.sim.getTask(ctx.taskId)?.items?.map((i) => [i.title, i.status])).toEqual([
        [HUMAN_ITEM, 0],
        ['写草稿', 1],
        ['人加的一步', 0],
      ]);
      const work = (await h.state()).works[ctx.taskId];
      expect(work?.steps.filter((s) => s.status !== 'deleted').map((s) => [s.title, s.status])).toEqual([
        [HUMAN_ITEM, 'pending'],
        ['写草稿', 'completed'],
        ['人加的一步', 'pending'],
      ]);
    },
  },
  {
    name: 'flushComments (the progress outbox)',
    concern: 'steps',
    setup: async (h) => {
      const ctx = await humanWork(h);
      await h.engine.changeSteps(S, [
        { op: 'update', step: HUMAN_ITEM, status: 'in_progress' },
        { op: 'update', step: '写草稿', status: 'completed', resolution: '草稿写好了' },
      ]);
      await h.engine.changeSteps(S, [{ op: 'update', step: HUMAN_ITEM, status: 'completed', resolution: '整理出 12 条变更' }]);
      return ctx;
    },
    op: async (h) => (await h.engine.flushComments()) === 0,
    retry: async (h) => {
      await h.engine.flushComments();
    },
    check: async (h, ctx) => {
      const notes = h.sim.listComments(ctx.taskId).flatMap((c) => c.title.split('\n\n')).filter((t) => PROGRESS.test(t));
      // The start of a step finished in the same window is not posted; each finish is posted once.
      expect(notes.sort()).toEqual([`已完成：${HUMAN_ITEM}\n结果：整理出 12 条变更`, '已完成：写草稿\n结果：草稿写好了'].sort());
      expect((await h.state()).outbox).toEqual([]);
    },
  },
  {
    name: 'changeSteps (rename and delete the agent’s steps)',
    concern: 'steps',
    setup: async (h) => {
      const ctx = await humanWork(h);
      await h.engine.changeSteps(S, [{ op: 'add', title: '多余的一步' }]);
      return ctx;
    },
    op: async (h) => {
      await h.engine.changeSteps(S, [
        { op: 'update', step: '写草稿', title: '写初稿' },
        { op: 'delete', step: '多余的一步' },
      ]);
      return true;
    },
    retry: async (h) => {
      const work = (await h.engine.currentWork(S))!;
      const left = work.steps.filter((s) => s.status !== 'deleted').map((s) => s.title);
      const changes: StepChange[] = [];
      if (left.includes('写草稿')) changes.push({ op: 'update', step: '写草稿', title: '写初稿' });
      if (left.includes('多余的一步')) changes.push({ op: 'delete', step: '多余的一步' });
      if (changes.length) await h.engine.changeSteps(S, changes);
      await h.engine.sync(work.projectId);
    },
    check: async (h, ctx) => {
      expect(h.sim.getTask(ctx.taskId)?.items?.map((i) => i.title)).toEqual([HUMAN_ITEM, '写初稿']);
      const work = (await h.state()).works[ctx.taskId];
      expect(work?.steps.filter((s) => s.status !== 'deleted').map((s) => [s.title, s.origin])).toEqual([
        [HUMAN_ITEM, 'human'],
        ['写初稿', 'agent'],
      ]);
    },
  },
  {
    name: 'claimNext',
    concern: 'sessions',
    setup: async (h) => {
      const list = h.sim.seedProject({ name: '工作清单' });
      const task = h.sim.seedTask({ projectId: list.id, title: TITLE, content: BODY, priority: 3, items: [{ title: HUMAN_ITEM }], tags: ['发布'] });
      await h.engine.sync(list.id);
      return { listId: list.id, taskId: task.id, extra: {} };
    },
    op: async (h, ctx) => (await h.engine.claimNext(S, ctx.listId))?.taskId === ctx.taskId,
    retry: async (h, ctx) => {
      await h.engine.claimNext(S, ctx.listId);
    },
    check: async (h, ctx) => {
      expect((await h.engine.currentWork(S))?.taskId).toBe(ctx.taskId);
      expect(h.sim.listComments(ctx.taskId).filter((c) => c.title.startsWith('🤖'))).toHaveLength(1);
    },
  },
  {
    name: 'sync (the person accepted)',
    concern: 'review',
    setup: async (h) => {
      const ctx = await settledWork(h);
      expect(await finalized(h)).toBe(true);
      const acceptance = acceptances(h, ctx)[0]!;
      h.sim.editTask(acceptance.id, { status: 2 });
      return ctx;
    },
    op: async (h, ctx) => {
      const report = await h.engine.sync(ctx.listId);
      return report.accepted.length === 1 && report.errors.length === 0;
    },
    retry: async (h, ctx) => {
      await h.engine.sync(ctx.listId);
    },
    check: async (h, ctx) => {
      expect((await h.state()).works[ctx.taskId]).toMatchObject({ phase: 'closed', outcome: 'accepted' });
      expect(h.sim.listTasks(ctx.listId, { includeCompleted: true }).filter((t) => t.title === REWORK)).toEqual([]);
    },
  },
  {
    name: 'sync (the person re-opened the Work)',
    concern: 'review',
    setup: async (h) => {
      const ctx = await settledWork(h);
      expect(await finalized(h)).toBe(true);
      const done = h.sim.getTask(ctx.taskId)!;
      h.sim.editTask(ctx.taskId, { status: 0, items: [...(done.items ?? []), { title: '再补一节', status: 0 }] });
      return ctx;
    },
    op: async (h, ctx) => {
      const report = await h.engine.sync(ctx.listId);
      return report.reopened.length === 1 && report.errors.length === 0;
    },
    retry: async (h, ctx) => {
      await h.engine.sync(ctx.listId);
      await h.engine.sync(ctx.listId);
    },
    check: async (h, ctx) => {
      const work = (await h.state()).works[ctx.taskId];
      expect(work).toMatchObject({ phase: 'open', round: 2 });
      expect(work?.steps.filter((s) => s.status !== 'deleted').map((s) => [s.title, s.status])).toContainEqual(['再补一节', 'pending']);
      expect(acceptances(h, ctx).map((t) => t.status)).toEqual([2]);
      expect(h.sim.getTask(ctx.taskId)?.status).toBe(0);
    },
  },
  {
    name: 'sync (late feedback on a review in rework)',
    concern: 'review',
    setup: async (h) => {
      const ctx = await settledWork(h);
      expect(await finalized(h)).toBe(true);
      const acceptance = acceptances(h, ctx)[0]!;
      h.sim.addComment(ctx.listId, acceptance.id, FEEDBACK, { userId: Number(h.sim.userId) });
      await h.engine.sync(ctx.listId);
      h.sim.addComment(ctx.listId, acceptance.id, '另外把标题改短一点', { userId: Number(h.sim.userId) });
      ctx.extra.acceptanceId = acceptance.id;
      return ctx;
    },
    op: async (h, ctx) => {
      const report = await h.engine.sync(ctx.listId);
      return report.errors.length === 0 && report.updated.length === 1;
    },
    retry: async (h, ctx) => {
      await h.engine.sync(ctx.listId);
      await h.engine.sync(ctx.listId);
    },
    check: async (h, ctx) => {
      const rework = h.sim.listTasks(ctx.listId, { includeCompleted: true }).filter((t) => t.title === REWORK);
      expect(rework).toHaveLength(1);
      expect(rework[0]?.items?.map((i) => i.title)).toEqual([FEEDBACK, '另外把标题改短一点']);
      expect(rework[0]?.desc).toContain('另外把标题改短一点');
    },
  },
];

/** What must hold right after a failed operation, and after convergence. */
async function invariants(h: EngineHarness, ctx: Ctx): Promise<void> {
  const task = h.sim.getTask(ctx.taskId);
  expect(task?.title).toBe(TITLE);
  expect(task?.tags).toEqual(['发布']);
  expect(task?.items?.filter((i) => i.title === HUMAN_ITEM)).toHaveLength(1);
  const text = `${task?.content ?? ''}\n${task?.desc ?? ''}`;
  expect(text).toContain(BODY);
  expect((task?.desc ?? '').split(BODY).length - 1).toBeLessThanOrEqual(1);
  const state = await h.state();
  const work = state.works[ctx.taskId];
  expect(work).toBeDefined();
  // The task still exists and is open (or finalized by us): the Work must not be closed as if the person did it.
  expect(work?.outcome === 'deleted' || work?.outcome === 'completed_by_human').toBe(false);
  const ids = Object.values(state.works).flatMap((w) => w.steps.map((s) => s.id));
  expect(new Set(ids).size).toBe(ids.length);
  for (const t of h.sim.listTasks(ctx.listId, { includeCompleted: true })) {
    const texts = h.sim.listComments(t.id).map((c) => c.title).filter((c) => !PROGRESS.test(c));
    expect(texts, `comments on "${t.title}"`).toEqual([...new Set(texts)]);
  }
  for (const title of [ACCEPTANCE, REWORK]) {
    expect(h.sim.listTasks(ctx.listId, { includeCompleted: true }).filter((t) => t.title === title).length).toBeLessThanOrEqual(1);
  }
  expect(h.sim.listTasks(ctx.listId, { includeCompleted: true }).filter((t) => t.title.startsWith('🙋')).length).toBeLessThanOrEqual(1);
}

/** Registers the matrix for the operations of one concern (the concerns' files run in parallel). */
export function runFaultMatrix(concern: Scenario['concern']): void {
  const scenarios = SCENARIOS.filter((s) => s.concern === concern);
  /** One simulator per file (each cell seeds its own list); faults are cleared before every cell. */
  let shared: Simulator | undefined;
  async function harness(timeoutMs?: number, own = false): Promise<EngineHarness> {
    if (own) return startEngineHarness(timeoutMs ? { timeoutMs } : {});
    shared ??= await startSimulator();
    shared.clearFaults();
    return startEngineHarness({ sim: shared, ...(timeoutMs ? { timeoutMs } : {}) });
  }

  let cells = 0;
  afterAll(async () => {
    await shared?.close();
    process.stderr.write(`engine fault matrix: ${cells} cells (${scenarios.length} of ${SCENARIOS.length} operations × request positions × ${FAULTS.length} fault kinds)\n`);
  });

  /**
   * Where a fault may hit and the operation still complete: an empty success answer, a progress comment (the outbox keeps it and a later flush
   * posts it), a create whose answer was cut off after Dida made the task (found again by its marker), and a 404 on an
   * optional cleanup call.
   */
  function absorbable(label: string, route: string | undefined, scenario: Scenario): boolean {
    if (label === '404' || (scenario.tolerates ?? []).includes(label)) return true;
    // An empty success answer is read back (writes) or taken as empty (reads); the checks then prove the outcome right.
    if (label === 'empty') return true;
    if (route === 'POST /project/{pid}/task/{tid}/comment') return true;
    return label === 'truncate' && route === 'POST /task';
  }

  describe.each(scenarios)('$name under faults', (scenario) => {
    let positions = 0;
    let routes: string[] = [];

    it('runs and converges without faults; counts its requests', async () => {
      const h = await harness(undefined, scenario.ownSimulator);
      try {
        const ctx = await scenario.setup(h);
        const before = h.sim.totalRequests();
        const seen: string[] = [];
        const stop = h.sim.onRequest((info) => void seen.push(info.route));
        expect(await scenario.op(h, ctx)).toBe(true);
        stop();
        positions = h.sim.totalRequests() - before;
        routes = seen;
        await scenario.retry(h, ctx);
        await scenario.check(h, ctx);
        await invariants(h, ctx);
      } finally {
        await h.close();
      }
      expect(positions).toBeGreaterThan(0);
    });

    it.each(FAULTS)('%s at every request position', async (_label, fault) => {
      expect(positions).toBeGreaterThan(0);
      for (let skip = 0; skip < positions; skip++) {
        const h = await harness(300, scenario.ownSimulator);
        const where = `${scenario.name}, ${_label} at request ${skip + 1}/${positions}`;
        try {
          const ctx = await scenario.setup(h);
          h.sim.resetCounters();
          h.sim.injectFault({ ...fault, skip, times: 1 });
          let completed: boolean;
          try {
            completed = await scenario.op(h, ctx);
          } catch (error) {
            if (!isDidaError(error) && !(error instanceof WorkError)) throw new Error(`${where}: unexpected ${String(error)}`);
            completed = false;
          }
          expect(h.sim.pendingFaults(), where).toEqual([]);
          // Only a fault the operation can absorb may leave it completed; everything else must surface.
          if (completed) expect(absorbable(_label, routes[skip], scenario), `${where} (${routes[skip]}) completed`).toBe(true);
          await invariants(h, ctx);
          h.sim.clearFaults();
          await scenario.retry(h, ctx);
          await scenario.check(h, ctx);
          await invariants(h, ctx);
          cells++;
        } catch (error) {
          if (error instanceof Error) error.message = `[${where}] ${error.message}`;
          throw error;
        } finally {
          await h.close();
        }
      }
    }, 30_000);
  });

}
