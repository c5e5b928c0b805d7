// The adapter's small shared pieces: the ports helpers, the agent tracker, the tool bridge's JSON Schema and results,
// the per-call tool context, the system clock, and the row config's unknown-key message.
import { describe, expect, it, vi } from 'vitest';
import type { ToolDefinition } from '../../src/core/tools';
import { AgentTracker, inBackground, isSubagent } from '../../src/runtime/session/agent-tracker';
import { systemClock } from '../../src/runtime/session/clock';
import { optionalServices, type HostContext } from '../../src/dsh/ports';
import { personIsWaiting, pluginMessage, textOf } from '../../src/runtime/session/messages';
import { RowConfig } from '../../src/dsh/row-config';
import { bridgeTool, toJsonSchema } from '../../src/dsh/tool-bridge';
import { SUBAGENT_REFUSAL, toolContextFor } from '../../src/dsh/tool-context';
import { fakeAgent, personSays } from '../helpers/dsh-fakes';

describe('ports helpers', () => {
  it('pluginMessage builds a frozen plugin notice; textOf joins only text blocks', () => {
    const message = pluginMessage('hello', 'id-1');
    expect(message).toEqual({ id: 'id-1', role: 'user', content: [{ type: 'text', text: 'hello' }], source: { kind: 'dida-todo', plugin: 'dida-todo', form: 'notice' } });
    expect(Object.isFrozen(message)).toBe(true);
    expect(pluginMessage('x', 'i', 'instructions').source.form).toBe('instructions');
    expect(textOf({ content: [{ type: 'text', text: 'a' }, { type: 'image' }, { type: 'text', text: 'b' }, { type: 'text' }] })).toBe('ab');
    expect(textOf(undefined)).toBe('');
    expect(textOf({})).toBe('');
    // A block of another type that carries text (a model's thinking) is not the message's text.
    expect(textOf({ content: [{ type: 'thinking', text: 'secret' }, { type: 'text', text: 'said' }] })).toBe('said');
  });

  it('personIsWaiting looks at both inbox queues for a person\'s message only', () => {
    const agent = fakeAgent('a');
    expect(personIsWaiting(agent)).toBe(false);
    agent.inbox.nextStep.push(pluginMessage('x', 'p'));
    expect(personIsWaiting(agent)).toBe(false);
    agent.inbox.nextStep.push(personSays('hi'));
    expect(personIsWaiting(agent)).toBe(true);
    const other = fakeAgent('b');
    other.inbox.nextTurn.push(personSays('hi'));
    expect(personIsWaiting(other)).toBe(true);
    const bare = fakeAgent('c');
    delete (bare as { inbox?: unknown }).inbox;
    expect(personIsWaiting(bare)).toBe(false);
    // Entries dsh did not build (no source, or none at all) are no person's message and break nothing.
    const odd = fakeAgent('d');
    (odd.inbox.nextStep as unknown[]).push(null, { id: 'x', role: 'user', content: [] });
    expect(personIsWaiting(odd)).toBe(false);
  });

  it('optionalServices from a fresh import (the object is built when the module loads)', async () => {
    vi.resetModules();
    const fresh = await import('../../src/dsh/ports');
    const services: Record<string, unknown> = { goals: 'G', systemPrompt: 'P', agentDefaultModel: 'M' };
    const ctx = { get: (name: string) => services[name] } as unknown as HostContext;
    expect([fresh.optionalServices.goals(ctx), fresh.optionalServices.systemPrompt(ctx), fresh.optionalServices.defaultModel(ctx)]).toEqual(['G', 'P', 'M']);
    expect(fresh.optionalServices.isOneShot(ctx)).toBe(false);
    services.headlessStartup = {};
    expect(fresh.optionalServices.isOneShot(ctx)).toBe(true);
  });

  it('optionalServices read what the profile has', () => {
    const services: Record<string, unknown> = { goals: 'G', systemPrompt: 'P', agentDefaultModel: 'M' };
    const ctx = { get: (name: string) => services[name] } as unknown as HostContext;
    expect([optionalServices.goals(ctx), optionalServices.systemPrompt(ctx), optionalServices.defaultModel(ctx)]).toEqual(['G', 'P', 'M']);
    expect(optionalServices.isOneShot(ctx)).toBe(false);
    services.headlessStartup = { task: 't' };
    expect(optionalServices.isOneShot(ctx)).toBe(true);
  });
});

describe('AgentTracker', () => {
  it('tells subagents by depth > 0, a parent session or origin', () => {
    expect(isSubagent(fakeAgent('a', { delegationDepth: 1 }))).toBe(true);
    expect(isSubagent(fakeAgent('a', { delegationDepth: 0 }))).toBe(false);
    expect(isSubagent(fakeAgent('a', { delegationDepth: '2' }))).toBe(false);
    expect(isSubagent(fakeAgent('a', { parentSession: 'p' }))).toBe(true);
    expect(isSubagent(fakeAgent('a', { origin: 'subagent' }))).toBe(true);
    expect(isSubagent(fakeAgent('a', { origin: 'fork' }))).toBe(false);
    expect(isSubagent({ id: 'x' } as never)).toBe(false);
  });

  it('adds once per id (refreshing the agent object), takes the directory from the header, and removes cleanly', () => {
    const tracker = new AgentTracker();
    const first = fakeAgent('a', { cwd: '/one' });
    const track = tracker.add(first, '/fallback');
    expect(track.cwd).toBe('/one');
    expect(track.sessionId).toBe('a');
    const again = fakeAgent('a', { cwd: '/two' });
    expect(tracker.add(again)).toBe(track);
    expect(track.agent).toBe(again);
    expect(track.cwd).toBe('/one');
    expect(tracker.add({ id: 'b', session: undefined } as never, '/fallback').cwd).toBe('/fallback');
    expect(tracker.all().map((t) => t.sessionId)).toEqual(['a', 'b']);
    const lift = vi.fn(() => {
      throw new Error('scope gone');
    });
    track.liftRestriction = lift;
    const signal = track.humanSignal.signal;
    expect(tracker.remove('a')).toBe(track);
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).message).toBe('agent disposed');
    expect(lift).toHaveBeenCalledTimes(1);
    expect(tracker.get('a')).toBeUndefined();
    expect(tracker.remove('a')).toBeUndefined();
  });

  it('inBackground keeps the work until it settles and logs a failure with what it was', async () => {
    const tracker = new AgentTracker();
    const track = tracker.add(fakeAgent('a'));
    const logs: string[] = [];
    let fail!: (e: Error) => void;
    inBackground(track, new Promise((_r, reject) => (fail = reject)), (l) => logs.push(l), 'syncing');
    expect(track.background.size).toBe(1);
    fail(new Error('Dida 503'));
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(logs).toEqual(['syncing failed: Dida 503']);
    expect(track.background.size).toBe(0);
    inBackground(track, Promise.reject('plain'), (l) => logs.push(l), 'x');
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(logs[1]).toBe('x failed: plain');
  });
});

describe('tool bridge', () => {
  it('converts parameter specs to the JSON Schema subset: descriptions, enums, nested items, required lists', () => {
    expect(
      toJsonSchema({
        action: { type: 'string', required: true, enum: ['a', 'b'], description: 'what' },
        list: {
          type: 'array',
          items: { type: 'object', properties: { id: { type: 'string', required: true }, note: { type: 'string' } } },
        },
        open: { type: 'object', additionalProperties: true, properties: { x: { type: 'number' } } },
        flag: { type: 'boolean' },
      }),
    ).toEqual({
      type: 'object',
      properties: {
        action: { type: 'string', description: 'what', enum: ['a', 'b'] },
        list: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' }, note: { type: 'string' } }, required: ['id'], additionalProperties: false } },
        open: { type: 'object', properties: { x: { type: 'number' } }, additionalProperties: true },
        flag: { type: 'boolean' },
      },
      required: ['action'],
    });
    expect(toJsonSchema({ a: { type: 'string' } })).toEqual({ type: 'object', properties: { a: { type: 'string' } } });
    expect(toJsonSchema({ o: { type: 'object', properties: { a: { type: 'string' } } } }).properties).toEqual({ o: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false } });
  });

  const echo: ToolDefinition = {
    name: 'echo',
    description: 'Echoes.',
    parameters: { say: { type: 'string' } },
    execute: async (args) => ({ code: 'ok', message: `said ${String(args.say)}`, detail: 'more', data: { dropped: undefined, kept: 1 } }),
  };

  it('renders results as text, returns lossless JSON, and runs the after-hook with the call', async () => {
    const after = vi.fn();
    const context = { sessionId: 's', cwd: '/', queueGranted: false } as never;
    const bridged = bridgeTool(echo, () => context, after);
    expect(bridged.name).toBe('echo');
    expect(bridged.description).toBe('Echoes.');
    expect(bridged.output.render(undefined, { code: 'ok', message: 'Fine.', detail: 'Lines' })).toEqual([{ type: 'text', text: 'Fine.\n\nLines' }]);
    expect(bridged.output.render(undefined, { code: 'not_bound', message: 'No.' })).toEqual([{ type: 'text', text: '[not_bound] No.' }]);
    const exec = { agent: fakeAgent('s') };
    const result = await bridged.execute({ say: 'hi' }, exec);
    expect(result).toEqual({ code: 'ok', message: 'said hi', detail: 'more', data: { kept: 1 } });
    expect(after).toHaveBeenCalledWith({ tool: 'echo', args: { say: 'hi' }, exec, result });
    expect(await bridged.execute(undefined, exec)).toMatchObject({ message: 'said undefined' });
  });

  it('answers a caller that is not an agent, or a refused one, without running the tool', async () => {
    const run = vi.fn(echo.execute);
    const after = vi.fn();
    const bridged = bridgeTool({ ...echo, execute: run }, (exec) => (exec.agent ? { code: 'invalid_argument', message: 'refused' } : undefined), after);
    expect(await bridged.execute({}, {})).toEqual({ code: 'invalid_argument', message: 'echo must be called by an agent session.' });
    expect(await bridged.execute({}, { agent: fakeAgent('c') })).toEqual({ code: 'invalid_argument', message: 'refused' });
    expect(run).not.toHaveBeenCalled();
    expect(after).not.toHaveBeenCalled();
  });
});

describe('toolContextFor', () => {
  const runtime = { config: { read: vi.fn(), update: vi.fn() }, gateway: vi.fn(async () => ({ kind: 'http', getTask: vi.fn(async () => 'task') })), tokenSource: vi.fn(async () => ({ source: 'env' })) };

  it('gives the session, its directory and grant; binds engine and gateway to the signal', async () => {
    const tracker = new AgentTracker();
    const agent = fakeAgent('s1', { cwd: '/p' });
    tracker.add(agent).queueGranted = true;
    const bound = { id: 'bound' };
    const engine = { withSignal: vi.fn(() => bound) };
    const turn = new AbortController();
    const ctx = toolContextFor(tracker, runtime as never, async () => engine as never, agent, turn.signal) as Record<string, any>;
    expect(ctx).toMatchObject({ sessionId: 's1', cwd: '/p', queueGranted: true, config: runtime.config, signal: turn.signal });
    expect(await ctx.engine()).toBe(bound);
    expect(engine.withSignal).toHaveBeenCalledWith(turn.signal);
    const gateway = await ctx.gateway();
    turn.abort();
    await expect(gateway.getTask('p', 't')).rejects.toThrow('the turn was stopped');
    expect(await ctx.tokenSource()).toEqual({ source: 'env' });
    const plain = toolContextFor(tracker, runtime as never, async () => engine as never, agent) as Record<string, any>;
    expect('signal' in plain).toBe(false);
    expect(await plain.engine()).toBe(engine);
    expect((await plain.gateway()).kind).toBe('http');
  });

  it('tracks an unknown agent, refuses a subagent, and has nothing for a non-agent caller', () => {
    const tracker = new AgentTracker();
    expect(toolContextFor(tracker, runtime as never, async () => ({}) as never, undefined)).toBeUndefined();
    toolContextFor(tracker, runtime as never, async () => ({}) as never, fakeAgent('new', { cwd: '/n' }));
    expect(tracker.get('new')?.cwd).toBe('/n');
    expect(toolContextFor(tracker, runtime as never, async () => ({}) as never, fakeAgent('child', { delegationDepth: 1 }))).toEqual({ code: 'invalid_argument', message: SUBAGENT_REFUSAL });
  });
});

describe('systemClock', () => {
  it('waits, ends a wait on abort, and repeats until stopped', async () => {
    expect(Math.abs(systemClock.now() - Date.now())).toBeLessThan(50);
    expect(await systemClock.wait(1)).toBe(true);
    const stop = new AbortController();
    const waiting = systemClock.wait(60_000, [stop.signal]);
    stop.abort();
    expect(await waiting).toBe(false);
    const tick = vi.fn();
    const cancel = systemClock.every(5, tick);
    await new Promise((resolve) => setTimeout(resolve, 30));
    cancel();
    const count = tick.mock.calls.length;
    expect(count).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(tick.mock.calls.length).toBe(count);
  });
});

describe('systemClock from a fresh import', () => {
  // Its methods are chosen when the module loads: a fresh import sees what that load built.
  it('now is the wall clock, wait ends after its time', async () => {
    vi.resetModules();
    const { systemClock: fresh } = await import('../../src/runtime/session/clock');
    const now = fresh.now();
    expect(typeof now).toBe('number');
    expect(Math.abs(now - Date.now())).toBeLessThan(50);
    expect(await fresh.wait(1)).toBe(true);
    const stop = fresh.every(1_000, () => undefined);
    stop();
  });
});

describe('row config', () => {
  it('names one unknown key, or several, in the error', () => {
    const one = RowConfig['~standard'].validate({ maxAutoContinu: 1 }) as { issues?: Array<{ message: string }> };
    expect(one.issues?.map((i) => i.message).join(' ')).toContain('unknown key "maxAutoContinu"');
    const two = RowConfig['~standard'].validate({ a: 1, b: 2 }) as { issues?: Array<{ message: string }> };
    expect(two.issues?.map((i) => i.message).join(' ')).toContain('unknown keys "a", "b"');
    const wrongType = RowConfig['~standard'].validate({ poll: 'yes' }) as { issues?: Array<{ message: string }> };
    expect(wrongType.issues?.map((i) => i.message).join(' ')).not.toContain('unknown key');
  });
});
