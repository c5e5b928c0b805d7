// dsh asking the person in a real dsh web (0.1.0-rc.8) inside a Work, against the simulator and a scripted model:
// (1) ask_user_question with two options: the 🙋 with the numbered question is in Dida within 10 s, the person's "2"
// there resumes the tool call with option 2 and the turn completes; (2) the same answered in dsh web first (its own
// API): the 🙋 is completed with a note and a later Dida comment changes nothing; (3) a bash escalation that needs
// approval: "允许" from Dida runs the command once, "拒绝" runs nothing — and dsh web's card is withdrawn either way.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/sim/simulator';
import { text, toolCall, type FakeModel } from './harness/fake-model';
import { startWeb } from './harness/dsh-run';
import { createSession, openMux, prompt, respond } from './harness/web-api';
import { bindProject, toolResults, until, useDshWorld } from './harness/world';

let model: FakeModel;
let sim: Simulator;
let home: string;
let project: string;
let listId: string;

useDshWorld((world) => ({ model, sim, home, project } = world), { install: 'web' });

function configure(): void {
  listId = bindProject({ home, sim, project }, '桌面问答');
}


const reminder = () => sim.listTasks(listId, { includeCompleted: true }).find((t) => t.title.startsWith('🙋'));
const QUESTION = { questions: [{ id: 'db', question: '用哪个数据库？', header: '数据库', options: [{ label: 'SQLite', description: '简单' }, { label: 'Postgres' }] }] };

/** A Work with one step, claimed by the session and in progress, then the model's `then` calls. */
function inWork(title: string, then: ReturnType<typeof toolCall>[]) {
  const task = sim.seedTask({ projectId: listId, title, priority: 3, items: [{ title: '选型' }] });
  model.setScript([toolCall('todo_work', { action: 'next' }), toolCall('todo', { action: 'update', updates: [{ step: '选型', status: 'in_progress' }] }), ...then, text('好的，按你的回答继续')]);
  return task;
}

describe('dsh asking the person, in dsh web', () => {
  it('(1) the question is in Dida within 10 s; “2” on the 🙋 resumes the call with option 2 and the turn completes', async () => {
    configure();
    const task = inWork('换数据库', [toolCall('ask_user_question', QUESTION)]);
    const web = await startWeb({ home, cwd: project, baseUrl: model.baseUrl, env: { DIDA_TODO_TOKEN: sim.token } });
    const mux = openMux(web.url);
    try {
      const session = await createSession(web.url, project);
      await prompt(web.url, session, '检查todo');
      const card = await until('the question in dsh web', () => mux.frames.find((f) => f.method === 'question/requested'), 30_000, web);
      const asked = Date.now();
      const filed = await until('the 🙋 in Dida', () => reminder(), 10_000, web);
      console.log(`[desk e2e] dsh web asked → 🙋 in Dida in ${Date.now() - asked} ms`);
      expect(filed.title).toBe('🙋 在等你回答：换数据库');
      expect(filed.content).toContain('【数据库】用哪个数据库？');
      expect(filed.content).toContain('  1) SQLite — 简单\n  2) Postgres');
      const answered = Date.now();
      sim.addComment(listId, filed.id, '2');
      const after = await until('the model request after the answer', () => model.chatRequests().find((r) => toolResults(r).some((c) => c.includes('Postgres'))), 30_000, web);
      console.log(`[desk e2e] “2” in Dida → the tool call resumed in ${Date.now() - answered} ms`);
      expect(toolResults(after).find((c) => c.includes('Postgres'))).toBe(JSON.stringify({ answers: [{ id: 'db', selected: ['Postgres'] }] }));
      // dsh web's card was withdrawn: it is resolved for the browser, and a late click is refused as not pending.
      await until('the card withdrawn', () => mux.frames.find((f) => f.method === 'question/resolved' && f.payload.questionRpcId === card.rpcId), 10_000, web);
      expect(await respond(web.url, card.rpcId, { sessionId: session, answer: { answers: [{ id: 'db', selected: ['SQLite'] }] } })).toEqual({ accepted: false, reason: 'not-pending' });
      await until('the turn to end', () => model.pending().length === 0 && model.chatRequests().some((r) => toolResults(r).length > 0 && r === model.chatRequests().at(-1)), 20_000, web);
      expect(reminder()?.status).toBe(2);
      expect(sim.listComments(task.id).map((c) => c.title)).toContain('收到你的回答（#1）：Postgres，继续处理。');
      expect(model.chatRequests().filter((r) => toolResults(r).some((c) => c.includes('SQLite') && c.includes('selected'))).length).toBe(0);
    } finally {
      mux.close();
      await web.stop();
    }
  }, 180_000);

  it('(2) answered in dsh web first: the 🙋 is completed with a note; a later Dida comment changes nothing', async () => {
    configure();
    const task = inWork('换缓存', [toolCall('ask_user_question', QUESTION)]);
    const web = await startWeb({ home, cwd: project, baseUrl: model.baseUrl, env: { DIDA_TODO_TOKEN: sim.token } });
    const mux = openMux(web.url);
    try {
      const session = await createSession(web.url, project);
      await prompt(web.url, session, '检查todo');
      const card = await until('the question in dsh web', () => mux.frames.find((f) => f.method === 'question/requested'), 30_000, web);
      const filed = await until('the 🙋 in Dida', () => reminder(), 10_000, web);
      expect(await respond(web.url, card.rpcId, { sessionId: session, answer: { answers: [{ id: 'db', selected: ['SQLite'] }] } })).toEqual({ accepted: true });
      await until('the 🙋 completed', () => reminder()?.status === 2, 15_000, web);
      expect(sim.listComments(filed.id).map((c) => c.title)).toEqual(['已在电脑上回答，这条提醒已完成。']);
      const after = await until('the model request after the answer', () => model.chatRequests().find((r) => toolResults(r).some((c) => c.includes('SQLite'))), 20_000, web);
      expect(toolResults(after).at(-1)).toBe(JSON.stringify({ answers: [{ id: 'db', selected: ['SQLite'] }] }));
      const requests = sim.totalRequests();
      sim.addComment(listId, filed.id, '2');
      await new Promise((resolve) => setTimeout(resolve, 12_000));
      // Nothing read it: the request is closed, so its reminder's comments are not looked at any more.
      expect(sim.counters()['GET /project/{pid}/task/{tid}/comments'] ?? 0).toBeGreaterThan(0);
      expect(sim.listComments(filed.id)).toHaveLength(2);
      expect(model.chatRequests().some((r) => toolResults(r).some((c) => c.includes('Postgres')))).toBe(false);
      expect(sim.listComments(task.id).map((c) => c.title).filter((t) => t.startsWith('收到你的回答'))).toEqual([]);
      expect(sim.totalRequests() - requests).toBeLessThan(5);
    } finally {
      mux.close();
      await web.stop();
    }
  }, 180_000);

  it('(3) a bash escalation that needs approval: “允许” from Dida runs it once; “拒绝” runs nothing', async () => {
    configure();
    const outside = fs.mkdtempSync(path.join(path.dirname(project), 'outside-'));
    const allowed = path.join(outside, 'allowed.txt');
    const denied = path.join(outside, 'denied.txt');
    const escalate = (file: string) =>
      toolCall('bash', { command: `echo run >> ${file}`, description: 'write outside the workspace', sandbox_permissions: 'danger-full-access', justification: '需要写工作区外的文件' });
    inWork('写配置', [escalate(allowed), escalate(denied)]);
    const web = await startWeb({ home, cwd: project, baseUrl: model.baseUrl, env: { DIDA_TODO_TOKEN: sim.token } });
    const mux = openMux(web.url);
    try {
      const session = await createSession(web.url, project);
      await prompt(web.url, session, '检查todo');
      const first = await until('the first 🙋', () => sim.listTasks(listId).find((t) => t.title.startsWith('🙋')), 40_000, web);
      expect(first.title).toBe('🙋 在等你允许：写配置');
      expect(first.content).toContain(`内容：echo run >> ${allowed}`);
      expect(first.content).toContain('理由：需要写工作区外的文件');
      const card = await until('the approval card in dsh web', () => mux.frames.find((f) => f.method === 'approval/requested'), 10_000, web);
      sim.addComment(listId, first.id, '允许');
      await until('the card withdrawn', () => mux.frames.find((f) => f.method === 'approval/resolved' && f.payload.approvalId === card.payload.approvalId), 20_000, web);
      const second = await until('the second 🙋', () => sim.listTasks(listId).find((t) => t.title.startsWith('🙋') && t.id !== first.id), 30_000, web);
      expect(fs.readFileSync(allowed, 'utf8')).toBe('run\n');
      sim.addComment(listId, second.id, '拒绝');
      await until('the refusal reaching the model', () => model.chatRequests().find((r) => toolResults(r).some((c) => c.includes('rejected'))), 30_000, web);
      expect(fs.existsSync(denied)).toBe(false);
      expect(fs.readFileSync(allowed, 'utf8')).toBe('run\n');
      // A late click on the first card changes nothing: it is decided.
      expect(await respond(web.url, card.rpcId, { sessionId: session, approvalId: card.payload.approvalId, outcome: 'allowed-once' })).toMatchObject({ accepted: false });
      expect(fs.readFileSync(allowed, 'utf8')).toBe('run\n');
    } finally {
      mux.close();
      await web.stop();
    }
  }, 180_000);
});
