// The three tools end to end over the simulator: binding, planning, updates, queue grant, errors.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claimsPosted } from '../../src/core/engine/work-engine';
import type { ConfigPort } from '../../src/core/queue/bindings';
import { TOOLS, renderResult, type ToolContext, type ToolResult } from '../../src/core/tools';
import { DidaError } from '../../src/dida/dida-error';
import { defaultConfig, type DidaTodoConfig } from '../../src/store/config-schema';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';

let h: EngineHarness;
let config: DidaTodoConfig;
let granted = false;

const configPort: ConfigPort = {
  read: async () => structuredClone(config),
  update: async (fn) => (config = fn(structuredClone(config))),
};

function ctx(overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    sessionId: 'session-t',
    cwd: '/work/project',
    queueGranted: granted,
    config: configPort,
    engine: async () => h.engine,
    gateway: async () => h.gateway,
    tokenSource: async () => ({ source: 'env' }),
    ...overrides,
  };
}

async function call(name: string, args: Record<string, unknown>, c: ToolContext = ctx()): Promise<ToolResult> {
  const tool = TOOLS.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool.execute(args, c);
}

beforeEach(async () => {
  h = await startEngineHarness();
  config = defaultConfig();
  granted = false;
});
afterEach(async () => {
  await h.close();
});

describe('tools', () => {
  it('tells an unbound session how to bind, then binds by name', async () => {
    const unbound = await call('todo', { action: 'list' });
    expect(unbound.code).toBe('not_bound');
    expect(unbound.message).toContain('dida_todo_setup');
    const bound = await call('dida_todo_setup', { action: 'bind', list_name: '智能体' });
    expect(bound.code).toBe('ok');
    expect(h.sim.listProjects().map((p) => p.name)).toContain('智能体');
    expect(config.bindings[0]?.cwd).toBe('/work/project');
    const status = await call('dida_todo_setup', { action: 'status' });
    expect(status.code).toBe('ok');
    // A subdirectory is covered by the binding of its parent.
    const sub = await call('dida_todo_setup', { action: 'status' }, ctx({ cwd: '/work/project/src' }));
    expect(sub.code).toBe('ok');
  });

  it('refuses to bind a name that is a typo of an open list (naming it by id), and creates it only when asked', async () => {
    const existing = h.sim.seedProject({ name: '工作清单' });
    const before = h.sim.listProjects().length;
    const typo = await call('dida_todo_setup', { action: 'bind', list_name: '工作清丹' });
    expect(typo.code).toBe('list_near_miss');
    expect(typo.message).toContain(existing.id);
    // Dida text never reaches the model outside the fence: the near list is named by id only.
    expect(typo.message).not.toContain('工作清单');
    expect(h.sim.listProjects()).toHaveLength(before);
    expect(config.bindings).toEqual([]);
    // A name far from every list creates one, as always (control), and create: true makes the near one on purpose.
    expect((await call('dida_todo_setup', { action: 'bind', list_name: '完全不同的名字' })).code).toBe('ok');
    expect((await call('dida_todo_setup', { action: 'bind', list_name: '工作清丹', create: true })).code).toBe('ok');
    expect(h.sim.listProjects().map((p) => p.name)).toEqual(expect.arrayContaining(['工作清单', '完全不同的名字', '工作清丹']));
    expect(h.sim.listProjects()).toHaveLength(before + 2);
    // The exact name binds the existing list.
    expect((await call('dida_todo_setup', { action: 'bind', list_name: '工作清单' })).code).toBe('ok');
    expect(config.bindings[0]?.projectId).toBe(existing.id);
  });

  it('plans, updates and lists the current Work', async () => {
    await call('dida_todo_setup', { action: 'bind', list_name: 'plan' });
    const created = await call('todo', { action: 'create', work_title: '修复登录超时', priority: 'high', steps: [{ title: '复现问题', status: 'in_progress' }, { title: '修复并测试' }] });
    expect(created.code).toBe('ok');
    const task = h.sim.listTasks().find((t) => t.title === '修复登录超时');
    expect(task?.priority).toBe(5);
    expect(task?.items?.map((i) => i.title)).toEqual(['复现问题', '修复并测试']);
    // The claim follows the result at once (the call did not wait for it); progress comments wait in the outbox and
    // go out at idle (settle) or when the window has passed.
    await claimsPosted();
    expect(h.sim.listComments(task!.id).map((c) => c.title)).toEqual(['🤖 test-host 开始处理（会话 t）']);
    await h.engine.flushComments();
    expect(h.sim.listComments(task!.id).map((c) => c.title)).toEqual(['🤖 test-host 开始处理（会话 t）', '开始处理：复现问题']);

    const noResolution = await call('todo', { action: 'update', updates: [{ step: '复现问题', status: 'completed' }] });
    expect(noResolution.code).toBe('missing_resolution');
    const done = await call('todo', { action: 'update', updates: [{ step: '复现问题', status: 'completed', resolution: '本地可稳定复现' }] });
    expect(done.code).toBe('ok');
    // On disk at once; in Dida when the background writer sends it (with its comment, within the window or at idle).
    expect(h.sim.getTask(task!.id)?.items?.[0]?.status).toBe(0);
    await h.engine.flushComments();
    expect(h.sim.getTask(task!.id)?.items?.[0]?.status).toBe(1);

    const list = await call('todo', { action: 'list' });
    expect(list.detail).toContain('[completed] 复现问题');
    expect(list.detail).toContain('<<<DIDA_DATA');
    expect(list.data).toEqual([
      { content: '复现问题', status: 'completed' },
      { content: '修复并测试', status: 'pending' },
    ]);
    const bad = await call('todo', { action: 'update', updates: [{ step: 'nope', status: 'completed', resolution: 'x' }] });
    expect(bad.code).toBe('step_not_found');
    expect(renderResult(bad)).toMatch(/^\[step_not_found\] /);
  });

  it('validates arguments and names the wrong one', async () => {
    const r = await call('todo', { action: 'explode' });
    expect(r.code).toBe('invalid_argument');
    expect(r.message).toContain('action must be one of');
    const extra = await call('todo_work', { action: 'list', colour: 'red' });
    expect(extra.message).toContain('colour is not an argument');
  });

  it('picks from the queue only with the grant', async () => {
    await call('dida_todo_setup', { action: 'bind', list_name: 'queue' });
    const list = config.bindings[0]!.projectId;
    h.sim.seedTask({ projectId: list, title: '低优先级', priority: 1 });
    h.sim.seedTask({ projectId: list, title: '高优先级', priority: 5 });
    const denied = await call('todo_work', { action: 'next' });
    expect(denied.code).toBe('queue_not_granted');
    granted = true;
    const next = await call('todo_work', { action: 'next' });
    expect(next.code).toBe('ok');
    // The title is the person's text: it reaches the model only inside the fence.
    expect(next.message).not.toContain('高优先级');
    expect(next.detail).toMatch(/<<<DIDA_DATA[^\n]*>>>\nTitle: 高优先级/);
    const listed = await call('todo_work', { action: 'list' });
    expect(listed.detail).toContain('<<<END_DIDA_DATA');
  });

  it('waits for the person and resumes', async () => {
    await call('dida_todo_setup', { action: 'bind', list_name: 'wait' });
    await call('todo', { action: 'create', work_title: '部署到生产', steps: [{ title: '拿到服务器权限' }] });
    const waiting = await call('todo_work', { action: 'wait_for_human', reason: '需要你开通生产服务器的 SSH 权限' });
    expect(waiting.code).toBe('ok');
    const task = h.sim.listTasks().find((t) => t.title === '部署到生产');
    expect(task?.priority).toBe(0);
    expect(h.sim.listTasks().some((t) => t.title === '🙋 需要你处理：部署到生产')).toBe(true);
    const resumed = await call('todo_work', { action: 'resume' });
    expect(resumed.code).toBe('ok');
    expect(h.sim.getTask(task!.id)?.priority).toBe(3);
  });

  it('answers with a clear code when no token is configured', async () => {
    config.bindings.push({ cwd: '/work/project', projectId: 'x'.repeat(24) });
    const noToken = ctx({
      engine: async () => {
        throw new DidaError({ code: 'auth', message: 'no token' });
      },
    });
    const r = await call('todo', { action: 'list' }, noToken);
    expect(r.code).toBe('dida_unavailable');
    expect(r.message).toContain('dida-todo login');
  });

  it('dida_todo_setup tells the model to advise `dida-todo login --token -`, never the token on the command line', async () => {
    const setup = TOOLS.find((t) => t.name === 'dida_todo_setup')!;
    expect(setup.description).toContain('`dida-todo login --token -`');
    const noToken = await call('dida_todo_setup', { action: 'status' }, ctx({ tokenSource: async () => undefined }));
    const rejected = await call('dida_todo_setup', { action: 'login_check' }, ctx({ gateway: async () => { throw new DidaError({ code: 'auth', message: 'rejected' }); } }));
    h.sim.expireToken();
    const expired = await call('dida_todo_setup', { action: 'login_check' });
    for (const result of [noToken, rejected, expired]) {
      expect(result.code).toBe('dida_unavailable');
      expect(result.message).toContain('`dida-todo login --token -`');
    }
    for (const text of [setup.description, noToken.message, rejected.message, expired.message]) expect(text).not.toMatch(/--token <|--token \S*[A-Za-z0-9]{8}/);
  });
});
