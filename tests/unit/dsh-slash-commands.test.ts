// `/dida …` through the plugin entry's first-load layer over a fake dsh with a command registry, the real host and
// engine, and the Dida simulator: what is registered, what each command answers, and what it changes in Dida.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LazyHost } from '../../src/dsh/lazy-host';
import { RowConfig } from '../../src/dsh/row-config';
import { parseSlash, RESUME_NOTE, RUN_NOTE } from '../../src/dsh/slash-commands';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { fakeAgent, fakeHost } from '../helpers/dsh-host-fake';

interface Registered {
  name: string;
  description: string;
  input?: { hint: string };
  handler: (invocation: { agent: unknown; rawInput: string; signal: AbortSignal }) => Promise<{ kind: string; text?: string }>;
}

let dir: string;
let project: string;
let configPath: string;
let sim: Simulator;
let savedToken: string | undefined;
let list: { id: string };

beforeEach(async () => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'dida-slash-')));
  project = path.join(dir, 'project');
  fs.mkdirSync(project);
  configPath = path.join(dir, 'config.yaml');
  sim = await startSimulator();
  list = sim.seedProject({ name: '工作清单' });
  fs.writeFileSync(configPath, `baseUrl: ${sim.baseUrl}\nbindings: []\n`);
  savedToken = process.env.DIDA_TODO_TOKEN;
  process.env.DIDA_TODO_TOKEN = sim.token;
});
afterEach(async () => {
  if (savedToken === undefined) delete process.env.DIDA_TODO_TOKEN;
  else process.env.DIDA_TODO_TOKEN = savedToken;
  await sim.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function start(services: Record<string, unknown> = {}) {
  const registered: Registered[] = [];
  const host = fakeHost({ commands: { register: (definition: Registered) => (registered.push(definition), () => undefined) }, ...services });
  const parsed = RowConfig.safeParse({ configPath, stateDir: path.join(dir, 'state') });
  if (!parsed.success) throw new Error('row config did not validate');
  const lazy = new LazyHost(host.ctx as never, parsed.data);
  lazy.start();
  return { host, lazy, registered };
}

const writes = () => Object.entries(sim.counters()).filter(([route]) => /^(POST|DELETE) (?!\/preference$)/.test(route));

describe('parseSlash', () => {
  it('takes the first word as the subcommand (case ignored) and the rest as its argument', () => {
    expect(parseSlash('')).toEqual({ sub: 'help', argument: '' });
    expect(parseSlash('  STATUS ')).toEqual({ sub: 'status', argument: '' });
    expect(parseSlash(' bind  产品 迭代 ')).toEqual({ sub: 'bind', argument: '产品 迭代' });
    expect(parseSlash('stauts')).toEqual({ unknown: 'stauts' });
  });
});

describe('/dida', () => {
  it('is registered once at the first load with an input hint; registering loads nothing; no registry, no command', async () => {
    const { host, lazy, registered } = start();
    try {
      expect(registered.map((r) => r.name)).toEqual(['dida']);
      expect(registered[0]?.input?.hint).toMatch(/status \| queue \| bind <list>/);
      host.emit('agent/created', { agent: fakeAgent('session-1', { cwd: project }) });
      expect(lazy.loaded).toBe(false);
    } finally {
      await host.dispose();
    }
    // A profile without a command registry (headless, sdk) starts as before.
    const bare = fakeHost();
    const parsed = RowConfig.safeParse({ configPath, stateDir: path.join(dir, 'state') });
    expect(() => new LazyHost(bare.ctx as never, parsed.success ? parsed.data : (undefined as never)).start()).not.toThrow();
    await bare.dispose();
  });

  it('binds the folder, shows the status and the queue, runs the queue, pauses and resumes the Work, unbinds — all without the model', async () => {
    const high = sim.seedTask({ projectId: list.id, title: '修复登录', priority: 5, items: [{ title: '复现' }, { title: '修复' }] });
    sim.seedTask({ projectId: list.id, title: '想法', priority: 0 });
    const { host, registered } = start();
    const agent = Object.assign(fakeAgent('session-abcd1234', { cwd: project }), { cancel: vi.fn() });
    try {
      host.emit('agent/created', { agent });
      const dida = (rawInput: string) => registered[0]!.handler({ agent, rawInput, signal: new AbortController().signal });

      expect(await dida('')).toMatchObject({ kind: 'success', text: expect.stringContaining('/dida run') });
      expect(await dida(' nope')).toMatchObject({ kind: 'error', text: expect.stringContaining('没有 /dida nope 这个命令') });
      expect(await dida(' status')).toEqual({ kind: 'success', text: `${project} 没有绑定滴答列表：用 /dida bind <列表名> 绑定它。` });
      expect(await dida(' bind')).toMatchObject({ kind: 'error' });

      // A typo of the open list is refused and creates nothing; --create makes the new list on purpose (then unbound again).
      expect(await dida(' bind 工作清丹')).toEqual({ kind: 'error', text: '没有名为「工作清丹」的未归档列表；你是想绑定 「工作清单」 吗？用准确的名字再发一次；要新建这个名字的列表，发送 /dida bind --create 工作清丹。什么都没有改动。' });
      expect(sim.listProjects()).toHaveLength(1);
      expect(fs.readFileSync(configPath, 'utf8')).not.toContain('projectId');
      expect(await dida(' bind --create 工作清丹')).toMatchObject({ kind: 'success', text: expect.stringContaining('已新建列表「工作清丹」') });
      expect(sim.listProjects().map((p) => p.name).sort()).toEqual(['工作清丹', '工作清单']);
      expect(await dida(' unbind')).toMatchObject({ kind: 'success' });

      // bind: the open list with that name (no new list), and the session now sees the Dida tools.
      const bound = await dida(' bind 工作清单');
      expect(bound).toEqual({ kind: 'success', text: `已把 ${project} 绑定到「工作清单」。` });
      expect(sim.listProjects()).toHaveLength(2);
      expect(fs.readFileSync(configPath, 'utf8')).toContain(`projectId: ${list.id}`);
      const lifts = agent.ctx.tools.restrict.mock.results.map((r) => r.value as ReturnType<typeof vi.fn>);
      expect(lifts.length).toBeGreaterThan(0);
      for (const lift of lifts) expect(lift).toHaveBeenCalled();

      // status and queue read the list and write nothing.
      sim.resetCounters();
      const status = await dida(' status');
      expect(status.kind).toBe('success');
      expect(status.text?.split('\n')[0]).toBe('已绑定「工作清单」：1 个可执行，共 2 个未完成');
      expect(status.text).toContain('当前工作：无');
      const queue = await dida(' queue');
      expect(queue.text?.split('\n')).toEqual(['「工作清单」的队列：1 个可执行，共 2 个未完成', '1. [高] 修复登录 0/2', '– [无] 想法 — 草稿（优先级为无）：不会自动领取']);
      expect(writes()).toEqual([]);
      expect(agent.followup).not.toHaveBeenCalled();

      // run: the same grant as the trigger phrase — a turn starts, its first step carries the queue, todo_work next may take.
      const run = await dida(' run');
      expect(run).toMatchObject({ kind: 'success', text: expect.stringContaining('检查todo') });
      expect(agent.followup).toHaveBeenCalledTimes(1);
      expect(agent.followup.mock.calls[0]![0]).toMatchObject({ source: { kind: 'dida-todo' }, content: [{ text: RUN_NOTE }] });
      agent.status = 'running';
      host.emit('agent/status', { agent, status: 'running' });
      const decision = (await host.waterfall('agent/pre-step', { agent, turn: 1, step: 1, messages: [] }, async () => ({ kind: 'enter', messages: [{ role: 'user' }] }))) as { messages: Array<{ content?: Array<{ text: string }> }> };
      expect(JSON.stringify(decision.messages)).toContain('修复登录');
      const next = host.tools.find((t) => t.name === 'todo_work');
      const taken = await next.execute({ action: 'next' }, { agent });
      expect(JSON.stringify(taken)).not.toMatch(/queue_not_granted/);
      expect(sim.listComments(high.id).map((c) => c.title)).toEqual([expect.stringMatching(/^🤖 .+ 开始处理（会话 abcd1234）$/)]);

      // pause: the running turn is stopped, the Work waits in Dida (priority none, where it stopped).
      const paused = await dida(' pause');
      expect(paused).toMatchObject({ kind: 'success', text: expect.stringContaining('已暂停「修复登录」') });
      expect(agent.cancel).toHaveBeenCalledWith({ kind: 'hook', reason: expect.stringContaining('paused') }, { keepInbox: true });
      expect(sim.getTask(high.id)?.priority).toBe(0);
      expect(sim.listComments(high.id).at(-1)?.title).toMatch(/^已暂停/);
      expect((await dida(' status')).text).toContain('当前工作：「修复登录」，已处理 0/2 步，已暂停');
      expect((await dida(' queue')).text).toContain('修复登录 0/2 — 已被你暂停');
      expect(await dida(' pause')).toMatchObject({ kind: 'success', text: expect.stringContaining('已经在等你了') });

      // resume: the priority comes back, "resumed" is commented, and an idle session carries on.
      agent.status = 'idle';
      host.emit('agent/status', { agent, status: 'idle' });
      const resumed = await dida(' resume');
      expect(resumed).toEqual({ kind: 'success', text: '已恢复「修复登录」，会话接着做。' });
      expect(sim.getTask(high.id)?.priority).toBe(5);
      await vi.waitFor(() => expect(sim.listComments(high.id).at(-1)?.title).toBe('已恢复处理。'));
      expect(agent.followup.mock.calls.at(-1)![0]).toMatchObject({ content: [{ text: RESUME_NOTE }] });
      expect(await dida(' resume')).toMatchObject({ kind: 'error', text: expect.stringContaining('没有暂停') });
      agent.status = 'running';
      expect(await dida(' run')).toMatchObject({ kind: 'error', text: '会话正在工作；等它停下再用 /dida run。' });

      // unbind: the binding goes, and the session sees only dida_todo_setup again.
      agent.status = 'idle';
      const restricts = agent.ctx.tools.restrict.mock.calls.length;
      expect(await dida(' unbind')).toEqual({ kind: 'success', text: `已解除 ${project} 与「工作清单」的绑定。` });
      expect(fs.readFileSync(configPath, 'utf8')).not.toContain(list.id);
      expect(agent.ctx.tools.restrict.mock.calls.length).toBe(restricts + 1);
      expect(agent.ctx.tools.restrict.mock.calls.at(-1)![0]).toEqual({ deny: ['todo', 'todo_work'] });
    } finally {
      await host.dispose();
    }
  });

  it('a folder bound through its parent is unbound there; a Dida failure is an error answer, not a throw', async () => {
    fs.writeFileSync(configPath, `baseUrl: ${sim.baseUrl}\nbindings:\n  - cwd: ${dir}\n    projectId: ${list.id}\n    label: 工作清单\n`);
    const { host, registered } = start();
    const agent = fakeAgent('session-2', { cwd: project });
    try {
      host.emit('agent/created', { agent });
      const dida = (rawInput: string) => registered[0]!.handler({ agent, rawInput, signal: new AbortController().signal });
      expect(await dida(' unbind')).toMatchObject({ kind: 'error', text: expect.stringContaining(`通过上级目录 ${dir} 绑定`) });
      sim.injectFault({ route: 'GET /project/{pid}/data', kind: 'status', status: 500, times: Infinity });
      const failed = await dida(' queue');
      expect(failed.kind).toBe('error');
      expect(failed.text).toMatch(/^没有完成：/);
    } finally {
      await host.dispose();
    }
  });
});
