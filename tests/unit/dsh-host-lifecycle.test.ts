// The composition's lifecycle (src/dsh/dsh-host.ts) over the host harness: what is logged to stderr (never stdout),
// the runtime built from the row, the progress-comment timer, failures at start, the host API (/dida for a session not
// seen yet), release (a subagent's end releases nothing) and dispose.
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import type { WorkEngine } from '../../src/core/engine/work-engine';
import { DshHost, log } from '../../src/dsh/dsh-host';
import { bound, eventually, fakeAgent, flush, memoryState, fakeEngine } from '../helpers/dsh-fakes';
import { fakeHost } from '../helpers/dsh-host-fake';
import { HOST_CWD as CWD, hostHarness as setup, hostRow as row } from '../helpers/dsh-host-harness';

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

describe('release', () => {
  it("a subagent's end releases nothing", async () => {
    const t = setup();
    await t.create('c1', { cwd: CWD, delegationDepth: 1 });
    await t.plugin.release('c1');
    expect(t.engine.releaseSession).not.toHaveBeenCalled();
    expect(t.plugin.tracker.get('c1')).toBeUndefined();
  });
});
