// The background writer over the simulator (core/work/background-writer): a tool call's step changes make no request
// before the result, are on disk at once, and are written with their comments when the progress window is over (or at
// settle, in the same write that ticks the Work for review); what the write's read merged in, a refused or failed
// write and a task closed meanwhile reach the model at its next call and, for a refusal, the person in Dida; a process
// killed between the result and the write loses nothing.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { claimsPosted } from '../../src/core/engine/work-engine';
import { getLocale } from '../../src/core/text/locale';
import { DEFAULT_PROGRESS_WINDOW_MS } from '../../src/core/work/outbox';
import { buildScript } from '../helpers/build-script';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';

const here = path.dirname(fileURLToPath(import.meta.url));
const S = 'session-bg';
const zh = getLocale('zh');
let h: EngineHarness;
let listId: string;

beforeEach(async () => {
  h = await startEngineHarness();
  listId = h.sim.seedProject({ name: '后台写' }).id;
});
afterEach(async () => {
  await claimsPosted();
  await h.close();
});

const total = () => h.sim.totalRequests();
const items = (taskId: string) => h.sim.getTask(taskId)?.items?.map((i) => [i.title, i.status]);
const notes = (taskId: string) => h.sim.listComments(taskId).map((c) => c.title);

/**
 * An agent Work with three steps, its claim posted; the counters reset. One step is added and deleted at once first,
 * so a service that ignores an update without a title (live-a, live-c) has taught the gateway before the counting.
 */
async function work(): Promise<string> {
  const created = await h.engine.createWork(S, listId, { title: '后台', steps: ['一', '二', '三', '预热'] });
  await h.engine.changeSteps(S, [{ op: 'delete', step: '预热' }]);
  await claimsPosted();
  h.sim.resetCounters();
  return created.taskId;
}

function complete(step: string) {
  return h.engine.changeSteps(S, [{ op: 'update', step, status: 'completed', resolution: `做完了${step}` }], undefined, { background: true });
}

describe('step changes left to the background writer', () => {
  it('make no request before the result; the change and its note are on disk; one forced flush is one read, one write, one comment', async () => {
    const taskId = await work();
    const result = await complete('一');
    expect(result).toMatchObject({ wrote: false, pending: true });
    expect(total()).toBe(0);
    const record = (await h.state()).works[taskId]!;
    expect(record.pendingSince).toBe(h.clock.now);
    expect(record.steps[0]!.status).toBe('completed');
    expect((await h.state()).outbox.map((e) => e.kind)).toEqual(['completed']);
    // Control: the same change written at once (the foreground path) reads and writes before its result.
    await h.engine.flushComments();
    expect(h.sim.counters()).toEqual({ 'GET /project/{pid}/task/{tid}': 1, 'POST /task/{tid}': 1, 'POST /project/{pid}/task/{tid}/comment': 1 });
    expect(items(taskId)).toEqual([['一', 1], ['二', 0], ['三', 0]]);
    expect(notes(taskId).at(-1)).toBe('已完成：一\n结果：做完了一');
    expect((await h.state()).works[taskId]!.pendingSince).toBeUndefined();
  });

  it('an in_progress step writes nothing at all, and waits for nothing', async () => {
    const taskId = await work();
    await h.engine.changeSteps(S, [{ op: 'update', step: '一', status: 'in_progress' }], undefined, { background: true });
    expect((await h.state()).works[taskId]!.pendingSince).toBeUndefined();
    h.clock.now += DEFAULT_PROGRESS_WINDOW_MS;
    await h.engine.flushComments({ onlyDue: true });
    expect(h.sim.counters()).toEqual({ 'POST /project/{pid}/task/{tid}/comment': 1 });
  });

  it('a burst of completions within the window is one read and one write, sent with one comment when the window is over', async () => {
    const taskId = await work();
    await complete('一');
    h.clock.now += 20_000;
    await complete('二');
    await h.engine.flushComments({ onlyDue: true });
    await h.engine.sync(listId);
    expect(items(taskId)).toEqual([['一', 0], ['二', 0], ['三', 0]]);
    h.sim.resetCounters();
    h.clock.now += DEFAULT_PROGRESS_WINDOW_MS - 20_000;
    await h.engine.flushComments({ onlyDue: true });
    expect(h.sim.counters()).toEqual({ 'GET /project/{pid}/task/{tid}': 1, 'POST /task/{tid}': 1, 'POST /project/{pid}/task/{tid}/comment': 1 });
    expect(items(taskId)).toEqual([['一', 1], ['二', 1], ['三', 0]]);
    expect(notes(taskId).at(-1)).toBe('已完成：一\n结果：做完了一\n\n已完成：二\n结果：做完了二');
  });

  it('a sync after the window writes what waits, with its comments (a poll is a flush too)', async () => {
    const taskId = await work();
    await complete('一');
    h.clock.now += DEFAULT_PROGRESS_WINDOW_MS;
    await h.engine.sync(listId);
    expect(items(taskId)).toEqual([['一', 1], ['二', 0], ['三', 0]]);
    expect(notes(taskId).at(-1)).toBe('已完成：一\n结果：做完了一');
  });

  it('a Work settled within the window is ticked by the review’s own write: settle is five requests, nothing written twice', async () => {
    const taskId = await work();
    for (const step of ['一', '二', '三']) await complete(step);
    expect(total()).toBe(0);
    const outcomes = await h.engine.settle(S);
    expect(outcomes.map((o) => o.outcome.status)).toEqual(['finalized']);
    expect(h.sim.counters()).toEqual({
      'POST /task': 1,
      'GET /project/{pid}/task/{tid}': 1,
      'POST /task/{tid}': 1,
      'POST /project/{pid}/task/{tid}/complete': 1,
      'POST /project/{pid}/task/{tid}/comment': 1,
    });
    expect(h.sim.getTask(taskId)?.status).toBe(2);
    expect(items(taskId)).toEqual([['一', 1], ['二', 1], ['三', 1]]);
    expect(notes(taskId).filter((n) => n.includes('已完成：'))).toHaveLength(1);
  });

  it('the person’s edits between the result and the write are merged by the write’s read and told at the next call', async () => {
    const taskId = await work();
    await complete('一');
    const task = h.sim.getTask(taskId)!;
    h.sim.editTask(taskId, { items: [task.items![0]!, { ...task.items![1]!, status: 1 }, task.items![2]!, { title: '我加的', status: 0 }] });
    await h.engine.flushComments();
    expect(items(taskId)).toEqual([['一', 1], ['二', 1], ['三', 0], ['我加的', 0]]);
    const taken = await h.engine.takeNews(S);
    expect(taken).toHaveLength(1);
    expect(taken[0]!.news).toMatchObject({ imported: ['s5'], completedByHuman: ['s2'] });
    // Told once.
    expect(await h.engine.takeNews(S)).toEqual([]);
  });

  it('a write Dida refuses is told to the model and once to the person in Dida, and tried again only after the next change', async () => {
    const taskId = await work();
    await complete('一');
    h.sim.injectFault({ route: 'POST /task/{tid}', kind: 'status', status: 403 });
    await h.engine.flushComments();
    const record = (await h.state()).works[taskId]!;
    expect(record.writeFailure).toMatchObject({ refused: true, message: 'forbidden (HTTP 403)' });
    // Posted with the step's note (one comment), so the person reads both.
    expect(notes(taskId).filter((n) => n.includes(zh.t('dida.comment.writeRefused')))).toHaveLength(1);
    const [told] = await h.engine.takeNews(S);
    expect(told?.news.failure).toEqual({ refused: true, message: 'forbidden (HTTP 403)' });
    // Neither a due flush nor a sync tries it again by itself.
    h.sim.resetCounters();
    h.clock.now += 10 * DEFAULT_PROGRESS_WINDOW_MS;
    await h.engine.flushComments({ onlyDue: true });
    await h.engine.sync(listId);
    expect(h.sim.counters()['POST /task/{tid}']).toBeUndefined();
    // The next change tries it (and the person is not told again).
    await complete('二');
    h.clock.now += DEFAULT_PROGRESS_WINDOW_MS;
    await h.engine.flushComments({ onlyDue: true });
    expect(items(taskId)).toEqual([['一', 1], ['二', 1], ['三', 0]]);
    expect(notes(taskId).filter((n) => n.includes(zh.t('dida.comment.writeRefused')))).toHaveLength(1);
    expect((await h.state()).works[taskId]!.writeFailure).toBeUndefined();
  });

  it('a write that fails for now is kept and retried after a delay; the model hears it is not written yet', async () => {
    const taskId = await work();
    await complete('一');
    h.sim.injectFault({ route: 'GET /project/{pid}/task/{tid}', kind: 'status', status: 503 });
    await h.engine.flushComments();
    const [told] = await h.engine.takeNews(S);
    expect(told?.news.failure).toEqual({ refused: false, message: 'server (HTTP 503)' });
    expect(notes(taskId).some((n) => n.includes(zh.t('dida.comment.writeRefused')))).toBe(false);
    // Retried once the window is over and the delay after the failure (15 s, doubling) has passed.
    h.clock.now += DEFAULT_PROGRESS_WINDOW_MS - 1;
    const failedAt = (await h.state()).works[taskId]!.writeFailure!;
    expect(failedAt.retryAt).toBe(failedAt.at + 15_000);
    await h.engine.flushComments({ onlyDue: true });
    expect(items(taskId)).toEqual([['一', 0], ['二', 0], ['三', 0]]);
    h.clock.now += 1;
    await h.engine.flushComments({ onlyDue: true });
    expect(items(taskId)).toEqual([['一', 1], ['二', 0], ['三', 0]]);
  });

  it('a task the person completed before the write closes the Work, drops its unwritten progress and tells the model', async () => {
    const taskId = await work();
    await complete('一');
    h.sim.editTask(taskId, { status: 2 });
    await h.engine.flushComments();
    const record = (await h.state()).works[taskId]!;
    expect(record).toMatchObject({ phase: 'closed', outcome: 'completed_by_human' });
    expect(h.sim.counters()['POST /task/{tid}']).toBeUndefined();
    expect(notes(taskId).some((n) => n.startsWith('已完成：'))).toBe(false);
    expect((await h.engine.takeNews(S))[0]?.news.closed).toBe('completed_by_human');
    expect(await h.engine.currentWork(S)).toBeUndefined();
  });

  it('a task deleted before the write closes the Work and tells the model', async () => {
    const taskId = await work();
    await complete('一');
    h.sim.removeTask(taskId);
    await h.engine.flushComments();
    expect((await h.state()).works[taskId]).toMatchObject({ phase: 'closed', outcome: 'deleted' });
    expect((await h.engine.takeNews(S))[0]?.news.closed).toBe('deleted');
  });

  it('Dida’s item cap is refused before the result, as the write would be', async () => {
    await work();
    const steps = Array.from({ length: 198 }, (_, i) => ({ op: 'add' as const, title: `第 ${i} 步` }));
    await expect(h.engine.changeSteps(S, steps, undefined, { background: true })).rejects.toMatchObject({ code: 'too_many_steps' });
    expect(total()).toBe(0);
    expect((await h.state()).outbox).toEqual([]);
  });
});

describe('a process killed between the result and the background write', () => {
  let script: string;
  beforeAll(async () => {
    script = await buildScript(path.join(here, '../helpers/engine-child.ts'));
  });

  it('loses nothing: the change is on disk before the result, and the next sync writes it and its comment once', async () => {
    const taskId = await work();
    const child = spawn(process.execPath, [script, 'record', taskId, 's2'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, DIDA_BASE_URL: h.sim.baseUrl, DIDA_TOKEN: h.sim.token, ENGINE_DIR: h.dir },
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on('data', (chunk: Buffer) => chunk.toString().includes('recorded') && resolve());
      child.once('exit', (code) => reject(new Error(`the child exited (${code}) before recording`)));
    });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    expect(total()).toBe(0);
    expect(items(taskId)).toEqual([['一', 0], ['二', 0], ['三', 0]]);
    // Another process of the machine, later: its sync carries the change out.
    h.clock.now = Date.now() + DEFAULT_PROGRESS_WINDOW_MS;
    await h.engine.sync(listId);
    await h.engine.sync(listId);
    expect(items(taskId)).toEqual([['一', 0], ['二', 1], ['三', 0]]);
    expect(notes(taskId).filter((n) => n.startsWith('已完成：二'))).toHaveLength(1);
    expect((await h.state()).outbox).toEqual([]);
  });
});
