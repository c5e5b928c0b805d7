// The probes as wired: `apply` never throws on a dsh that lacks or reshapes what the bundle registers (each registration
// stands alone, the rest keeps working, the start report names what is missing), and the hooks only a running session
// shows are judged from what the host sees (pre-step before each step, request-error before a failed turn, a published
// list in the todos projection, the question service's ask, /dida).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import type { WorkEngine } from '../../src/core/engine/work-engine';
import { DshHost } from '../../src/dsh/dsh-host';
import { HostSeams } from '../../src/dsh/host-seams';
import * as plugin from '../../src/dsh/index';
import { registerDeskSeams } from '../../src/dsh/desk-seams';
import { RowConfig } from '../../src/dsh/row-config';
import { bound, fakeEngine, fakeRuntime, flush, memoryConfig, memoryState, work } from '../helpers/dsh-fakes';
import { fakeAgent, fakeHost, type FakeAgent } from '../helpers/dsh-host-fake';

const CWD = '/work/project';
let dir: string;
let stderr: MockInstance;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dida-seams-wiring-'));
  stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
});
afterEach(() => {
  stderr.mockRestore();
  fs.rmSync(dir, { recursive: true, force: true });
});
const logged = () => stderr.mock.calls.map((c) => String(c[0]));

describe('apply on a dsh that lacks or reshapes what the bundle registers', () => {
  it('never throws; what registered works, and the start report names each surface that did not', async () => {
    const host = fakeHost();
    const on = host.ctx.on.bind(host.ctx);
    let tools = 0;
    const ctx = {
      ...host.ctx,
      on: (event: string, listener: (...args: any[]) => any, prepend?: boolean) => {
        if (event === 'agent/request-error' || event === 'approval/request') throw new Error(`no event ${event}`);
        return on(event, listener, prepend);
      },
      tools: { register: (def: { name: string }) => (++tools === 2 ? (() => { throw new Error('tool schema rejected'); })() : host.tools.push(def)) },
      get: (name: string) => {
        if (name === 'commands') throw new Error('no commands here');
        return host.ctx.get(name);
      },
      effect: () => {
        throw new Error('effects are gone');
      },
    };
    const row = plugin.Config['~standard'].validate({ configPath: path.join(dir, 'config.yaml'), stateDir: path.join(dir, 'state') }) as { value: plugin.Config };
    expect(() => plugin.apply(ctx as never, row.value)).not.toThrow();
    expect(host.tools.map((t: { name: string }) => t.name)).toEqual(['todo', 'dida_todo_setup']);
    expect([...host.listeners.keys()].sort()).toEqual(['agent/created', 'agent/disposed', 'agent/inbox/inserted', 'agent/pre-step', 'agent/status', 'session/event']);
    const agent = fakeAgent('s1', { cwd: path.join(dir, 'unbound') });
    host.emit('agent/created', { agent });
    const start = logged().filter((l) => l.includes(' lacks '));
    expect(start).toHaveLength(1);
    for (const surface of ['ctx.tools.register', 'agent/request-error', 'approval/request', 'ctx.on', 'ctx.commands']) expect(start[0], surface).toContain(surface);
    // The tool that registered answers (an unbound directory: it says how to bind).
    const setup = host.tools.find((t: { name: string }) => t.name === 'dida_todo_setup');
    expect((await setup.execute({ action: 'status' }, { agent })).code).toBeDefined();
    await host.dispose();
  });

  it('a context with no tool registry or listeners at all, or none: nothing thrown, the start report says what is missing', () => {
    vi.useFakeTimers();
    try {
      const row = plugin.Config['~standard'].validate({ configPath: path.join(dir, 'config.yaml'), stateDir: path.join(dir, 'state') }) as { value: plugin.Config };
      expect(() => plugin.apply({} as never, row.value)).not.toThrow();
      expect(() => plugin.apply(null as never, row.value)).not.toThrow();
      // No session shows up: the start report comes 3 s after apply.
      expect(logged().filter((l) => l.includes(' lacks '))).toEqual([]);
      vi.advanceTimersByTime(3_000);
      const said = logged().filter((l) => l.includes(' lacks '));
      expect(said).toHaveLength(2);
      for (const line of said) for (const surface of ['ctx.tools.register', 'ctx.on', 'ctx.goals', 'ctx.agents.resume']) expect(line, surface).toContain(surface);
      // What even the first registration cannot survive (no row config at all) is said, not thrown.
      expect(() => plugin.apply({} as never, undefined as never)).not.toThrow();
      expect(logged().some((l) => l.startsWith('[dida-todo] could not start in this dsh:'))).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});

/** The host over fakes, with its seams and what they said. */
function setup(services: Record<string, unknown> = {}) {
  const state = memoryState();
  const engine = fakeEngine({ noteHostGap: async () => true });
  const runtime = fakeRuntime(state, memoryConfig(bound(CWD)), path.join(dir, 'locks'));
  const host = fakeHost(services);
  const lines: string[] = [];
  const seams = new HostSeams({ log: (l) => lines.push(l), version: '0.2.0-rc.2' });
  seams.announce(host.ctx as never);
  const row = (RowConfig['~standard'].validate({ maxAutoContinue: 3, backoff: [0] }) as { value: RowConfig }).value;
  const plugin = new DshHost(host.ctx as never, row, { runtime, engine: async () => engine as unknown as WorkEngine, seams, pid: 1, isAlive: () => false });
  plugin.start();
  const create = async (id = 's1'): Promise<FakeAgent> => {
    const agent = fakeAgent(id, { cwd: CWD });
    host.agents.set(id, agent as never);
    host.emit('agent/created', { agent });
    await plugin.tracker.get(id)!.ready;
    await flush();
    return agent;
  };
  /** The session holds Work `key` (its current Work) with steps of these statuses. */
  const holds = (agent: FakeAgent, key: string, steps: Parameters<typeof work>[1]) =>
    state.update((s) => {
      s.works[key] = work(key, steps);
      s.sessions[agent.id] = { touched: [key], currentWork: key, autoAttempts: 0, updatedAt: 0 };
    });
  const event = (agent: FakeAgent, type: string, data: unknown) => host.emit('session/event', { id: agent.id }, { type, data });
  const preStep = (agent: FakeAgent, step: number) => host.waterfall('agent/pre-step', { agent, turn: 1, step, messages: [] }, async () => ({ kind: 'enter', messages: [] }));
  return { host, plugin, seams, lines, engine, state, create, holds, event, preStep };
}

describe('hooks only a running session shows', () => {
  it('a step that starts without the pre-step hook since the last one: this dsh lacks it (judged from the second step seen)', async () => {
    const t = setup();
    const agent = await t.create();
    t.event(agent, 'step/start', { turn: 1, step: 1 });
    expect(t.seams.lacks('preStep')).toBe(false);
    await t.preStep(agent, 2);
    t.event(agent, 'step/start', { turn: 1, step: 2 });
    await t.preStep(agent, 3);
    t.event(agent, 'step/start', { turn: 1, step: 3 });
    expect(t.seams.lacks('preStep')).toBe(false);
    // Control: a fresh host where dsh never calls the hook.
    const u = setup();
    const other = await u.create();
    u.event(other, 'step/start', { turn: 1, step: 1 });
    u.event(other, 'step/start', { turn: 1, step: 2 });
    expect(u.seams.lacks('preStep')).toBe(true);
    expect(u.lines.some((l) => l.includes('lacks agent/pre-step'))).toBe(true);
    await t.plugin.dispose();
    await u.plugin.dispose();
  });

  it('a turn that fails on a model request without the request-error hook: continuation is missing, and the Work is told', async () => {
    const t = setup();
    const agent = await t.create();
    await t.holds(agent, 'w1', ['in_progress']);
    const failed = { kind: 'error', error: { code: 'RATE_LIMIT', message: 'limit' } };
    // With the hook in the turn: nothing missing.
    t.event(agent, 'turn/start', { turn: 1 });
    await t.host.waterfall('agent/request-error', { agent, failure: { code: 'SERVER' }, signal: AbortSignal.abort() });
    t.event(agent, 'turn/end', { turn: 1, reason: failed });
    // A kind the bundle does not know, a failure without a code, an UNKNOWN one, or a turn the host never saw start: no judgement.
    for (const [start, reason] of [[true, { kind: 'forked' }], [true, { kind: 'error', error: {} }], [true, { kind: 'error', error: { code: 'UNKNOWN' } }], [false, failed]] as const) {
      if (start) t.event(agent, 'turn/start', { turn: 2 });
      t.event(agent, 'turn/end', { turn: 2, reason });
    }
    expect(t.seams.lacks('requestError')).toBe(false);
    expect(t.engine.noteHostGap).not.toHaveBeenCalled();
    // A fresh host whose dsh never calls the hook.
    const u = setup();
    const other = await u.create('s2');
    await u.holds(other, 'w2', ['in_progress']);
    u.event(other, 'turn/start', { turn: 1 });
    u.event(other, 'turn/end', { turn: 1, reason: failed });
    expect(u.seams.lacks('requestError')).toBe(true);
    await vi.waitFor(() => expect(u.engine.noteHostGap).toHaveBeenCalledWith('s2', 'continuation', 'dsh 0.2.0-rc.2'));
    await t.plugin.dispose();
    await u.plugin.dispose();
  });

  it("a published list that reaches no todos projection: the panel is missing (once); one that does: it is there", async () => {
    const t = setup({ sessionProjections: { snapshot: () => ({ values: {} }) } });
    const agent = await t.create();
    await t.holds(agent, 'w1', ['in_progress', 'pending']);
    await t.preStep(agent, 1);
    expect(agent.session.append).toHaveBeenCalledWith('todo/write', expect.anything());
    expect(t.seams.lacks('panel')).toBe(true);
    const u = setup();
    const other = await u.create();
    await u.holds(other, 'w1', ['in_progress']);
    await u.preStep(other, 1);
    expect(u.seams.lacks('panel')).toBe(false);
    const v = setup({ sessionProjections: { snapshot: () => { throw new Error('unknown session'); } } });
    const third = await v.create();
    await v.holds(third, 'w1', ['in_progress']);
    await v.preStep(third, 1);
    expect(v.seams.lacks('panel')).toBe(true);
    for (const x of [t, u, v]) await x.plugin.dispose();
  });
});

describe("dsh's asking seams and /dida", () => {
  it('a question service whose ask cannot be replaced, or is not a function, and an approval waterfall that cannot be joined, are missing', () => {
    const lacks: string[] = [];
    const frozen = Object.freeze({ ask: async () => ({ answers: [] }) });
    registerDeskSeams(fakeHost({ userQuestions: frozen }).ctx as never, async () => undefined, () => undefined, (id, detail) => lacks.push(`${id}: ${detail}`));
    registerDeskSeams(fakeHost({ userQuestions: { ask: 'no' } }).ctx as never, async () => undefined, () => undefined, (id, detail) => lacks.push(`${id}: ${detail}`));
    const refusing = { ...fakeHost().ctx, on: () => { throw new Error('unknown event approval/request'); } };
    registerDeskSeams(refusing as never, async () => undefined, () => undefined, (id, detail) => lacks.push(`${id}: ${detail}`));
    expect(lacks).toEqual([expect.stringMatching(/^userQuestions: Cannot assign to read only property 'ask'/), 'userQuestions: the question service has no ask of the shape this bundle knows', 'approval: unknown event approval/request']);
    // Control: a service of rc.8's shape is wrapped and nothing is missing.
    const fine: string[] = [];
    registerDeskSeams(fakeHost({ userQuestions: { ask: async () => ({ answers: [] }) } }).ctx as never, async () => undefined, () => undefined, (id) => fine.push(id));
    expect(fine).toEqual([]);
  });

  it('a command registry that refuses /dida: commands are missing', () => {
    const host = fakeHost({ commands: { register: () => { throw new Error('duplicate command'); } } });
    const row = plugin.Config['~standard'].validate({ configPath: path.join(dir, 'config.yaml'), stateDir: path.join(dir, 'state') }) as { value: plugin.Config };
    plugin.apply(host.ctx as never, row.value);
    host.emit('agent/created', { agent: fakeAgent('s9', { cwd: path.join(dir, 'x') }) });
    expect(logged().some((l) => l.includes('lacks ctx.commands'))).toBe(true);
    expect(logged().some((l) => l.includes('duplicate command'))).toBe(true);
  });
});
