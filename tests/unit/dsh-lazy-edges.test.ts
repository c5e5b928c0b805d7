// The first-load layer's edges (src/dsh/lazy-host.ts) while the full host is not loaded: subagents shown no tools, a
// restriction that fails (logged to stderr), an agent without a tool registry, a session seen twice, disposal lifting
// what it placed, config.yaml read again when it changes, and the prompt for agents it only knows from dsh.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { LazyHost } from '../../src/dsh/lazy-host';
import { RowConfig } from '../../src/dsh/row-config';
import { fakeAgent, fakeHost } from '../helpers/dsh-host-fake';

let dir: string;
let configPath: string;
let stateDir: string;
let stderr: MockInstance;

beforeEach(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'dida-lazy-edge-')));
  configPath = path.join(dir, 'config.yaml');
  stateDir = path.join(dir, 'state');
  fs.writeFileSync(configPath, `bindings:\n  - cwd: ${path.join(dir, 'bound')}\n    projectId: p1\n`);
  stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
});
afterEach(() => {
  vi.restoreAllMocks();
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
});

function started(extra: Record<string, unknown> = {}) {
  const host = fakeHost();
  const parsed = RowConfig.safeParse({ configPath, stateDir, ...extra });
  if (!parsed.success) throw new Error('row config did not validate');
  const lazy = new LazyHost(host.ctx as never, parsed.data);
  lazy.start();
  const prompt = (agent: { id: string } | undefined) => {
    const section = host.sections[0]!;
    return typeof section.text === 'function' ? section.text({ agent }) : section.text;
  };
  return { host, lazy, prompt };
}

const logged = () => stderr.mock.calls.map((c) => String(c[0]));

describe('LazyHost before the host is needed', () => {
  it('a subagent, even in a bound directory, is shown none of the tools and loads nothing', async () => {
    const { host, lazy, prompt } = started();
    try {
      const child = fakeAgent('child', { cwd: path.join(dir, 'bound'), parentSession: 'root' });
      host.emit('agent/created', { agent: child });
      expect(lazy.loaded).toBe(false);
      expect(child.ctx.tools.restrict).toHaveBeenCalledWith({ deny: ['todo', 'todo_work', 'dida_todo_setup'] });
      host.agents.set(child.id, child);
      expect(prompt(child)).toBe('');
    } finally {
      await host.dispose();
    }
  });

  it('a session seen twice is restricted once; its status and messages load nothing', async () => {
    const { host, lazy } = started();
    try {
      const agent = fakeAgent('s1', { cwd: path.join(dir, 'loose') });
      host.emit('agent/created', { agent });
      host.emit('agent/status', { agent, status: 'running' });
      host.emit('agent/inbox/inserted', { agent, message: { id: 'm', role: 'user', content: [{ type: 'text', text: '检查todo' }], source: { kind: 'user' } } });
      host.emit('session/event', { id: 's1' }, { type: 'turn/end' });
      host.emit('agent/disposed', { agent: fakeAgent('other', {}) });
      expect(agent.ctx.tools.restrict).toHaveBeenCalledTimes(1);
      expect(lazy.loaded).toBe(false);
    } finally {
      await host.dispose();
    }
  });

  it('a restriction that fails is logged to stderr with the session; an agent without a tool registry is left as it is', async () => {
    const { host, lazy } = started();
    try {
      const agent = fakeAgent('s1', { cwd: path.join(dir, 'loose') });
      agent.ctx.tools.restrict.mockImplementation(() => {
        throw new Error('scope closed');
      });
      host.emit('agent/created', { agent });
      expect(logged()).toEqual(['[dida-todo] could not hide the Dida tools from session s1: scope closed\n']);
      const bare = fakeAgent('s2', { cwd: path.join(dir, 'loose') });
      delete (bare as { ctx?: unknown }).ctx;
      expect(() => host.emit('agent/created', { agent: bare })).not.toThrow();
      // Left as it is: nothing to hide, so nothing failed.
      expect(logged()).toHaveLength(1);
      const noHeader = fakeAgent('s3', {});
      delete (noHeader.session.header as { cwd?: unknown }).cwd;
      host.emit('agent/created', { agent: noHeader });
      expect(noHeader.ctx.tools.restrict).toHaveBeenCalledWith({ deny: ['todo', 'todo_work'] });
      expect(lazy.loaded).toBe(false);
    } finally {
      await host.dispose();
    }
  });

  it('an agent disposed is forgotten and its restriction lifted; a lift that fails is swallowed', async () => {
    const { host } = started();
    try {
      const agent = fakeAgent('s1', { cwd: path.join(dir, 'loose') });
      const lift = vi.fn(() => {
        throw new Error('gone already');
      });
      agent.ctx.tools.restrict.mockReturnValue(lift);
      host.emit('agent/created', { agent });
      expect(() => host.emit('agent/disposed', { agent })).not.toThrow();
      expect(lift).toHaveBeenCalledTimes(1);
      // Seen afresh after it was forgotten.
      host.emit('agent/created', { agent });
      expect(agent.ctx.tools.restrict).toHaveBeenCalledTimes(2);
    } finally {
      await host.dispose();
    }
    expect(everyLinePrefixed()).toBe(true);
  });

  it('disposal lifts every restriction it placed', async () => {
    const { host } = started();
    const a = fakeAgent('s1', { cwd: path.join(dir, 'loose') });
    const b = fakeAgent('s2', { cwd: path.join(dir, 'loose') });
    host.emit('agent/created', { agent: a });
    host.emit('agent/created', { agent: b });
    await host.dispose();
    for (const agent of [a, b]) expect(agent.ctx.tools.restrict.mock.results[0]!.value).toHaveBeenCalledTimes(1);
  });

  it('config.yaml is read again when it changes: a directory bound since then loads the host', async () => {
    const { host, lazy, prompt } = started();
    try {
      const early = fakeAgent('s1', { cwd: path.join(dir, 'later') });
      host.emit('agent/created', { agent: early });
      expect(lazy.loaded).toBe(false);
      expect(prompt(early)).toBe('');
      fs.writeFileSync(configPath, `bindings:\n  - cwd: ${path.join(dir, 'later')}\n    projectId: p2\n    label: a longer label than before\n`);
      // The session dsh knows (and this layer saw) now shows the rules.
      expect(prompt(early)).toContain('dida-todo');
      const next = fakeAgent('s2', { cwd: path.join(dir, 'later') });
      host.emit('agent/created', { agent: next });
      expect(lazy.loaded).toBe(true);
      await lazy.load();
    } finally {
      await host.dispose();
    }
  });

  it('no config.yaml: nothing is bound and nothing loads', async () => {
    fs.rmSync(configPath);
    const { host, lazy, prompt } = started();
    try {
      const agent = fakeAgent('s1', { cwd: path.join(dir, 'bound') });
      host.emit('agent/created', { agent });
      expect(lazy.loaded).toBe(false);
      expect(prompt(agent)).toBe('');
    } finally {
      await host.dispose();
    }
  });

  it('the prompt: no agent, an agent only dsh knows, and one it knows nowhere', async () => {
    const { host, prompt } = started();
    try {
      expect(prompt(undefined)).toBe('');
      const known = fakeAgent('s7', { cwd: path.join(dir, 'bound', 'deeper') });
      host.agents.set(known.id, known);
      expect(prompt(known)).toContain('dida-todo');
      expect(prompt({ id: 'nobody' })).toBe('');
      const noCwd = fakeAgent('s8', {});
      delete (noCwd.session.header as { cwd?: unknown }).cwd;
      host.agents.set(noCwd.id, noCwd);
      expect(prompt(noCwd)).toBe('');
    } finally {
      await host.dispose();
    }
  });

  it('a host loaded after disposal is disposed at once', async () => {
    const { host, lazy } = started();
    await host.dispose();
    const loaded = await lazy.load();
    await vi.waitFor(() => expect(loaded.tracker.all()).toEqual([]));
    expect(lazy.loaded).toBe(true);
  });
});

describe('LazyHost at start', () => {
  it('with automatic continuation off nothing loads at start, even with a turn cut off moments ago', async () => {
    fs.mkdirSync(stateDir, { recursive: true });
    fs.writeFileSync(path.join(stateDir, 'state.json'), JSON.stringify({ version: 1, sessions: { old: { touched: [], autoAttempts: 0, updatedAt: 0, turnOpenSince: Date.now() - 1_000, turnOpenPid: 2 ** 22 + 17 } } }));
    const off = started({ maxAutoContinue: 0 });
    try {
      expect(off.lazy.loaded).toBe(false);
    } finally {
      await off.host.dispose();
    }
    const on = started();
    try {
      expect(on.lazy.loaded).toBe(true);
      await on.lazy.load();
    } finally {
      await on.host.dispose();
    }
  });
});

function everyLinePrefixed(): boolean {
  return !logged().some((line) => !line.startsWith('[dida-todo] '));
}
