// The plugin's first load (src/dsh/lazy-host.ts): nothing beyond the hooks is loaded while no session can be bound; the
// full host loads for a session that may be bound, a tool call, a failed model request, or a turn at start that crash
// recovery may resume. Before it loads: subagents are shown no tools, a restriction that fails is logged, disposal lifts
// what it placed, config.yaml is read again when it changes, and the prompt covers agents only dsh knows.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import type { LazyHost } from '../../src/dsh/lazy-host';
import { fakeAgent, fakeHost } from '../helpers/dsh-host-fake';
import { eventually } from '../helpers/dsh-fakes';
import { makeLazyDirs, promptOf, startLazy } from '../helpers/lazy-host-world';

let dir: string;
let configPath: string;
let stateDir: string;

/** A first-load layer over a fake dsh, started. */
function started(host: ReturnType<typeof fakeHost>, extra: Record<string, unknown> = {}): LazyHost {
  return startLazy(host, { dir, configPath, stateDir }, extra);
}

async function settle(ms = 100): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

beforeEach(() => {
  ({ dir, configPath, stateDir } = makeLazyDirs('dida-lazy-'));
});
afterEach(() => {
  vi.restoreAllMocks();
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
});

describe('LazyHost', () => {
  it('in an unbound directory registers everything, loads nothing, and hides the Dida tools', async () => {
    fs.writeFileSync(configPath, `bindings:\n  - cwd: ${path.join(dir, 'elsewhere')}\n    projectId: p1\n`);
    const host = fakeHost();
    const lazy = started(host);
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
      expect(promptOf(host, agent)).toBe('');
    } finally {
      await host.dispose();
    }
  });

  it('reads config.yaml again once it changed: a directory bound since then loads the host', async () => {
    fs.writeFileSync(configPath, `bindings:\n  - cwd: ${path.join(dir, 'elsewhere')}\n    projectId: p1\n`);
    const host = fakeHost();
    const lazy = started(host);
    try {
      host.emit('agent/created', { agent: fakeAgent('session-before', { cwd: path.join(dir, 'project') }) });
      expect(lazy.loaded).toBe(false);
      fs.writeFileSync(configPath, `bindings:\n  - cwd: ${path.join(dir, 'project')}\n    projectId: p1\n    tag: web\n`);
      host.emit('agent/created', { agent: fakeAgent('session-after', { cwd: path.join(dir, 'project') }) });
      expect(lazy.loaded).toBe(true);
    } finally {
      await host.dispose();
    }
  });

  it('loads the host for a session whose directory (or a parent of it) config.yaml names, and hands it the hooks', async () => {
    fs.writeFileSync(configPath, `bindings:\n  - cwd: ${dir}\n    projectId: p1\n`);
    const host = fakeHost();
    const lazy = started(host);
    try {
      const agent = fakeAgent('session-2', { cwd: path.join(dir, 'sub', 'dir') });
      host.emit('agent/created', { agent });
      expect(lazy.loaded).toBe(true);
      // The load that started is the one returned: wait for it and for the host's first read of config.yaml.
      await lazy.load();
      // The host adds no second prompt section: the first-load layer's one asks it.
      expect(host.sections).toHaveLength(1);
      // Whatever restriction was placed before config.yaml was read has been lifted: the session sees every tool.
      // (The host's first read of config.yaml loads the YAML parser: on a busy machine that takes seconds.)
      const lifted = () => agent.ctx.tools.restrict.mock.results.every((placed) => (placed.value as { mock: { calls: unknown[] } }).mock.calls.length > 0);
      await eventually(lifted, 200, 10_000).catch(() => undefined);
      for (const placed of agent.ctx.tools.restrict.mock.results) expect(placed.value).toHaveBeenCalled();
      expect(promptOf(host, agent)).toContain('dida-todo');
    } finally {
      await host.dispose();
    }
  });

  it.each([
    ['a flow mapping item', (d: string) => `bindings:\n  - {cwd: ${d}, projectId: p1}\n`],
    ['a flow sequence', (d: string) => `bindings: [{projectId: p1, cwd: '${d}'}]\n`],
    ['a tab before a comment', (d: string) => `bindings:\n  - cwd: ${d}\t# my project\n    projectId: p1\n`],
    ['a trailing slash and CRLF line ends', (d: string) => `bindings:\r\n  - cwd: ${d}/\r\n    projectId: p1\r\n`],
  ])('loads the host for a directory bound by %s', async (_what, config) => {
    fs.writeFileSync(configPath, config(dir));
    const host = fakeHost();
    const lazy = started(host);
    try {
      const agent = fakeAgent('session-flow', { cwd: path.join(dir, 'sub') });
      host.emit('agent/created', { agent });
      expect(lazy.loaded).toBe(true);
      expect(agent.ctx.tools.restrict).not.toHaveBeenCalled();
      await lazy.load();
    } finally {
      await host.dispose();
    }
  });

  it('shows the rules to an unbound session only until the host has resolved its binding, whatever the file’s form', async () => {
    // Flow style: the cheap reader is not sure, so the host loads and decides.
    fs.writeFileSync(configPath, `bindings: [{cwd: ${path.join(dir, 'other')}, projectId: p1}]\n`);
    const host = fakeHost();
    const lazy = started(host);
    try {
      const agent = fakeAgent('session-unsure', { cwd: path.join(dir, 'project') });
      host.emit('agent/created', { agent });
      expect(lazy.loaded).toBe(true);
      await lazy.load();
      const text = () => promptOf(host, agent);
      await eventually(() => text() === '', 200, 10_000);
      expect(text()).toBe('');
    } finally {
      await host.dispose();
    }
  });

  it.each([
    ['no bindings', () => 'bindings: []\n'],
    ['stop phrases in flow style and a binding elsewhere', (d: string) => `stopPhrases: [停, stop]\nbindings:\n  - cwd: ${path.join(d, 'other')}\t# tab\n    projectId: p1\n`],
  ])('loads nothing for a directory the file does not bind (%s)', async (_what, config) => {
    fs.writeFileSync(configPath, config(dir));
    const host = fakeHost();
    const lazy = started(host);
    try {
      const agent = fakeAgent('session-unbound', { cwd: path.join(dir, 'project') });
      host.emit('agent/created', { agent });
      await settle();
      expect(lazy.loaded).toBe(false);
      expect(agent.ctx.tools.restrict).toHaveBeenCalledWith({ deny: ['todo', 'todo_work'] });
    } finally {
      await host.dispose();
    }
  });

  describe('before the host is needed: subagents, restrictions placed and lifted, config.yaml read again, the prompt', () => {
    let stderr: MockInstance;
    beforeEach(() => {
      fs.writeFileSync(configPath, `bindings:\n  - cwd: ${path.join(dir, 'bound')}\n    projectId: p1\n`);
      stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    });
    const logged = () => stderr.mock.calls.map((c) => String(c[0]));
    const everyLinePrefixed = () => !logged().some((line) => !line.startsWith('[dida-todo] '));
    function boundStart(extra: Record<string, unknown> = {}) {
      const host = fakeHost();
      const lazy = started(host, extra);
      return { host, lazy, prompt: (agent: { id: string } | undefined) => promptOf(host, agent) };
    }
    it('a subagent, even in a bound directory, is shown none of the tools and loads nothing', async () => {
      const { host, lazy, prompt } = boundStart();
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
      const { host, lazy } = boundStart();
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
      const { host, lazy } = boundStart();
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
      const { host } = boundStart();
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
      const { host } = boundStart();
      const a = fakeAgent('s1', { cwd: path.join(dir, 'loose') });
      const b = fakeAgent('s2', { cwd: path.join(dir, 'loose') });
      host.emit('agent/created', { agent: a });
      host.emit('agent/created', { agent: b });
      await host.dispose();
      for (const agent of [a, b]) expect(agent.ctx.tools.restrict.mock.results[0]!.value).toHaveBeenCalledTimes(1);
    });

    it('config.yaml is read again when it changes: a directory bound since then loads the host', async () => {
      const { host, lazy, prompt } = boundStart();
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
      const { host, lazy, prompt } = boundStart();
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
      const { host, prompt } = boundStart();
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
      const { host, lazy } = boundStart();
      await host.dispose();
      const loaded = await lazy.load();
      await vi.waitFor(() => expect(loaded.tracker.all()).toEqual([]));
      expect(lazy.loaded).toBe(true);
    });
  });

  describe('in a one-shot run, a bound session goes without the host until its first Dida need', () => {
    const oneShot = () => fakeHost({ headlessStartup: { task: 'say hi' } });
    const bind = () => fs.writeFileSync(configPath, `bindings:\n  - cwd: ${dir}\n    projectId: p1\n`);
    const personSays = (text: string) => ({ id: `m-${text}`, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } });

    it('shows the rules and every tool at once; a tool call loads the host, which hears the running turn and marks it open', async () => {
      bind();
      const host = oneShot();
      const lazy = started(host);
      try {
        const agent = fakeAgent('session-7', { cwd: dir });
        host.emit('agent/created', { agent });
        agent.status = 'running';
        host.emit('agent/status', { agent, status: 'running' });
        host.emit('agent/inbox/inserted', { agent, message: personSays('hi') });
        expect(lazy.loaded).toBe(false);
        expect(agent.ctx.tools.restrict).not.toHaveBeenCalled();
        expect(promptOf(host, agent)).toContain('dida-todo');
        expect(await host.waterfall('agent/pre-step', { agent, turn: 1, step: 1, messages: [] }, async () => ({ kind: 'enter', messages: [] }))).toEqual({ kind: 'enter', messages: [] });
        expect(fs.existsSync(path.join(stateDir, 'state.json'))).toBe(false);

        await host.tools.find((t) => t.name === 'todo').execute({ action: 'list' }, { agent });
        expect(lazy.loaded).toBe(true);
        // The turn that was already running is marked open for crash recovery, as if the host had been there from the start.
        let marked: unknown;
        for (let i = 0; i < 50 && marked === undefined; i++) {
          await settle(20);
          const text = ['state.json', 'state.json.log'].map((f) => (fs.existsSync(path.join(stateDir, f)) ? fs.readFileSync(path.join(stateDir, f), 'utf8') : '')).join('\n');
          marked = /"session-7":\{[^}]*"turnOpenSince":\d+/.exec(text)?.[0];
        }
        expect(marked).toBeDefined();
      } finally {
        await host.dispose();
      }
    });

    it("the model's latest todo_write while the host was put off reaches the host when it loads (other events do not replace it)", async () => {
      bind();
      const host = oneShot();
      const lazy = started(host);
      try {
        const agent = fakeAgent('session-todo', { cwd: dir });
        host.emit('agent/created', { agent });
        host.emit('session/event', { id: agent.id }, { type: 'todo/write', data: { todos: [{ content: 'a', status: 'pending' }] } });
        host.emit('session/event', { id: agent.id }, { type: 'todo/write', data: { todos: [{ content: 'a', status: 'pending' }, { content: 'b', status: 'in_progress' }] } });
        host.emit('session/event', { id: agent.id }, { type: 'message', data: {} });
        expect(lazy.loaded).toBe(false);
        await host.tools.find((t) => t.name === 'todo').execute({ action: 'list' }, { agent });
        const loaded = await lazy.load();
        expect(loaded.tracker.get('session-todo')?.modelTodosOpen).toBe(2);
      } finally {
        await host.dispose();
      }
    });

    it('the queue phrase loads it (and the host hears the phrase)', async () => {
      bind();
      const host = oneShot();
      const lazy = started(host);
      try {
        const agent = fakeAgent('session-8', { cwd: dir });
        host.emit('agent/created', { agent });
        host.emit('agent/inbox/inserted', { agent, message: { ...personSays('检查todo'), source: { kind: 'plugin' } } });
        expect(lazy.loaded).toBe(false);
        host.emit('agent/inbox/inserted', { agent, message: personSays(' 检查TODO ') });
        expect(lazy.loaded).toBe(true);
        const loaded = await lazy.load();
        expect(loaded.tracker.get('session-8')?.queueGranted).toBe(true);
      } finally {
        await host.dispose();
      }
    });

    it('a state that asks for attention at the turn’s start loads it at once', async () => {
      const cases: Array<[string, string[]]> = [
        ['a Work waiting for the person', [JSON.stringify({ c: 'works', k: 'w', v: { waiting: { reason: 'which?' } } })]],
        ['an answer held for a Work', [JSON.stringify({ c: 'works', k: 'w', v: { pendingAnswer: { text: 'yes' } } })]],
        ['a progress comment to post', [JSON.stringify({ s: 'outbox', v: [{ id: 'o', workKey: 'w' }] })]],
        ['a create of unknown outcome', [JSON.stringify({ s: 'pendingCreates', v: { x: { marker: 5 } } })]],
        ['a turn cut off a minute ago', [JSON.stringify({ s: 'sessions', v: { s: { turnOpenSince: Date.now() - 60_000, turnOpenPid: 2 ** 22 + 77 } } })]],
      ];
      bind();
      for (const [what, lines] of cases) {
        fs.mkdirSync(stateDir, { recursive: true });
        fs.writeFileSync(path.join(stateDir, 'state.json'), JSON.stringify({ version: 2, logGen: 1, sessions: {}, outbox: [], pendingCreates: {} }));
        fs.writeFileSync(path.join(stateDir, 'state.json.log'), ['{"gen":1}', ...lines].map((l) => `${l}\n`).join(''));
        const host = oneShot();
        const lazy = started(host);
        host.emit('agent/created', { agent: fakeAgent(`session-${what}`, { cwd: dir }) });
        expect(lazy.loaded, what).toBe(true);
        await host.dispose();
      }
      // A log whose first line is not its generation: it cannot tell, so it loads.
      fs.writeFileSync(path.join(stateDir, 'state.json.log'), 'not a header\n');
      const unsure = oneShot();
      const third = started(unsure);
      unsure.emit('agent/created', { agent: fakeAgent('session-unsure', { cwd: dir }) });
      expect(third.loaded).toBe(true);
      await unsure.dispose();
      // Emptied again (the answer taken, the comment posted): nothing asks, nothing loads.
      fs.writeFileSync(path.join(stateDir, 'state.json.log'), `{"gen":1}\n${JSON.stringify({ s: 'outbox', v: [] })}\n${JSON.stringify({ c: 'works', k: 'w', v: { title: 'say \\"waiting\\":{' } })}\n`);
      const host = oneShot();
      const lazy = started(host);
      host.emit('agent/created', { agent: fakeAgent('session-quiet', { cwd: dir }) });
      expect(lazy.loaded).toBe(false);
      await host.dispose();
    });
  });

  it('loads the host for a tool call or a failed model request', async () => {
    const call = fakeHost();
    const lazy = started(call);
    const agent = fakeAgent('session-3', { cwd: dir });
    call.emit('agent/created', { agent });
    const result = await call.tools.find((t) => t.name === 'todo').execute({ action: 'list' }, { agent });
    expect(result.code).toBe('not_bound');
    expect(lazy.loaded).toBe(true);
    await call.dispose();

    const failed = fakeHost();
    const second = started(failed, { maxAutoContinue: 0 });
    const other = fakeAgent('session-4', { cwd: dir });
    failed.emit('agent/created', { agent: other });
    expect(second.loaded).toBe(false);
    expect(await failed.waterfall('agent/request-error', { agent: other, turn: 1, step: 1, failure: { code: 'RATE_LIMIT' }, signal: new AbortController().signal })).toBeUndefined();
    expect(second.loaded).toBe(true);
    await failed.dispose();

    await failed.dispose();
  });

  describe('a person writing as the backoff starts ends it at once', () => {
    const person = (text: string) => ({ id: `h-${text}`, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } });
    /** A session with open todo_write items (unfinished work) whose model request failed with a long backoff ahead. */
    const failing = () => {
      const host = fakeHost();
      started(host, { backoff: [60], maxAutoContinue: 3 });
      const agent = fakeAgent('session-9', { cwd: dir });
      host.emit('agent/created', { agent });
      host.emit('session/event', { id: agent.id }, { type: 'todo/write', data: { todos: [{ content: 'a', status: 'pending' }] } });
      return { host, agent };
    };
    const failure = () => ({ failure: { code: 'SERVER' }, signal: new AbortController().signal });
    const within = <T,>(answer: Promise<T>, ms: number) => Promise.race([answer, settle(ms).then(() => 'still waiting' as const)]);
    /** An earlier failure loads the host (a message of the person ends its backoff). */
    const loadedByAFailure = async (host: ReturnType<typeof fakeHost>, agent: ReturnType<typeof fakeAgent>) => {
      const first = host.waterfall('agent/request-error', { agent, ...failure() });
      host.emit('agent/inbox/inserted', { agent, message: person('first') });
      await within(first, 3_000);
    };

    it('while the first-load layer is still loading the host for the failed request', async () => {
      const { host, agent } = failing();
      const answer = host.waterfall('agent/request-error', { agent, ...failure() });
      host.emit('agent/inbox/inserted', { agent, message: person('wait, do Y instead') });
      expect(await within(answer, 3_000)).toBeUndefined();
      await host.dispose();
    });

    it('while the rest of the request-error chain runs (the inbox event comes before the wait begins)', async () => {
      const { host, agent } = failing();
      await loadedByAFailure(host, agent);
      const answer = host.waterfall('agent/request-error', { agent, ...failure() }, async () => {
        host.emit('agent/inbox/inserted', { agent, message: person('second') });
        await settle(10);
        return undefined;
      });
      expect(await within(answer, 3_000)).toBeUndefined();
      await host.dispose();
    });

    it('in the same moment the failure is handed on, the host already loaded (the host hears the message first)', async () => {
      const { host, agent } = failing();
      await loadedByAFailure(host, agent);
      // The host is loaded: the message reaches it at once, before its own handler (after the first-load layer's
      // await) takes its mark; only the first-load layer's mark, taken before that await, sees the message as new.
      const answer = host.waterfall('agent/request-error', { agent, ...failure() });
      host.emit('agent/inbox/inserted', { agent, message: person('second') });
      expect(await within(answer, 3_000)).toBeUndefined();
      await host.dispose();
    });

    it('a message not from the person (a plugin note) in that moment does not end it', async () => {
      const { host, agent } = failing();
      await loadedByAFailure(host, agent);
      const answer = host.waterfall('agent/request-error', { agent, ...failure() });
      host.emit('agent/inbox/inserted', { agent, message: { ...person('note'), source: { kind: 'plugin' } } });
      expect(await within(answer, 1_500)).toBe('still waiting');
      await host.dispose();
    });

    it('the control: without a message the session waits its backoff', async () => {
      const { host, agent } = failing();
      const answer = host.waterfall('agent/request-error', { agent, ...failure() });
      expect(await within(answer, 1_500)).toBe('still waiting');
      await host.dispose();
      expect(await within(answer, 3_000)).toBeUndefined();
    });
  });

  describe('at start, loads the host only when crash recovery may have a turn to resume', () => {
    const stateFile = () => path.join(stateDir, 'state.json');
    const write = (snapshot: unknown, log?: string[]) => {
      fs.mkdirSync(stateDir, { recursive: true });
      fs.writeFileSync(stateFile(), JSON.stringify(snapshot));
      if (log) fs.writeFileSync(`${stateFile()}.log`, log.map((l) => `${l}\n`).join(''));
      else fs.rmSync(`${stateFile()}.log`, { force: true });
    };
    const loadsAtStart = async (extra: Record<string, unknown> = {}) => {
      const h = fakeHost();
      const lazy = started(h, extra);
      const loaded = lazy.loaded;
      await h.dispose();
      return loaded;
    };
    const gone = 2 ** 22 + 4321;
    const marker = (since: number, pid = gone) => ({ touched: ['w'], autoAttempts: 0, updatedAt: since, turnOpenSince: since, turnOpenPid: pid });

    it('a turn opened minutes ago by a process that is gone: loads (unless automatic continuation is off)', async () => {
      write({ version: 2, logGen: 1, sessions: { s: marker(Date.now() - 5 * 60_000) } }, ['{"gen":1}']);
      expect(await loadsAtStart()).toBe(true);
      expect(await loadsAtStart({ maxAutoContinue: 0 })).toBe(false);
    });

    it('no state, no marker, a marker older than the window, or one whose process still runs: loads nothing', async () => {
      expect(await loadsAtStart()).toBe(false);
      write({ version: 2, logGen: 1, sessions: { s: { touched: [], autoAttempts: 0, updatedAt: 1 } }, works: {} }, ['{"gen":1}']);
      expect(await loadsAtStart()).toBe(false);
      write({ version: 2, logGen: 1, sessions: { s: marker(Date.now() - 31 * 60_000) } }, ['{"gen":1}']);
      expect(await loadsAtStart()).toBe(false);
      write({ version: 2, logGen: 1, sessions: { s: marker(Date.now() - 60_000, process.pid) } }, ['{"gen":1}']);
      expect(await loadsAtStart()).toBe(false);
      // Polling alone needs no early start: it only polls bound sessions, and each of those loads the host.
      expect(await loadsAtStart({ poll: true })).toBe(false);
    });

    it('the log decides over the snapshot: the last sessions line wins, a stale log or a cut last line does not count', async () => {
      const open = JSON.stringify({ s: 'sessions', v: { s: marker(Date.now() - 60_000) } });
      const closed = JSON.stringify({ s: 'sessions', v: { s: { touched: ['w'], autoAttempts: 0, updatedAt: Date.now() } } });
      // Closed in the snapshot, opened later in the log (a Work record in between mentions the words too).
      write({ version: 2, logGen: 3, sessions: {} }, ['{"gen":3}', JSON.stringify({ c: 'works', k: 'w', v: { title: '"turnOpenSince"' } }), open]);
      expect(await loadsAtStart()).toBe(true);
      // Opened and then closed again in the log: the history does not count.
      write({ version: 2, logGen: 3, sessions: {} }, ['{"gen":3}', open, closed]);
      expect(await loadsAtStart()).toBe(false);
      // A log of an older generation was folded into the snapshot already: only the snapshot counts.
      write({ version: 2, logGen: 4, sessions: {} }, ['{"gen":3}', open]);
      expect(await loadsAtStart()).toBe(false);
      write({ version: 2, logGen: 4, sessions: { s: marker(Date.now() - 60_000) } }, ['{"gen":3}', closed]);
      expect(await loadsAtStart()).toBe(true);
      // A last line cut by a crash was never written: the line before it decides.
      fs.writeFileSync(`${stateFile()}.log`, `{"gen":4}\n${open}\n${closed.slice(0, 30)}`);
      expect(await loadsAtStart()).toBe(true);
    });

    it('a state it cannot read with certainty loads the host, which then reads it properly', async () => {
      for (const [snapshot, log] of [
        ['{"version":1,"sessions":{}}', undefined],
        ['{"version":2,"logGen":1,"sessions":{}}', 'not a header\n'],
        ['{"version":2,"logGen":1,"sessions":{}}', `{"gen":1}\n{"s":"sessions","v":{broken\n`],
        ['{"version":2,"logGen":1,"sessions":{"s":{"turnOpenSince":', undefined],
        ['{"version":2,"logGen":1,"sessions":{"s":{"turnOpenSince":"soon"}}}', undefined],
      ] as const) {
        fs.mkdirSync(stateDir, { recursive: true });
        fs.writeFileSync(stateFile(), snapshot);
        if (log === undefined) fs.rmSync(`${stateFile()}.log`, { force: true });
        else fs.writeFileSync(`${stateFile()}.log`, log);
        expect(await loadsAtStart(), snapshot + (log ?? '')).toBe(true);
      }
    });

    it('a turn cut off moments ago in a state of the older version: loads, unless automatic continuation is off', async () => {
      fs.writeFileSync(configPath, `bindings:\n  - cwd: ${path.join(dir, 'bound')}\n    projectId: p1\n`);
      fs.mkdirSync(stateDir, { recursive: true });
      fs.writeFileSync(path.join(stateDir, 'state.json'), JSON.stringify({ version: 1, sessions: { old: { touched: [], autoAttempts: 0, updatedAt: 0, turnOpenSince: Date.now() - 1_000, turnOpenPid: 2 ** 22 + 17 } } }));
      const offHost = fakeHost();
      const off = started(offHost, { maxAutoContinue: 0 });
      try {
        expect(off.loaded).toBe(false);
      } finally {
        await offHost.dispose();
      }
      const onHost = fakeHost();
      const on = started(onHost);
      try {
        expect(on.loaded).toBe(true);
        await on.load();
      } finally {
        await onHost.dispose();
      }
    });
  });
});
