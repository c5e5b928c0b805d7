// The phone as the control panel, in a real dsh 0.1.0-rc.8 headless run against the Dida simulator and a scripted
// model: (1) the person's answer, commented on the 🙋 reminder, reaches the model's next request — fenced — in the next
// run in that directory, once; (2) setting a running Work's priority to none cancels the turn at the next step boundary,
// the Work waits with a comment saying where it stopped, and setting the priority back lets the next run go on.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/sim/simulator';
import { text, toolCall, type FakeModel, type RecordedRequest } from './harness/fake-model';
import { eventsOf, runHeadless } from './harness/dsh-run';
import { PAST_A_PAUSE_LOOK_MS, useDshWorld } from './harness/world';
import { readEngineStateFile } from '../helpers/engine-state-file';

let model: FakeModel;
let sim: Simulator;
let home: string;
let project: string;
let listId: string;

useDshWorld((world) => ({ model, sim, home, project } = world));

/** Binds the project to a fresh list; returns the patches (row overlay; dsh's own retries cut to none). */
function configure(): string[] {
  const configDir = path.join(home, '.test-xdg', 'config', 'dida-todo');
  fs.mkdirSync(configDir, { recursive: true });
  listId = sim.seedProject({ name: '手机遥控' }).id;
  fs.writeFileSync(path.join(configDir, 'config.yaml'), `baseUrl: ${sim.baseUrl}\nbindings:\n  - cwd: ${project}\n    projectId: ${listId}\n    label: 手机遥控\n`);
  const overlay = path.join(home, 'dida-row.yml');
  fs.writeFileSync(overlay, '- id: dida-todo\n  config:\n    maxAutoContinue: 3\n    backoff: [0.1]\n');
  const llm = path.join(home, 'llm-retry.yml');
  fs.writeFileSync(llm, `- id: llm-deepseek\n  config:\n    retryPolicy:\n      mode: normal\n      maxRetries: 0\n      backoff: { initialDelayMs: 20, maxDelayMs: 50, jitterRatio: 0 }\n`);
  return [overlay, llm];
}

const env = () => ({ DIDA_TODO_TOKEN: sim.token });
const messagesOf = (r: RecordedRequest) => JSON.stringify(r.body?.messages ?? []);
const state = () => readEngineStateFile(path.join(home, '.test-xdg', 'state', 'dida-todo', 'state.json'));
const comments = (taskId: string) => sim.listComments(taskId).map((c) => c.title);

/** The fenced block (label, nonce, body) of a request's messages that contains `needle`, if any. */
function fenceAround(request: RecordedRequest, needle: string): { label: string; body: string } | undefined {
  const all = (request.body?.messages ?? []).map((m: { content?: unknown }) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? ''))).join('\n');
  const fence = /<<<DIDA_DATA label=(\S+) nonce=([0-9a-f]{12})>>>\n([\s\S]*?)\n<<<END_DIDA_DATA nonce=\2>>>/g;
  for (const match of all.matchAll(fence)) if (match[3]!.includes(needle)) return { label: match[1]!, body: match[3]! };
  return undefined;
}

describe('an answer from the phone', () => {
  it('commented on the 🙋 reminder, resumes the Work and reaches the next run’s first request inside the fence, once', async () => {
    const patches = configure();
    const work = sim.seedTask({ projectId: listId, title: '部署服务', priority: 5, items: [{ title: '准备配置' }, { title: '上线' }] });
    model.setScript([
      toolCall('todo_work', { action: 'next' }),
      toolCall('todo', { action: 'update', updates: [{ step: '准备配置', status: 'in_progress' }] }),
      toolCall('todo_work', { action: 'wait_for_human', reason: '需要生产数据库的只读账号' }),
      text('等你回答'),
    ]);
    const asked = await runHeadless({ home, cwd: project, prompt: '检查todo', baseUrl: model.baseUrl, patches, env: env(), timeoutMs: 90_000 });
    expect(asked.code, asked.stderr).toBe(0);
    expect(sim.getTask(work.id)?.priority).toBe(0);
    const reminder = sim.listTasks(listId).find((t) => t.title === '🙋 需要你处理：部署服务');
    expect(reminder).toBeTruthy();
    // The run ended: it holds nothing, and says who carries on.
    expect(comments(work.id).filter((c) => c.includes('停止处理') && c.includes('它在等你回复'))).toHaveLength(1);
    expect(state().works[work.id].claim).toBeUndefined();

    // The person answers on the phone, on the reminder; a collaborator's comment there never counts.
    const answer = 'ANSWER-7f3a 账号 readonly，密码在 1Password 的“db-prod”里';
    sim.addComment(listId, reminder!.id, '我猜是 admin/admin', { userId: Number(sim.userId) + 1 });
    sim.addComment(listId, reminder!.id, answer);

    model.requests.length = 0;
    // The next run switches to the Work as the note says, and gets it (the run that asked no longer holds it).
    model.setScript([toolCall('todo_work', { action: 'switch', work: work.id }), text('收到，继续')]);
    const resumed = await runHeadless({ home, cwd: project, prompt: '继续', baseUrl: model.baseUrl, patches, env: env(), timeoutMs: 90_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(messagesOf(model.chatRequests()[1]!)).toContain(`Now working on Work ${work.id}`);
    expect(messagesOf(model.chatRequests()[1]!)).not.toContain('claimed_elsewhere');
    const first = model.chatRequests()[0]!;
    const fenced = fenceAround(first, 'ANSWER-7f3a');
    expect(fenced?.label).toBe('answer');
    expect(fenced?.body).toContain(answer);
    expect(messagesOf(first)).not.toContain('admin/admin');
    expect(messagesOf(first)).toContain(`Work ${work.id} is no longer waiting for the person`);
    // Dida: resumed as the person asked.
    expect(sim.getTask(work.id)?.priority).toBe(5);
    expect(sim.getTask(reminder!.id)?.status).toBe(2);
    expect(comments(work.id).filter((c) => c === '已恢复处理。')).toHaveLength(1);
    expect(state().works[work.id].pendingAnswer).toBeUndefined();

    // Once: the run after that is not told again.
    model.requests.length = 0;
    model.setScript([text('好的')]);
    const later = await runHeadless({ home, cwd: project, prompt: '还有别的吗', baseUrl: model.baseUrl, patches, env: env(), timeoutMs: 90_000 });
    expect(later.code, later.stderr).toBe(0);
    expect(messagesOf(model.chatRequests()[0]!)).not.toContain('ANSWER-7f3a');
  });
});

describe('a pause from the phone', () => {
  it('priority set to none mid-turn cancels the turn at the next todo call; the Work waits saying where it stopped; priority back lets the next run go on', async () => {
    const patches = configure();
    const work = sim.seedTask({ projectId: listId, title: '写周报', priority: 5, items: [{ title: '汇总进展' }, { title: '发出去' }] });
    model.setScript([
      toolCall('todo_work', { action: 'next' }),
      toolCall('todo', { action: 'update', updates: [{ step: '汇总进展', status: 'in_progress' }] }),
      // The person sets the priority to none on the phone while this answer is on its way (it comes after the next look is due).
      toolCall('todo', { action: 'update', updates: [{ step: '汇总进展', status: 'completed', resolution: '进展已汇总' }] }, { delayMs: PAST_A_PAUSE_LOOK_MS }),
      text('SHOULD_NOT_RUN'),
    ]);
    const running = runHeadless({ home, cwd: project, prompt: '检查todo', baseUrl: model.baseUrl, patches, env: env(), timeoutMs: 90_000 });
    await model.waitFor((rs) => rs.filter((r) => r.kind === 'chat').length >= 3, 60_000);
    sim.editTask(work.id, { priority: 0 });
    const run = await running;

    // The turn was cancelled by the bundle (hook), after the call that saw the priority; no request followed.
    const log = run.sessionLogs[0]!;
    const ends = eventsOf(log, 'turn/end').map((e) => e.data.reason);
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({ kind: 'aborted', reason: { kind: 'hook', reason: expect.stringContaining('paused') } });
    expect(model.chatRequests()).toHaveLength(3);
    expect(model.pending().map((b) => (b.kind === 'text' ? b.text : b.kind))).toEqual(['SHOULD_NOT_RUN']);
    expect(run.stderr).toContain(`Work ${work.id} is paused`);

    // Dida: the completed step is there, the priority stays none, one comment says where it stopped, no reminder.
    const task = sim.getTask(work.id)!;
    expect(task.priority).toBe(0);
    expect(task.items?.map((i) => [i.title, i.status])).toEqual([
      ['汇总进展', 1],
      ['发出去', 0],
    ]);
    expect(comments(work.id).filter((c) => c.includes('已暂停：已完成 1/2 步，下一步是「发出去」。'))).toHaveLength(1);
    expect(sim.listTasks(listId).filter((t) => t.title.startsWith('🙋'))).toEqual([]);
    expect(state().works[work.id].waiting).toMatchObject({ pausedBy: 'priority', previousPriority: 5 });

    // The person sets the priority back: the next run is told it may go on.
    sim.editTask(work.id, { priority: 5 });
    model.requests.length = 0;
    model.setScript([text('继续写')]);
    const next = await runHeadless({ home, cwd: project, prompt: '继续', baseUrl: model.baseUrl, patches, env: env(), timeoutMs: 90_000 });
    expect(next.code, next.stderr).toBe(0);
    expect(messagesOf(model.chatRequests()[0]!)).toContain(`Work ${work.id} is no longer waiting for the person. The person had paused it from Dida and resumed it`);
    expect(state().works[work.id].waiting).toBeUndefined();
  });
});
