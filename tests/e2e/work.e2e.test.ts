// The bundle in a real dsh headless run against the Dida simulator and a scripted model:
// the whole Work loop, continuation after model errors, exhaustion, the panel mirror, and passivity when unbound.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/sim/simulator';
import { contentFilter, rateLimit, text, toolCall, type FakeModel } from './harness/fake-model';
import { eventsOf, runHeadless } from './harness/dsh-run';
import { useDshWorld } from './harness/world';

let model: FakeModel;
let sim: Simulator;
let home: string;
let project: string;

useDshWorld((world) => ({ model, sim, home, project } = world));

/** Writes dida-todo's config.yaml (binding + simulator URL) and a row-config overlay; returns the overlay path. */
function configure(options: { bind: boolean; row?: string; llmRetries?: number }): string[] {
  const configDir = path.join(home, '.test-xdg', 'config', 'dida-todo');
  fs.mkdirSync(configDir, { recursive: true });
  const list = sim.seedProject({ name: '智能体工作' });
  const lines = [`baseUrl: ${sim.baseUrl}`, 'bindings:'];
  if (options.bind) lines.push(`  - cwd: ${project}`, `    projectId: ${list.id}`, '    label: 智能体工作');
  else lines[1] = 'bindings: []';
  fs.writeFileSync(path.join(configDir, 'config.yaml'), `${lines.join('\n')}\n`);
  const patches: string[] = [];
  const overlay = path.join(home, 'dida-row.yml');
  fs.writeFileSync(overlay, `- id: dida-todo\n  config:\n${(options.row ?? 'maxAutoContinue: 2\nbackoff: [0.2]').split('\n').map((l) => `    ${l}`).join('\n')}\n`);
  patches.push(overlay);
  if (options.llmRetries !== undefined) {
    const llm = path.join(home, 'llm-retry.yml');
    fs.writeFileSync(
      llm,
      `- id: llm-deepseek\n  config:\n    retryPolicy:\n      mode: normal\n      maxRetries: ${options.llmRetries}\n      backoff: { initialDelayMs: 20, maxDelayMs: 50, jitterRatio: 0 }\n`,
    );
    patches.push(llm);
  }
  (globalThis as { __list?: string }).__list = list.id;
  return patches;
}

function listId(): string {
  return (globalThis as { __list?: string }).__list as string;
}

const env = () => ({ DIDA_TODO_TOKEN: sim.token });

describe('dida-todo in a real dsh headless run', () => {
  it('takes the queued Work, plans and completes it, mirrors it in the panel, and files the acceptance todo', async () => {
    const patches = configure({ bind: true });
    const work = sim.seedTask({ projectId: listId(), title: '整理发布说明', priority: 3, items: [{ title: '收集变更' }, { title: '写草稿' }] });
    const draft = sim.seedTask({ projectId: listId(), title: '以后再说', priority: 0 });
    model.setScript([
      toolCall('todo_work', { action: 'next' }),
      toolCall('todo', { action: 'update', updates: [{ step: '收集变更', status: 'in_progress' }] }),
      toolCall('todo', {
        action: 'update',
        updates: [
          { step: '收集变更', status: 'completed', resolution: '整理出 12 条变更' },
          { step: '写草稿', status: 'completed', resolution: '草稿已写好' },
        ],
      }),
      text('全部完成'),
    ]);
    const run = await runHeadless({ home, cwd: project, prompt: '检查todo', baseUrl: model.baseUrl, patches, env: env(), timeoutMs: 90_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('全部完成');
    expect(model.pending()).toEqual([]);

    const done = sim.getTask(work.id);
    expect(done?.status).toBe(2);
    expect(done?.items?.map((i) => i.status)).toEqual([1, 1]);
    const acceptance = sim.listTasks(listId()).find((t) => t.title === '🧑‍🔬 待验收：整理发布说明');
    expect(acceptance?.reminders).toEqual(['TRIGGER:PT0S', 'TRIGGER:PT3M']);
    // Progress went out from the outbox when the session settled, coalesced: the step's finish carries its start.
    expect(sim.listComments(work.id).flatMap((c) => c.title.split('\n\n'))).toContain('已完成：收集变更\n结果：整理出 12 条变更');
    expect(sim.getTask(draft.id)?.etag).toBe(draft.etag);

    // The panel mirror: todo/write snapshots carry the Dida steps as they changed.
    const writes = eventsOf(run.sessionLogs[0]!, 'todo/write').map((e) => e.data.todos);
    expect(writes).toContainEqual([
      { content: '收集变更', status: 'in_progress' },
      { content: '写草稿', status: 'pending' },
    ]);
    expect(writes).toContainEqual([
      { content: '收集变更', status: 'completed' },
      { content: '写草稿', status: 'completed' },
    ]);
    // The bound session's prompt carries the dida-todo section.
    const system = JSON.stringify(model.chatRequests()[0]?.body?.messages?.[0] ?? '');
    expect(system).toContain('Dida work list (dida-todo)');
  });

  it('continues after a content-filter stop and finishes the Work', async () => {
    const patches = configure({ bind: true });
    const work = sim.seedTask({ projectId: listId(), title: '写周报', priority: 5, items: [{ title: '汇总进展' }] });
    model.setScript([
      toolCall('todo_work', { action: 'next' }),
      contentFilter(),
      toolCall('todo', { action: 'update', updates: [{ step: '汇总进展', status: 'completed', resolution: '周报已写好' }] }),
      text('周报完成'),
    ]);
    const run = await runHeadless({ home, cwd: project, prompt: '检查todo', baseUrl: model.baseUrl, patches, env: env(), timeoutMs: 90_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(sim.getTask(work.id)?.status).toBe(2);
    // The retried request carried the rephrase note.
    const notes = JSON.stringify(model.chatRequests().map((r) => r.body?.messages));
    expect(notes).toContain('content filter');
  });

  it('gives up after maxAutoContinue attempts and asks the person with a 🙋 reminder', async () => {
    const patches = configure({ bind: true, llmRetries: 0 });
    const work = sim.seedTask({ projectId: listId(), title: '升级依赖', priority: 3, items: [{ title: '升级 lodash' }] });
    model.setScript([toolCall('todo_work', { action: 'next' }), rateLimit(), rateLimit(), rateLimit(), rateLimit()]);
    const run = await runHeadless({ home, cwd: project, prompt: '检查todo', baseUrl: model.baseUrl, patches, env: env(), timeoutMs: 90_000 });
    expect(run.code).toBe(1);
    const waiting = sim.getTask(work.id);
    expect(waiting?.priority).toBe(0);
    expect(waiting?.status).toBe(0);
    const reminder = sim.listTasks(listId()).find((t) => t.title === '🙋 需要你处理：升级依赖');
    expect(reminder?.reminders).toEqual(['TRIGGER:PT0S']);
    // 1 request + 2 automatic continuations, then the error ends the turn.
    const rateLimited = model.chatRequests().filter((r) => (r.behaviour as { kind?: string }).kind === 'rateLimit');
    expect(rateLimited).toHaveLength(3);
    const ends = eventsOf(run.sessionLogs[0]!, 'turn/end');
    expect(ends.at(-1)?.data?.reason?.kind).toBe('error');
  });

  it('makes no Dida request at all from an unbound directory', async () => {
    const patches = configure({ bind: false });
    sim.seedTask({ projectId: listId(), title: '不应被碰', priority: 5 });
    sim.resetCounters();
    model.setScript([text('普通回答')]);
    const run = await runHeadless({ home, cwd: project, prompt: '检查todo', baseUrl: model.baseUrl, patches, env: env(), timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(sim.totalRequests()).toBe(0);
    expect(run.stderr).toBe('');
  });
});
