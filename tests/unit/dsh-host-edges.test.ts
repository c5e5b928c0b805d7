// The composition's edges (src/dsh/dsh-host.ts) over a fake host, runtime, engine and clock: what is logged to stderr
// (never stdout), the progress-comment timer, the runtime built from the row, release and dispose, the first step's
// bounded wait for the attach, /dida for a session not seen yet, and failures that must not escape a dsh event.
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { getLocale } from '../../src/core/text/locale';
import type { WorkEngine } from '../../src/core/engine/work-engine';
import { emptyEngineState, type EngineState } from '../../src/core/work/work-state';
import { DshHost, log } from '../../src/dsh/dsh-host';
import { RowConfig } from '../../src/dsh/row-config';
import type { DidaTodoConfig } from '../../src/store/config-store';
import type { Runtime } from '../../src/wiring/runtime';
import { bound, eventually, FakeClock, fakeAgent, fakeEngine, flush, memoryConfig, memoryState, personSays, work, type FakeAgent } from '../helpers/dsh-fakes';
import { fakeHost } from '../helpers/dsh-host-fake';

const CWD = '/work/project';

let stderr: MockInstance;
let stdout: MockInstance;
beforeEach(() => {
  stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  stdout = vi.spyOn(process.stdout, 'write');
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

function row(extra: Record<string, unknown> = {}): RowConfig {
  return (RowConfig['~standard'].validate({ maxAutoContinue: 3, backoff: [1], ...extra }) as { value: RowConfig }).value;
}

function setup(options: { row?: Record<string, unknown>; config?: DidaTodoConfig; state?: EngineState; runtime?: Record<string, unknown>; start?: boolean; services?: Record<string, unknown> } = {}) {
  const clock = new FakeClock();
  const state = memoryState(options.state);
  const config = memoryConfig(options.config ?? bound(CWD));
  const engine = { ...fakeEngine(), flushComments: vi.fn(async () => undefined) };
  const runtime = {
    config,
    state,
    locks: { withLock: (_k: string, fn: () => Promise<unknown>) => fn() },
    locale: getLocale('en'),
    hostLabel: 'host-a',
    corruptions: [],
    gateway: vi.fn(async () => Promise.reject(new Error('no gateway here'))),
    tokenSource: vi.fn(async () => undefined),
    account: vi.fn(async () => Promise.reject(new Error('no account here'))),
    paths: { lockDir: path.join(os.tmpdir(), `dida-host-edge-locks-${process.pid}`) },
    close: vi.fn(async () => undefined),
    ...options.runtime,
  } as unknown as Runtime & { close: ReturnType<typeof vi.fn> };
  const host = fakeHost(options.services);
  let ids = 0;
  const plugin = new DshHost(host.ctx as never, row(options.row), { clock, runtime, engine: async () => engine as unknown as WorkEngine, newId: () => `m${++ids}`, pid: 1, isAlive: () => false });
  if (options.start !== false) plugin.start();
  const create = async (id = 's1', header: Record<string, unknown> = { cwd: CWD }): Promise<FakeAgent> => {
    const agent = fakeAgent(id, header);
    host.agents.set(id, agent as never);
    host.emit('agent/created', { agent });
    await flush();
    return agent;
  };
  return { clock, state, config, engine, runtime, host, plugin, create };
}

function withCurrent(): EngineState {
  const state = emptyEngineState();
  state.works.w1 = work('w1', ['in_progress']);
  state.sessions.s1 = { touched: ['w1'], currentWork: 'w1', autoAttempts: 0, updatedAt: 0 };
  return state;
}

describe('log', () => {
  it('writes one prefixed line to stderr and nothing to stdout', () => {
    log('hello there');
    expect(stderr).toHaveBeenCalledWith('[dida-todo] hello there\n');
    expect(stdout).not.toHaveBeenCalled();
  });
});

describe('the runtime built from the row', () => {
  it('opens the runtime at the row paths, with its locale, progress window and stop phrases', async () => {
    const dir = path.join(os.tmpdir(), `dida-host-edge-${process.pid}`);
    const configPath = path.join(dir, 'config.yaml');
    const stateDir = path.join(dir, 'state');
    const parsed = row({ configPath, stateDir, locale: 'en', progressWindowSeconds: 7, stopPhrases: ['halt'], dida: { region: 'ticktick', timeoutMs: 2000 } });
    const plugin = new DshHost(fakeHost().ctx as never, parsed, { engine: async () => fakeEngine() as unknown as WorkEngine });
    try {
      expect(plugin.runtime.paths.configFile).toBe(configPath);
      expect(plugin.runtime.paths.stateDir).toBe(stateDir);
      expect(plugin.runtime.locale.id).toBe('en');
      expect(plugin.runtime.progressWindowMs).toBe(7_000);
      expect(plugin.runtime.stopPhrases).toEqual(['halt']);
    } finally {
      await plugin.runtime.close();
    }
  });
});

describe('progress comments in the background', () => {
  async function started(extra: Parameters<typeof setup>[0] = {}) {
    const spy = vi.spyOn(globalThis, 'setInterval');
    const before = spy.mock.calls.length;
    const t = setup(extra);
    await eventually(() => spy.mock.calls.length > before);
    const call = spy.mock.calls[spy.mock.calls.length - 1]!;
    return { t, spy, ms: call[1] as number, tick: call[0] as () => void, timer: spy.mock.results[spy.mock.results.length - 1]!.value as NodeJS.Timeout };
  }

  it('checks every quarter of the progress window, between 1 and 15 s', async () => {
    expect((await started({ row: { progressWindowSeconds: 8 } })).ms).toBe(2_000);
    expect((await started({ row: { progressWindowSeconds: 0 } })).ms).toBe(1_000);
    expect((await started({ row: { progressWindowSeconds: 2 } })).ms).toBe(1_000);
    expect((await started({ row: { progressWindowSeconds: 60 } })).ms).toBe(15_000);
    expect((await started({ row: { progressWindowSeconds: 600 } })).ms).toBe(15_000);
  });

  it('posts the due comments only when some wait; a failure is logged; after dispose the timer is gone', async () => {
    const { t, tick, timer } = await started();
    tick();
    await flush();
    expect(t.engine.flushComments).not.toHaveBeenCalled();
    t.state.value.outbox = [{ workKey: 'w1' } as never];
    tick();
    await eventually(() => t.engine.flushComments.mock.calls.length === 1);
    expect(t.engine.flushComments).toHaveBeenCalledWith({ onlyDue: true });
    t.engine.flushComments.mockRejectedValueOnce(new Error('Dida is down'));
    tick();
    await eventually(() => logged().includes('posting progress comments failed (will retry): Dida is down'));
    expect(timer.hasRef()).toBe(false);
    const clear = vi.spyOn(globalThis, 'clearInterval');
    await t.host.dispose();
    expect(clear).toHaveBeenCalledWith(timer);
    // A tick that was already queued does nothing once the host is disposed.
    tick();
    await flush();
    expect(t.engine.flushComments).toHaveBeenCalledTimes(2);
    expect(stdout).not.toHaveBeenCalled();
  });

  it('a host disposed before config.yaml was first read starts no timer, no polling and no recovery', async () => {
    const spy = vi.spyOn(globalThis, 'setInterval');
    const before = spy.mock.calls.length;
    const t = setup({ row: { poll: true } });
    void t.host.dispose();
    await flush();
    await flush();
    expect(spy.mock.calls.length).toBe(before);
    expect(t.plugin.machinePoller).toBeUndefined();
    expect(t.clock.pending()).toBe(0);
  });
});

describe('failures at start', () => {
  it('polling that cannot start is logged and the rest still runs', async () => {
    const t = setup({ row: { poll: true }, runtime: { paths: undefined } });
    await eventually(() => logged().some((l) => l.startsWith('polling could not start: ')));
    expect(t.plugin.machinePoller).toBeUndefined();
  });

  it('a crash-recovery scan that fails is logged', async () => {
    const state = memoryState();
    state.read = (async () => {
      throw new Error('state unreadable');
    }) as typeof state.read;
    setup({ runtime: { state } });
    await eventually(() => logged().some((l) => l.startsWith('resuming interrupted sessions failed: ')));
    expect(logged().find((l) => l.startsWith('resuming'))).toContain('state unreadable');
  });
});

describe('the host API', () => {
  it('bridged refuses a tool it does not have; promptText answers per agent', async () => {
    const t = setup();
    expect(() => t.plugin.bridged('nope')).toThrow('no tool nope');
    expect(t.plugin.bridged('todo').name).toBe('todo');
    await t.create('s1');
    await t.create('s2', { cwd: '/elsewhere' });
    expect(t.plugin.promptText('s1')).toContain('dida-todo');
    expect(t.plugin.promptText('s2')).toBe('');
    expect(t.plugin.promptText(undefined)).toBe('');
  });

  it('begin without the prompt registers no section', async () => {
    const t = setup({ start: false });
    t.plugin.begin({ prompt: false });
    expect(t.host.sections).toEqual([]);
    const u = setup({ start: false });
    u.plugin.begin();
    expect(u.host.sections.map((s) => s.name)).toEqual(['dida-todo']);
    await t.plugin.dispose();
    await u.plugin.dispose();
  });

  it("/dida registered with the profile's command registry answers through the host", async () => {
    const register = vi.fn();
    const t = setup({ config: bound('/elsewhere'), services: { commands: { register } } });
    expect(register).toHaveBeenCalledTimes(1);
    const definition = register.mock.calls[0]![0] as { name: string; handler: (invocation: unknown) => Promise<{ kind: string; text: string }> };
    expect(definition.name).toBe('dida');
    const agent = fakeAgent('s8', { cwd: CWD });
    const answer = await definition.handler({ agent, rawInput: 'status', signal: new AbortController().signal });
    expect(answer.kind).toBe('success');
    expect(answer.text).toContain(CWD);
    expect(t.plugin.tracker.get('s8')).toBeDefined();
  });

  it('/dida for a session the host has not seen yet tracks it first, and loads the commands once', async () => {
    const t = setup({ config: bound('/elsewhere') });
    const agent = fakeAgent('s9', { cwd: CWD });
    expect(t.plugin.tracker.get('s9')).toBeUndefined();
    const answer = await t.plugin.slashCommand({ agent, rawInput: 'status', signal: new AbortController().signal });
    expect(answer.kind).toBe('success');
    expect(answer.text).toContain(CWD);
    expect(t.plugin.tracker.get('s9')).toBeDefined();
    const known = t.plugin.tracker.get('s9');
    expect((await t.plugin.slashCommand({ agent, rawInput: 'status', signal: new AbortController().signal })).text).toBe(answer.text);
    expect(t.plugin.tracker.get('s9')).toBe(known);
    expect((await t.plugin.slashCommand({ agent, rawInput: 'help', signal: new AbortController().signal })).kind).toBe('success');
  });

  it('crash recovery is loaded once', async () => {
    const t = setup();
    const first = t.plugin.crashRecovery();
    expect(t.plugin.crashRecovery()).toBe(first);
    expect(await first).toBe(await t.plugin.crashRecovery());
  });
});

describe('request errors', () => {
  it("a person's message during the upstream hand-over, or one the first-load layer saw, ends the continuation", async () => {
    const t = setup({ state: withCurrent() });
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

describe('release', () => {
  it("a bound session's end releases its Works, says so, and drops the live mark", async () => {
    const t = setup();
    t.engine.releaseSession.mockResolvedValue(['w1', 'w2']);
    const agent = await t.create('s1');
    await eventually(() => (t.state.value.sessions.s1 as Record<string, unknown> | undefined)?.livePid === 1);
    await t.plugin.release('s1');
    expect(t.engine.releaseSession).toHaveBeenCalledWith('s1');
    expect(logged()).toContain('session s1 ended with steps open: released w1, w2 for other sessions');
    expect((t.state.value.sessions.s1 as Record<string, unknown> | undefined)?.livePid).toBeUndefined();
    expect(t.plugin.tracker.get('s1')).toBeUndefined();
    void agent;
  });

  it('nothing released says nothing; a failed release is logged; unknown, unbound and disposed sessions are left', async () => {
    const t = setup();
    await t.create('s1');
    await t.plugin.release('s1');
    expect(logged().filter((l) => l.startsWith('session '))).toEqual([]);
    await t.create('s2');
    t.engine.releaseSession.mockRejectedValueOnce(new Error('lock lost'));
    await t.plugin.release('s2');
    expect(logged()).toContain('releasing the Works of session s2 failed (their claims lapse after the lease): lock lost');
    await t.plugin.release('nobody');
    await t.create('s3', { cwd: '/elsewhere' });
    await t.plugin.release('s3');
    expect(t.engine.releaseSession).toHaveBeenCalledTimes(2);
    await t.create('s4');
    await t.host.dispose();
    await t.plugin.release('s4');
    expect(t.engine.releaseSession).toHaveBeenCalledTimes(2);
  });

  it('waits for the session\'s background work before releasing', async () => {
    const t = setup();
    await t.create('s1');
    let finish!: () => void;
    const track = t.plugin.tracker.get('s1')!;
    track.background.add(new Promise<void>((resolve) => (finish = resolve)));
    let released = false;
    const releasing = t.plugin.release('s1').then(() => (released = true));
    await flush();
    expect(released).toBe(false);
    expect(t.engine.releaseSession).not.toHaveBeenCalled();
    finish();
    await releasing;
    expect(t.engine.releaseSession).toHaveBeenCalledTimes(1);
  });
});

describe('dispose', () => {
  it('forgets every session, ends their waits, and closes the runtime once', async () => {
    const t = setup();
    await t.create('s1');
    await t.create('s2', { cwd: '/elsewhere' });
    const signals = [t.plugin.tracker.get('s1')!.humanSignal.signal, t.plugin.tracker.get('s2')!.humanSignal.signal];
    await t.plugin.dispose();
    expect(t.plugin.tracker.all()).toEqual([]);
    expect(signals.map((s) => s.aborted)).toEqual([true, true]);
    expect(t.runtime.close).toHaveBeenCalledTimes(1);
  });

  it("waits for each session's background work before it closes the runtime", async () => {
    const t = setup();
    await t.create('s1');
    let settled = false;
    const slow = new Promise<void>((resolve) => setTimeout(resolve, 40)).then(() => {
      settled = true;
    });
    t.plugin.tracker.get('s1')!.background.add(slow);
    t.runtime.close.mockImplementation(async () => {
      expect(settled).toBe(true);
    });
    await t.plugin.dispose();
    expect(settled).toBe(true);
    expect(t.runtime.close).toHaveBeenCalledTimes(1);
  });

  it('a first step still waiting for the attach goes on at once when the plugin unloads', async () => {
    const t = setup();
    const agent = await t.create('s1');
    t.plugin.tracker.get('s1')!.ready = new Promise(() => undefined);
    let entered = false;
    const step = t.host.waterfall('agent/pre-step', { agent, turn: 1, step: 1, messages: [] }, async () => ({ kind: 'enter', messages: [] })).then(() => (entered = true));
    await flush();
    expect(entered).toBe(false);
    void t.plugin.dispose();
    await eventually(() => entered, 50, 1_000);
    await step;
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
