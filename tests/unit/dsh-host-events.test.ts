// The composition's event wiring (src/dsh/dsh-host.ts) over the host harness: agent and session events (what dsh may
// leave out of one, a failure that must not escape it), session events reaching the usage meter (a subagent's toward its
// root), agent status, a person's message, the first step of a turn (its bounded wait and extra messages), request errors.
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { bound, eventually, flush, personSays, work, memoryState } from '../helpers/dsh-fakes';
import { HOST_CWD as CWD, hostHarness as setup, withCurrentWork } from '../helpers/dsh-host-harness';

let stderr: MockInstance;
beforeEach(() => {
  stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** What was logged, without the prefix (asserting that every line carried it). */
function logged(): string[] {
  return stderr.mock.calls.map((c) => String(c[0])).map((line) => {
    expect(line.startsWith('[dida-todo] ')).toBe(true);
    expect(line.endsWith('\n')).toBe(true);
    return line.slice('[dida-todo] '.length, -1);
  });
}

const answer = (inputTokens: number) => ({ type: 'assistant/message', data: { usage: { inputTokens, outputTokens: 1, cacheReadTokens: 0 }, message: { source: { model: 'm' } } } });

describe('request errors', () => {
  it("a person's message during the upstream hand-over, or one the first-load layer saw, ends the continuation", async () => {
    const t = setup({ state: withCurrentWork() });
    const agent = await t.create('s1');
    const wrote = await t.plugin.onRequestError({ agent, failure: { code: 'SERVER' } }, async () => undefined, () => true);
    expect(wrote).toBeUndefined();
    const during = await t.plugin.onRequestError({ agent, failure: { code: 'SERVER' } }, async () => {
      t.host.emit('agent/inbox/inserted', { agent, message: personSays('wait') });
      return undefined;
    });
    expect(during).toBeUndefined();
    expect(t.state.value.sessions.s1!.autoAttempts).toBe(0);
    // The control: nothing written, the continuation retries.
    const pending = t.plugin.onRequestError({ agent, failure: { code: 'SERVER' } }, async () => undefined, () => false);
    await flush();
    await t.clock.advance(1_000);
    expect(await pending).toEqual({ kind: 'retry' });
  });
});

describe('agent events that fail', () => {
  it('an agent whose session cannot be read is logged, not thrown', async () => {
    const t = setup();
    const agent = { id: 'bad', get session(): never { throw new Error('no session'); } };
    expect(() => t.host.emit('agent/created', { agent })).not.toThrow();
    expect(logged()).toContain('agent/created: no session');
  });

  it('an attach whose marker cannot be written is logged', async () => {
    const state = memoryState();
    state.update = (async () => {
      throw new Error('read-only');
    }) as typeof state.update;
    const t = setup({ runtime: { state } });
    await t.create('s1');
    await eventually(() => logged().includes('binding the session failed: read-only'));
  });

  it('a failure after a tool call is logged with the tool name', async () => {
    const t = setup();
    const current = work('w1', ['pending']);
    t.engine.currentWork.mockResolvedValue(current);
    (t.engine as Record<string, unknown>).changeSteps = vi.fn(async () => ({ work: current }));
    const agent = await t.create('s1');
    t.state.value.sessions.s1 = { touched: [], autoAttempts: 2, updatedAt: 0 };
    const update = t.state.update;
    t.state.update = (async () => {
      throw new Error('disk full');
    }) as typeof update;
    const todo = t.host.tools.find((x) => x.name === 'todo');
    expect((await todo.execute({ action: 'update', updates: [{ step: 'step 0', status: 'in_progress' }] }, { agent })).code).toBe('ok');
    expect(logged()).toContain('after todo: disk full');
  });
});

describe('session events', () => {
  it("the model's todo_write during an open turn is kept in the turn's facts (bound sessions only)", async () => {
    const t = setup();
    const agent = await t.create('s1');
    t.host.emit('agent/status', { agent, status: 'running' });
    await eventually(() => (t.state.value.sessions.s1 as Record<string, unknown> | undefined)?.turnOpenSince !== undefined);
    t.host.emit('session/event', agent.session, { type: 'todo/write', data: { todos: [{ content: 'x', status: 'pending' }, { content: 'y', status: 'in_progress' }] } });
    await eventually(() => JSON.stringify((t.state.value.sessions.s1 as Record<string, unknown>).turnFacts ?? '').includes('2'));
    expect((t.state.value.sessions.s1 as Record<string, unknown>).turnFacts).toMatchObject({ modelTodosOpen: 2 });
  });

  it('a turn that ended without a reason does not end the stretch', async () => {
    const t = setup();
    const agent = await t.create('s1');
    t.state.value.sessions.s1 = { touched: [], autoAttempts: 2, updatedAt: 0 };
    t.host.emit('session/event', agent.session, { type: 'turn/end', data: {} });
    t.host.emit('session/event', agent.session, { type: 'turn/end' });
    // Another event carrying a reason is no turn's end either.
    t.host.emit('session/event', agent.session, { type: 'message', data: { reason: { kind: 'completed' } } });
    await flush();
    expect(t.state.value.sessions.s1!.autoAttempts).toBe(2);
  });

  it("an unbound session's todo_write writes nothing to the state", async () => {
    const t = setup();
    const agent = await t.create('u1', { cwd: '/somewhere/unbound' });
    expect(t.plugin.tracker.get('u1')?.binding).toBeUndefined();
    t.host.emit('agent/status', { agent, status: 'running' });
    t.host.emit('session/event', agent.session, { type: 'todo/write', data: { todos: [{ content: 'x', status: 'pending' }] } });
    await flush();
    expect(t.plugin.tracker.get('u1')!.modelTodosOpen).toBe(1);
    expect(t.state.value.sessions.u1).toBeUndefined();
  });
});

describe('the first step of a turn', () => {
  it('waits for the attach at most 10 s', async () => {
    const t = setup({ config: bound('/elsewhere') });
    const agent = await t.create('s1');
    t.plugin.tracker.get('s1')!.ready = new Promise(() => undefined);
    let done = false;
    const step = t.host.waterfall('agent/pre-step', { agent, turn: 1 }, async () => ({ kind: 'enter', messages: [] })).then(() => (done = true));
    await t.clock.advance(9_999);
    expect(done).toBe(false);
    await t.clock.advance(1);
    await step;
    expect(done).toBe(true);
  });
});

describe('what dsh may leave out of an event', () => {
  it('a message without a source, or none, and a session event without a body are let go', async () => {
    // Polling off: this process has no Dida access here, which polling would log.
    const t = setup({ row: { poll: false } });
    const agent = await t.create('s1');
    const track = t.plugin.tracker.get('s1')!;
    expect(() => t.host.emit('agent/inbox/inserted', { agent, message: undefined })).not.toThrow();
    expect(() => t.host.emit('agent/inbox/inserted', { agent, message: { id: 'x', role: 'user', content: [] } })).not.toThrow();
    expect(track.humanCount).toBe(0);
    expect(() => t.host.emit('session/event', { id: 's1' }, undefined)).not.toThrow();
    await flush();
    expect(logged()).toEqual([]);
  });
});

describe('session events and the usage meter', () => {
  it("the session's answers and a subagent's count toward the current Work", async () => {
    const t = setup({ state: withCurrentWork() });
    const agent = await t.create('s1');
    const child = await t.create('c1', { cwd: CWD, parentSession: 's1' });
    t.host.emit('session/event', agent.session, answer(10));
    t.host.emit('session/event', child.session, answer(5));
    await eventually(() => (t.state.value.usage.w1?.rounds['1']?.requests ?? 0) === 2);
    expect(t.state.value.usage.w1!.rounds['1']).toMatchObject({ requests: 2, inputTokens: 15 });
  });

  it('an unknown session is not metered', async () => {
    const t = setup({ state: withCurrentWork() });
    await t.create('s1');
    t.host.emit('session/event', { id: 'nobody' }, answer(10));
    await flush();
    expect(t.state.value.usage).toEqual({});
  });

  it('idle settles after the usage is written (the review todo shows it)', async () => {
    const t = setup({ state: withCurrentWork() });
    const agent = await t.create('s1');
    let usageAtSettle: unknown;
    t.engine.settle.mockImplementation(async () => {
      usageAtSettle = structuredClone(t.state.value.usage.w1);
      return [];
    });
    t.host.emit('session/event', agent.session, answer(7));
    t.host.emit('agent/status', { agent, status: 'idle' });
    await eventually(() => t.engine.settle.mock.calls.length > 0);
    expect(usageAtSettle).toMatchObject({ rounds: { '1': { requests: 1, inputTokens: 7 } } });
  });
});

describe('agent/status', () => {
  it('idle keeps the priority the Work ran with (a priority set to none between turns is a pause)', async () => {
    const state = withCurrentWork();
    (state.sessions.s1 as Record<string, unknown>).pauseSeen = { key: 'w1', priority: 3 };
    const t = setup({ state: state });
    const agent = await t.create('s1');
    await t.plugin.onPreStep({ agent, turn: 1, step: 2 }, async () => ({ kind: 'enter', messages: [] }));
    t.host.emit('agent/status', { agent, status: 'idle' });
    await flush();
    await flush();
    expect((t.state.value.sessions.s1 as Record<string, unknown>).pauseSeen).toEqual({ key: 'w1', priority: 3 });
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
