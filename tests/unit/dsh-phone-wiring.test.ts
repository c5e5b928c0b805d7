// The phone hooks as wired in the composition (src/dsh/dsh-host.ts) over the fake host: the answer in a turn's first
// step, the turn cancelled after a todo call that saw the priority at none, and the poller waking an idle session with
// the answer it found.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EngineDeps } from '../../src/core/work/engine-context';
import { getLocale } from '../../src/core/text/locale';
import type { WorkEngine } from '../../src/core/engine/work-engine';
import { emptyEngineState, type EngineState, type WorkRecord } from '../../src/core/work/work-state';
import { DshHost } from '../../src/dsh/dsh-host';
import { PAUSE_CANCEL_REASON } from '../../src/runtime/phone/pause-guard';
import { RowConfig } from '../../src/dsh/row-config';
import type { Runtime } from '../../src/wiring/runtime';
import { bound, eventually, FakeClock, fakeEngine, flush, memoryConfig, memoryState, personSays, work } from '../helpers/dsh-fakes';
import { fakeAgent, fakeHost, type FakeAgent } from '../helpers/dsh-host-fake';

const CWD = '/work/project';
const lockDirs: string[] = [];
afterEach(() => {
  for (const dir of lockDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function newLockDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dida-phone-locks-'));
  lockDirs.push(dir);
  return dir;
}

function setup(options: { row?: Record<string, unknown>; state?: EngineState } = {}) {
  const clock = new FakeClock();
  const state = memoryState(options.state);
  const config = memoryConfig(bound(CWD));
  const dida = { priority: 3 };
  const gateway = {
    getTask: vi.fn(async () => ({ id: 'w1', projectId: 'list-1', title: 'Work w1', status: 0, priority: dida.priority, items: [] })),
    listComments: vi.fn(async () => []),
    addComment: vi.fn(async (_p: string, _t: string, title: string) => ({ id: 'c1', title, userId: 'owner' })),
  };
  const engineDeps = {
    gateway,
    state,
    locks: { withLock: (_k: string, fn: (lock: { compromised: AbortSignal }) => Promise<unknown>) => fn({ compromised: new AbortController().signal }) },
    now: () => clock.now(),
    locale: getLocale('en'),
  } as unknown as EngineDeps;
  const engine = Object.assign(fakeEngine(), { deps: engineDeps });
  const runtime = {
    config,
    state,
    locks: engineDeps.locks,
    locale: getLocale('en'),
    hostLabel: 'host-a',
    corruptions: [],
    gateway: vi.fn(async () => gateway),
    tokenSource: vi.fn(async () => undefined),
    account: vi.fn(async () => 'account-1'),
    paths: { lockDir: newLockDir() },
    close: vi.fn(async () => undefined),
  } as unknown as Runtime;
  const host = fakeHost();
  const row = (RowConfig['~standard'].validate({ maxAutoContinue: 3, backoff: [1], ...options.row }) as { value: RowConfig }).value;
  let ids = 0;
  const plugin = new DshHost(host.ctx as never, row, { clock, runtime, engine: async () => engine as unknown as WorkEngine, newId: () => `m${++ids}`, pid: 1, isAlive: () => true });
  plugin.start();
  const create = async (id = 's1'): Promise<FakeAgent & { cancel: ReturnType<typeof vi.fn> }> => {
    const agent = Object.assign(fakeAgent(id, { cwd: CWD }), { cancel: vi.fn() });
    host.agents.set(id, agent as never);
    host.emit('agent/created', { agent });
    await flush();
    return agent;
  };
  return { clock, state, engine, host, plugin, create, dida };
}

function answered(key: string): WorkRecord {
  return work(key, ['in_progress'], { pendingAnswer: { text: 'ANSWER-42 用只读账号', commentIds: ['c1'], at: 0, question: 'which account?' } });
}

describe('the phone hooks in the composition', () => {
  it('the first step of a turn carries the answer to a Work of its list, fenced; the next step does not repeat it', async () => {
    const state = emptyEngineState();
    state.works.w1 = answered('w1');
    const t = setup({ state });
    const agent = await t.create('s1');
    const mine = personSays('继续');
    const step = (n: number) => t.host.waterfall('agent/pre-step', { agent, turn: 1, step: n, messages: [mine] }, async () => ({ kind: 'enter', messages: [mine] }));
    const first = await step(1);
    const texts = first.messages.map((m: { content: Array<{ text: string }> }) => m.content[0]!.text);
    expect(texts).toHaveLength(2);
    expect(texts[1]).toContain('<<<DIDA_DATA label=answer');
    expect(texts[1]).toContain('ANSWER-42');
    expect((await step(2)).messages).toEqual([mine]);
    expect(t.state.value.works.w1!.pendingAnswer).toBeUndefined();
  });

  it('a todo call whose write saw the priority at none cancels the turn with the hook cause', async () => {
    const state = emptyEngineState();
    state.works.w1 = work('w1', ['in_progress', 'pending'], { mode: 'direct', priority: 3, rev: 1, nextStepNumber: 3, keepOpen: false, humanFingerprint: '', body: '', createdAt: 0, updatedAt: 0 });
    state.sessions.s1 = { touched: ['w1'], currentWork: 'w1', autoAttempts: 0, updatedAt: 0 };
    const t = setup({ state });
    t.engine.currentWork.mockImplementation(async () => t.state.value.works.w1);
    const changeSteps = vi.fn(async () => ({ work: t.state.value.works.w1, transitions: [], wrote: false }));
    (t.engine as Record<string, unknown>).changeSteps = changeSteps;
    const agent = await t.create('s1');
    agent.status = 'running';
    const todo = t.host.tools.find((x) => x.name === 'todo');
    const update = { action: 'update', updates: [{ step: 'step 0', status: 'in_progress' }] };
    expect((await todo.execute(update, { agent })).code).toBe('ok');
    expect(agent.cancel).not.toHaveBeenCalled();
    // The task writer's read in the next call saw priority none (the record now holds it).
    changeSteps.mockImplementation(async () => {
      t.state.value.works.w1!.priority = 0;
      return { work: t.state.value.works.w1, transitions: [], wrote: false };
    });
    await todo.execute(update, { agent });
    expect(agent.cancel).toHaveBeenCalledWith({ kind: 'hook', reason: PAUSE_CANCEL_REASON }, { keepInbox: true });
    expect(t.state.value.works.w1!.waiting?.pausedBy).toBe('priority');
  });

  it('with the poller on, an idle session whose current Work was answered is woken with the answer after the poll', async () => {
    const state = emptyEngineState();
    state.works.w1 = answered('w1');
    state.sessions.s1 = { touched: ['w1'], currentWork: 'w1', autoAttempts: 0, updatedAt: 0 };
    const t = setup({ row: { poll: true, pollIntervalMinutes: 1 }, state });
    const agent = await t.create('s1');
    await flush();
    // The machine's poller looks at the shared state every second: the answer waiting there wakes the idle session.
    await eventually(() => t.plugin.machinePoller !== undefined);
    await t.clock.advance(1_000);
    await eventually(() => agent.followup.mock.calls.length > 0);
    expect(agent.followup).toHaveBeenCalledTimes(1);
    expect(agent.followup.mock.calls[0]![0].content[0].text).toContain('ANSWER-42');
    t.plugin.machinePoller!.close();
  });
});
