// A 429 from Dida in each path, with the machine's request budget in front of the gateway: a tool call that still waits
// for Dida (a new Work's create) gets a result telling the model when to call again, a step change's background write
// keeps it and tells the model at its next call (written later), settle and progress comments wait it out
// or keep their work for the next try, and the poller skips a poll rather than send into the pause. Nothing is lost.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConfigPort } from '../../src/core/queue/bindings';
import { TOOLS, type ToolContext, type ToolResult } from '../../src/core/tools';
import { claimsPosted } from '../../src/core/engine/work-engine';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { accountKey, BACKOFF_MAX_MS, withRequestPriority } from '../../src/dida/request-budget';
import { budgetFile } from '../../src/store/budget-store';
import { bridgeTool } from '../../src/dsh/tool-bridge';
import { defaultConfig, type DidaTodoConfig } from '../../src/store/config-schema';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';

let h: EngineHarness;
let config: DidaTodoConfig;
let list: { id: string };
const SESSION = 'session-rl';

const configPort: ConfigPort = {
  read: async () => structuredClone(config),
  update: async (fn) => (config = fn(structuredClone(config))),
};

function ctx(): ToolContext {
  return { sessionId: SESSION, cwd: '/work/rl', queueGranted: false, config: configPort, engine: async () => h.engine, gateway: async () => h.gateway, tokenSource: async () => ({ source: 'env' }) };
}

/** A tool call as dsh makes it: through the bridge (foreground priority, rate limits turned into results). */
async function call(name: string, args: Record<string, unknown>): Promise<ToolResult> {
  const tool = TOOLS.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  return (await bridgeTool(tool, () => ctx()).execute(args, { agent: { id: SESSION } } as never)) as ToolResult;
}

const COMMENT = 'POST /project/{pid}/task/{tid}/comment';

beforeEach(async () => {
  h = await startEngineHarness({ budget: { perMinute: 60, perFiveMinutes: 240 }, retries: 2 });
  list = h.sim.seedProject({ name: 'rl' });
  config = { ...defaultConfig(), bindings: [{ cwd: '/work/rl', projectId: list.id }] };
});
afterEach(async () => {
  await h.close();
});

describe('a 429 in each path', () => {
  it('tool call: a step change returns before any request; its background write met by a long Retry-After is kept, told to the model, and written once Dida allows', async () => {
    const created = await call('todo', { action: 'create', work_title: '修复', steps: [{ title: '第一步', status: 'in_progress' }] });
    expect(created.code).toBe('ok');
    await claimsPosted();
    h.sim.injectFault({ route: 'POST /task/{tid}', kind: 'status', status: 429, retryAfter: 40 });
    const before = h.sim.totalRequests();
    const updated = await call('todo', { action: 'update', updates: [{ step: '第一步', status: 'completed', resolution: '改好了，测过。' }] });
    expect(updated.code).toBe('ok');
    expect(h.sim.totalRequests()).toBe(before);
    // The background write meets the 429: nothing is lost, and the model hears it at its next call.
    await h.engine.flushComments();
    const key = (await h.state()).sessions[SESSION]!.currentWork!;
    expect((await h.state()).works[key]!.steps[0]!.status).toBe('completed');
    expect(h.sim.getTask(key)?.items?.[0]?.status).toBe(0);
    const told = await call('todo', { action: 'list' });
    expect(told.code).toBe('ok');
    expect(told.detail).toMatch(/Dida has not taken Work \S+'s latest step changes yet \(rate_limited \(HTTP 429\)\): they are kept/);
    // Written once the pause is over and the retry is due.
    await shortenPause();
    h.clock.now += 61_000;
    await h.engine.sync(list.id);
    expect(h.sim.getTask(key)?.items?.[0]?.status).toBe(1);
  });

  it('tool call: a six-hour Retry-After pauses the machine for the ceiling at most, and the model is told that, not six hours', async () => {
    // A new Work's create is the one request a todo call still waits for.
    h.sim.injectFault({ route: 'POST /task', kind: 'status', status: 429, retryAfter: 21_600 });
    const before = Date.now();
    const refused = await call('todo', { action: 'create', work_title: '长等', steps: [{ title: '第一步' }] });
    expect(refused.code).toBe('dida_unavailable');
    expect(refused.message).toMatch(/again in (299|300) seconds/);
    const { readBudgets } = await import('../../src/store/budget-store');
    const [budget] = readBudgets(h.dir);
    expect(budget!.record.pausedUntil).toBeGreaterThanOrEqual(before + BACKOFF_MAX_MS - 1_000);
    expect(budget!.record.pausedUntil).toBeLessThanOrEqual(Date.now() + BACKOFF_MAX_MS);
  });

  it('tool call: a step added while Dida pauses is added at once, and written once after the pause; called again anyway, it is not added twice', async () => {
    await call('todo', { action: 'create', work_title: '两次', steps: [{ title: '准备' }] });
    await claimsPosted();
    h.sim.injectFault({ route: 'POST /task/{tid}', kind: 'status', status: 429, retryAfter: 40 });
    const add = { action: 'create', steps: [{ title: '再来一步', status: 'in_progress' }] };
    expect((await call('todo', add)).code).toBe('ok');
    await h.engine.flushComments();
    const key = (await h.state()).sessions[SESSION]!.currentWork!;
    // Recorded, not yet in Dida.
    expect((await h.state()).works[key]!.steps.map((step) => step.title)).toEqual(['准备', '再来一步']);
    expect(h.sim.getTask(key)?.items?.map((item) => item.title)).toEqual(['准备']);
    expect((await call('todo', add)).code).toBe('ok');
    await shortenPause();
    const writes = h.sim.counters()['POST /task/{tid}'] ?? 0;
    h.clock.now += 61_000;
    await h.engine.flushComments({ onlyDue: true });
    expect(h.sim.counters()['POST /task/{tid}']).toBe(writes + 1);
    expect(h.sim.getTask(key)?.items?.map((item) => item.title)).toEqual(['准备', '再来一步']);
    expect((await h.state()).works[key]!.steps.filter((step) => step.title === '再来一步')).toHaveLength(1);
  });

  it('tool call: a read answered 429 without Retry-After waits out the short backoff and succeeds', async () => {
    await call('todo', { action: 'create', work_title: '看看', steps: [{ title: '一步' }] });
    await claimsPosted();
    h.sim.injectFault({ route: 'GET /project/{pid}/data', kind: 'status', status: 429 });
    const listed = await call('todo_work', { action: 'list' });
    expect(listed.code).toBe('ok');
    expect(h.sim.counters()['GET /project/{pid}/data']).toBe(2);
  });

  it('progress comments: a 429 keeps them in the outbox; they are posted once after the pause', async () => {
    await call('todo', { action: 'create', work_title: '写文档', steps: [{ title: '写', status: 'in_progress' }] });
    await claimsPosted();
    h.sim.injectFault({ route: COMMENT, kind: 'status', status: 429, retryAfter: 90 });
    expect(await h.engine.flushComments()).toBe(1);
    expect((await h.state()).outbox).toHaveLength(1);
    await shortenPause();
    h.clock.now += 60 * 60_000;
    expect(await h.engine.flushComments()).toBe(0);
    const key = (await h.state()).sessions[SESSION]!.currentWork!;
    expect(h.sim.listComments(key).filter((c) => c.title.includes('开始处理：写'))).toHaveLength(1);
  });

  it('release at a one-shot’s end: it goes first in a budget background work has used up; what the budget still refuses is owed, and sent by the next process', async () => {
    await call('todo', { action: 'create', work_title: '脚本跑', steps: [{ title: '一', status: 'in_progress' }, { title: '二' }] });
    await claimsPosted();
    const key = (await h.state()).sessions[SESSION]!.currentWork!;
    const other = await h.engine.createWork('session-rl2', list.id, { title: '另一个', steps: ['一'] });
    // 48 of 60 this minute: background work (80 %) must wait about a minute; the model's tool calls still go.
    fillBudget(48);
    const { releaseClaim } = await import('../../src/core/queue/claim-release');
    await expect(releaseClaim(h.deps, other.taskId, 'session-rl2')).rejects.toMatchObject({ code: 'rate_limited' });
    expect(await h.engine.releaseSession(SESSION)).toEqual([key]);
    expect(h.sim.listComments(key).at(-1)!.title).toContain('停止处理（会话 rl）');
    // Full: refused even first. The session is gone; its release is owed, and nothing on this machine takes it as held.
    fillBudget(60);
    expect(await h.engine.releaseSession('session-rl2')).toEqual([]);
    expect((await h.state()).works[other.taskId]?.claim?.holder).toBe('test-host#rl2');
    fillBudget(0);
    const queue = await h.engine.queue(list.id, 'session-next');
    expect(queue.ranked.map((e) => e.candidate.taskId)).toContain(other.taskId);
    expect(queue.report.released).toEqual([other.taskId]);
    expect(h.sim.listComments(other.taskId).at(-1)!.title).toContain('停止处理（会话 rl2）');
  });

  it('settle: a write refused with 429 is kept for the next settle, which waits the pause out and sends the Work for review', async () => {
    await call('todo', { action: 'create', work_title: '小事', steps: [{ title: '做', status: 'in_progress' }] });
    await call('todo', { action: 'update', updates: [{ step: '做', status: 'completed', resolution: '做完了。' }] });
    await claimsPosted();
    h.sim.injectFault({ route: 'POST /task', kind: 'status', status: 429, retryAfter: 2 });
    // The create of the review todo is refused (a write is never sent twice on its own): settle says so and keeps it.
    const first = await withRequestPriority('background', () => h.engine.settle(SESSION));
    expect(first[0]?.outcome.status).toBe('failed');
    const key = (await h.state()).sessions[SESSION]!.currentWork!;
    expect((await h.state()).works[key]!.phase).toBe('finalizing');
    // The next settle (the session's next idle, or a sync) waits for the pause through the budget, then succeeds.
    const again = await withRequestPriority('background', () => h.engine.settle(SESSION));
    expect(again[0]?.outcome.status).toBe('finalized');
    expect((await h.state()).works[key]!.phase).toBe('accepting');
    expect(h.sim.listTasks(list.id).filter((t) => t.title.includes('待验收'))).toHaveLength(1);
  });

  it('poll: within a long pause the poll is not sent; after it the list is read', async () => {
    h.sim.injectFault({ route: 'GET /project/{pid}/data', kind: 'status', status: 429, retryAfter: 45 });
    await expect(withRequestPriority('poll', () => h.engine.queue(list.id))).rejects.toMatchObject({ code: 'rate_limited' });
    const reads = h.sim.counters()['GET /project/{pid}/data'];
    await expect(withRequestPriority('poll', () => h.engine.queue(list.id))).rejects.toMatchObject({ code: 'rate_limited' });
    expect(h.sim.counters()['GET /project/{pid}/data']).toBe(reads);
    await shortenPause();
    await withRequestPriority('poll', () => h.engine.queue(list.id));
    expect(h.sim.counters()['GET /project/{pid}/data']).toBe((reads ?? 0) + 1);
  });
});

/** Makes the machine's budget file say `used` requests went out in the last few seconds (0: none). */
function fillBudget(used: number): void {
  const now = Date.now();
  const file = budgetFile(h.dir, accountKey(h.sim.baseUrl, h.sim.token));
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify({ stamps: Array.from({ length: used }, (_, i) => now - 5_000 + i) }));
}

/** Ends the machine's pause after a 429 now (as if its Retry-After had passed). */
async function shortenPause(): Promise<void> {
  const { readBudgets, budgetFile } = await import('../../src/store/budget-store');
  const { writeFileSync } = await import('node:fs');
  for (const { key, record } of readBudgets(h.dir)) {
    delete record.pausedUntil;
    delete record.strikes;
    writeFileSync(budgetFile(h.dir, key), JSON.stringify(record));
  }
}
