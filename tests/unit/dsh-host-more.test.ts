// More of the composition's wiring (src/dsh/dsh-host.ts) over the fakes: session events reach the usage meter (a
// subagent's too, counted toward its root), a subagent's end releases nothing, and the first step's extra messages.
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { getLocale } from '../../src/core/text/locale';
import type { WorkEngine } from '../../src/core/engine/work-engine';
import { emptyEngineState, type EngineState } from '../../src/core/work/work-state';
import { DshHost } from '../../src/dsh/dsh-host';
import { RowConfig } from '../../src/dsh/row-config';
import type { Runtime } from '../../src/wiring/runtime';
import { bound, eventually, FakeClock, fakeAgent, fakeEngine, flush, memoryConfig, memoryState, personSays, work, type FakeAgent } from '../helpers/dsh-fakes';
import { fakeHost } from '../helpers/dsh-host-fake';

const CWD = '/work/project';

function setup(state: EngineState = emptyEngineState()) {
  const clock = new FakeClock();
  const store = memoryState(state);
  const engine = fakeEngine();
  const runtime = {
    config: memoryConfig(bound(CWD)),
    state: store,
    locks: { withLock: (_k: string, fn: () => Promise<unknown>) => fn() },
    locale: getLocale('en'),
    hostLabel: 'host-a',
    corruptions: [],
    gateway: vi.fn(async () => Promise.reject(new Error('no gateway here'))),
    tokenSource: vi.fn(async () => undefined),
    account: vi.fn(async () => Promise.reject(new Error('no account here'))),
    paths: { lockDir: path.join(os.tmpdir(), `dida-host-more-locks-${process.pid}`) },
    close: vi.fn(async () => undefined),
  } as unknown as Runtime;
  const host = fakeHost();
  const row = (RowConfig['~standard'].validate({ maxAutoContinue: 3, backoff: [1] }) as { value: RowConfig }).value;
  const plugin = new DshHost(host.ctx as never, row, { clock, runtime, engine: async () => engine as unknown as WorkEngine, newId: () => 'id', pid: 1, isAlive: () => false });
  plugin.start();
  const create = async (id: string, header: Record<string, unknown> = { cwd: CWD }): Promise<FakeAgent> => {
    const agent = fakeAgent(id, header);
    host.agents.set(id, agent as never);
    host.emit('agent/created', { agent });
    await flush();
    return agent;
  };
  return { clock, store, engine, host, plugin, create };
}

function withWork(): EngineState {
  const state = emptyEngineState();
  state.works.w1 = work('w1', ['in_progress']);
  state.sessions.s1 = { touched: ['w1'], currentWork: 'w1', autoAttempts: 0, updatedAt: 0 };
  return state;
}

const answer = (inputTokens: number) => ({ type: 'assistant/message', data: { usage: { inputTokens, outputTokens: 1, cacheReadTokens: 0 }, message: { source: { model: 'm' } } } });

describe('session events and the usage meter', () => {
  it("the session's answers and a subagent's count toward the current Work", async () => {
    const t = setup(withWork());
    const agent = await t.create('s1');
    const child = await t.create('c1', { cwd: CWD, parentSession: 's1' });
    t.host.emit('session/event', agent.session, answer(10));
    t.host.emit('session/event', child.session, answer(5));
    await eventually(() => (t.store.value.usage.w1?.rounds['1']?.requests ?? 0) === 2);
    expect(t.store.value.usage.w1!.rounds['1']).toMatchObject({ requests: 2, inputTokens: 15 });
  });

  it('an unknown session is not metered', async () => {
    const t = setup(withWork());
    await t.create('s1');
    t.host.emit('session/event', { id: 'nobody' }, answer(10));
    await flush();
    expect(t.store.value.usage).toEqual({});
  });

  it('idle settles after the usage is written (the review todo shows it)', async () => {
    const t = setup(withWork());
    const agent = await t.create('s1');
    let usageAtSettle: unknown;
    t.engine.settle.mockImplementation(async () => {
      usageAtSettle = structuredClone(t.store.value.usage.w1);
      return [];
    });
    t.host.emit('session/event', agent.session, answer(7));
    t.host.emit('agent/status', { agent, status: 'idle' });
    await eventually(() => t.engine.settle.mock.calls.length > 0);
    expect(usageAtSettle).toMatchObject({ rounds: { '1': { requests: 1, inputTokens: 7 } } });
  });
});

describe('release', () => {
  it("a subagent's end releases nothing", async () => {
    const t = setup();
    await t.create('c1', { cwd: CWD, delegationDepth: 1 });
    await t.plugin.release('c1');
    expect(t.engine.releaseSession).not.toHaveBeenCalled();
    expect(t.plugin.tracker.get('c1')).toBeUndefined();
  });
});

describe('agent/status', () => {
  it('idle keeps the priority the Work ran with (a priority set to none between turns is a pause)', async () => {
    const state = withWork();
    (state.sessions.s1 as Record<string, unknown>).pauseSeen = { key: 'w1', priority: 3 };
    const t = setup(state);
    const agent = await t.create('s1');
    await t.plugin.onPreStep({ agent, turn: 1, step: 2 }, async () => ({ kind: 'enter', messages: [] }));
    t.host.emit('agent/status', { agent, status: 'idle' });
    await flush();
    await flush();
    expect((t.store.value.sessions.s1 as Record<string, unknown>).pauseSeen).toEqual({ key: 'w1', priority: 3 });
  });
});

describe("a person's message", () => {
  it("right after the session started reuses the session's read of the list, and ends waits with its reason", async () => {
    const t = setup();
    const agent = await t.create('s1');
    expect(t.engine.sync).toHaveBeenCalledTimes(1);
    const before = t.plugin.tracker.get('s1')!.humanSignal.signal;
    t.host.emit('agent/inbox/inserted', { agent, message: personSays('hello') });
    await flush();
    expect(t.engine.sync).toHaveBeenCalledTimes(1);
    expect((before.reason as Error).message).toBe('a person wrote');
    expect(t.plugin.tracker.get('s1')!.humanCount).toBe(1);
    // A later message reads again.
    await t.clock.advance(6_000);
    t.host.emit('agent/inbox/inserted', { agent, message: personSays('again') });
    await flush();
    expect(t.engine.sync).toHaveBeenCalledTimes(2);
  });
});

