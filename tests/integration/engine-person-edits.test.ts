// The person's edits in Dida are never lost: one test per way they were lost before (issue "Shared truth that holds").
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WorkError } from '../../src/core/work/engine-context';
import { renderWork } from '../../src/core/tools/work-view';
import { isDidaError } from '../../src/dida/dida-error';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';

let h: EngineHarness;
const S = 'session-1';

beforeEach(async () => {
  h = await startEngineHarness();
});
afterEach(async () => {
  await h.close();
});

async function pick(projectId: string, taskId: string) {
  await h.engine.sync(projectId);
  return h.engine.switchTo(S, projectId, taskId);
}

async function outcome(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof WorkError) return error.code;
    if (isDidaError(error)) return `dida:${error.code}`;
    throw error;
  }
  return 'ok';
}

function items(taskId: string): Array<[string, number]> {
  return (h.sim.getTask(taskId)?.items ?? []).map((i) => [i.title, i.status]);
}

/** A person's checklist task whose body lives in the description, picked by the session. */
async function checklistWork() {
  const list = h.sim.seedProject({ name: '清单' });
  const task = h.sim.seedTask({ projectId: list.id, title: '改版首页', desc: '配色用蓝色', priority: 3, items: [{ title: '改导航' }, { title: '改页脚' }] });
  await pick(list.id, task.id);
  return { list, task };
}

describe('1. the description is the body of a checklist task', () => {
  it('an added line reaches the model; a replaced or cleared description is never put back', async () => {
    const { list, task } = await checklistWork();
    h.sim.editTask(task.id, { desc: '配色用蓝色\nUPDATE: also dark mode' });
    const after = await h.engine.changeSteps(S, [{ op: 'update', step: '改导航', status: 'completed', resolution: '导航改好了' }]);
    expect(after.work.body).toContain('UPDATE: also dark mode');
    expect(renderWork(after.work)).toContain('UPDATE: also dark mode');

    h.sim.editTask(task.id, { desc: '完全换一个方向：只做移动端' });
    await h.engine.changeSteps(S, [{ op: 'add', title: '适配移动端' }]);
    expect(h.sim.getTask(task.id)?.desc).toBe('完全换一个方向：只做移动端');
    expect((await h.engine.getWork(task.id)).body).toBe('完全换一个方向：只做移动端');

    h.sim.editTask(task.id, { desc: '' });
    await h.engine.changeSteps(S, [{ op: 'update', step: '改页脚', status: 'completed', resolution: '页脚改好了' }]);
    await h.engine.sync(list.id);
    expect(h.sim.getTask(task.id)?.desc ?? '').toBe('');
    expect(h.sim.getTask(task.id)?.content ?? '').toBe('');
  });

  it('a text task keeps its body once it gets items: it moves to the description exactly once', async () => {
    const list = h.sim.seedProject({ name: '清单' });
    const task = h.sim.seedTask({ projectId: list.id, title: '写周报', content: '本周重点：发布', priority: 3 });
    await pick(list.id, task.id);
    await h.engine.changeSteps(S, [{ op: 'add', title: '列出完成项' }]);
    const read = h.sim.getTask(task.id)!;
    expect(read.desc).toBe('本周重点：发布');
    expect(`${read.content ?? ''}${read.desc ?? ''}`.split('本周重点：发布')).toHaveLength(2);
    await h.engine.changeSteps(S, [{ op: 'add', title: '写总结' }]);
    expect(h.sim.getTask(task.id)?.desc).toBe('本周重点：发布');
  });
});

describe('2. edits made while a Work is being settled', () => {
  async function settled() {
    const { list, task } = await checklistWork();
    await h.engine.changeSteps(S, [
      { op: 'update', step: '改导航', status: 'completed', resolution: '导航改好了' },
      { op: 'update', step: '改页脚', status: 'completed', resolution: '页脚改好了' },
    ]);
    return { list, task };
  }

  it('an item added while the review todo is being created stops finalization and nothing is completed', async () => {
    const { list, task } = await settled();
    h.sim.setLatency(50);
    const stop = h.sim.onRequest((info) => {
      if (info.route === 'POST /task') {
        const current = h.sim.getTask(task.id)!;
        h.sim.editTask(task.id, { items: [...(current.items ?? []), { title: '还要改按钮', status: 0 }] });
      }
    });
    const results = await h.engine.settle(S);
    stop();
    expect(results.map((r) => r.outcome.status)).toEqual(['not_ready']);
    expect(h.sim.getTask(task.id)?.status).toBe(0);
    expect(items(task.id)).toEqual([
      ['改导航', 1],
      ['改页脚', 1],
      ['还要改按钮', 0],
    ]);
    // The review todo filed too early is gone, and the Work is open with the person's new step.
    expect(h.sim.listTasks(list.id, { includeCompleted: true }).filter((t) => t.title.startsWith('🧑‍🔬'))).toEqual([]);
    const work = await h.engine.getWork(task.id);
    expect(work.phase).toBe('open');
    expect(work.steps.map((s) => [s.title, s.status, s.origin])).toContainEqual(['还要改按钮', 'pending', 'human']);
  });

  it('after a failed stage the next settle re-checks: an item added meanwhile stops it', async () => {
    const { list, task } = await settled();
    // The review todo is filed and the items ticked, then completing the Work fails.
    h.sim.injectFault({ route: 'POST /project/{pid}/task/{tid}/complete', kind: 'status', status: 503 });
    expect((await h.engine.settle(S)).map((r) => r.outcome.status)).toEqual(['failed']);
    const current = h.sim.getTask(task.id)!;
    h.sim.editTask(task.id, { items: [...(current.items ?? []), { title: '再加一条', status: 0 }] });
    expect((await h.engine.settle(S)).map((r) => r.outcome.status)).toEqual(['not_ready']);
    expect(h.sim.getTask(task.id)?.status).toBe(0);
    expect(h.sim.listTasks(list.id).filter((t) => t.title.startsWith('🧑‍🔬'))).toEqual([]);
  });

  it('the review todo carries the title the person gave the Work while it was being sent', async () => {
    const { list, task } = await settled();
    // Renamed after the review todo was filed, before the Work's task is read for its ticks.
    const stop = h.sim.onRequest((info) => {
      if (info.route === 'GET /project/{pid}/task/{tid}') h.sim.editTask(task.id, { title: '改版首页（第二版）' });
    });
    expect((await h.engine.settle(S)).map((r) => r.outcome.status)).toEqual(['finalized']);
    stop();
    expect(h.sim.listTasks(list.id).filter((t) => t.title.startsWith('🧑‍🔬')).map((t) => t.title)).toEqual(['🧑‍🔬 待验收：改版首页（第二版）']);
  });
});

describe('3. a lost create answer never takes over a person’s task', () => {
  it('a person’s not-yet-synced task with the same title stays theirs', async () => {
    const list = h.sim.seedProject({ name: '清单' });
    await h.engine.sync(list.id);
    const theirs = h.sim.seedTask({ projectId: list.id, title: '新需求', priority: 3, items: [{ title: '人写的一步' }] });
    h.sim.injectFault({ route: 'POST /task', kind: 'drop' });
    expect(await outcome(h.engine.createWork(S, list.id, { title: '新需求', steps: ['第一步'] }))).toBe('dida:network');
    const state = await h.state();
    expect(Object.values(state.works).filter((w) => w.taskId === theirs.id && w.origin === 'agent')).toEqual([]);
    expect(await h.engine.currentWork(S)).toBeUndefined();
    // The model retries: a new task is created; the person's task and its item are untouched and stay the person's.
    const mine = await h.engine.createWork(S, list.id, { title: '新需求', steps: ['第一步'] });
    expect(mine.taskId).not.toBe(theirs.id);
    expect(items(theirs.id)).toEqual([['人写的一步', 0]]);
    await h.engine.sync(list.id);
    expect((await h.state()).works[theirs.id]).toMatchObject({ origin: 'human' });
  });

  it('a create whose answer was cut off after Dida made it is found by its marker, not duplicated', async () => {
    const list = h.sim.seedProject({ name: '清单' });
    // The person writes a task with the same title while the create is in flight; it sorts first in the list, so a
    // lookup by title would find it before the bundle's.
    const stop = h.sim.onRequest((info) => {
      if (info.route === 'POST /task') h.sim.seedTask({ projectId: list.id, title: '新需求', priority: 3, sortOrder: -(2 ** 52) });
    }, 'after');
    h.sim.injectFault({ route: 'POST /task', kind: 'truncate' });
    const work = await h.engine.createWork(S, list.id, { title: '新需求', steps: ['第一步'] });
    stop();
    const all = h.sim.listTasks(list.id).filter((t) => t.title === '新需求');
    expect(all).toHaveLength(2);
    expect(items(work.taskId)).toEqual([['第一步', 0]]);
    expect(work.steps.map((s) => s.origin)).toEqual(['agent']);
  });
});

describe('5. writes carry only what the bundle changes', () => {
  it('a rename, a body rewrite, a new item and a tick made while a step update is in flight all survive', async () => {
    const { task } = await checklistWork();
    // The person's edits land between the bundle's read and its write.
    const stop = h.sim.onRequest((info) => {
      if (info.route !== 'POST /task/{tid}') return;
      h.sim.editTask(task.id, { title: '改版首页 v2', desc: '新的说明', tags: ['设计'] });
    });
    await h.engine.changeSteps(S, [{ op: 'update', step: '改导航', status: 'completed', resolution: '导航改好了' }]);
    stop();
    const after = h.sim.getTask(task.id)!;
    expect(after).toMatchObject({ title: '改版首页 v2', desc: '新的说明', tags: ['设计'], status: 0 });
    expect(items(task.id)).toEqual([
      ['改导航', 1],
      ['改页脚', 0],
    ]);
    const work = await h.engine.getWork(task.id);
    expect(work.title).toBe('改版首页 v2');
    expect(work.body).toBe('新的说明');
  });

  it('waiting for a person writes only the priority: a rename and a tick made while it is in flight survive', async () => {
    const { task } = await checklistWork();
    const stop = h.sim.onRequest((info) => {
      if (info.route !== 'POST /task/{tid}') return;
      const current = h.sim.getTask(task.id)!;
      h.sim.editTask(task.id, { title: '改版首页（急）', items: [{ ...current.items![0], status: 1 }, current.items![1]] });
    });
    await h.engine.waitForHuman(S, '需要设计稿');
    stop();
    expect(h.sim.getTask(task.id)).toMatchObject({ title: '改版首页（急）', priority: 0 });
    expect(items(task.id)).toEqual([
      ['改导航', 1],
      ['改页脚', 0],
    ]);
  });

  it('no update ever carries status, completedTime or content', async () => {
    await checklistWork();
    const bodies: Array<Record<string, unknown>> = [];
    const stop = h.sim.onRequest((info) => {
      if (info.route === 'POST /task/{tid}') bodies.push(info.body as Record<string, unknown>);
    });
    await h.engine.changeSteps(S, [{ op: 'update', step: '改导航', status: 'completed', resolution: '好了' }, { op: 'add', title: '新步骤' }]);
    await h.engine.waitForHuman(S, '等设计稿');
    await h.engine.resume(S);
    await h.engine.changeSteps(S, [
      { op: 'update', step: '改页脚', status: 'completed', resolution: '好了' },
      { op: 'update', step: '新步骤', status: 'skipped', resolution: '不需要' },
    ]);
    await h.engine.settle(S);
    stop();
    expect(bodies.length).toBeGreaterThanOrEqual(4);
    for (const body of bodies) {
      expect(Object.keys(body).filter((k) => ['status', 'completedTime', 'content', 'etag', 'modifiedTime'].includes(k))).toEqual([]);
      expect(Object.keys(body)).toEqual(expect.arrayContaining(['id', 'projectId']));
    }
  });

  it('moving a step to in progress writes nothing to the task', async () => {
    const { task } = await checklistWork();
    h.sim.resetCounters();
    await h.engine.changeSteps(S, [{ op: 'update', step: '改导航', status: 'in_progress' }]);
    expect(h.sim.counters()['POST /task/{tid}']).toBeUndefined();
    expect(h.sim.counters()['GET /project/{pid}/task/{tid}']).toBeUndefined();
    expect(items(task.id)).toEqual([
      ['改导航', 0],
      ['改页脚', 0],
    ]);
  });
});

describe('6. review feedback is the person’s data', () => {
  async function inReview() {
    const list = h.sim.seedProject({ name: '清单' });
    const work = await h.engine.createWork(S, list.id, { title: '加日志', steps: ['加'] });
    await h.engine.changeSteps(S, [{ op: 'update', step: '加', status: 'completed', resolution: '加好了' }]);
    await h.engine.settle(S);
    const review = h.sim.listTasks(list.id).find((t) => t.title.startsWith('🧑‍🔬'))!;
    return { list, work, review };
  }

  it('a long comment with ids and JSON reaches the rework Work whole, as the person’s items', async () => {
    const { list, review } = await inReview();
    const long = `请把日志级别改成可配置。${'详细说明：'.repeat(300)}\n参考 550e8400-e29b-41d4-a716-446655440000 和 5f1a2b3c4d5e6f7a8b9c0d1e。`;
    const json = '{"level": "debug", "target": "stderr", "note": "这是人写的配置示例，请照着做"}';
    h.sim.addComment(list.id, review.id, long);
    h.sim.addComment(list.id, review.id, json);
    const report = await h.engine.sync(list.id);
    expect(report.reworks).toHaveLength(1);
    const rework = await h.engine.getWork(report.reworks[0]!);
    expect(rework.steps.map((s) => s.origin)).toEqual(['human', 'human']);
    expect(rework.body).toContain(long);
    expect(rework.body).toContain(json);
    expect(rework.body).toContain('550e8400-e29b-41d4-a716-446655440000');
    // The agent cannot clear the person's feedback.
    await h.engine.switchTo(S, list.id, report.reworks[0]!);
    await h.engine.changeSteps(S, [{ op: 'clear' }]);
    expect(h.sim.getTask(report.reworks[0]!)?.items).toHaveLength(2);
  });

  it('a comment followed by completing the review todo before the next sync is still rework', async () => {
    const { list, work, review } = await inReview();
    h.sim.addComment(list.id, review.id, '按钮颜色不对');
    h.sim.editTask(review.id, { status: 2 });
    const report = await h.engine.sync(list.id);
    expect(report.reworks).toHaveLength(1);
    expect(report.accepted).toEqual([]);
    expect((await h.state()).works[work.taskId]).toMatchObject({ phase: 'closed', outcome: 'rework' });
  });
});

describe('7. unticks', () => {
  it('an item the person unticks after the agent completed it stays unticked and the step is open again', async () => {
    const { task } = await checklistWork();
    await h.engine.changeSteps(S, [{ op: 'update', step: '改导航', status: 'completed', resolution: '导航改好了' }]);
    const current = h.sim.getTask(task.id)!;
    h.sim.editTask(task.id, { items: [{ ...current.items![0], status: 0 }, current.items![1]] });
    const result = await h.engine.changeSteps(S, [{ op: 'update', step: '改页脚', status: 'completed', resolution: '页脚改好了' }]);
    expect(items(task.id)).toEqual([
      ['改导航', 0],
      ['改页脚', 1],
    ]);
    expect(result.merge?.reopenedByHuman.map((s) => s.title)).toEqual(['改导航']);
    expect(result.work.steps.find((s) => s.title === '改导航')?.status).toBe('pending');
  });
});

describe('8. the person’s other signals', () => {
  it('a Work the person re-opens after review is taken up again as a new round', async () => {
    const list = h.sim.seedProject({ name: '清单' });
    const work = await h.engine.createWork(S, list.id, { title: '加日志', steps: ['加'] });
    await h.engine.changeSteps(S, [{ op: 'update', step: '加', status: 'completed', resolution: '加好了' }]);
    await h.engine.settle(S);
    expect(h.sim.getTask(work.taskId)?.status).toBe(2);
    const done = h.sim.getTask(work.taskId)!;
    h.sim.editTask(work.taskId, { status: 0, items: [...(done.items ?? []), { title: '还要加告警', status: 0 }] });
    const report = await h.engine.sync(list.id);
    expect(report.reopened).toEqual([work.taskId]);
    const again = await h.engine.getWork(work.taskId);
    expect(again).toMatchObject({ phase: 'open', round: 2 });
    expect(again.steps.map((s) => [s.title, s.status])).toEqual([
      ['加', 'completed'],
      ['还要加告警', 'pending'],
    ]);
    // The superseded review todo is closed; the queue offers the Work again.
    expect(h.sim.listTasks(list.id).filter((t) => t.title.startsWith('🧑‍🔬'))).toEqual([]);
    expect((await h.engine.queue(list.id)).ranked.map((r) => r.candidate.taskId)).toEqual([work.taskId]);
  });

  it('two waiting Works with the same title each get their own 🙋 reminder', async () => {
    const list = h.sim.seedProject({ name: '清单' });
    const a = h.sim.seedTask({ projectId: list.id, title: '部署', priority: 3 });
    const b = h.sim.seedTask({ projectId: list.id, title: '部署', priority: 5 });
    await pick(list.id, a.id);
    await h.engine.waitForHuman(S, '需要权限 A');
    await h.engine.switchTo(S, list.id, b.id);
    await h.engine.waitForHuman(S, '需要权限 B');
    const reminders = h.sim.listTasks(list.id).filter((t) => t.title.startsWith('🙋'));
    expect(reminders).toHaveLength(2);
    await h.engine.resume(S, a.id);
    expect(h.sim.listTasks(list.id).filter((t) => t.title.startsWith('🙋'))).toHaveLength(1);
    expect((await h.engine.getWork(b.id)).waiting?.reminderTaskId).toBe(h.sim.listTasks(list.id).find((t) => t.title.startsWith('🙋'))?.id);
  });

  it('after the state file is lost, an owner comment on an open review todo still becomes rework', async () => {
    const list = h.sim.seedProject({ name: '清单' });
    await h.engine.createWork(S, list.id, { title: '加日志', steps: ['加'] });
    await h.engine.changeSteps(S, [{ op: 'update', step: '加', status: 'completed', resolution: '加好了' }]);
    await h.engine.settle(S);
    const review = h.sim.listTasks(list.id).find((t) => t.title.startsWith('🧑‍🔬'))!;
    await h.deps.state.update((state) => {
      for (const key of Object.keys(state)) delete (state as Record<string, unknown>)[key];
      return { works: {}, ownTasks: {}, owners: {}, sessions: {}, pendingCreates: {}, outbox: [], usage: {}, rebuilt: [], strayTasks: [], peers: {} };
    });
    h.sim.addComment(list.id, review.id, '日志要带时间戳');
    const rebuilt = await h.engine.sync(list.id);
    expect(rebuilt.rebuilt).toEqual(['review todo "加日志"']);
    // The review was filed without an anchor (the owner was known then): it is rework once the owner is known again,
    // from the answer to the bundle's next comment (here a claim), and feedback written before that still counts.
    expect(rebuilt.reworks).toEqual([]);
    const other = h.sim.seedTask({ projectId: list.id, title: '另一件', priority: 3, items: [{ title: '做' }] });
    await h.engine.sync(list.id);
    await h.engine.switchTo('session-other', list.id, other.id);
    const report = await h.engine.sync(list.id);
    expect(report.reworks).toHaveLength(1);
    expect(h.sim.getTask(report.reworks[0]!)?.title).toBe('返工：加日志');
    expect((await h.state()).rebuilt.map((r) => r.what)).toEqual(['review todo "加日志"']);
  });

  it('a progress comment is posted exactly once when the write timed out but was applied', async () => {
    const { task } = await checklistWork();
    h.sim.injectFault({ route: 'POST /task/{tid}', kind: 'latency', delayMs: 2500 });
    expect(await outcome(h.engine.changeSteps(S, [{ op: 'update', step: '改导航', status: 'completed', resolution: '导航改好了' }]))).toBe('dida:timeout');
    await new Promise((r) => setTimeout(r, 2600));
    await h.engine.changeSteps(S, [{ op: 'update', step: '改页脚', status: 'in_progress' }]);
    await h.engine.flushComments();
    await h.engine.flushComments();
    const texts = h.sim.listComments(task.id).flatMap((c) => c.title.split('\n\n'));
    expect(texts.filter((t) => t.startsWith('已完成：改导航'))).toHaveLength(1);
    expect(items(task.id)[0]).toEqual(['改导航', 1]);
  });

  it('a checklist over Dida’s item cap is refused before the write and nothing is kept', async () => {
    const list = h.sim.seedProject({ name: '清单' });
    const work = await h.engine.createWork(S, list.id, { title: '大清单', steps: Array.from({ length: 199 }, (_, i) => `步骤 ${i + 1}`) });
    h.sim.resetCounters();
    expect(await outcome(h.engine.changeSteps(S, [{ op: 'add', title: '第 200 步' }, { op: 'add', title: '第 201 步' }]))).toBe('too_many_steps');
    expect(h.sim.counters()['POST /task/{tid}']).toBeUndefined();
    expect((await h.engine.getWork(work.taskId)).steps).toHaveLength(199);
    // Later updates still work.
    await h.engine.changeSteps(S, [{ op: 'add', title: '第 200 步' }]);
    expect(h.sim.getTask(work.taskId)?.items).toHaveLength(200);
  });
});
