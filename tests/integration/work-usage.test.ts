// What a Work cost, through the real adapter (DshHost over a fake dsh context, a fake clock) and the Dida simulator:
// usage summed across turns, continuations, a crash and recovery, two sessions and a rework round, shown in the
// review todo; the spend guard stopping at the next step boundary and nothing continuing after it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DshHost } from '../../src/dsh/dsh-host';
import { RowConfig } from '../../src/dsh/row-config';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { FakeClock } from '../helpers/dsh-fakes';
import { fakeAgent, fakeHost, installResume, type FakeAgent } from '../helpers/dsh-host-fake';
import { readEngineStateFile } from '../helpers/engine-state-file';

let sim: Simulator;
let dir: string;
let listId: string;
let saved: string | undefined;
let n = 0;

beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(async () => {
  await sim.close();
});
beforeEach(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'dida-usage-')));
  listId = sim.seedProject({ name: `usage-${++n}` }).id;
  saved = process.env.DIDA_TODO_TOKEN;
  process.env.DIDA_TODO_TOKEN = sim.token;
});
afterEach(() => {
  if (saved === undefined) delete process.env.DIDA_TODO_TOKEN;
  else process.env.DIDA_TODO_TOKEN = saved;
  fs.rmSync(dir, { recursive: true, force: true });
});

async function until(what: string, probe: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

interface Boot {
  locale?: 'zh' | 'en';
  oneShot?: boolean;
  mark?: string;
  extraConfig?: string;
  clock?: FakeClock;
}

// The machine's request budget counts real minutes while this suite runs hours of fake time in seconds: it gets room
// for that (its rounds make about 60 requests within a real minute; decision 0085's budget is tested in its own suites).
function boot(options: Boot = {}) {
  fs.writeFileSync(
    path.join(dir, 'config.yaml'),
    `baseUrl: ${sim.baseUrl}\nhostLabel: meter\nbudget: { perMinute: 1000, perFiveMinutes: 5000 }\n${options.locale ? `locale: ${options.locale}\n` : ''}${options.extraConfig ?? ''}bindings:\n  - cwd: ${dir}\n    projectId: ${listId}\n`,
  );
  const parsed = RowConfig.safeParse({ configPath: path.join(dir, 'config.yaml'), stateDir: path.join(dir, 'state'), maxAutoContinue: 3, backoff: [10], progressWindowSeconds: 0 });
  if (!parsed.success) throw new Error('row');
  const ctx = fakeHost(options.oneShot ? { headlessStartup: { task: 'x' } } : {});
  installResume(ctx.ctx.agents, async ({ resumeSessionId }: { resumeSessionId: string }) => {
    const agent = fakeAgent(resumeSessionId, { cwd: dir });
    ctx.agents.set(agent.id, agent);
    return { agent };
  });

  const clock = options.clock ?? new FakeClock(Date.now());
  const host = new DshHost(ctx.ctx as never, parsed.data, { clock, pid: 4_100_000 + n, isAlive: () => false, mark: options.mark ?? 'p1' });
  host.start();
  return { ctx, host, clock };
}

type Booted = ReturnType<typeof boot>;

async function session(b: Booted, id: string): Promise<FakeAgent> {
  const agent = b.ctx.agents.get(id) ?? fakeAgent(id, { cwd: dir });
  b.ctx.agents.set(agent.id, agent);
  if (!b.host.tracker.get(id)) b.ctx.emit('agent/created', { agent });
  await b.host.tracker.get(id)!.ready;
  return agent;
}

const event = (b: Booted, agent: FakeAgent, type: string, data: unknown = {}) => b.ctx.emit('session/event', { id: agent.id }, { type, data });
const answer = (b: Booted, agent: FakeAgent, inputTokens: number, outputTokens: number, cacheReadTokens = 0) =>
  event(b, agent, 'assistant/message', { message: { source: { model: 'deepseek-v4-flash' } }, usage: { inputTokens, outputTokens, cacheReadTokens } });

/** One turn of `answers`, `ms` long by the fake clock; `during` runs after the first answer. */
async function turn(b: Booted, agent: FakeAgent, answers: Array<[number, number, number?]>, ms: number, during?: () => Promise<void>): Promise<void> {
  agent.status = 'running';
  b.ctx.emit('agent/status', { agent, status: 'running' });
  event(b, agent, 'turn/start', { turn: 1 });
  for (const [index, [i, o, c]] of answers.entries()) {
    await b.clock.advance(ms / answers.length);
    answer(b, agent, i, o, c ?? 0);
    if (index === 0) await during?.();
  }
  event(b, agent, 'turn/end', { turn: 1, reason: { kind: 'completed' } });
}

async function idle(b: Booted, agent: FakeAgent): Promise<void> {
  agent.status = 'idle';
  const before = agent.runMaintenance.mock.calls.length;
  b.ctx.emit('agent/status', { agent, status: 'idle' });
  await until('the settle', () => agent.runMaintenance.mock.calls.length > before);
  await Promise.allSettled(agent.runMaintenance.mock.results.map((r: { value: unknown }) => r.value));
}

const todo = (b: Booted) => b.ctx.tools.find((t: { name: string }) => t.name === 'todo');
const todoWork = (b: Booted) => b.ctx.tools.find((t: { name: string }) => t.name === 'todo_work');
const review = () => sim.listTasks(listId).find((t) => t.title.startsWith('🧑‍🔬'));
const state = () => readEngineStateFile(path.join(dir, 'state', 'state.json'));

describe('usage per Work', () => {
  it('sums every answer of every turn, the turns’ time and a continuation into one line of the review todo', async () => {
    const b = boot();
    const agent = await session(b, 'session-u1');
    try {
      await turn(b, agent, [[100, 20, 30]], 60_000, async () => {
        expect((await todo(b).execute({ action: 'create', work_title: '清理日志', steps: [{ title: '找出旧日志' }, { title: '删除' }] }, { agent })).code).toBe('ok');
      });
      // A model error in the second turn, continued automatically after the backoff: the answers after it are its share.
      agent.status = 'running';
      event(b, agent, 'turn/start', { turn: 2 });
      const retry = b.ctx.waterfall('agent/request-error', { agent, failure: { code: 'SERVER', message: 'm' }, signal: new AbortController().signal });
      await until('the backoff', () => b.clock.waits.includes(10_000));
      await b.clock.advance(10_000);
      expect(await retry).toEqual({ kind: 'retry' });
      answer(b, agent, 1000, 200, 0);
      await b.clock.advance(120_000);
      expect((await todo(b).execute({ action: 'update', updates: [{ step: '找出旧日志', status: 'completed', resolution: '找到 3 个' }, { step: '删除', status: 'completed', resolution: '已删除' }] }, { agent })).code).toBe('ok');
      answer(b, agent, 10, 5, 0);
      event(b, agent, 'turn/end', { turn: 2, reason: { kind: 'completed' } });
      await idle(b, agent);
      await until('the review todo', () => !!review());
      // 1,365 tokens (30 of them cache hits), 3 answers, 1 + 2 min, one continuation.
      expect(review()!.content).toContain('用量：1,365 token（其中缓存命中 30），3 次模型请求，用时 3 分钟，自动继续 1 次。');
      const key = Object.keys(state().usage)[0]!;
      const recorded = state().usage[key].rounds['1'];
      expect(recorded).toMatchObject({ requests: 3, continuations: 1, continuedRequests: 2, continuedTokens: 1215 });
      // Nothing of it reaches the model: no tool result or note mentions tokens.
      expect(JSON.stringify(agent.session.append.mock.calls)).not.toContain('1,365');
    } finally {
      await b.host.dispose();
    }
  });

  it('adds up across a crash and the recovery in the next process, two sessions, and a rework round; in English too', async () => {
    const clock = new FakeClock(Date.now());
    const first = boot({ clock, oneShot: true, locale: 'en' });
    const one = await session(first, 'session-aa');
    const task = sim.seedTask({ projectId: listId, title: 'Rotate keys', priority: 3, items: [{ title: 'make new keys' }, { title: 'swap them in' }] });
    await turn(first, one, [[300, 50]], 60_000, async () => {
      expect((await todoWork(first).execute({ action: 'switch', work: task.id }, { agent: one })).code).toBe('ok');
    });
    // The one-shot ends with a step open: its claim is released.
    await idle(first, one);
    await first.host.dispose();

    // Another session, in another process: crashes mid-turn after one answer.
    const second = boot({ clock, oneShot: true, locale: 'en', mark: 'p2' });
    const two = await session(second, 'session-bb');
    {
      two.status = 'running';
      second.ctx.emit('agent/status', { agent: two, status: 'running' });
      event(second, two, 'turn/start', { turn: 1 });
      expect((await todoWork(second).execute({ action: 'switch', work: task.id }, { agent: two })).code).toBe('ok');
      await clock.advance(30_000);
      answer(second, two, 200, 40);
      await until('the answer recorded', () => state()?.usage?.[task.id]?.rounds['1']?.requests === 2);
    }
    await second.host.dispose();

    // A one-shot in the directory takes the interrupted Work over (an automatic continuation) and finishes it.
    const third = boot({ clock, oneShot: true, locale: 'en', mark: 'p3' });
    const three = await session(third, 'session-cc');
    expect(third.host.tracker.get(three.id)!.pendingNotes.map((m) => m.content[0]!.text).join()).toContain('An interrupted session');
    await turn(third, three, [[100, 10]], 60_000, async () => {
      expect((await todo(third).execute({ action: 'update', updates: [{ step: 'make new keys', status: 'completed', resolution: 'made' }, { step: 'swap them in', status: 'completed', resolution: 'swapped' }] }, { agent: three })).code).toBe('ok');
    });
    await idle(third, three);
    await until('the review todo', () => !!review());
    const reviewTask = review()!;
    expect(reviewTask.content).toContain('Usage: 700 tokens, 3 model requests, 3 min, 1 automatic continuations.');

    // Rework: the owner's comment on the review todo becomes a rework Work, whose own round adds to the total.
    sim.addComment(listId, reviewTask.id, 'also rotate the backup keys', { userId: Number(sim.userId) });
    const four = await session(third, 'session-dd');
    await turn(third, four, [[1000, 100]], 60_000, async () => {
      expect((await todoWork(third).execute({ action: 'refresh' }, { agent: four })).code).toBe('ok');
      const rework = sim.listTasks(listId).find((t) => t.title.startsWith('Rework') || t.title.startsWith('返工'))!;
      expect((await todoWork(third).execute({ action: 'switch', work: rework.id }, { agent: four })).code).toBe('ok');
      expect((await todo(third).execute({ action: 'update', updates: [{ step: 'also rotate the backup keys', status: 'completed', resolution: 'done' }] }, { agent: four })).code).toBe('ok');
    });
    await idle(third, four);
    await until('the second review', () => sim.listTasks(listId).filter((t) => t.title.startsWith('🧑‍🔬')).length === 1 && review()!.id !== reviewTask.id);
    expect(review()!.content).toContain('Usage: 1.1k tokens, 1 model requests, 1 min. All rounds of this Work: 1.8k tokens, 4 requests.');
    await third.host.dispose();
  });
});

describe('the spend guard', () => {
  it('stops the Work at the next step boundary when it passes its limit; nothing continues it; setting the priority back allows as much again', async () => {
    const b = boot({ extraConfig: 'limits:\n  maxTokensPerWork: 1000\n' });
    const agent = await session(b, 'session-g1');
    const cancelled: unknown[] = [];
    (agent as unknown as { cancel: (c: unknown) => void }).cancel = (c) => cancelled.push(c);
    try {
      agent.status = 'running';
      b.ctx.emit('agent/status', { agent, status: 'running' });
      event(b, agent, 'turn/start', { turn: 1 });
      expect((await todo(b).execute({ action: 'create', work_title: '大重构', steps: [{ title: '拆模块' }, { title: '改调用' }] }, { agent })).code).toBe('ok');
      const taskId = sim.listTasks(listId)[0]!.id;
      answer(b, agent, 600, 100);
      await until('recorded', () => state()?.usage?.[taskId]?.rounds['1']?.requests === 1);
      // Within the limit: the next boundary lets it go on.
      await b.ctx.waterfall('agent/pre-step', { agent, turn: 1, step: 2, messages: [] }, async () => ({ kind: 'enter', messages: [] }));
      expect(cancelled).toEqual([]);
      answer(b, agent, 300, 50);
      await until('recorded', () => state()?.usage?.[taskId]?.rounds['1']?.requests === 2);
      await b.ctx.waterfall('agent/pre-step', { agent, turn: 1, step: 3, messages: [] }, async () => ({ kind: 'enter', messages: [] }));
      expect(cancelled).toHaveLength(1);
      expect(sim.getTask(taskId)?.priority).toBe(0);
      const reminder = sim.listTasks(listId).find((t) => t.title.startsWith('🙋'))!;
      expect(reminder.content).toContain('这项工作已经用了 1,050 token，达到了上限 1,000（maxTokensPerWork）');
      expect(state().works[taskId].waiting).toMatchObject({ cause: 'spend' });
      // A model error now continues nothing: the Work waits for the person.
      expect(await b.ctx.waterfall('agent/request-error', { agent, failure: { code: 'SERVER', message: 'm' }, signal: new AbortController().signal })).toBeUndefined();
      // The person sets the priority back: it goes on with as much again.
      sim.editTask(taskId, { priority: 3 });
      expect((await todoWork(b).execute({ action: 'refresh' }, { agent })).code).toBe('ok');
      expect(state().works[taskId].waiting).toBeUndefined();
      await b.ctx.waterfall('agent/pre-step', { agent, turn: 2, step: 1, messages: [] }, async () => ({ kind: 'enter', messages: [] }));
      expect(cancelled).toHaveLength(1);
      expect(state().usage[taskId].allowance.work.tokens).toBe(1050);
    } finally {
      await b.host.dispose();
    }
  });
});
