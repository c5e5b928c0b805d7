// The first-load layer's hand-over to the full host (src/dsh/lazy-host.ts): what it saw before the host loaded (the
// restrictions it placed, a turn already running, an agent disposed since), a host loaded after disposal, the tools'
// rendered output, a load that fails (logged on each path that starts one), and the prompt once the host has resolved
// a session's binding.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { renderResult, type ToolResult } from '../../src/core/tools/tool-types';
import { DshHost } from '../../src/dsh/dsh-host';
import { LazyHost } from '../../src/dsh/lazy-host';
import { eventually } from '../helpers/dsh-fakes';
import { fakeAgent, fakeHost } from '../helpers/dsh-host-fake';
import { lazyRow, makeLazyDirs, promptOf, startLazy } from '../helpers/lazy-host-world';

let dir: string;
let configPath: string;
let stateDir: string;
let stderr: MockInstance;

beforeEach(() => {
  ({ dir, configPath, stateDir } = makeLazyDirs('dida-lazy-hand-'));
  fs.writeFileSync(configPath, `bindings:\n  - cwd: ${path.join(dir, 'bound')}\n    projectId: p1\n`);
  stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.doUnmock('../../src/dsh/dsh-host');
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
});

const row = (extra: Record<string, unknown> = {}) => lazyRow({ dir, configPath, stateDir }, extra);

function started(services: Record<string, unknown> = {}, extra: Record<string, unknown> = {}, Layer: typeof LazyHost = LazyHost) {
  const host = fakeHost(services);
  return { host, lazy: startLazy(host, { dir, configPath, stateDir }, extra, Layer) };
}

const logged = () => stderr.mock.calls.map((c) => String(c[0]));
const personSays = (text: string) => ({ id: `m-${text}`, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } });
const oneShot = { headlessStartup: { task: 'say hi' } };

function stateText(): string {
  return ['state.json', 'state.json.log'].map((f) => (fs.existsSync(path.join(stateDir, f)) ? fs.readFileSync(path.join(stateDir, f), 'utf8') : '')).join('\n');
}

describe('LazyHost hands over what it saw', () => {
  it('the restrictions it placed become the host’s own, named for what they hide', async () => {
    const { host, lazy } = started();
    try {
      const loose = fakeAgent('s-loose', { cwd: path.join(dir, 'loose') });
      const child = fakeAgent('s-child', { cwd: path.join(dir, 'bound'), parentSession: 'parent-1' });
      host.emit('agent/created', { agent: loose });
      host.emit('agent/created', { agent: child });
      expect(lazy.loaded).toBe(false);
      const loaded = await lazy.load();
      expect(loaded.tracker.get('s-loose')?.restriction).toBe('unbound');
      expect(loaded.tracker.get('s-loose')?.liftRestriction).toBe(loose.ctx.tools.restrict.mock.results[0]!.value);
      expect(loaded.tracker.get('s-child')?.restriction).toBe('subagent');
    } finally {
      await host.dispose();
    }
  });

  it('a bound session put off in a one-shot run carries no restriction into the host', async () => {
    const { host, lazy } = started(oneShot);
    try {
      const agent = fakeAgent('s-bound', { cwd: path.join(dir, 'bound') });
      host.emit('agent/created', { agent });
      expect(lazy.loaded).toBe(false);
      expect(agent.ctx.tools.restrict).not.toHaveBeenCalled();
      const loaded = await lazy.load();
      // The host places its own restriction while it resolves the binding (the layer handed over none), then lifts it.
      expect(agent.ctx.tools.restrict).toHaveBeenCalledTimes(1);
      await loaded.tracker.get('s-bound')!.ready;
      await eventually(() => loaded.tracker.get('s-bound')?.restriction === undefined, 20, 10_000);
      expect(agent.ctx.tools.restrict.mock.results[0]!.value).toHaveBeenCalledTimes(1);
    } finally {
      await host.dispose();
    }
  });

  it('of the sessions put off, only one whose turn runs is marked open when the host loads', async () => {
    const { host, lazy } = started(oneShot);
    try {
      const running = fakeAgent('s-running', { cwd: path.join(dir, 'bound') });
      const idle = fakeAgent('s-idle', { cwd: path.join(dir, 'bound') });
      host.emit('agent/created', { agent: running });
      host.emit('agent/created', { agent: idle });
      running.status = 'running';
      expect(lazy.loaded).toBe(false);
      await lazy.load();
      await eventually(() => /"s-running":\{[^}]*"turnOpenSince":\d+/.test(stateText()), 20, 5_000);
      expect(/"s-idle":\{[^}]*"turnOpenSince"/.test(stateText())).toBe(false);
    } finally {
      await host.dispose();
    }
  });

  it('an agent disposed once the host is there is released by the host', async () => {
    const release = vi.spyOn(DshHost.prototype, 'release');
    const { host, lazy } = started();
    try {
      const agent = fakeAgent('s-gone', { cwd: path.join(dir, 'loose') });
      host.emit('agent/created', { agent });
      await lazy.load();
      host.emit('agent/disposed', { agent });
      // The host listens for disposals itself too; the layer hands this one on as well.
      await eventually(() => release.mock.calls.filter((c) => c[0] === 's-gone').length >= 1, 10, 2_000);
      expect(release.mock.calls.every((c) => c[0] === 's-gone')).toBe(true);
    } finally {
      await host.dispose();
    }
  });

  it('a host that finishes loading after disposal is disposed at once', async () => {
    const dispose = vi.spyOn(DshHost.prototype, 'dispose');
    const { host, lazy } = started();
    const loading = lazy.load();
    await host.dispose();
    await loading;
    await eventually(() => dispose.mock.calls.length === 1, 10, 2_000);
    // Control: a host loaded while the plugin lives is not disposed.
    const alive = started();
    try {
      await alive.lazy.load();
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(dispose).toHaveBeenCalledTimes(1);
    } finally {
      await alive.host.dispose();
    }
  });
});

describe('LazyHost tools and prompt', () => {
  it('each tool renders its result as the one text block the host would', () => {
    const { host } = started();
    const result = { ok: true, code: 'listed', text: '两个待办' } as unknown as ToolResult;
    for (const tool of host.tools) {
      expect(tool.output.schema).toEqual({});
      expect(tool.output.render({}, result)).toEqual([{ type: 'text', text: renderResult(result) }]);
    }
    expect(renderResult(result)).not.toBe('');
    return host.dispose();
  });

  it('once the host has resolved a bound session, its own prompt text stands on every ask', async () => {
    fs.writeFileSync(configPath, `bindings:\n  - cwd: ${path.join(dir, 'bound')}\n    projectId: p1\n`);
    const { host, lazy } = started();
    try {
      const agent = fakeAgent('s-rules', { cwd: path.join(dir, 'bound') });
      host.emit('agent/created', { agent });
      const loaded = await lazy.load();
      const ask = () => promptOf(host, agent);
      // Before the host has resolved the binding, config.yaml's text decides: the rules show.
      expect(ask()).toContain('dida-todo');
      await eventually(() => loaded.promptText('s-rules') !== '', 20, 10_000);
      const first = ask();
      await loaded.tracker.get('s-rules')!.ready;
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(first).toBe(loaded.promptText('s-rules'));
      expect(ask()).toBe(loaded.promptText('s-rules'));
      expect(ask()).toContain('dida-todo');
    } finally {
      await host.dispose();
    }
  });
});

describe('LazyHost when the host cannot be loaded', () => {
  async function brokenLayer(): Promise<typeof LazyHost> {
    vi.resetModules();
    vi.doMock('../../src/dsh/dsh-host', () => {
      throw new Error('the bundle is damaged');
    });
    return (await import('../../src/dsh/lazy-host')).LazyHost;
  }

  it('a session in a bound directory: the failed load is logged', async () => {
    const Layer = await brokenLayer();
    const { host } = started({}, {}, Layer);
    host.emit('agent/created', { agent: fakeAgent('s1', { cwd: path.join(dir, 'bound') }) });
    await eventually(() => logged().some((l) => l.startsWith('[dida-todo] loading failed: ')), 10, 5_000);
    expect(logged().filter((l) => l.includes('loading failed'))).toHaveLength(1);
    await host.dispose();
  });

  it('the queue phrase of a session put off: the failed load is logged', async () => {
    const Layer = await brokenLayer();
    const { host, lazy } = started(oneShot, {}, Layer);
    const agent = fakeAgent('s2', { cwd: path.join(dir, 'bound') });
    host.emit('agent/created', { agent });
    expect(lazy.loaded).toBe(false);
    host.emit('agent/inbox/inserted', { agent, message: personSays('检查todo') });
    await eventually(() => logged().some((l) => l.startsWith('[dida-todo] loading failed: ')), 10, 5_000);
    expect(logged().filter((l) => l.includes('loading failed'))).toHaveLength(1);
    await host.dispose();
  });

  it('a turn crash recovery may resume at start: the failed start is logged', async () => {
    fs.mkdirSync(stateDir, { recursive: true });
    fs.writeFileSync(path.join(stateDir, 'state.json'), JSON.stringify({ version: 1, sessions: { old: { touched: [], autoAttempts: 0, updatedAt: 0, turnOpenSince: Date.now() - 1_000, turnOpenPid: 2 ** 22 + 17 } } }));
    const Layer = await brokenLayer();
    const { host } = started({}, {}, Layer);
    await eventually(() => logged().some((l) => l.startsWith('[dida-todo] starting failed: ')), 10, 5_000);
    expect(logged().filter((l) => l.includes('starting failed'))).toHaveLength(1);
    await host.dispose();
  });
});

describe('LazyHost in a one-shot run with automatic continuation off', () => {
  it('a turn cut off moments ago still loads the host for a bound session (its turn may wait)', async () => {
    fs.mkdirSync(stateDir, { recursive: true });
    // Nothing else in it asks for the host (no comment to post, no create of unknown outcome).
    const withSessions = (sessions: unknown) => {
      fs.writeFileSync(path.join(stateDir, 'state.json'), JSON.stringify({ version: 2, logGen: 1, sessions: {}, outbox: [], pendingCreates: {} }));
      const lines = [{ s: 'sessions', v: sessions }, { s: 'outbox', v: [] }, { s: 'pendingCreates', v: {} }];
      fs.writeFileSync(path.join(stateDir, 'state.json.log'), `{"gen":1}\n${lines.map((l) => `${JSON.stringify(l)}\n`).join('')}`);
    };
    withSessions({ old: { touched: [], autoAttempts: 0, updatedAt: 0, turnOpenSince: Date.now() - 1_000, turnOpenPid: 2 ** 22 + 17 } });
    const { host, lazy } = started(oneShot, { maxAutoContinue: 0 });
    try {
      expect(lazy.loaded).toBe(false);
      host.emit('agent/created', { agent: fakeAgent('s1', { cwd: path.join(dir, 'bound') }) });
      expect(lazy.loaded).toBe(true);
      await lazy.load();
    } finally {
      await host.dispose();
    }
    // A section it cannot be sure is empty (null is no form the store writes) loads it as well.
    for (const odd of [{ s: 'outbox', v: null }, { s: 'pendingCreates', v: '' }, { s: 'outbox', v: 0 }, { s: 'outbox', v: [{ id: 'o', workKey: 'w' }] }, { s: 'pendingCreates', v: { x: { marker: 5 } } }]) {
      withSessions({});
      fs.appendFileSync(path.join(stateDir, 'state.json.log'), `${JSON.stringify(odd)}\n`);
      const unsure = started(oneShot, { maxAutoContinue: 0 });
      try {
        unsure.host.emit('agent/created', { agent: fakeAgent('s-odd', { cwd: path.join(dir, 'bound') }) });
        expect(unsure.lazy.loaded, JSON.stringify(odd)).toBe(true);
        await unsure.lazy.load();
      } finally {
        await unsure.host.dispose();
      }
    }
    // Control: with no such turn the same session is put off.
    withSessions({ old: { touched: [], autoAttempts: 0, updatedAt: 0 } });
    const quiet = started(oneShot, { maxAutoContinue: 0 });
    try {
      quiet.host.emit('agent/created', { agent: fakeAgent('s2', { cwd: path.join(dir, 'bound') }) });
      expect(quiet.lazy.loaded).toBe(false);
    } finally {
      await quiet.host.dispose();
    }
  });
});

describe('LazyHost with what dsh may leave out', () => {
  it('no system-prompt service, or one without sections: it starts all the same', async () => {
    for (const service of [undefined, {}]) {
      const host = fakeHost();
      const ctx = { ...host.ctx, get: (name: string) => (name === 'systemPrompt' ? service : undefined) };
      const lazy = new LazyHost(ctx as never, row());
      expect(() => lazy.start()).not.toThrow();
      expect(host.tools).toHaveLength(3);
      await host.dispose();
    }
  });

  it('a session without a header, a message without a source or none at all', async () => {
    const { host, lazy } = started(oneShot);
    try {
      const headless = fakeAgent('s-noheader', {});
      // Only the header is left out (a session that cannot append is a surface this dsh lacks: dsh-seams.test.ts).
      (headless as { session: unknown }).session = { id: 's-noheader', append: () => undefined };
      host.emit('agent/created', { agent: headless });
      expect(headless.ctx.tools.restrict).toHaveBeenCalledWith({ deny: ['todo', 'todo_work'] });
      const section = host.sections[0]!;
      host.agents.set(headless.id, headless);
      expect(typeof section.text === 'function' ? section.text({ agent: headless }) : section.text).toBe('');
      const sessionless = fakeAgent('s-nosession', {});
      delete (sessionless as { session?: unknown }).session;
      host.emit('agent/created', { agent: sessionless });
      expect(sessionless.ctx.tools.restrict).toHaveBeenCalledWith({ deny: ['todo', 'todo_work'] });
      const agent = fakeAgent('s-put-off', { cwd: path.join(dir, 'bound') });
      host.emit('agent/created', { agent });
      expect(() => host.emit('agent/inbox/inserted', { agent, message: undefined })).not.toThrow();
      expect(() => host.emit('agent/inbox/inserted', { agent, message: { id: 'x', role: 'user', content: [] } })).not.toThrow();
      expect(lazy.loaded).toBe(false);
      expect(logged()).toEqual([]);
    } finally {
      await host.dispose();
    }
  });

  it('session events reach the host once it is there', async () => {
    const { host, lazy } = started();
    try {
      const agent = fakeAgent('s-events', { cwd: path.join(dir, 'loose') });
      host.emit('agent/created', { agent });
      // An event without a body (before the host is there) is let go.
      expect(() => host.emit('session/event', { id: agent.id }, undefined)).not.toThrow();
      const loaded = await lazy.load();
      host.emit('session/event', { id: agent.id }, { type: 'todo/write', data: { todos: [{ content: 'a', status: 'pending' }, { content: 'b', status: 'pending' }, { content: 'c', status: 'completed' }] } });
      await eventually(() => loaded.tracker.get('s-events')?.modelTodosOpen === 2, 20, 2_000);
    } finally {
      await host.dispose();
    }
  });
});

describe('LazyHost from a fresh import', () => {
  it('registers the three tools and hides the bound-only ones from an unbound session, all of them from a subagent', async () => {
    vi.resetModules();
    const { LazyHost: Fresh } = await import('../../src/dsh/lazy-host');
    const { host } = started({}, {}, Fresh);
    try {
      expect(host.tools.map((t) => t.name)).toEqual(['todo', 'todo_work', 'dida_todo_setup']);
      const loose = fakeAgent('s-loose', { cwd: path.join(dir, 'loose') });
      const child = fakeAgent('s-child', { cwd: path.join(dir, 'bound'), parentSession: 'p' });
      host.emit('agent/created', { agent: loose });
      host.emit('agent/created', { agent: child });
      expect(loose.ctx.tools.restrict).toHaveBeenCalledWith({ deny: ['todo', 'todo_work'] });
      expect(child.ctx.tools.restrict).toHaveBeenCalledWith({ deny: ['todo', 'todo_work', 'dida_todo_setup'] });
    } finally {
      await host.dispose();
    }
  });
});
