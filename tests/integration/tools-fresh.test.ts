// The tools' texts that are built when their modules load (core/tools/todo-work-tool's queue strings, setup-tool's
// login advice and the tool objects themselves), read from a fresh import before each test so a change to any of
// them is seen: the queue heading and levels the model reads, the advice it gives the person, the tool names dsh
// registers. The engine and the simulator come from the usual harness.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { claimsPosted } from '../../src/core/engine/work-engine';
import type { ConfigPort } from '../../src/core/queue/bindings';
import type { ToolContext, ToolResult } from '../../src/core/tools';
import { defaultConfig, type DidaTodoConfig } from '../../src/store/config-store';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';

let h: EngineHarness;
let config: DidaTodoConfig;
let listId: string;
let tools: typeof import('../../src/core/tools');
let workTool: typeof import('../../src/core/tools/todo-work-tool');
let setupModule: typeof import('../../src/core/tools/setup-tool');
// The fresh modules know only the fresh DidaError class.
let DidaError: typeof import('../../src/dida/dida-error').DidaError;

const configPort: ConfigPort = {
  read: async () => structuredClone(config),
  update: async (fn) => (config = fn(structuredClone(config))),
};

function ctx(overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    sessionId: 'session-f',
    cwd: '/work/fresh',
    queueGranted: true,
    config: configPort,
    engine: async () => h.engine,
    gateway: async () => h.gateway,
    tokenSource: async () => ({ source: 'env' }),
    ...overrides,
  };
}

async function call(name: string, args: Record<string, unknown>, overrides: Partial<ToolContext> = {}): Promise<ToolResult> {
  const tool = tools.TOOLS.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool named ${name}`);
  return tool.execute(args, ctx(overrides));
}

const ADVICE = 'ask the person to run `dida-todo login --token -` in a terminal (it reads the token without showing it; never put the token on the command line or in this chat)';

beforeEach(async () => {
  vi.resetModules();
  tools = await import('../../src/core/tools');
  workTool = await import('../../src/core/tools/todo-work-tool');
  setupModule = await import('../../src/core/tools/setup-tool');
  ({ DidaError } = await import('../../src/dida/dida-error'));
  h = await startEngineHarness();
  listId = h.sim.seedProject({ name: '新鲜' }).id;
  config = { ...defaultConfig(), bindings: [{ cwd: '/work/fresh', projectId: listId }] };
});
afterEach(async () => {
  await claimsPosted();
  await h.close();
});

describe('the tools, from a fresh import', () => {
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
    const rejected = await call('dida_todo_setup', { action: 'login_check' }, { gateway: async () => Promise.reject(new DidaError({ code: 'auth', message: 'no' })) });
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
