// An agent you can leave alone, in a real dsh 0.1.0-rc.8 headless run against the Dida simulator and a scripted model:
// the rephrase note inside the retried request, the queue given to the turn on the trigger phrase, binding mid-session,
// and the tool schemas the model is shown (bound and unbound), measured from the requests the fake model receives.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isOwnSource } from '../../src/runtime/session/messages';
import type { Simulator } from '../../src/sim/simulator';
import { contentFilter, text, toolCall, type FakeModel, type RecordedRequest } from './harness/fake-model';
import { eventsOf, runHeadless } from './harness/dsh-run';
import { useDshWorld } from './harness/world';
import { readEngineStateFile } from '../helpers/engine-state-file';

const OUR_TOOLS = ['dida_todo_setup', 'todo', 'todo_work'];
const NOTE = '[dida-todo] Automatic continuation';

let model: FakeModel;
let sim: Simulator;
let home: string;
let project: string;
let listId: string;

useDshWorld((world) => ({ model, sim, home, project } = world));

/** config.yaml (bound or not) and the row overlay; dsh's own retries are cut to one fast retry. */
function configure(options: { bind: boolean; row?: string }): string[] {
  const configDir = path.join(home, '.test-xdg', 'config', 'dida-todo');
  fs.mkdirSync(configDir, { recursive: true });
  listId = sim.seedProject({ name: '智能体工作' }).id;
  const binding = options.bind ? `bindings:\n  - cwd: ${project}\n    projectId: ${listId}\n    label: 智能体工作\n` : 'bindings: []\n';
  fs.writeFileSync(path.join(configDir, 'config.yaml'), `baseUrl: ${sim.baseUrl}\n${binding}`);
  const overlay = path.join(home, 'dida-row.yml');
  const row = options.row ?? 'maxAutoContinue: 3\nbackoff: [0.1]';
  fs.writeFileSync(overlay, `- id: dida-todo\n  config:\n${row.split('\n').map((l) => `    ${l}`).join('\n')}\n`);
  const llm = path.join(home, 'llm-retry.yml');
  fs.writeFileSync(llm, `- id: llm-deepseek\n  config:\n    retryPolicy:\n      mode: normal\n      maxRetries: 0\n      backoff: { initialDelayMs: 20, maxDelayMs: 50, jitterRatio: 0 }\n`);
  return [overlay, llm];
}

const env = () => ({ DIDA_TODO_TOKEN: sim.token });
const kindOf = (r: RecordedRequest) => (typeof r.behaviour === 'object' ? r.behaviour.kind : r.behaviour);
const messagesOf = (r: RecordedRequest) => JSON.stringify(r.body?.messages ?? []);

/** This bundle's tool entries in a request, and their size in characters (the JSON the model is sent). */
function ourTools(request: RecordedRequest): { names: string[]; chars: number } {
  const entries = ((request.body?.tools ?? []) as Array<{ function?: { name?: string } }>).filter((t) => OUR_TOOLS.includes(t.function?.name ?? ''));
  return { names: entries.map((t) => t.function!.name!).sort(), chars: entries.reduce((sum, t) => sum + JSON.stringify(t).length, 0) };
}

describe('the rephrase note after a content-filter stop', () => {
  it('is inside the retried request itself, and every retried request differs', async () => {
    const patches = configure({ bind: true });
    const work = sim.seedTask({ projectId: listId, title: '写周报', priority: 5, items: [{ title: '汇总进展' }] });
    model.setScript([
      toolCall('todo_work', { action: 'next' }),
      contentFilter('PARTIAL_ONE '),
      contentFilter('PARTIAL_TWO '),
      toolCall('todo', { action: 'update', updates: [{ step: '汇总进展', status: 'completed', resolution: '周报已写好' }] }),
      text('周报完成'),
    ]);
    const run = await runHeadless({ home, cwd: project, prompt: '检查todo', baseUrl: model.baseUrl, patches, env: env(), timeoutMs: 90_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(model.pending()).toEqual([]);
    const chats = model.chatRequests();
    expect(chats.map(kindOf)).toEqual(['toolCalls', 'contentFilter', 'contentFilter', 'toolCalls', 'text']);
    // The filtered request had no note; the first retry carries note 1, the second retry notes 1 and 2.
    expect(messagesOf(chats[1]!)).not.toContain(NOTE);
    expect(messagesOf(chats[2]!)).toContain(`${NOTE} 1/3`);
    expect(messagesOf(chats[2]!)).not.toContain(`${NOTE} 2/3`);
    expect(messagesOf(chats[3]!)).toContain(`${NOTE} 2/3`);
    expect(messagesOf(chats[2]!)).toContain('content filter');
    expect(new Set(chats.slice(1, 4).map(messagesOf)).size).toBe(3);
    // One turn: the notes are plugin messages inside it, and the step change after them ended the stretch.
    const log = run.sessionLogs[0]!;
    expect(eventsOf(log, 'turn/end').map((e) => e.data.reason.kind)).toEqual(['completed']);
    const notes = eventsOf(log, 'user/message').filter((e) => isOwnSource(e.data?.source) && JSON.stringify(e.data.content).includes(NOTE));
    expect(notes).toHaveLength(2);
    expect(sim.getTask(work.id)?.status).toBe(2);
    const state = readEngineStateFile(path.join(home, '.test-xdg', 'state', 'dida-todo', 'state.json'));
    expect(state.sessions[log.header.id].autoAttempts).toBe(0);
  });
});

describe('the queue grant', () => {
  it('gives the trigger-phrase turn the executable Works, fenced, in rank order', async () => {
    const patches = configure({ bind: true });
    sim.seedTask({ projectId: listId, title: '低优先的活', priority: 1 });
    sim.seedTask({ projectId: listId, title: '最急的活', priority: 5, content: '请先看日志' });
    sim.seedTask({ projectId: listId, title: '草稿不该出现', priority: 0 });
    model.setScript([text('看过队列了')]);
    const run = await runHeadless({ home, cwd: project, prompt: '检查todo', baseUrl: model.baseUrl, patches, env: env(), timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    const first = messagesOf(model.chatRequests()[0]!);
    expect(first).toContain('Executable Works in the bound Dida list');
    const urgent = first.indexOf('最急的活');
    const low = first.indexOf('低优先的活');
    expect(urgent).toBeGreaterThan(-1);
    expect(low).toBeGreaterThan(urgent);
    expect(first).toContain('请先看日志');
    expect(first).not.toContain('草稿不该出现');
    // Nobody took anything: the grant only shows the queue.
    expect(sim.listTasks(listId).every((t) => t.status === 0)).toBe(true);
  });
});

describe('binding mid-session', () => {
  it('after dida_todo_setup bind, the session gets the tools and the prompt, and its settled Work is filed for review at idle', async () => {
    const patches = configure({ bind: false });
    const listName = '新的清单';
    model.setScript([
      toolCall('dida_todo_setup', { action: 'bind', list_name: listName }),
      toolCall('todo', { action: 'create', work_title: '整理笔记', steps: [{ title: '归档旧笔记', status: 'in_progress' }] }),
      toolCall('todo', { action: 'update', updates: [{ step: '归档旧笔记', status: 'completed', resolution: '旧笔记已归档' }] }),
      text('BOUND_AND_DONE'),
    ]);
    const run = await runHeadless({ home, cwd: project, prompt: '把这个目录连到“新的清单”，然后整理笔记', baseUrl: model.baseUrl, patches, env: env(), timeoutMs: 90_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(model.pending()).toEqual([]);
    const chats = model.chatRequests();
    expect(ourTools(chats[0]!).names).toEqual(['dida_todo_setup']);
    expect(messagesOf(chats[0]!)).not.toContain('Dida work list (dida-todo)');
    expect(ourTools(chats[1]!).names).toEqual(OUR_TOOLS.slice().sort());
    expect(JSON.stringify(chats[1]!.body?.messages?.[0] ?? '')).toContain('Dida work list (dida-todo)');
    const list = sim.listProjects().find((p) => p.name === listName)!;
    expect(list).toBeTruthy();
    const tasks = sim.listTasks(list.id, { includeCompleted: true });
    expect(tasks.find((t) => t.title === '整理笔记')?.status).toBe(2);
    expect(tasks.some((t) => t.title === '🧑‍🔬 待验收：整理笔记')).toBe(true);
    // The panel followed too.
    expect(eventsOf(run.sessionLogs[0]!, 'todo/write').length).toBeGreaterThan(0);
  });
});

describe('token economy: the schemas the model is shown', () => {
  it('an unbound session sees only dida_todo_setup (≤ 1,000 characters); a bound one all three (≤ 3,000)', async () => {
    let patches = configure({ bind: false });
    model.setScript([text('UNBOUND')]);
    let run = await runHeadless({ home, cwd: project, prompt: 'hello', baseUrl: model.baseUrl, patches, env: env(), timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    const unbound = ourTools(model.chatRequests()[0]!);
    expect(unbound.names).toEqual(['dida_todo_setup']);
    expect(unbound.chars).toBeLessThanOrEqual(1_000);

    model.requests.length = 0;
    patches = configure({ bind: true });
    model.setScript([text('BOUND')]);
    run = await runHeadless({ home, cwd: project, prompt: 'hello', baseUrl: model.baseUrl, patches, env: env(), timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    const bound = ourTools(model.chatRequests()[0]!);
    expect(bound.names).toEqual(OUR_TOOLS.slice().sort());
    expect(bound.chars).toBeLessThanOrEqual(3_000);
    const all = JSON.stringify(model.chatRequests()[0]!.body?.tools ?? []).length;
    console.log(`[token economy] our tool schemas: unbound ${unbound.chars} chars, bound ${bound.chars} chars (all tools in the bound request: ${all} chars)`);
  });
});
