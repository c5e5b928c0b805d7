// The plugin's first load: nothing beyond the hooks is loaded while no session can be bound; the full host loads for a
// session that may be bound, a tool call, a failed model request, polling or an interrupted turn at start.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LazyHost } from '../../src/dsh/lazy-host';
import { RowConfig } from '../../src/dsh/row-config';
import { fakeAgent, fakeHost } from '../helpers/dsh-host-fake';

let dir: string;
let configPath: string;
let stateDir: string;

function row(extra: Record<string, unknown> = {}) {
  const parsed = RowConfig.safeParse({ configPath, stateDir, ...extra });
  if (!parsed.success) throw new Error('row config did not validate');
  return parsed.data;
}

async function settle(ms = 100): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

beforeEach(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'dida-lazy-')));
  configPath = path.join(dir, 'config.yaml');
  stateDir = path.join(dir, 'state');
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('LazyHost', () => {
  it('in an unbound directory registers everything, loads nothing, and hides the Dida tools', async () => {
    fs.writeFileSync(configPath, `bindings:\n  - cwd: ${path.join(dir, 'elsewhere')}\n    projectId: p1\n`);
    const host = fakeHost();
    const lazy = new LazyHost(host.ctx as never, row());
    lazy.start();
    try {
      expect(host.tools.map((t) => t.name).sort()).toEqual(['dida_todo_setup', 'todo', 'todo_work']);
      expect(host.sections).toHaveLength(1);
      const agent = fakeAgent('session-1', { cwd: path.join(dir, 'project') });
      host.emit('agent/created', { agent });
      host.emit('agent/status', { agent, status: 'running' });
      host.emit('agent/inbox/inserted', { agent, message: { id: 'm', role: 'user', content: [{ type: 'text', text: '你好' }], source: { kind: 'user' } } });
      const decision = await host.waterfall('agent/pre-step', { agent, turn: 1, step: 1 }, async () => ({ kind: 'enter', messages: [] }));
      expect(decision).toEqual({ kind: 'enter', messages: [] });
      host.emit('agent/status', { agent, status: 'idle' });
      await settle();
      expect(lazy.loaded).toBe(false);
      expect(agent.ctx.tools.restrict).toHaveBeenCalledWith({ deny: ['todo', 'todo_work'] });
      expect(fs.existsSync(stateDir)).toBe(false);
      const section = host.sections[0]!;
      expect(typeof section.text === 'function' ? section.text({ agent }) : section.text).toBe('');
    } finally {
      await host.dispose();
    }
  });

  it('loads the host for a session whose directory (or a parent of it) config.yaml names, and hands it the hooks', async () => {
    fs.writeFileSync(configPath, `bindings:\n  - cwd: ${dir}\n    projectId: p1\n`);
    const host = fakeHost();
    const lazy = new LazyHost(host.ctx as never, row());
    lazy.start();
    try {
      const agent = fakeAgent('session-2', { cwd: path.join(dir, 'sub', 'dir') });
      host.emit('agent/created', { agent });
      expect(lazy.loaded).toBe(true);
      // The load that started is the one returned: wait for it and for the host's first read of config.yaml.
      await lazy.load();
      await settle(200);
      // Whatever restriction was placed before config.yaml was read has been lifted: the session sees every tool.
      for (const placed of agent.ctx.tools.restrict.mock.results) expect(placed.value).toHaveBeenCalled();
      const section = host.sections[0]!;
      expect(typeof section.text === 'function' ? section.text({ agent }) : section.text).toContain('dida-todo');
    } finally {
      await host.dispose();
    }
  });

  it('loads the host for a tool call, a failed model request, polling, or an interrupted turn left in the state', async () => {
    const call = fakeHost();
    const lazy = new LazyHost(call.ctx as never, row());
    lazy.start();
    const agent = fakeAgent('session-3', { cwd: dir });
    call.emit('agent/created', { agent });
    const result = await call.tools.find((t) => t.name === 'todo').execute({ action: 'list' }, { agent });
    expect(result.code).toBe('not_bound');
    expect(lazy.loaded).toBe(true);
    await call.dispose();

    const failed = fakeHost();
    const second = new LazyHost(failed.ctx as never, row({ maxAutoContinue: 0 }));
    second.start();
    const other = fakeAgent('session-4', { cwd: dir });
    failed.emit('agent/created', { agent: other });
    expect(second.loaded).toBe(false);
    expect(await failed.waterfall('agent/request-error', { agent: other, turn: 1, step: 1, failure: { code: 'RATE_LIMIT' }, signal: new AbortController().signal })).toBeUndefined();
    expect(second.loaded).toBe(true);
    await failed.dispose();

    const polling = fakeHost();
    const third = new LazyHost(polling.ctx as never, row({ poll: true }));
    third.start();
    expect(third.loaded).toBe(true);
    await polling.dispose();

    fs.mkdirSync(stateDir, { recursive: true });
    fs.writeFileSync(path.join(stateDir, 'state.json'), JSON.stringify({ version: 2, sessions: { s: { touched: [], autoAttempts: 0, updatedAt: 1, turnOpenSince: 1 } } }));
    const crashed = fakeHost();
    const fourth = new LazyHost(crashed.ctx as never, row());
    fourth.start();
    expect(fourth.loaded).toBe(true);
    await crashed.dispose();
  });
});
