// Routing by tag over the simulator: one list bound in three directories (#web, #api, untagged); each takes only the
// Works routed to it, `todo_work list` says why the others are not executable here, and the setup tool binds a tag.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConfigPort } from '../../src/core/queue/bindings';
import { TOOLS, renderResult, type ToolContext, type ToolResult } from '../../src/core/tools';
import { defaultConfig, type DidaTodoConfig } from '../../src/store/config-schema';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';

let h: EngineHarness;
let config: DidaTodoConfig;
let listId: string;

const configPort: ConfigPort = {
  read: async () => structuredClone(config),
  update: async (fn) => (config = fn(structuredClone(config))),
};

function ctx(cwd: string, sessionId: string): ToolContext {
  return {
    sessionId,
    cwd,
    queueGranted: true,
    config: configPort,
    engine: async () => h.engine,
    gateway: async () => h.gateway,
    tokenSource: async () => ({ source: 'env' }),
  };
}

async function call(cwd: string, name: string, args: Record<string, unknown>, sessionId = `session-${cwd.split('/').pop()}`): Promise<ToolResult> {
  const tool = TOOLS.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool.execute(args, ctx(cwd, sessionId));
}

beforeEach(async () => {
  h = await startEngineHarness();
  config = defaultConfig();
  expect((await call('/code/web', 'dida_todo_setup', { action: 'bind', list_name: '产品', tag: '#Web' })).code).toBe('ok');
  listId = config.bindings[0]!.projectId;
  await call('/code/api', 'dida_todo_setup', { action: 'bind', list_id: listId, tag: 'api' });
  await call('/code/docs', 'dida_todo_setup', { action: 'bind', list_id: listId });
});
afterEach(async () => {
  await h.close();
});

function seed(title: string, tags: string[], priority = 3): string {
  return h.sim.seedTask({ projectId: listId, title, priority, tags }).id;
}

describe('route tags', () => {
  it('binds with a tag through the setup tool and shows it in status', async () => {
    expect(config.bindings.map((b) => [b.cwd, b.tag])).toEqual([
      ['/code/web', 'web'],
      ['/code/api', 'api'],
      ['/code/docs', undefined],
    ]);
    const status = await call('/code/web', 'dida_todo_setup', { action: 'status' });
    expect(status.message).toContain('route tag #web');
    const bad = await call('/code/web', 'dida_todo_setup', { action: 'bind', list_id: listId, tag: 'two words' });
    expect(bad.code).toBe('invalid_argument');
    expect(config.bindings[0]?.tag).toBe('web');
    // Binding the same list again without a tag keeps the tag.
    await call('/code/web', 'dida_todo_setup', { action: 'bind', list_id: listId });
    expect(config.bindings[0]?.tag).toBe('web');
  });

  it('each directory lists only the Works routed to it and names why the others are not executable here', async () => {
    const forApi = seed('接口限流', ['api'], 5);
    const forWeb = seed('首页改版', ['web']);
    const untagged = seed('更新依赖', []);
    const other = seed('整理 bug', ['bug']);

    const web = await call('/code/web', 'todo_work', { action: 'list' });
    expect(web.message).toContain('2 executable Work(s)');
    expect(web.message).toContain(`${forApi} routed to #api`);
    expect(web.message).toContain(`${other} not tagged #web`);
    expect(web.detail).toContain(`id ${forWeb}`);
    expect(web.detail).toContain(`id ${untagged}`);
    expect(web.detail).not.toContain(`id ${forApi}`);
    // The task's own tags are Dida text: they never appear outside the fence ("bug" is not named at all).
    expect(renderResult(web)).not.toContain('#bug');

    const api = await call('/code/api', 'todo_work', { action: 'list' });
    expect(api.detail).toContain(`id ${forApi}`);
    expect(api.message).toContain(`${forWeb} routed to #web`);

    const docs = await call('/code/docs', 'todo_work', { action: 'list' });
    expect(docs.detail).toContain(`id ${untagged}`);
    expect(docs.detail).toContain(`id ${other}`);
    expect(docs.message).toContain(`${forApi} routed to #api`);
    expect(docs.message).toContain(`${forWeb} routed to #web`);
  });

  it('todo_work next takes the best Work routed here, never a higher one routed elsewhere', async () => {
    const forApi = seed('接口限流', ['api'], 5);
    const forWeb = seed('首页改版', ['web'], 1);
    const web = await call('/code/web', 'todo_work', { action: 'next' });
    expect(web.code).toBe('ok');
    expect(web.message).toBe(`Now working on Work ${forWeb}.`);
    const api = await call('/code/api', 'todo_work', { action: 'next' });
    expect(api.message).toBe(`Now working on Work ${forApi}.`);
    const docs = await call('/code/docs', 'todo_work', { action: 'next' });
    expect(docs.code).toBe('queue_empty');
  });
});

describe('answers from the phone follow the route', () => {
  /** A Work tagged #api that the api session asked about, answered by the person on its 🙋 reminder. */
  async function answeredForApi(): Promise<string> {
    const id = seed('接口限流', ['api'], 5);
    await call('/code/api', 'todo_work', { action: 'list' });
    expect((await call('/code/api', 'todo_work', { action: 'switch', work: id }, 'session-api')).code).toBe('ok');
    await call('/code/api', 'todo', { action: 'create', steps: ['设计'] }, 'session-api');
    expect((await call('/code/api', 'todo_work', { action: 'wait_for_human', reason: '用哪个限流阈值？' }, 'session-api')).code).toBe('ok');
    const reminder = (await h.state()).works[id]!.waiting!.reminderTaskId!;
    h.sim.addComment(listId, reminder, '每秒 100 次');
    // The api session's record is old by now (the person answered hours later): only the route keeps the answer there.
    await h.deps.state.update((state) => {
      state.sessions['session-api']!.updatedAt = 0;
      delete state.works[id]!.claim;
    });
    return id;
  }

  it('todo_work list in another directory of the same list never gets it; the Work’s own directory does', async () => {
    const id = await answeredForApi();
    const web = await call('/code/web', 'todo_work', { action: 'list' }, 'session-web');
    // The list read really happened and brought the answer in (the attack reached its scenario)…
    expect((await h.state()).works[id]!.pendingAnswer?.text).toBe('每秒 100 次');
    // …but the web directory is not told.
    expect(web.message).not.toContain('The person answered');
    expect(web.detail).not.toContain('每秒 100 次');
    const docs = await call('/code/docs', 'todo_work', { action: 'list' }, 'session-docs');
    expect(docs.detail).not.toContain('每秒 100 次');
    const api = await call('/code/api', 'todo_work', { action: 'list' }, 'session-api-2');
    expect(api.message).toContain('The person answered 1 Work(s)');
    expect(api.detail).toContain('每秒 100 次');
    expect((await h.state()).works[id]!.pendingAnswer).toBeUndefined();
  });
});
