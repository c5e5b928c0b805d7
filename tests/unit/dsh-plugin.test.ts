// The dsh plugin entry (src/dsh/index.ts) with a small fake host: export shape, row config schema, the registered
// tools and listeners, subagents left alone, maxAutoContinue 0, an aborted wait, and disposal leaving nothing behind.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { refreshIntervalMs } from '../../src/store/lock-queue';
import { POLL_TICK_MS } from '../../src/runtime/polling/machine-poller';
import * as mod from '../../src/dsh/index';
import { fakeAgent, fakeHost, type FakeAgent } from '../helpers/dsh-host-fake';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { readEngineStateFile } from '../helpers/engine-state-file';

// ---------------------------------------------------------------------------------------------------------------
// Temp XDG-style dirs given through the row config

let dir: string;
let configPath: string;
let stateDir: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dida-todo-dsh-plugin-'));
  configPath = path.join(dir, 'config', 'config.yaml');
  stateDir = path.join(dir, 'state');
  fs.mkdirSync(path.dirname(configPath), { recursive: true });
});
afterEach(() => {
  vi.restoreAllMocks();
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
});

function rowConfig(extra: Record<string, unknown> = {}): mod.Config {
  const result = mod.Config['~standard'].validate({ configPath, stateDir, ...extra });
  if (result instanceof Promise || 'issues' in result && result.issues) throw new Error('row config did not validate');
  return (result as { value: mod.Config }).value;
}

function stateFile(): string {
  return path.join(stateDir, 'state.json');
}

function readState(): any {
  return readEngineStateFile(stateFile());
}

/** Lets queued background work (config reads, state writes) run. */
async function settleBackground(ms = 150): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

// JSON Schema keywords the dsh 0.1.0-rc.8 tool registry accepts for raw parameters (its subset, minus what we never use).
const ALLOWED_KEYWORDS = new Set(['type', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'description']);

function schemaViolations(node: unknown, where: string, out: string[] = []): string[] {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) {
    out.push(`${where} is not a schema object`);
    return out;
  }
  const schema = node as Record<string, unknown>;
  for (const key of Object.keys(schema)) if (!ALLOWED_KEYWORDS.has(key)) out.push(`${where}.${key} is not an allowed keyword`);
  const type = schema.type;
  if (!['object', 'array', 'string', 'number', 'integer', 'boolean'].includes(type as string)) out.push(`${where}.type ${String(type)}`);
  if ('description' in schema && typeof schema.description !== 'string') out.push(`${where}.description is not a string`);
  if ('enum' in schema && (!Array.isArray(schema.enum) || schema.enum.length === 0)) out.push(`${where}.enum is not a non-empty array`);
  if (type === 'object') {
    if (typeof schema.additionalProperties !== 'boolean') out.push(`${where}.additionalProperties must be a boolean`);
    const props = (schema.properties ?? {}) as Record<string, unknown>;
    for (const [key, child] of Object.entries(props)) schemaViolations(child, `${where}.properties.${key}`, out);
    if ('required' in schema) {
      const required = schema.required;
      if (!Array.isArray(required) || required.some((r) => typeof r !== 'string' || !(r in props))) out.push(`${where}.required names undeclared keys`);
    }
  } else {
    for (const key of ['properties', 'required', 'additionalProperties']) if (key in schema) out.push(`${where}.${key} on a ${String(type)}`);
  }
  if (type === 'array') {
    if (!('items' in schema)) out.push(`${where}.items missing`);
    else schemaViolations(schema.items, `${where}.items`, out);
  } else if ('items' in schema) out.push(`${where}.items on a ${String(type)}`);
  return out;
}

// ---------------------------------------------------------------------------------------------------------------

describe('plugin entry shape', () => {
  it('exports name, inject, Config and apply, and no default export', () => {
    expect(mod.name).toBe('dida-todo');
    expect(mod.inject).toEqual(['agents', 'tools']);
    expect(typeof mod.apply).toBe('function');
    expect('default' in mod).toBe(false);
    expect(Object.keys(mod).sort()).toEqual(['Config', 'apply', 'inject', 'name']);
  });

  it('Config is a Standard Schema: {} gets every default', () => {
    const std = mod.Config['~standard'];
    expect(std.version).toBe(1);
    const result = std.validate({});
    expect(result).not.toBeInstanceOf(Promise);
    expect('issues' in result && result.issues).toBeFalsy();
    expect((result as { value: unknown }).value).toEqual({
      locale: 'zh',
      maxAutoContinue: 5,
      backoff: [30, 60, 120, 300, 600],
      maxWaitMinutes: 300,
      poll: true,
      pollSeconds: 20,
      pollIntervalMinutes: 10,
      queueTriggers: ['检查todo'],
      progressWindowSeconds: 60,
      stopPhrases: ['停', '暂停', 'stop', 'pause'],
      askInDida: true,
      maxAnswerWaitMinutes: 30,
      oneShotAnswerWaitMinutes: 10,
      dida: { region: 'dida365', timeoutMs: 15_000 },
    });
  });

  it.each([
    [{ maxAutoContinue: 'x' }, 'maxAutoContinue'],
    [{ maxAutoContinue: -1 }, 'maxAutoContinue'],
    [{ backoff: [] }, 'backoff'],
    [{ locale: 'fr' }, 'locale'],
    [{ dida: { region: 'mars' } }, 'dida'],
    [{ maxAutoContinu: 3 }, 'unknown key "maxAutoContinu"'],
    [{ dida: { regoin: 'ticktick' } }, 'dida unknown key "regoin"'],
  ])('Config rejects %j naming the key', (row, key) => {
    const result = mod.Config['~standard'].validate(row) as { issues?: ReadonlyArray<{ message: string; path?: ReadonlyArray<unknown> }> };
    expect(result.issues?.length).toBeGreaterThan(0);
    const named = result.issues!.map((issue) => `${(issue.path ?? []).map((p) => (typeof p === 'object' && p !== null ? (p as { key: unknown }).key : p)).join('.')} ${issue.message}`).join('\n');
    expect(named).toContain(key);
  });
});

describe('apply with a fake host', () => {
  it('registers exactly three tools with JSON Schemas in the dsh registry subset', async () => {
    const host = fakeHost();
    mod.apply(host.ctx as never, rowConfig());
    try {
      expect(host.tools.map((t) => t.name).sort()).toEqual(['dida_todo_setup', 'todo', 'todo_work']);
      for (const tool of host.tools) {
        expect(typeof tool.description).toBe('string');
        expect(tool.description.length).toBeGreaterThan(20);
        expect(tool.parameters.type).toBe('object');
        expect(schemaViolations({ ...tool.parameters, additionalProperties: false }, tool.name)).toEqual([]);
        expect(Object.keys(tool.parameters).every((k) => ['type', 'properties', 'required'].includes(k))).toBe(true);
        expect(typeof tool.execute).toBe('function');
        expect(typeof tool.output.render).toBe('function');
        // Lossless JSON: nothing a structured clone would change.
        expect(JSON.parse(JSON.stringify(tool.parameters))).toEqual(tool.parameters);
      }
      // A non-agent caller gets an error value, not a throw.
      const todo = host.tools.find((t) => t.name === 'todo');
      expect(await todo.execute({ action: 'list' }, {})).toMatchObject({ code: 'invalid_argument' });
    } finally {
      await host.dispose();
    }
  });

  it('listens to the events spec §7 lists, and adds a prompt section only for bound sessions', async () => {
    const host = fakeHost();
    mod.apply(host.ctx as never, rowConfig());
    try {
      expect([...host.listeners.keys()].sort()).toEqual(
        ['agent/created', 'agent/disposed', 'agent/inbox/inserted', 'agent/pre-step', 'agent/request-error', 'agent/status', 'approval/request', 'session/event'].sort(),
      );
      for (const list of host.listeners.values()) expect(list).toHaveLength(1);
      expect(host.sections).toHaveLength(1);
      const section = host.sections[0]!;
      expect(section.name).toBe('dida-todo');
      const agent = fakeAgent('session-unbound', { cwd: dir });
      host.emit('agent/created', { agent });
      await settleBackground();
      expect(typeof section.text === 'function' ? section.text({ agent }) : section.text).toBe('');
    } finally {
      await host.dispose();
    }
  });
});

describe('subagents', () => {
  let sim: Simulator;
  let project: string;
  let savedToken: string | undefined;

  beforeEach(async () => {
    sim = await startSimulator();
    const list = sim.seedProject({ name: '智能体工作' });
    sim.seedTask({ projectId: list.id, title: '一件工作', priority: 5, items: [{ title: '第一步' }] });
    project = fs.realpathSync(fs.mkdtempSync(path.join(dir, 'project-')));
    fs.writeFileSync(configPath, `baseUrl: ${sim.baseUrl}\nbindings:\n  - cwd: ${project}\n    projectId: ${list.id}\n`);
    savedToken = process.env.DIDA_TODO_TOKEN;
    process.env.DIDA_TODO_TOKEN = sim.token;
    sim.resetCounters();
  });
  afterEach(async () => {
    if (savedToken === undefined) delete process.env.DIDA_TODO_TOKEN;
    else process.env.DIDA_TODO_TOKEN = savedToken;
    await sim.close();
  });

  const subagentHeaders: Array<[string, Record<string, unknown>]> = [
    ['delegationDepth: 1', { delegationDepth: 1 }],
    ['parentSession', { parentSession: 'session-parent' }],
    ["origin: 'subagent'", { origin: 'subagent' }],
  ];

  it.each(subagentHeaders)('a subagent in a bound directory (%s) is never bound, panelled or continued', async (_label, header) => {
    const host = fakeHost();
    mod.apply(host.ctx as never, rowConfig({ maxAutoContinue: 5, backoff: [60] }));
    try {
      const child = fakeAgent('child-1', { cwd: project, ...header });
      host.agents.set(child.id, child);
      host.emit('agent/created', { agent: child });
      child.status = 'running';
      host.emit('agent/status', { agent: child, status: 'running' });
      host.emit('agent/inbox/inserted', { agent: child, message: { id: 'm1', role: 'user', content: [{ type: 'text', text: '检查todo' }], source: { kind: 'user' } } });
      // The model's own open todo_write items would count as unfinished work for a top-level session.
      host.emit('session/event', child.session, { type: 'todo/write', seq: 9, time: Date.now(), data: { todos: [{ content: 'x', status: 'pending' }] } });
      await settleBackground();

      // Panel: the pre-step waterfall only delegates.
      const next = vi.fn(async () => ({ kind: 'enter', messages: [] }));
      expect(await host.waterfall('agent/pre-step', { agent: child, turn: 1, step: 1, messages: [] }, next)).toEqual({ kind: 'enter', messages: [] });
      expect(next).toHaveBeenCalledTimes(1);
      expect(child.session.append).not.toHaveBeenCalled();

      // Continuation: answered at once with undefined, even with a 60 s backoff and a continuable code.
      const started = Date.now();
      const answer = await host.waterfall('agent/request-error', {
        agent: child,
        turn: 1,
        step: 1,
        provider: 'deepseek-official',
        failure: { code: 'CONTENT_FILTER', message: 'model stopped: content_filter' },
        signal: new AbortController().signal,
      });
      expect(answer).toBeUndefined();
      expect(Date.now() - started).toBeLessThan(1_000);

      child.status = 'idle';
      host.emit('agent/status', { agent: child, status: 'idle' });
      await settleBackground();
      expect(child.runMaintenance).not.toHaveBeenCalled();
      expect(child.followup).not.toHaveBeenCalled();
      expect(child.inject).not.toHaveBeenCalled();
      expect(child.steer).not.toHaveBeenCalled();
      const section = host.sections[0]!;
      expect(typeof section.text === 'function' ? section.text({ agent: child }) : section.text).toBe('');

      // The Dida tools refuse a subagent: it cannot create or change Works of its own.
      const todo = host.tools.find((t: { name: string }) => t.name === 'todo');
      const refused = await todo.execute({ action: 'create', work_title: '子代理的工作', steps: [{ title: 'x' }] }, { agent: child });
      expect(refused.code).toBe('invalid_argument');
      expect(refused.message).toContain('subagent');

      // No Dida traffic and no state on its behalf.
      expect(sim.totalRequests()).toBe(0);
      expect(readState()?.sessions?.[child.id]).toBeUndefined();
    } finally {
      await host.dispose();
    }
  });

  it('control: a top-level session in the same directory binds, syncs and gets the prompt section', async () => {
    const host = fakeHost();
    mod.apply(host.ctx as never, rowConfig());
    try {
      const root = fakeAgent('session-root', { cwd: project });
      host.agents.set(root.id, root);
      host.emit('agent/created', { agent: root });
      root.status = 'running';
      host.emit('agent/status', { agent: root, status: 'running' });
      for (let i = 0; i < 50 && !(sim.totalRequests() > 0 && readState()?.sessions?.[root.id]?.turnOpenSince); i++) await settleBackground(50);
      expect(sim.totalRequests()).toBeGreaterThan(0);
      expect(readState().sessions[root.id].turnOpenSince).toEqual(expect.any(Number));
      const section = host.sections[0]!;
      expect(typeof section.text === 'function' ? section.text({ agent: root }) : section.text).toContain('dida-todo');
    } finally {
      await host.dispose();
    }
  });
});

describe('continuation through agent/request-error', () => {
  /** A top-level, unbound session whose model left open todo_write items (so it has unfinished work). */
  function withOpenTodos(host: ReturnType<typeof fakeHost>): FakeAgent {
    const agent = fakeAgent('session-top', { cwd: dir });
    host.agents.set(agent.id, agent);
    host.emit('agent/created', { agent });
    host.emit('session/event', agent.session, { type: 'todo/write', seq: 5, time: Date.now(), data: { todos: [{ content: 'open item', status: 'in_progress' }] } });
    return agent;
  }

  const failure = { code: 'RATE_LIMIT', message: 'Rate limit reached for requests', status: 429 };

  it('control: with attempts left it waits the backoff, adds the note and retries', async () => {
    const host = fakeHost();
    mod.apply(host.ctx as never, rowConfig({ maxAutoContinue: 2, backoff: [0] }));
    try {
      const agent = withOpenTodos(host);
      await settleBackground();
      const answer = await host.waterfall('agent/request-error', { agent, turn: 1, step: 1, failure, signal: new AbortController().signal });
      expect(answer).toEqual({ kind: 'retry' });
      // The note is appended to the session's history, so the retried request itself carries it.
      const notes = agent.session.append.mock.calls.filter((c: unknown[]) => c[0] === 'user/message');
      expect(notes).toHaveLength(1);
      expect(notes[0]![1].source).toEqual({ kind: 'dida-todo', plugin: 'dida-todo', form: 'notice' });
      expect(notes[0]![2]).toEqual({ surfaceOp: 'append' });
      expect(agent.inject).not.toHaveBeenCalled();
      expect(readState().sessions[agent.id].autoAttempts).toBe(1);
    } finally {
      await host.dispose();
    }
  });

  it('maxAutoContinue 0 is off: undefined at once, no note, no state written', async () => {
    const host = fakeHost();
    mod.apply(host.ctx as never, rowConfig({ maxAutoContinue: 0, backoff: [60] }));
    try {
      const agent = withOpenTodos(host);
      await settleBackground();
      const before = readState();
      const started = Date.now();
      const answer = await host.waterfall('agent/request-error', { agent, turn: 1, step: 1, failure, signal: new AbortController().signal });
      expect(answer).toBeUndefined();
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(agent.inject).not.toHaveBeenCalled();
      expect(agent.followup).not.toHaveBeenCalled();
      await settleBackground();
      expect(readState()).toEqual(before);
      expect(readState()?.sessions?.[agent.id]?.autoAttempts ?? 0).toBe(0);
    } finally {
      await host.dispose();
    }
  });

  it('an upstream retry (dsh-llm-retry) wins and the plugin adds nothing', async () => {
    const host = fakeHost();
    mod.apply(host.ctx as never, rowConfig({ maxAutoContinue: 2, backoff: [0] }));
    try {
      const agent = withOpenTodos(host);
      await settleBackground();
      const answer = await host.waterfall('agent/request-error', { agent, turn: 1, step: 1, failure, signal: new AbortController().signal }, async () => ({ kind: 'retry' }));
      expect(answer).toEqual({ kind: 'retry' });
      expect(agent.inject).not.toHaveBeenCalled();
      expect(readState()?.sessions?.[agent.id]?.autoAttempts ?? 0).toBe(0);
    } finally {
      await host.dispose();
    }
  });

  it('a user abort of the turn ends the backoff wait at once and returns no retry', async () => {
    const host = fakeHost();
    mod.apply(host.ctx as never, rowConfig({ maxAutoContinue: 5, backoff: [60] }));
    try {
      const agent = withOpenTodos(host);
      await settleBackground();
      const turn = new AbortController();
      const started = Date.now();
      const pending = host.waterfall('agent/request-error', { agent, turn: 1, step: 1, failure, signal: turn.signal });
      // Wait until the plugin is in its backoff (it records the attempt first), then abort like agent.cancel({kind:'user'}).
      for (let i = 0; i < 100 && !readState()?.sessions?.[agent.id]?.autoAttempts; i++) await settleBackground(20);
      expect(readState().sessions[agent.id].autoAttempts).toBe(1);
      turn.abort({ kind: 'user' });
      expect(await pending).toBeUndefined();
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(agent.inject).not.toHaveBeenCalled();
      expect(agent.followup).not.toHaveBeenCalled();
    } finally {
      await host.dispose();
    }
  });

  it('a person writing during the backoff ends the wait at once and returns no retry', async () => {
    const host = fakeHost();
    mod.apply(host.ctx as never, rowConfig({ maxAutoContinue: 5, backoff: [60] }));
    try {
      const agent = withOpenTodos(host);
      await settleBackground();
      const pending = host.waterfall('agent/request-error', { agent, turn: 1, step: 1, failure, signal: new AbortController().signal });
      for (let i = 0; i < 100 && !readState()?.sessions?.[agent.id]?.autoAttempts; i++) await settleBackground(20);
      host.emit('agent/inbox/inserted', { agent, message: { id: 'h1', role: 'user', content: [{ type: 'text', text: 'stop, do X' }], source: { kind: 'user' } } });
      expect(await pending).toBeUndefined();
      expect(agent.inject).not.toHaveBeenCalled();
    } finally {
      await host.dispose();
    }
  });
});

describe('polling from config.yaml', () => {
  it("turns the machine's polling on when config.yaml asks, even when the plugin row leaves it off", async () => {
    fs.writeFileSync(configPath, `poll:\n  enabled: true\n  intervalMinutes: 3\nbindings:\n  - cwd: ${dir}\n    projectId: p1\n`);
    const setSpy = vi.spyOn(globalThis, 'setInterval');
    const host = fakeHost();
    try {
      mod.apply(host.ctx as never, rowConfig({ poll: false }));
      await settleBackground();
      // Nothing to poll until a bound session shows up (the poller only polls bound sessions): no timer, no engine.
      expect(setSpy.mock.calls.map((c) => c[1])).not.toContain(POLL_TICK_MS);
      const agent = fakeAgent('session-p', { cwd: dir });
      host.agents.set(agent.id, agent);
      host.emit('agent/created', { agent });
      // The host and the machine poller load in the background (slower on a busy machine): bounded look.
      for (let i = 0; i < 100 && !setSpy.mock.calls.some((c) => c[1] === POLL_TICK_MS); i++) await settleBackground(50);
      expect(setSpy.mock.calls.map((c) => c[1])).toContain(POLL_TICK_MS);
    } finally {
      await host.dispose();
      setSpy.mockRestore();
      fs.rmSync(configPath, { force: true });
    }
  });
});

describe('dispose', () => {
  it('clears the poll timer and leaves no active handles behind', async () => {
    const baseline = process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap').sort();
    const setSpy = vi.spyOn(globalThis, 'setInterval');
    const clearSpy = vi.spyOn(globalThis, 'clearInterval');
    fs.mkdirSync(path.dirname(configPath), { recursive: true });
    fs.writeFileSync(configPath, `bindings:\n  - cwd: ${dir}\n    projectId: p1\n`);
    const host = fakeHost();
    mod.apply(host.ctx as never, rowConfig({ poll: true, pollIntervalMinutes: 1 }));
    const agent = fakeAgent('session-d', { cwd: dir });
    host.agents.set(agent.id, agent);
    host.emit('agent/created', { agent });
    host.emit('agent/status', { agent, status: 'idle' });
    // The poll timer starts once the bound session loaded the host and config.yaml has been read (a bounded look: slower
    // on a busy machine).
    const OWN = new Set([POLL_TICK_MS, 15_000, 20_000]);
    const timers = () => setSpy.mock.calls.filter((c) => OWN.has(c[1] as number)).length;
    for (let i = 0; i < 100 && timers() < 3; i++) await settleBackground(50);
    // Three timers: the machine poller's look at the shared state, the check for progress comments that have waited
    // their window, and the look at config.yaml for polling turned on or off (besides the refresh of a cross-process
    // lock held meanwhile, which its release clears).
    const handles = setSpy.mock.results.map((r) => r.value);
    expect(setSpy.mock.calls.map((c) => c[1] as number).filter((ms) => ms > refreshIntervalMs(Number.MAX_SAFE_INTEGER)).sort((a, b) => a - b)).toEqual([POLL_TICK_MS, 15_000, 20_000]);
    // The timers of the plugin itself (a lock's refresh timer, made while a poll holds a lock, is cleared by the
    // lock's release, which dispose waits for: the active-handle check below covers it).
    const own = setSpy.mock.calls.flatMap((c, i) => (OWN.has(c[1] as number) ? [handles[i]] : []));
    expect(own).toHaveLength(3);

    await host.dispose();
    for (const handle of own) {
      expect(clearSpy).toHaveBeenCalledWith(handle);
      expect((handle as { _destroyed?: boolean })._destroyed).toBe(true);
    }
    // After disposal the plugin neither continues nor publishes.
    expect(await host.waterfall('agent/request-error', { agent, turn: 1, step: 1, failure: { code: 'RATE_LIMIT' }, signal: new AbortController().signal })).toBeUndefined();
    // Nothing of the plugin runs after dispose returned: the polls' lock releases and file operations have ended (one
    // turn of the event loop lets node drop the record of a file request that already completed).
    await new Promise((resolve) => setImmediate(resolve));
    const after = process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap').sort();
    expect(after.filter((r) => r === 'Timeout').length).toBeLessThanOrEqual(baseline.filter((r) => r === 'Timeout').length);
    for (const kind of new Set(after)) expect(after.filter((r) => r === kind).length, kind).toBeLessThanOrEqual(baseline.filter((r) => r === kind).length);
  });
});
