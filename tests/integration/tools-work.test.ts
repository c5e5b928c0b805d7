// The `todo_work` and `dida_todo_setup` results over the simulator (core/tools/todo-work-tool, setup-tool): the counts,
// ids and hints of each action (queue, waiting Works, refresh, finishing, keeping open), the setup answers for each
// binding state, the token advice in its stdin form, and faults that must throw rather than read as a result.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { claimsPosted } from '../../src/core/engine/work-engine';
import type { ConfigPort } from '../../src/core/queue/bindings';
import { TOOLS, type ToolContext, type ToolResult } from '../../src/core/tools';
import { LOGIN_ADVICE } from '../../src/core/tools/setup-tool';
import { DidaError } from '../../src/dida/dida-error';
import { defaultConfig, type DidaTodoConfig } from '../../src/store/config-schema';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';

let h: EngineHarness;
let config: DidaTodoConfig;
let listId: string;

const configPort: ConfigPort = {
  read: async () => structuredClone(config),
  update: async (fn) => (config = fn(structuredClone(config))),
};

function ctx(overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    sessionId: 'session-w',
    cwd: '/work/project',
    queueGranted: true,
    config: configPort,
    engine: async () => h.engine,
    gateway: async () => h.gateway,
    tokenSource: async () => ({ source: 'env' }),
    ...overrides,
  };
}

async function call(name: string, args: Record<string, unknown>, overrides: Partial<ToolContext> = {}): Promise<ToolResult> {
  return TOOLS.find((t) => t.name === name)!.execute(args, ctx(overrides));
}
const work = (args: Record<string, unknown>, overrides: Partial<ToolContext> = {}) => call('todo_work', args, overrides);
const setup = (args: Record<string, unknown>, overrides: Partial<ToolContext> = {}) => call('dida_todo_setup', args, overrides);

function fenced(text: string | undefined): string[] {
  return [...(text ?? '').matchAll(/<<<DIDA_DATA label=[^\n]*>>>\n([\s\S]*?)\n<<<END_DIDA_DATA nonce=[0-9a-f]+>>>/g)].map((m) => m[1]!);
}

const STAMP = '(as of 2026-11-30T02:00:00Z)';

beforeEach(async () => {
  h = await startEngineHarness();
  listId = h.sim.seedProject({ name: '队列' }).id;
  config = { ...defaultConfig(), bindings: [{ cwd: '/work/project', projectId: listId }] };
});
afterEach(async () => {
  await claimsPosted();
  await h.close();
});

describe('todo_work list', () => {
  it('an empty queue: no Works, nothing waiting, no answers', async () => {
    const r = await work({ action: 'list' });
    expect(r).toEqual({ code: 'ok', message: '0 executable Work(s).', detail: `Executable Works in the bound Dida list, highest priority first ${STAMP}\nNothing is executable right now.` });
  });

  it('ranks the Works by priority with their level and id; titles only inside fences', async () => {
    const low = h.sim.seedTask({ projectId: listId, title: '低', priority: 1 }).id;
    const high = h.sim.seedTask({ projectId: listId, title: '高', priority: 5 }).id;
    const mid = h.sim.seedTask({ projectId: listId, title: '中', priority: 3 }).id;
    const r = await work({ action: 'list' });
    expect(r.message).toBe('3 executable Work(s).');
    const lines = r.detail!.split('\n');
    expect(lines[0]).toBe(`Executable Works in the bound Dida list, highest priority first ${STAMP}`);
    expect(lines).toContain(`1. [high] · id ${high}`);
    expect(lines).toContain(`2. [medium] · id ${mid}`);
    expect(lines).toContain(`3. [low] · id ${low}`);
    expect(fenced(r.detail)).toEqual(['高', '中', '低']);
  });

  it('counts the Works waiting for the person', async () => {
    await call('todo', { action: 'create', work_title: '等人', steps: [{ title: 'a' }] });
    h.sim.seedTask({ projectId: listId, title: '别的', priority: 3 });
    // A draft (priority none) is skipped too, but it is not waiting for the person.
    h.sim.seedTask({ projectId: listId, title: '草稿', priority: 0 });
    await work({ action: 'wait_for_human', reason: '需要权限' });
    const r = await work({ action: 'list' });
    expect(r.message).toBe('1 executable Work(s). 1 Work(s) are waiting for the person.');
  });

  it('names the tool in a validation error, and an unbound directory gets the binding hint', async () => {
    expect((await work({ action: 'list', keep: 'yes' })).message).toBe('Invalid arguments for todo_work: keep must be true or false.');
    const unbound = await work({ action: 'list' }, { cwd: '/elsewhere' });
    expect(unbound.code).toBe('not_bound');
    expect(unbound.message).toContain('not bound to a Dida list');
  });
});

describe('todo_work next and switch', () => {
  it('next needs the grant, says when the queue is empty, and names the Work it took', async () => {
    expect(await work({ action: 'next' }, { queueGranted: false })).toEqual({
      code: 'queue_not_granted',
      message: 'Picking from the queue needs the person to ask for it (their trigger phrase) in this turn; keep to the current Work or ask the person.',
    });
    expect(await work({ action: 'next' })).toEqual({
      code: 'queue_empty',
      message: 'No Work in the bound list is executable now (or other machines hold them); tell the person the queue is empty.',
    });
    const id = h.sim.seedTask({ projectId: listId, title: '取这个', priority: 3, items: [{ title: '第一步' }] }).id;
    const r = await work({ action: 'next' });
    expect(r.code).toBe('ok');
    expect(r.message).toBe(`Now working on Work ${id}.`);
    expect(r.detail?.split('\n')[0]).toBe(`Work ${id} (priority medium, written by the person in Dida) — 0/1 steps settled.`);
    expect(r.data).toEqual([{ content: '第一步', status: 'pending' }]);
  });

  it('switch needs a Work id and names the Work it switched to', async () => {
    expect(await work({ action: 'switch' })).toEqual({ code: 'invalid_argument', message: 'switch needs work: a Work id from todo_work list.' });
    expect(await work({ action: 'switch', work: '' })).toEqual({ code: 'invalid_argument', message: 'switch needs work: a Work id from todo_work list.' });
    const id = h.sim.seedTask({ projectId: listId, title: '切过去', priority: 5, items: [{ title: 'x' }, { title: 'y' }] }).id;
    const r = await work({ action: 'switch', work: id });
    expect(r.message).toBe(`Now working on Work ${id}.`);
    expect(r.detail?.split('\n')[0]).toBe(`Work ${id} (priority high, written by the person in Dida) — 0/2 steps settled.`);
    expect(r.data).toEqual([
      { content: 'x', status: 'pending' },
      { content: 'y', status: 'pending' },
    ]);
  });
});

describe('todo_work refresh', () => {
  it('counts open, new and changed tasks, with or without a current Work', async () => {
    h.sim.seedTask({ projectId: listId, title: 'A', priority: 3 });
    h.sim.seedTask({ projectId: listId, title: 'B', priority: 3 });
    expect(await work({ action: 'refresh' })).toEqual({ code: 'ok', message: 'Refreshed: 2 open task(s), 2 new, 0 changed by the person. This session has no current Work.' });
    const id = h.sim.seedTask({ projectId: listId, title: 'C', priority: 3, items: [{ title: 'c1' }] }).id;
    await work({ action: 'switch', work: id });
    h.sim.editTask(id, { title: 'C（改）' });
    const r = await work({ action: 'refresh' });
    expect(r.code).toBe('ok');
    expect(r.message).toBe('Refreshed: 3 open task(s), 0 new, 1 changed by the person.');
    expect(r.detail?.split('\n')[0]).toBe(`Work ${id} (priority medium, written by the person in Dida) — 0/1 steps settled.`);
    expect(fenced(r.detail)[0]).toContain('Title: C（改）');
    expect(r.data).toEqual([{ content: 'c1', status: 'pending' }]);
  });
});

describe('todo_work finish_current', () => {
  it('needs a current Work, and names the steps not settled yet', async () => {
    expect(await work({ action: 'finish_current' })).toEqual({ code: 'no_current_work', message: 'This session has no current Work to finish.' });
    await call('todo', { action: 'create', work_title: '收尾', steps: [{ title: 'a' }, { title: 'b' }, { title: 'c' }] });
    await call('todo', { action: 'update', updates: [{ step: 's2', status: 'skipped', resolution: '不需要' }] });
    expect(await work({ action: 'finish_current' })).toEqual({ code: 'not_settled', message: '2 step(s) are not completed or skipped yet (s1, s3); settle them first.' });
    expect(h.sim.listTasks(listId).filter((t) => t.title.startsWith('🧑‍🔬'))).toEqual([]);
  });

  it('sends a settled Work for review, and again says it is sent', async () => {
    await call('todo', { action: 'create', work_title: '交付', steps: [{ title: 'a' }] });
    const id = h.sim.listTasks(listId).find((t) => t.title === '交付')!.id;
    await call('todo', { action: 'update', updates: [{ step: 's1', status: 'completed', resolution: '测试通过' }] });
    expect(await work({ action: 'finish_current' })).toEqual({ code: 'ok', message: `Work ${id} is sent to the person for review.` });
    expect(h.sim.listTasks(listId).filter((t) => t.title.startsWith('🧑‍🔬'))).toHaveLength(1);
    expect((await h.engine.getWork(id)).phase).toBe('accepting');
    // Asked again while the review todo is out, it says the same and files nothing more.
    expect(await work({ action: 'finish_current' })).toEqual({ code: 'ok', message: `Work ${id} is sent to the person for review.` });
    expect(h.sim.listTasks(listId).filter((t) => t.title.startsWith('🧑‍🔬'))).toHaveLength(1);
  });

  it('passes on why it is not ready, and says a failed send will be retried', async () => {
    await call('todo', { action: 'create', work_title: '保持', steps: [{ title: 'a' }] });
    const id = h.sim.listTasks(listId).find((t) => t.title === '保持')!.id;
    await call('todo', { action: 'update', updates: [{ step: 's1', status: 'completed', resolution: '好了' }] });
    await work({ action: 'keep_open' });
    expect(await work({ action: 'finish_current' })).toEqual({ code: 'keep_open', message: `Work ${id} is kept open at the person's request.` });
    await work({ action: 'keep_open', keep: false });
    h.sim.injectFault({ route: 'POST /task', kind: 'status', status: 500, times: Infinity });
    const failed = await work({ action: 'finish_current' });
    h.sim.clearFaults();
    expect(failed.code).toBe('dida_unavailable');
    expect(failed.message.startsWith('Sending for review failed and will be retried automatically: ')).toBe(true);
    expect(failed.message.length).toBeGreaterThan('Sending for review failed and will be retried automatically: '.length);
    expect((await h.engine.getWork(id)).finalize?.lastError).toBeDefined();
    expect(failed.message).toBe(`Sending for review failed and will be retried automatically: ${(await h.engine.getWork(id)).finalize!.lastError}`);
  });
});

describe('todo_work wait_for_human, resume and keep_open', () => {
  it('wait_for_human needs a reason and says to stop; resume names the Work and shows it', async () => {
    await call('todo', { action: 'create', work_title: '等待', steps: [{ title: 'a' }] });
    const id = h.sim.listTasks(listId).find((t) => t.title === '等待')!.id;
    expect(await work({ action: 'wait_for_human' })).toEqual({ code: 'invalid_argument', message: 'wait_for_human needs reason: one sentence saying what you need from the person.' });
    expect(await work({ action: 'wait_for_human', reason: '' })).toEqual({ code: 'invalid_argument', message: 'wait_for_human needs reason: one sentence saying what you need from the person.' });
    expect(await work({ action: 'wait_for_human', reason: '需要密码' })).toEqual({
      code: 'ok',
      message: `Work ${id} is waiting for the person; they were reminded in Dida. Stop working on it until they answer.`,
    });
    const r = await work({ action: 'resume' });
    expect(r.code).toBe('ok');
    expect(r.message).toBe(`Resumed Work ${id}.`);
    expect(r.detail?.split('\n')[0]).toBe(`Work ${id} (priority medium, created by the agent) — 0/1 steps settled.`);
    expect(r.data).toEqual([{ content: 'a', status: 'pending' }]);
    expect((await h.engine.getWork(id)).waiting).toBeUndefined();
    // A Work that is not waiting and has no answer from the person is not resumed again.
    expect((await work({ action: 'resume' })).code).toBe('not_waiting');
  });

  it('resume hands over only the answer of the Work resumed', async () => {
    await call('todo', { action: 'create', work_title: '甲', steps: [{ title: 'a' }] });
    const a = h.sim.listTasks(listId).find((t) => t.title === '甲')!.id;
    await work({ action: 'wait_for_human', reason: '甲的问题' });
    const reminderA = (await h.engine.getWork(a)).waiting!.reminderTaskId!;
    await call('todo', { action: 'create', work_title: '乙', steps: [{ title: 'b' }] });
    const b = h.sim.listTasks(listId).find((t) => t.title === '乙')!.id;
    await work({ action: 'wait_for_human', reason: '乙的问题' });
    const reminderB = (await h.engine.getWork(b)).waiting!.reminderTaskId!;
    h.sim.addComment(listId, reminderA, '甲的回答');
    h.sim.addComment(listId, reminderB, '乙的回答');
    await h.engine.sync(listId);
    const r = await work({ action: 'resume', work: a });
    expect(r.message).toBe(`Work ${a} was already resumed by the person in Dida.`);
    expect(r.detail).toContain('甲的回答');
    expect(r.detail).not.toContain('乙的回答');
    const rb = await work({ action: 'resume', work: b });
    expect(rb.detail).toContain('乙的回答');
  });

  it('keep_open needs a current Work; keeps it open by default and lets it go with keep false', async () => {
    expect(await work({ action: 'keep_open' })).toEqual({ code: 'no_current_work', message: 'This session has no current Work.' });
    await call('todo', { action: 'create', work_title: '开着', steps: [{ title: 'a' }] });
    const id = h.sim.listTasks(listId).find((t) => t.title === '开着')!.id;
    expect(await work({ action: 'keep_open' })).toEqual({ code: 'ok', message: `Work ${id} stays open until the person allows review.` });
    expect((await h.engine.getWork(id)).keepOpen).toBe(true);
    expect(await work({ action: 'keep_open', keep: true })).toEqual({ code: 'ok', message: `Work ${id} stays open until the person allows review.` });
    expect(await work({ action: 'keep_open', keep: false })).toEqual({ code: 'ok', message: `Work ${id} will be sent for review when settled.` });
    expect((await h.engine.getWork(id)).keepOpen).toBe(false);
  });
});

describe('dida_todo_setup', () => {
  it('status: no token, not bound, bound (with its tag), and a list gone or archived', async () => {
    expect(await setup({ action: 'status' }, { tokenSource: async () => undefined })).toEqual({ code: 'dida_unavailable', message: `No Dida token is configured: ${LOGIN_ADVICE}.` });
    expect(await setup({ action: 'status' }, { cwd: '/nowhere', tokenSource: async () => ({ source: 'file' }) })).toEqual({
      code: 'not_bound',
      message: 'Token found (file). This directory is not bound to a Dida list; bind it with action "bind" when the person names a list.',
    });
    const ok = await setup({ action: 'status' });
    expect(ok.code).toBe('ok');
    expect(ok.message).toBe(`Bound to the Dida list ${listId} (token from env); Dida is reachable.`);
    expect(ok.detail).toMatch(/^Text between a <<<DIDA_DATA/);
    expect(ok.detail).toMatch(/<<<DIDA_DATA label=list_name nonce=/);
    expect(fenced(ok.detail)).toEqual(['队列']);
    config.bindings[0]!.tag = 'Web';
    expect((await setup({ action: 'status' })).message).toBe(`Bound to the Dida list ${listId} with route tag #web (tasks tagged so run only in directories with that tag) (token from env); Dida is reachable.`);
    h.sim.closeProject(listId);
    expect(await setup({ action: 'status' })).toEqual({ code: 'list_closed', message: `The bound Dida list ${listId} is archived; reopen it in Dida or bind another list.` });
    h.sim.deleteProject(listId);
    expect((await setup({ action: 'status' })).code).toBe('list_missing');
  });

  it('bind: needs a name or id; binds an existing list, creates a new one, and names the tag', async () => {
    config = defaultConfig();
    const missing = { code: 'invalid_argument', message: 'bind needs list_name (or list_id).' };
    expect(await setup({ action: 'bind' })).toEqual(missing);
    expect(await setup({ action: 'bind', list_name: '' })).toEqual(missing);
    const bound = await setup({ action: 'bind', list_name: '队列' });
    expect(bound.message).toBe(`Bound the Dida list ${listId} to this directory.`);
    expect(fenced(bound.detail)).toEqual(['队列']);
    const made = await setup({ action: 'bind', list_name: '全新的清单', tag: '#API' }, { cwd: '/work/api' });
    const newId = h.sim.listProjects().find((p) => p.name === '全新的清单')!.id;
    expect(made.message).toBe(`Created and bound the Dida list ${newId} to this directory with route tag #api (tasks tagged so run only in directories with that tag).`);
    expect(fenced(made.detail)).toEqual(['全新的清单']);
    const byId = await setup({ action: 'bind', list_id: listId }, { cwd: '/work/third' });
    expect(byId.message).toBe(`Bound the Dida list ${listId} to this directory.`);
    expect(config.bindings.map((b) => [b.cwd, b.projectId, b.tag])).toEqual([
      ['/work/project', listId, undefined],
      ['/work/api', newId, 'api'],
      ['/work/third', listId, undefined],
    ]);
  });

  it('unbind: names the list, and a directory without its own binding says so', async () => {
    expect(await setup({ action: 'unbind' }, { cwd: '/work/project/sub' })).toEqual({
      code: 'not_bound',
      message: 'This exact directory has no binding (a parent directory may still be bound; check with status).',
    });
    expect(await setup({ action: 'unbind' })).toEqual({ code: 'ok', message: `Unbound this directory from the Dida list ${listId}.` });
    expect(config.bindings).toEqual([]);
  });

  it('login_check: counts the lists; a rejected token gets the stdin advice; other faults throw', async () => {
    h.sim.seedProject({ name: '第二个' });
    expect(await setup({ action: 'login_check' })).toEqual({ code: 'ok', message: `The Dida token works (${h.sim.listProjects().length} list(s) visible).` });
    expect(h.sim.listProjects().length).toBe(2);
    const down = new DidaError({ code: 'network', message: 'down' });
    await expect(setup({ action: 'login_check' }, { gateway: async () => Promise.reject(down) })).rejects.toBe(down);
    const plain = Object.assign(new Error('odd'), { code: 'auth' });
    await expect(setup({ action: 'login_check' }, { gateway: async () => Promise.reject(plain) })).rejects.toBe(plain);
    const rejected = await setup({ action: 'login_check' }, { gateway: async () => Promise.reject(new DidaError({ code: 'auth', message: 'no' })) });
    expect(rejected).toEqual({ code: 'dida_unavailable', message: `The Dida token was rejected: ${LOGIN_ADVICE}.` });
  });

  it('advice from lower layers that names `--token <token>` reaches the model in the stdin form', async () => {
    const r = await setup({ action: 'status' }, { gateway: async () => Promise.reject(new DidaError({ code: 'auth', message: 'no' })) });
    expect(r).toEqual({ code: 'dida_unavailable', message: 'Dida cannot be used: the Dida token was rejected; run `dida-todo login --token -` again. Tell the person; do not retry.' });
    expect((await setup({ action: 'status', colour: 1 })).message).toBe('Invalid arguments for dida_todo_setup: colour is not an argument of dida_todo_setup (its arguments are action, list_name, list_id, create, tag).');
  });
});

describe('the tools, from a fresh import (what their modules build when they load)', () => {
  let tools: typeof import('../../src/core/tools');
  let workTool: typeof import('../../src/core/tools/todo-work-tool');
  let setupModule: typeof import('../../src/core/tools/setup-tool');
  // The fresh modules know only the fresh DidaError class.
  let FreshDidaError: typeof DidaError;
  const ADVICE = 'ask the person to run `dida-todo login --token -` in a terminal (it reads the token without showing it; never put the token on the command line or in this chat)';
  beforeEach(async () => {
    vi.resetModules();
    tools = await import('../../src/core/tools');
    workTool = await import('../../src/core/tools/todo-work-tool');
    setupModule = await import('../../src/core/tools/setup-tool');
    ({ DidaError: FreshDidaError } = await import('../../src/dida/dida-error'));
  });
  async function call(name: string, args: Record<string, unknown>, overrides: Partial<ToolContext> = {}): Promise<ToolResult> {
    const tool = tools.TOOLS.find((t) => t.name === name);
    if (!tool) throw new Error(`no tool named ${name}`);
    return tool.execute(args, ctx(overrides));
  }

  it('registers the three tools under their names', () => {
    expect(tools.TOOLS.map((t) => t.name).sort()).toEqual(['dida_todo_setup', 'todo', 'todo_work']);
    expect(setupModule.setupTool.name).toBe('dida_todo_setup');
    expect(setupModule.setupTool.parameters).toHaveProperty('action');
  });

  it('todo_work list: the heading and the empty line of an empty queue', async () => {
    const r = await call('todo_work', { action: 'list' });
    expect(r.code).toBe('ok');
    expect(r.detail?.split('\n')).toEqual(['Executable Works in the bound Dida list, highest priority first (as of 2026-11-30T02:00:00Z)', 'Nothing is executable right now.']);
  });

  it('todo_work list: every level the queue can show, with the id label', async () => {
    const high = h.sim.seedTask({ projectId: listId, title: '高', priority: 5 }).id;
    const mid = h.sim.seedTask({ projectId: listId, title: '中', priority: 3 }).id;
    const low = h.sim.seedTask({ projectId: listId, title: '低', priority: 1 }).id;
    const lines = (await call('todo_work', { action: 'list' })).detail?.split('\n') ?? [];
    expect(lines).toContain(`1. [high] · id ${high}`);
    expect(lines).toContain(`2. [medium] · id ${mid}`);
    expect(lines).toContain(`3. [low] · id ${low}`);
  });

  it('dida_todo_setup: the login advice, word for word, when no token or a rejected one', async () => {
    expect(setupModule.LOGIN_ADVICE).toBe(ADVICE);
    expect(await call('dida_todo_setup', { action: 'status' }, { tokenSource: async () => undefined })).toEqual({
      code: 'dida_unavailable',
      message: `No Dida token is configured: ${ADVICE}.`,
    });
    const rejected = await call('dida_todo_setup', { action: 'login_check' }, { gateway: async () => Promise.reject(new FreshDidaError({ code: 'auth', message: 'no' })) });
    expect(rejected).toEqual({ code: 'dida_unavailable', message: `The Dida token was rejected: ${ADVICE}.` });
  });

  it('todo: a Work created through the fresh tool is in Dida', async () => {
    const r = await call('todo', { action: 'create', work_title: '新的', steps: [{ title: '一步' }] });
    expect(r.code).toBe('ok');
    expect(h.sim.listTasks(listId).map((t) => t.title)).toContain('新的');
  });

  it('the routed note names only plain ids of at most 80 characters', () => {
    const routed = (taskId: string) => ({ reason: 'routed' as const, routedTo: 'api', candidate: { taskId } as never });
    const note = (taskId: string) => workTool.routedNote([routed(taskId)], undefined);
    expect(note('ab_C-1#2')).toBe(' 1 Work(s) are for other directories: ab_C-1#2 routed to #api.');
    expect(note('x'.repeat(80))).toContain(`${'x'.repeat(80)} routed`);
    for (const bad of ['x'.repeat(81), 'bad id', 'ok\nforged', '!ok', 'ok!', '']) expect(note(bad)).toBe(' 1 Work(s) are for other directories: a Work routed to #api.');
  });
});
