// The `todo` tool's results over the simulator (core/tools/todo-tool): the ids, counts and statuses each action reports,
// which hint it gives when there is no current Work or an argument is missing, a new Work beside the current one, the
// claim posted after the result, step changes returned before any request and written by the background writer, and
// what the person changed meanwhile or a failed write, told at the next call.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claimsPosted } from '../../src/core/engine/work-engine';
import type { ConfigPort } from '../../src/core/queue/bindings';
import { TOOLS, type ToolContext, type ToolResult } from '../../src/core/tools';
import { defaultConfig, type DidaTodoConfig } from '../../src/store/config-schema';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';

let h: EngineHarness;
let config: DidaTodoConfig;
let listId: string;

const configPort: ConfigPort = {
  read: async () => structuredClone(config),
  update: async (fn) => (config = fn(structuredClone(config))),
};

function ctx(sessionId = 'session-t'): ToolContext {
  return {
    sessionId,
    cwd: '/work/project',
    queueGranted: false,
    config: configPort,
    engine: async () => h.engine,
    gateway: async () => h.gateway,
    tokenSource: async () => ({ source: 'env' }),
  };
}

async function todo(args: Record<string, unknown>, sessionId?: string): Promise<ToolResult> {
  return TOOLS.find((t) => t.name === 'todo')!.execute(args, ctx(sessionId));
}

function fenced(text: string | undefined): string {
  const m = /<<<DIDA_DATA label=[^\n]*>>>\n([\s\S]*?)\n<<<END_DIDA_DATA nonce=[0-9a-f]+>>>/.exec(text ?? '');
  if (!m) throw new Error(`no fence in ${text}`);
  return m[1]!;
}

/** What the background writer sends once the window is over (here: at once). */
async function written(): Promise<void> {
  await h.engine.flushComments();
}

/** Dida requests since the last resetCounters(). */
function requests(): number {
  return Object.values(h.sim.counters()).reduce((a, b) => a + b, 0);
}

function taskTitled(title: string) {
  const task = h.sim.listTasks(listId).find((t) => t.title === title);
  if (!task) throw new Error(`no task ${title}`);
  return task;
}

beforeEach(async () => {
  h = await startEngineHarness();
  listId = h.sim.seedProject({ name: 'todo-list' }).id;
  config = { ...defaultConfig(), bindings: [{ cwd: '/work/project', projectId: listId }] };
});
afterEach(async () => {
  await claimsPosted();
  await h.close();
});

describe('todo create', () => {
  it('names the new Work and its step ids, and gives the panel its steps', async () => {
    const r = await todo({ action: 'create', work_title: '修复登录', steps: [{ title: '复现' }, { title: '修复', status: 'in_progress' }] });
    const task = taskTitled('修复登录');
    expect(r).toEqual({
      code: 'ok',
      message: `Created Work ${task.id} in Dida with steps s1, s2.`,
      data: [
        { content: '复现', status: 'pending' },
        { content: '修复', status: 'in_progress' },
      ],
    });
    expect(task.priority).toBe(3);
    expect(task.items?.map((i) => i.title)).toEqual(['复现', '修复']);
  });

  it('starts a Work with no steps, and a new Work beside the current one says which stays open', async () => {
    const first = await todo({ action: 'create', work_title: '第一件', priority: 'low' });
    const one = taskTitled('第一件');
    expect(first.message).toBe(`Created Work ${one.id} in Dida.`);
    expect(first.data).toEqual([]);
    expect(one.priority).toBe(1);
    const second = await todo({ action: 'create', work_title: '第二件', steps: [{ title: 'a' }] });
    const two = taskTitled('第二件');
    expect(second.message).toBe(`Created Work ${two.id} in Dida with steps s1. It is now the current Work (Work ${one.id} stays open).`);
    expect((await todo({ action: 'list' })).message).toBe(`The current Work is ${two.id}.`);
  });

  it('without a current Work needs work_title, and an empty work_title is no title', async () => {
    const r = await todo({ action: 'create', steps: [{ title: 'a' }] });
    expect(r).toEqual({
      code: 'no_current_work',
      message: 'There is no current Work: pass work_title to start one for this request, or call todo_work next/switch to pick a Work from Dida.',
    });
    await todo({ action: 'create', work_title: '有标题', steps: [{ title: 'a' }] });
    const empty = await todo({ action: 'create', work_title: '', steps: [{ title: 'b' }] });
    expect(empty.code).toBe('no_current_work');
    expect(h.sim.listTasks(listId)).toHaveLength(1);
  });

  it('adds steps to the current Work and names only the added ones', async () => {
    await todo({ action: 'create', work_title: '加步骤', steps: [{ title: 'a' }] });
    const task = taskTitled('加步骤');
    await claimsPosted();
    h.sim.resetCounters();
    const r = await todo({ action: 'create', steps: [{ title: 'b' }, { title: 'c', status: 'in_progress' }] });
    expect(requests()).toBe(0);
    expect(r.code).toBe('ok');
    expect(r.message).toBe(`Added s2, s3 to Work ${task.id}. 0/3 steps settled.`);
    expect(r.detail).toBeUndefined();
    expect(r.data).toEqual([
      { content: 'a', status: 'pending' },
      { content: 'b', status: 'pending' },
      { content: 'c', status: 'in_progress' },
    ]);
    expect(h.sim.getTask(task.id)?.items?.map((i) => i.title)).toEqual(['a']);
    await written();
    expect(h.sim.getTask(task.id)?.items?.map((i) => i.title)).toEqual(['a', 'b', 'c']);
    expect(await todo({ action: 'create', steps: [] })).toEqual({ code: 'invalid_argument', message: 'create needs steps: an array of {title, status?}.' });
    expect(await todo({ action: 'create' })).toEqual({ code: 'invalid_argument', message: 'create needs steps: an array of {title, status?}.' });
  });

  it('answers before the claim comment is posted (the claim follows in the background)', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const off = h.sim.onRequest(async (info) => {
      if (info.route === 'POST /project/{pid}/task/{tid}/comment') await gate;
    });
    const r = await todo({ action: 'create', work_title: '后台认领', steps: [{ title: 'a' }] });
    expect(r.code).toBe('ok');
    const task = taskTitled('后台认领');
    expect(h.sim.listComments(task.id)).toEqual([]);
    release();
    await claimsPosted();
    off();
    expect(h.sim.listComments(task.id).map((c) => c.title)).toEqual(['🤖 test-host 开始处理（会话 t）']);
  });
});

describe('todo without a current Work', () => {
  it('tells how to get one for every action but create', async () => {
    for (const args of [{ action: 'list' }, { action: 'get', step: 's1' }, { action: 'update', updates: [{ step: 's1' }] }, { action: 'delete', step: 's1' }, { action: 'clear' }]) {
      expect(await todo(args)).toEqual({
        code: 'no_current_work',
        message: 'This session has no current Work; call todo_work next (after the person asks to check the queue) or todo_work switch, or todo create with work_title.',
      });
    }
  });

  it('names the tool in a validation error', async () => {
    expect((await todo({ action: 'list', step: 3 })).message).toBe('Invalid arguments for todo: step must be a string.');
  });
});

describe('todo on the current Work', () => {
  let key: string;
  beforeEach(async () => {
    await todo({ action: 'create', work_title: '当前', steps: [{ title: 'one' }, { title: 'two' }, { title: 'three' }] });
    key = taskTitled('当前').id;
  });

  it('list shows the Work and its steps', async () => {
    const r = await todo({ action: 'list' });
    expect(r.code).toBe('ok');
    expect(r.message).toBe(`The current Work is ${key}.`);
    expect(r.detail?.split('\n')[0]).toBe(`Work ${key} (priority medium, created by the agent) — 0/3 steps settled.`);
    expect(fenced(r.detail)).toBe('Title: 当前\nSteps:\n- s1 [pending] one\n- s2 [pending] two\n- s3 [pending] three');
    expect(r.data).toEqual([
      { content: 'one', status: 'pending' },
      { content: 'two', status: 'pending' },
      { content: 'three', status: 'pending' },
    ]);
  });

  it('get names the step and its status, its line fenced; by id or exact title; needs step', async () => {
    await todo({ action: 'update', updates: [{ step: 's2', status: 'in_progress' }] });
    const r = await todo({ action: 'get', step: 'two' });
    expect(r.code).toBe('ok');
    expect(r.message).toBe('Step s2 is in_progress.');
    expect(r.detail).toMatch(/^Text between a <<<DIDA_DATA/);
    expect(r.detail).toMatch(/<<<DIDA_DATA label=step nonce=/);
    expect(fenced(r.detail)).toBe('- s2 [in_progress] two');
    expect((await todo({ action: 'get', step: 's1' })).message).toBe('Step s1 is pending.');
    expect(await todo({ action: 'get' })).toEqual({ code: 'invalid_argument', message: 'get needs step: a step id or exact title.' });
    expect(await todo({ action: 'get', step: '' })).toEqual({ code: 'invalid_argument', message: 'get needs step: a step id or exact title.' });
    expect((await todo({ action: 'get', step: 's9' })).code).toBe('step_not_found');
  });

  it('update names the steps that moved and the progress; a rename alone moves nothing', async () => {
    const r = await todo({ action: 'update', updates: [{ step: 's1', status: 'completed', resolution: '改了配置，测试通过' }, { step: 'two', status: 'in_progress' }] });
    expect(r.code).toBe('ok');
    expect(r.message).toBe(`Updated Work ${key}: s1 completed, s2 in_progress. 1/3 steps settled.`);
    expect(r.data).toEqual([
      { content: 'one', status: 'completed' },
      { content: 'two', status: 'in_progress' },
      { content: 'three', status: 'pending' },
    ]);
    const rename = await todo({ action: 'update', updates: [{ step: 's3', title: 'three (renamed)' }] });
    expect(rename.message).toBe(`Updated Work ${key}. 1/3 steps settled.`);
    await written();
    expect(h.sim.getTask(key)?.items?.map((i) => [i.title, i.status])).toEqual([['one', 1], ['two', 0], ['three (renamed)', 0]]);
    const skipped = await todo({ action: 'update', updates: [{ step: 's3', status: 'skipped', resolution: '不需要' }] });
    expect(skipped.message).toBe(`Updated Work ${key}: s3 skipped. 2/3 steps settled.`);
    const got = await todo({ action: 'get', step: 's1' });
    expect(fenced(got.detail)).toBe('- s1 [completed] one — 改了配置，测试通过');
    expect(await todo({ action: 'update', updates: [] })).toEqual({ code: 'invalid_argument', message: 'update needs updates: an array of {step, status?, resolution?, title?}.' });
    expect((await todo({ action: 'update' })).code).toBe('invalid_argument');
  });

  it('update without a status leaves the status alone', async () => {
    await todo({ action: 'update', updates: [{ step: 's1', status: 'in_progress' }] });
    const r = await todo({ action: 'update', updates: [{ step: 's1', title: 'one, first' }] });
    expect(r.message).toBe(`Updated Work ${key}. 0/3 steps settled.`);
    expect((await todo({ action: 'get', step: 's1' })).message).toBe('Step s1 is in_progress.');
  });

  it('delete names the deleted step and the progress after it; needs step', async () => {
    const r = await todo({ action: 'delete', step: 'two' });
    expect(r.code).toBe('ok');
    expect(r.message).toBe(`Deleted s2 from Work ${key}. 0/2 steps settled.`);
    expect(r.data).toEqual([
      { content: 'one', status: 'pending' },
      { content: 'three', status: 'pending' },
    ]);
    await written();
    expect(h.sim.getTask(key)?.items?.map((i) => i.title)).toEqual(['one', 'three']);
    expect(await todo({ action: 'delete' })).toEqual({ code: 'invalid_argument', message: 'delete needs step: a step id or exact title.' });
  });

  it('a delete whose background write failed is told at the next call and carried out by a later sync; its item never comes back as the person’s', async () => {
    h.sim.injectFault({ route: 'POST /task/{tid}', kind: 'status', status: 500 });
    expect((await todo({ action: 'delete', step: 'two' })).code).toBe('ok');
    await written();
    expect(h.sim.getTask(key)?.items?.map((i) => i.title)).toEqual(['one', 'two', 'three']);
    const told = await todo({ action: 'list' });
    expect(told.detail).toContain(`Dida has not taken Work ${key}'s latest step changes yet (server (HTTP 500)): they are kept and written when Dida answers; nothing to call again.`);
    expect((await todo({ action: 'list' })).detail).not.toContain('has not taken');
    // A sync within the retry delay leaves it; one after it writes it.
    await h.engine.sync(listId);
    expect(h.sim.getTask(key)?.items?.map((i) => i.title)).toEqual(['one', 'two', 'three']);
    h.clock.now += 61_000;
    const report = await h.engine.sync(listId);
    expect(h.sim.getTask(key)?.items?.map((i) => i.title)).toEqual(['one', 'three']);
    expect(report.updated).not.toContain(key);
    const steps = (await h.state()).works[key]!.steps;
    expect(steps.map((s) => [s.id, s.status, s.origin])).toEqual([['s1', 'pending', 'agent'], ['s3', 'pending', 'agent'], ['s2', 'deleted', 'agent']]);
    const next = await todo({ action: 'list' });
    expect(next.detail).not.toContain('two');
    expect(next.data).toEqual([{ content: 'one', status: 'pending' }, { content: 'three', status: 'pending' }]);
  });

  it('clear removes the unfinished steps of the agent and counts them', async () => {
    await todo({ action: 'update', updates: [{ step: 's1', status: 'completed', resolution: '完成' }] });
    const r = await todo({ action: 'clear' });
    expect(r.code).toBe('ok');
    expect(r.message).toBe(`Removed 2 unfinished step(s) of yours from Work ${key}. 1/1 steps settled.`);
    expect(r.data).toEqual([{ content: 'one', status: 'completed' }]);
    await written();
    expect(h.sim.getTask(key)?.items?.map((i) => i.title)).toEqual(['one']);
  });

  it('a task completed in Dida before the background write: the next call has no current Work and says why', async () => {
    expect((await todo({ action: 'update', updates: [{ step: 's1', status: 'completed', resolution: '做完了' }] })).code).toBe('ok');
    h.sim.editTask(key, { status: 2 });
    await written();
    const next = await todo({ action: 'update', updates: [{ step: 's2', status: 'in_progress' }] });
    expect(next.code).toBe('work_completed_remotely');
    expect(next.message).toContain('Its Work was completed in Dida meanwhile.');
    expect(next.detail).toContain(`The Dida task of Work ${key} was completed in Dida before your last step changes reached it`);
    // Told once: the call after it is a plain no_current_work.
    expect((await todo({ action: 'list' })).code).toBe('no_current_work');
  });

  it('tells the model what the person changed in Dida meanwhile', async () => {
    const task = h.sim.getTask(key)!;
    h.sim.editTask(key, {
      items: [
        { ...task.items![0]!, status: 2 },
        task.items![1]!,
        task.items![2]!,
        { title: '人加的一步', status: 0 },
      ],
    });
    const r = await todo({ action: 'update', updates: [{ step: 's2', status: 'completed', resolution: '做完了' }] });
    expect(r.code).toBe('ok');
    // The result comes before Dida is read; the background write's read merges the person's edits in.
    expect(r.message).toBe(`Updated Work ${key}: s2 completed. 1/3 steps settled.`);
    expect(r.detail).toBeUndefined();
    await written();
    expect(h.sim.getTask(key)?.items?.map((i) => [i.title, i.status])).toEqual([['one', 2], ['two', 1], ['three', 0], ['人加的一步', 0]]);
    const next = await todo({ action: 'list' });
    const news = next.detail!.slice(next.detail!.indexOf(`Work ${key}: The person changed`));
    expect(news.split('\n')[0]).toBe(`Work ${key}: The person changed the checklist in Dida meanwhile:`);
    expect(fenced(news)).toBe('- s4 added by the person: 人加的一步\n- s1 ticked by the person (completed)');
    expect(next.data).toEqual([
      { content: 'one', status: 'completed' },
      { content: 'two', status: 'completed' },
      { content: 'three', status: 'pending' },
      { content: '人加的一步', status: 'pending' },
    ]);
  });
});
