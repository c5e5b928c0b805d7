// The stop matrix: every way a turn ends × profile (a headless one-shot; a long-lived process as in web and sdk) ×
// whether the session touched a Work. Each cell drives the real adapter (DshHost over a fake dsh context, a fake clock)
// against the Dida simulator and asserts what Dida shows afterwards (priority, 🙋 reminder and its words, comments,
// the claim) and what continues (nothing, a wait until a time, a backoff).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { getLocale } from '../../src/core/text/locale';
import { DshHost } from '../../src/dsh/dsh-host';
import { SETTLE_BUDGET_MS } from '../../src/runtime/turns/idle-settle';
import { PAUSE_CHECK_WAIT_MS } from '../../src/runtime/phone/pause-guard';
import { RowConfig } from '../../src/dsh/row-config';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { FakeClock } from '../helpers/dsh-fakes';
import { fakeAgent, fakeHost, installResume, type FakeAgent } from '../helpers/dsh-host-fake';
import { readEngineStateFile } from '../helpers/engine-state-file';

const zh = getLocale('zh');
const BACKOFF_S = 30;
const HOUR = 60 * 60_000;

type Stop =
  | { kind: 'failure'; code: string; retryAfterMs?: number; /** Every step was settled before the request failed. */ settled?: boolean }
  | { kind: 'killed' }
  | { kind: 'aborted' }
  | { kind: 'completed_open' }
  | { kind: 'completed_settled' };

/** What a cell must leave behind. */
type Expect =
  | { then: 'backoff' }
  | { then: 'wait_until' }
  | { then: 'needs_person'; cause: 'auth' | 'quota' | 'invalid_request' | 'unknown' }
  | { then: 'nothing' }
  | { then: 'review' };

const STOPS: Array<[string, Stop, Expect]> = [
  ['AUTH', { kind: 'failure', code: 'AUTH' }, { then: 'needs_person', cause: 'auth' }],
  ['QUOTA', { kind: 'failure', code: 'QUOTA' }, { then: 'needs_person', cause: 'quota' }],
  ['INVALID_REQUEST', { kind: 'failure', code: 'INVALID_REQUEST' }, { then: 'needs_person', cause: 'invalid_request' }],
  ['RATE_LIMIT, short retry-after', { kind: 'failure', code: 'RATE_LIMIT', retryAfterMs: 5_000 }, { then: 'backoff' }],
  ['RATE_LIMIT, retry-after an hour', { kind: 'failure', code: 'RATE_LIMIT', retryAfterMs: HOUR }, { then: 'wait_until' }],
  // A millisecond epoch read as seconds by a proxy: no sensible date, so an unknown reset.
  ['RATE_LIMIT, a reset beyond any date', { kind: 'failure', code: 'RATE_LIMIT', retryAfterMs: 1e16 }, { then: 'backoff' }],
  ['CONTENT_FILTER', { kind: 'failure', code: 'CONTENT_FILTER' }, { then: 'backoff' }],
  ['SERVER', { kind: 'failure', code: 'SERVER' }, { then: 'backoff' }],
  ['TIMEOUT', { kind: 'failure', code: 'TIMEOUT' }, { then: 'backoff' }],
  ['TRANSPORT', { kind: 'failure', code: 'TRANSPORT' }, { then: 'backoff' }],
  ['EMPTY_RESPONSE', { kind: 'failure', code: 'EMPTY_RESPONSE' }, { then: 'backoff' }],
  ['an unknown code', { kind: 'failure', code: 'HTTP_418' }, { then: 'needs_person', cause: 'unknown' }],
  ['interrupted by SIGKILL', { kind: 'killed' }, { then: 'nothing' }],
  ['aborted by the person', { kind: 'aborted' }, { then: 'nothing' }],
  ['completed with open steps', { kind: 'completed_open' }, { then: 'nothing' }],
  ['completed with every step settled', { kind: 'completed_settled' }, { then: 'review' }],
  // The closing request fails after every step is settled: the finished Work goes to review, never to the person.
  ['QUOTA after every step settled', { kind: 'failure', code: 'QUOTA', settled: true }, { then: 'review' }],
  ['AUTH after every step settled', { kind: 'failure', code: 'AUTH', settled: true }, { then: 'review' }],
  ['INVALID_REQUEST after every step settled', { kind: 'failure', code: 'INVALID_REQUEST', settled: true }, { then: 'review' }],
  ['an unknown code after every step settled', { kind: 'failure', code: 'HTTP_418', settled: true }, { then: 'review' }],
];
const PROFILES = ['one-shot', 'long-lived'] as const;

let sim: Simulator;
let dir: string;
let cells = 0;

beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(async () => {
  await sim.close();
  // eslint-disable-next-line no-console
  console.log(`[stop-matrix] ${cells} cells (${STOPS.length} ways a turn ends × ${PROFILES.length} profiles × Work touched or not)`);
});

let saved: string | undefined;
beforeEach(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'dida-stops-')));
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

/** One process of dsh with the bundle: a fake dsh context, the real adapter, the fake clock. */
function boot(profile: (typeof PROFILES)[number], listId: string, clock: FakeClock, mark = 'first-process') {
  const configPath = path.join(dir, 'config.yaml');
  fs.writeFileSync(configPath, `baseUrl: ${sim.baseUrl}\nhostLabel: stop-host\nbindings:\n  - cwd: ${dir}\n    projectId: ${listId}\n`);
  const parsed = RowConfig.safeParse({ configPath, stateDir: path.join(dir, 'state'), maxAutoContinue: 3, backoff: [BACKOFF_S], progressWindowSeconds: 0, poll: false });
  if (!parsed.success) throw new Error('row config');
  const ctx = fakeHost(profile === 'one-shot' ? { headlessStartup: { task: 'x' } } : {});
  const resumed: string[] = [];
  installResume(ctx.ctx.agents, async ({ resumeSessionId }: { resumeSessionId: string }) => {
    resumed.push(resumeSessionId);
    const agent = fakeAgent(resumeSessionId, { cwd: dir });
    ctx.agents.set(agent.id, agent);
    return { agent };
  });

  const host = new DshHost(ctx.ctx as never, parsed.data, { clock, pid: 4_000_000 + cells, isAlive: () => false, mark });
  host.start();
  return { ctx, host, resumed };
}

const state = () => readEngineStateFile(path.join(dir, 'state', 'state.json'));

describe('the stop matrix', () => {
  for (const [name, stop, expected] of STOPS) {
    for (const profile of PROFILES) {
      for (const touched of [true, false]) {
        it(`${name} · ${profile} · ${touched ? 'a Work touched' : 'no Work'}`, async () => {
          cells += 1;
          const list = sim.seedProject({ name: `stops-${cells}` });
          const started = Date.now();
          const clock = new FakeClock(started);
          const { ctx, host, resumed } = boot(profile, list.id, clock);
          const agent: FakeAgent = fakeAgent(`session-${cells}aa`, { cwd: dir });
          ctx.agents.set(agent.id, agent);
          try {
            ctx.emit('agent/created', { agent });
            await host.tracker.get(agent.id)!.ready;
            agent.status = 'running';
            ctx.emit('agent/status', { agent, status: 'running' });
            const todo = ctx.tools.find((t: { name: string }) => t.name === 'todo');
            let taskId: string | undefined;
            if (touched) {
              expect((await todo.execute({ action: 'create', work_title: '整理发布说明', steps: [{ title: '收集改动' }, { title: '写说明' }] }, { agent })).code).toBe('ok');
              const update = stop.kind === 'completed_settled' || (stop.kind === 'failure' && stop.settled)
                ? [{ step: '收集改动', status: 'completed', resolution: '已收集' }, { step: '写说明', status: 'completed', resolution: '已写好' }]
                : [{ step: '收集改动', status: 'completed', resolution: '已收集' }, { step: '写说明', status: 'in_progress' }];
              expect((await todo.execute({ action: 'update', updates: update }, { agent })).code).toBe('ok');
              taskId = sim.listTasks(list.id)[0]!.id;
            }
            const requestsBefore = sim.totalRequests();
            // What continues is what the adapter waits for after the stop (not the settle's budget or a bounded pause look).
            const waitsBefore = clock.waits.length;
            const continued = () => clock.waits.slice(waitsBefore).filter((ms) => ms !== SETTLE_BUDGET_MS && ms !== PAUSE_CHECK_WAIT_MS);
            const writesBefore = Object.entries(sim.counters()).filter(([route]) => !route.startsWith('GET')).reduce((n, [, c]) => n + c, 0);
            let answer: unknown = 'not asked';

            if (stop.kind === 'failure') {
              const pending = ctx.waterfall('agent/request-error', { agent, failure: { code: stop.code, message: 'm', ...(stop.retryAfterMs ? { providerRetryAfterMs: stop.retryAfterMs } : {}) }, signal: new AbortController().signal });
              let settled = false;
              void Promise.resolve(pending).then(() => (settled = true));
              await until('the failure to be looked at', async () => settled || continued().length > 0);
              if (expected.then === 'backoff' && touched) {
                expect(settled).toBe(false);
                expect(continued()).toEqual([BACKOFF_S * 1000]);
                await clock.advance(BACKOFF_S * 1000);
              } else if (expected.then === 'wait_until' && touched) {
                // It said once, on the Work, when it carries on; the wait is in the state for a restart.
                await until('the wait-until comment', () => sim.listComments(taskId!).some((c) => c.title.includes('模型服务暂时达到用量限制')));
                expect(state().sessions[agent.id].waitUntil).toMatchObject({ code: 'RATE_LIMIT' });
                await until('the end of the wait', async () => {
                  await clock.advance(HOUR / 10);
                  return settled;
                });
              }
              answer = await pending;
              if (expected.then === 'wait_until' && touched) expect(state().sessions[agent.id].waitUntil).toBeUndefined();
              if (stop.settled) {
                // The failed turn ends and the session goes idle: the settle that follows files the review.
                ctx.emit('session/event', { id: agent.id }, { type: 'turn/end', data: { turn: 1, reason: { kind: 'failed' } } });
                agent.status = 'idle';
                ctx.emit('agent/status', { agent, status: 'idle' });
                await until('the settle', async () => agent.runMaintenance.mock.calls.length > 0);
                await Promise.allSettled(agent.runMaintenance.mock.results.map((r: { value: unknown }) => r.value));
              }
            } else if (stop.kind === 'aborted' || stop.kind === 'completed_open' || stop.kind === 'completed_settled') {
              ctx.emit('session/event', { id: agent.id }, { type: 'turn/end', data: { turn: 1, reason: stop.kind === 'aborted' ? { kind: 'aborted', reason: { kind: 'user' } } : { kind: 'completed' } } });
              agent.status = 'idle';
              ctx.emit('agent/status', { agent, status: 'idle' });
              await until('the settle', async () => agent.runMaintenance.mock.calls.length > 0);
              await Promise.allSettled(agent.runMaintenance.mock.results.map((r: { value: unknown }) => r.value));
            }
            // killed: nothing more happens in that process; what the next process does is looked at below.

            const task = taskId ? sim.getTask(taskId) : undefined;
            const comments = taskId ? sim.listComments(taskId).map((c) => c.title) : [];
            const reminders = sim.listTasks(list.id).filter((t) => t.title.startsWith('🙋'));
            const released = comments.filter((c) => c.startsWith('🤖 stop-host 停止处理'));

            if (!touched) {
              // A session that never touched a Work writes nothing into Dida, whatever ended its turn.
              const writes = Object.entries(sim.counters()).filter(([route]) => !route.startsWith('GET')).reduce((n, [, c]) => n + c, 0);
              expect(writes - writesBefore).toBe(0);
              expect(sim.listTasks(list.id)).toEqual([]);
              if (stop.kind === 'failure') expect(answer).toBeUndefined();
              // Nothing to continue: no wait at all.
              expect(continued()).toEqual([]);
              void requestsBefore;
              return;
            }
            switch (expected.then) {
              case 'needs_person': {
                expect(answer).toBeUndefined();
                // No automatic attempt at all.
                expect(continued()).toEqual([]);
                expect(task?.priority).toBe(0);
                expect(reminders).toHaveLength(1);
                expect(reminders[0]!.content).toContain(zh.t(`dida.waiting.cause.${expected.cause}`, { error: (stop as { code: string }).code }));
                expect(comments.filter((c) => c.includes('需要你帮忙：'))).toHaveLength(1);
                expect(state().works[taskId!].waiting).toMatchObject({ cause: expected.cause, applied: true });
                break;
              }
              case 'backoff':
              case 'wait_until': {
                expect(answer).toEqual({ kind: 'retry' });
                expect(task?.priority).toBe(3);
                expect(reminders).toEqual([]);
                expect(state().sessions[agent.id].autoAttempts).toBe(1);
                if (expected.then === 'wait_until') {
                  // Until the reset, in chunks that each looked for a pause from the phone.
                  expect(clock.now()).toBeGreaterThanOrEqual(started + HOUR);
                  expect(continued().length).toBeGreaterThanOrEqual(2);
                  expect(continued().every((ms) => ms <= 5 * 60_000)).toBe(true);
                  expect(comments.filter((c) => c.includes('模型服务暂时达到用量限制'))).toHaveLength(1);
                } else expect(continued()).toEqual([BACKOFF_S * 1000]);
                expect(released).toEqual([]);
                break;
              }
              case 'review': {
                expect(sim.listTasks(list.id).some((t) => t.title === '🧑‍🔬 待验收：整理发布说明')).toBe(true);
                expect(sim.getTask(taskId!)?.status).toBe(2);
                expect(released).toEqual([]);
                // Finished work is never flagged as waiting: no 🙋, no "need your help", its priority kept.
                expect(reminders).toEqual([]);
                expect(comments.filter((c) => c.includes('需要你帮忙：'))).toEqual([]);
                expect(sim.getTask(taskId!)?.priority).toBe(3);
                expect(state().works[taskId!].waiting).toBeUndefined();
                if (stop.kind === 'failure') expect(answer).toBeUndefined();
                break;
              }
              case 'nothing': {
                expect(task?.priority).toBe(3);
                expect(reminders).toEqual([]);
                expect(resumed).toEqual([]);
                expect(agent.followup).not.toHaveBeenCalled();
                const holder = state().works[taskId!].claim?.holder;
                if (stop.kind === 'killed') {
                  // The turn marker stays for crash recovery; the claim stays until recovery or its lease.
                  expect(state().sessions[agent.id].turnOpenSince).toBeDefined();
                  expect(holder).toMatch(/^stop-host#/);
                  expect(released).toEqual([]);
                  await host.dispose();
                  // The next process: a long-lived one resumes the session itself after the backoff; a one-shot in the
                  // directory takes the Work over instead.
                  const next = boot(profile, list.id, clock, 'second-process');
                  try {
                    if (profile === 'long-lived') {
                      await until('the resume to be scheduled', () => continued().includes(BACKOFF_S * 1000));
                      await clock.advance(BACKOFF_S * 1000);
                      await until('the resume', () => next.resumed.length > 0 && (next.ctx.agents.get(agent.id)?.followup.mock.calls.length ?? 0) > 0);
                      expect(next.resumed).toEqual([agent.id]);
                    } else {
                      const taker = fakeAgent(`session-${cells}bb`, { cwd: dir });
                      next.ctx.agents.set(taker.id, taker);
                      next.ctx.emit('agent/created', { agent: taker });
                      await next.host.tracker.get(taker.id)!.ready;
                      expect(next.resumed).toEqual([]);
                      expect(next.host.tracker.get(taker.id)!.pendingNotes.map((m) => m.content[0]!.text)).toEqual([expect.stringContaining(`An interrupted session was working on Work ${taskId}`)]);
                    }
                  } finally {
                    await next.host.dispose();
                  }
                } else if (profile === 'one-shot') {
                  // The process ends: nobody is on it, so it is released at once, saying how far it got.
                  expect(released).toEqual([`🤖 stop-host 停止处理（会话 ${agent.id.replace('session-', '')}）：已完成 1/2 步，最后完成的是「收集改动」。现在没有人在处理，其他会话可以接手。`]);
                  expect(holder).toBeUndefined();
                } else {
                  // A long-lived session keeps its claim while its process lives; the person's own Stop is no failure.
                  expect(released).toEqual([]);
                  expect(holder).toMatch(/^stop-host#/);
                }
                break;
              }
            }
          } finally {
            await host.dispose();
          }
        });
      }
    }
  }
});

describe('a one-shot run that asked the person, then the next one-shot in the directory', () => {
  it('the run that asked holds nothing once it ends; the next run is handed the answer and carries on with the Work', async () => {
    cells += 1;
    const list = sim.seedProject({ name: `stops-asked-${cells}` });
    const clock = new FakeClock(Date.now());
    const first = boot('one-shot', list.id, clock);
    const asker = fakeAgent(`session-${cells}ask`, { cwd: dir });
    first.ctx.agents.set(asker.id, asker);
    let taskId = '';
    try {
      first.ctx.emit('agent/created', { agent: asker });
      await first.host.tracker.get(asker.id)!.ready;
      asker.status = 'running';
      first.ctx.emit('agent/status', { agent: asker, status: 'running' });
      const tool = (name: string) => first.ctx.tools.find((t: { name: string }) => t.name === name);
      expect((await tool('todo').execute({ action: 'create', work_title: '接入支付', steps: [{ title: '申请密钥', status: 'in_progress' }, { title: '联调' }] }, { agent: asker })).code).toBe('ok');
      taskId = sim.listTasks(list.id)[0]!.id;
      expect((await tool('todo_work').execute({ action: 'wait_for_human', reason: '需要商户号' }, { agent: asker })).code).toBe('ok');
      first.ctx.emit('session/event', { id: asker.id }, { type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } });
      asker.status = 'idle';
      first.ctx.emit('agent/status', { agent: asker, status: 'idle' });
      await until('the settle', async () => asker.runMaintenance.mock.calls.length > 0);
      await Promise.allSettled(asker.runMaintenance.mock.results.map((r: { value: unknown }) => r.value));
    } finally {
      await first.host.dispose();
    }
    // The process has ended: its claim is released, with words for a Work that waits for the person.
    const tag = asker.id.replace('session-', '');
    expect(sim.listComments(taskId).at(-1)!.title).toBe(`🤖 stop-host 停止处理（会话 ${tag}）：已完成 0/2 步。它在等你回复；你回复后，下一个会话会带着你的回复接着做。`);
    expect(state().works[taskId].claim).toBeUndefined();
    // The person answers on the 🙋 reminder five minutes later.
    const reminder = sim.listTasks(list.id).find((t) => t.title.startsWith('🙋'))!;
    sim.addComment(list.id, reminder.id, '商户号是 M-1024');
    const next = boot('one-shot', list.id, clock, 'second-process');
    const taker = fakeAgent(`session-${cells}take`, { cwd: dir });
    next.ctx.agents.set(taker.id, taker);
    try {
      next.ctx.emit('agent/created', { agent: taker });
      await next.host.tracker.get(taker.id)!.ready;
      taker.status = 'running';
      next.ctx.emit('agent/status', { agent: taker, status: 'running' });
      const decision = (await next.ctx.waterfall('agent/pre-step', { agent: taker, turn: 1, step: 1, messages: [] }, async () => ({ kind: 'enter', messages: [{ role: 'user', content: [{ type: 'text', text: '继续' }] }] }))) as { messages: Array<{ content: Array<{ text: string }> }> };
      const notes = decision.messages.map((m) => m.content[0]!.text);
      expect(notes.filter((text) => text.includes(`Work ${taskId} is no longer waiting for the person`))).toHaveLength(1);
      expect(notes.join('\n')).toContain('商户号是 M-1024');
      expect(notes.join('\n')).not.toContain('停止处理');
      // It switches to the Work as the note says, and wins it: the run that asked holds nothing.
      const switched = await next.ctx.tools.find((t: { name: string }) => t.name === 'todo_work').execute({ action: 'switch', work: taskId }, { agent: taker });
      expect(switched.code).toBe('ok');
      expect(state().works[taskId].claim?.holder).toBe(`stop-host#${taker.id.replace('session-', '')}`);
      expect(sim.listComments(taskId).filter((c) => c.title.includes('已停止'))).toEqual([]);
    } finally {
      await next.host.dispose();
    }
  });
});
