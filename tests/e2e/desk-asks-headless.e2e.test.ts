// dsh asking the person where no one is at a desk, in a real dsh 0.1.0-rc.8: the headless and sdk profiles have no
// answerer of their own, so a bash escalation inside a Work would fail closed unseen. Here it reaches Dida and the
// person's "允许" there runs it — in a one-shot run (which waits for it, within oneShotAnswerWaitMinutes) and in the
// long-lived sdk process; and a headless profile composed with the question tool and no provider gets its question
// answered from Dida the same way.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/sim/simulator';
import { text, toolCall, type FakeModel } from './harness/fake-model';
import { runHeadless } from './harness/dsh-run';
import { startSdk, type SdkProcess } from './harness/sdk-client';
import { bindProject, toolResults, until, useDshWorld } from './harness/world';
import { prepareProfile } from './harness/profile';

let model: FakeModel;
let sim: Simulator;
let home: string;
let project: string;
let listId: string;

useDshWorld((world) => ({ model, sim, home, project } = world), { install: false });

let started: SdkProcess[] = [];
afterEach(async () => {
  for (const p of started) await p.kill('SIGKILL');
  started = [];
});

function configure(): string[] {
  listId = bindProject({ home, sim, project }, '无人值守');
  const overlay = path.join(home, 'dida-row.yml');
  fs.writeFileSync(overlay, '- id: dida-todo\n  config:\n    oneShotAnswerWaitMinutes: 2\n');
  return [overlay];
}

const reminder = () => sim.listTasks(listId).find((t) => t.title.startsWith('🙋'));

/** A Work with one step in progress, then a bash call that needs a wider sandbox than the session's. */
function escalationInWork(file: string): void {
  sim.seedTask({ projectId: listId, title: '写系统配置', priority: 3, items: [{ title: '写文件' }] });
  model.setScript([
    toolCall('todo_work', { action: 'next' }),
    toolCall('todo', { action: 'update', updates: [{ step: '写文件', status: 'in_progress' }] }),
    toolCall('bash', { command: `echo run >> ${file}`, description: 'write outside the workspace', sandbox_permissions: 'danger-full-access', justification: '需要写工作区外的文件' }),
    text('写好了'),
  ]);
}

describe('dsh asking the person with nobody at a desk', () => {
  it('(4) headless one-shot: a bash escalation inside a Work reaches Dida, the run waits, and “允许” there runs it', async () => {
    await prepareProfile(home, 'headless');
    const patches = configure();
    const outside = fs.mkdtempSync(path.join(path.dirname(project), 'outside-'));
    const file = path.join(outside, 'system.conf');
    escalationInWork(file);
    const run = runHeadless({ home, cwd: project, prompt: '检查todo', baseUrl: model.baseUrl, patches, env: { DIDA_TODO_TOKEN: sim.token }, timeoutMs: 120_000 });
    const filed = await until('the 🙋 in Dida', () => reminder(), 60_000);
    expect(filed.title).toBe('🙋 在等你允许：写系统配置');
    expect(filed.content).toContain(`内容：echo run >> ${file}`);
    expect(fs.existsSync(file)).toBe(false);
    sim.addComment(listId, filed.id, '允许');
    const result = await run;
    expect(result.code, result.stderr).toBe(0);
    expect(fs.readFileSync(file, 'utf8')).toBe('run\n');
    expect(sim.getTask(filed.id)?.status).toBe(2);
    // The model never saw the fail-closed refusal it gets without an answerer.
    expect(model.chatRequests().length).toBeGreaterThanOrEqual(4);
    expect(model.chatRequests().some((r) => toolResults(r).some((c) => /requires approval|no approval channel/.test(c)))).toBe(false);
  }, 180_000);

  it('(4) sdk: the same escalation reaches Dida and “允许” runs it in the running process', async () => {
    await prepareProfile(home, 'sdk');
    const patches = configure();
    const outside = fs.mkdtempSync(path.join(path.dirname(project), 'outside-'));
    const file = path.join(outside, 'system.conf');
    escalationInWork(file);
    const p = await startSdk({ home, cwd: project, baseUrl: model.baseUrl, patches, env: { DIDA_TODO_TOKEN: sim.token } });
    started.push(p);
    await p.initialize(project);
    await p.prompt('sdk-desk', '检查todo');
    const filed = await p.until('the 🙋 in Dida', () => reminder(), 60_000);
    expect(filed.title).toBe('🙋 在等你允许：写系统配置');
    sim.addComment(listId, filed.id, 'allow');
    await p.until('the command to run', () => fs.existsSync(file), 30_000);
    await p.until('the session idle', () => p.statuses('sdk-desk').at(-1) === 'idle' && p.statuses('sdk-desk').length >= 2, 30_000);
    expect(fs.readFileSync(file, 'utf8')).toBe('run\n');
    expect(p.badLines()).toEqual([]);
  }, 180_000);

  it('(4) headless composed with the question tool and no provider: the question is answered from Dida', async () => {
    await prepareProfile(home, 'headless');
    const patches = configure();
    const withQuestions = path.join(home, 'ask-user.yml');
    fs.writeFileSync(withQuestions, "- insert:\n    - id: tool-ask-user\n      name: '@deepseek-ai/dsh-tool-ask-user'\n");
    sim.seedTask({ projectId: listId, title: '选数据库', priority: 3, items: [{ title: '选型' }] });
    model.setScript([
      toolCall('todo_work', { action: 'next' }),
      toolCall('todo', { action: 'update', updates: [{ step: '选型', status: 'in_progress' }] }),
      toolCall('ask_user_question', { questions: [{ id: 'db', question: '用哪个？', options: [{ label: 'SQLite' }, { label: 'Postgres' }] }] }),
      text('好的'),
    ]);
    const run = runHeadless({ home, cwd: project, prompt: '检查todo', baseUrl: model.baseUrl, patches: [...patches, withQuestions], env: { DIDA_TODO_TOKEN: sim.token }, timeoutMs: 120_000 });
    const filed = await until('the 🙋 in Dida', () => reminder(), 60_000);
    expect(filed.title).toBe('🙋 在等你回答：选数据库');
    sim.addComment(listId, filed.id, '1');
    const result = await run;
    expect(result.code, result.stderr).toBe(0);
    const after = model.chatRequests().find((r) => toolResults(r).some((c) => c.includes('SQLite')));
    expect(toolResults(after!).find((c) => c.includes('SQLite'))).toBe(JSON.stringify({ answers: [{ id: 'db', selected: ['SQLite'] }] }));
  }, 180_000);
});
