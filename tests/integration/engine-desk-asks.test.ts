// dsh's own questions and approvals in Dida (src/core/phone/desk-asks.ts) over the simulator: what is filed (the 🙋
// reminder with numbered options, the Work's comment, nothing for a Work that is not open), which comments answer
// (the owner's, after the request, on the reminder or the Work; a number when several wait), misfits answered with one
// line, a stop phrase, and how a request is closed (at the desk, from the phone, withdrawn, no answer in time).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { closeDeskAsk, lookForDeskAnswer, openDeskAsk, staleAsks, type DeskAskRequest } from '../../src/core/phone/desk-asks';
import { queueComment } from '../../src/core/work/outbox';
import { saveWork, loadWork } from '../../src/core/work/work-io';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';

const S = 'session-1';
const question: DeskAskRequest = {
  kind: 'question',
  sessionId: S,
  pid: 4242,
  questions: [{ id: 'q1', question: '用哪个数据库？', header: '数据库', options: [{ label: 'SQLite', description: '简单' }, { label: 'Postgres' }] }],
};
const approval: DeskAskRequest = { kind: 'approval', sessionId: S, pid: 4242, approval: { tool: 'bash', subject: 'rm -rf build/', justification: '清理旧的构建' } };

describe('dsh questions and approvals in Dida', () => {
  let h: EngineHarness;
  let projectId: string;
  let taskId: string;
  let owner: number;

  beforeEach(async () => {
    h = await startEngineHarness();
    projectId = h.sim.seedProject({ name: '问答' }).id;
    const task = h.sim.seedTask({ projectId, title: '换数据库', priority: 3, items: [{ title: '选型' }] });
    taskId = task.id;
    await h.engine.sync(projectId);
    await h.engine.switchTo(S, projectId, taskId);
    owner = Number((await h.state()).owners[projectId] ?? h.sim.state().userId);
  });
  afterEach(async () => {
    await h.close();
  });

  const reminders = (all = false) => h.sim.listTasks(projectId, { includeCompleted: true }).filter((t) => t.title.startsWith('🙋') && (all || t.status === 0));
  const titles = (id: string) => h.sim.listComments(id).map((c) => c.title);
  const look = (askId: string, readWork = true) => lookForDeskAnswer(h.deps, taskId, askId, { readWork });

  it('files the question as a 🙋 reminder with its options numbered and how to answer, and says so on the Work', async () => {
    const before = h.sim.totalRequests();
    const ask = await openDeskAsk(h.deps, taskId, question);
    expect(ask).toMatchObject({ number: 1, kind: 'question', sessionId: S, pid: 4242, host: 'test-host' });
    const [reminder] = reminders();
    expect(reminder?.title).toBe('🙋 在等你回答：换数据库');
    expect(reminder?.content).toContain('【数据库】用哪个数据库？');
    expect(reminder?.content).toContain('  1) SQLite — 简单\n  2) Postgres');
    expect(reminder?.content).toContain('写选项的编号');
    expect(reminder).toMatchObject({ priority: 3, reminders: ['TRIGGER:PT0S'] });
    expect(titles(taskId)).toContain('🙋 在等你回答（#1）：数据库：用哪个数据库？\n在 🙋 提醒里回答，或在这里留言。');
    // Two writes: the reminder and the comment (the Work had no progress comments waiting).
    expect(h.sim.totalRequests() - before).toBe(2);
    const state = await h.state();
    expect(state.works[taskId]?.asks).toEqual([expect.objectContaining({ id: ask!.id, reminderTaskId: reminder!.id, anchorCommentId: expect.any(String) })]);
    expect(state.ownTasks[reminder!.id]).toBe('reminder');
    // The Work is not paused or taken from the session: its priority and claim stay.
    expect(h.sim.getTask(taskId)?.priority).toBe(3);
    expect(state.works[taskId]?.waiting).toBeUndefined();
  });

  it('an approval shows the tool, the command and why; model text is sanitized before it reaches Dida', async () => {
    await openDeskAsk(h.deps, taskId, { ...approval, approval: { tool: 'bash', subject: 'echo \u200b{"x":1}', justification: 'needs\u0000 /etc' } });
    const [reminder] = reminders();
    expect(reminder?.title).toBe('🙋 在等你允许：换数据库');
    expect(reminder?.content).toContain('工具：bash');
    expect(reminder?.content).toContain('理由：needs /etc');
    expect(reminder?.content).not.toContain('\u0000');
    expect(reminder?.content).toContain('留言“允许”或“拒绝”');
  });

  it('posts the Work’s waiting progress comments before the request, so no later bundle text reads as an answer', async () => {
    const work = await loadWork(h.deps, taskId);
    await saveWork(h.deps, work, (state) => queueComment(state, { projectId, taskId, workKey: taskId, text: '已完成：选型', createdAt: h.clock.now }));
    const ask = await openDeskAsk(h.deps, taskId, question);
    expect(titles(taskId).slice(-2)).toEqual(['已完成：选型', expect.stringContaining('#1')]);
    expect(await look(ask!.id)).toEqual({ kind: 'none' });
  });

  it('an owner’s “2” on the reminder answers with option 2; other accounts and comments before the request never do', async () => {
    h.sim.addComment(projectId, taskId, 'Postgres', { userId: owner });
    const ask = (await openDeskAsk(h.deps, taskId, question))!;
    const reminder = reminders()[0]!;
    h.sim.addComment(projectId, reminder.id, '1', { userId: 987654 });
    expect(await look(ask.id)).toEqual({ kind: 'none' });
    const mine = h.sim.addComment(projectId, reminder.id, '2', { userId: owner });
    expect(await look(ask.id)).toEqual({ kind: 'answer', answer: { kind: 'question', answers: [{ id: 'q1', selected: ['Postgres'] }] }, summary: 'Postgres', commentId: mine.id });
    // Taken once: the same comment answers nothing a second time.
    expect(await look(ask.id)).toEqual({ kind: 'none' });
    expect((await h.state()).works[taskId]?.phoneHandled).toContain(mine.id);
  });

  it('an owner’s comment on the Work after the request answers too, in words', async () => {
    const ask = (await openDeskAsk(h.deps, taskId, question))!;
    h.sim.addComment(projectId, taskId, '先用 SQLite，之后再说', { userId: owner });
    expect(await look(ask.id, false)).toEqual({ kind: 'none' });
    expect(await look(ask.id)).toMatchObject({ kind: 'answer', answer: { answers: [{ selected: [], custom: '先用 SQLite，之后再说' }] } });
  });

  it('a comment that fits nothing gets one reply saying what is expected, and the question stays open', async () => {
    const ask = (await openDeskAsk(h.deps, taskId, question))!;
    const reminder = reminders()[0]!;
    h.sim.addComment(projectId, reminder.id, '7', { userId: owner });
    expect(await look(ask.id)).toEqual({ kind: 'none' });
    expect(titles(reminder.id)).toEqual(['7', '没有这个选项：请写 1 到 2 之间的编号，或直接写你的回答。']);
    // The reply is the bundle's (the owner's account): it is never read back as an answer, nor replied to again.
    expect(await look(ask.id)).toEqual({ kind: 'none' });
    expect(titles(reminder.id)).toHaveLength(2);
    h.sim.addComment(projectId, reminder.id, 'sqlite', { userId: owner });
    expect(await look(ask.id)).toMatchObject({ kind: 'answer', summary: 'SQLite' });
  });

  it('two requests at once: each reminder answers its own; on the Work the number names it, and without one the person is asked for it', async () => {
    const first = (await openDeskAsk(h.deps, taskId, question))!;
    const second = (await openDeskAsk(h.deps, taskId, approval))!;
    expect(second.number).toBe(2);
    expect(reminders().map((r) => r.title).sort()).toEqual(['🙋 在等你允许：换数据库（#2）', '🙋 在等你回答：换数据库'].sort());
    h.sim.addComment(projectId, taskId, '允许', { userId: owner });
    expect(await look(second.id)).toEqual({ kind: 'none' });
    expect(titles(taskId).at(-1)).toBe('现在有几个请求在等你：请在回答前写上编号，比如“#2 允许”，或在对应的 🙋 提醒下留言。');
    // The first request's look takes the reply as the bundle's and the misfit as handled: no second reply.
    expect(await look(first.id)).toEqual({ kind: 'none' });
    h.sim.addComment(projectId, taskId, '#2 允许', { userId: owner });
    expect(await look(first.id)).toEqual({ kind: 'none' });
    expect(await look(second.id)).toMatchObject({ kind: 'answer', answer: { kind: 'approval', outcome: 'allowed-once' } });
    h.sim.addComment(projectId, taskId, '#9 1', { userId: owner });
    expect(await look(first.id)).toEqual({ kind: 'none' });
    expect(titles(taskId).at(-1)).toBe('没有编号为 #9 的请求在等你回答。');
    h.sim.addComment(projectId, reminders().find((r) => r.title.includes('回答'))!.id, '1', { userId: owner });
    expect(await look(first.id)).toMatchObject({ kind: 'answer', summary: 'SQLite' });
  });

  it('a stop phrase stops the Work: it is not an answer, and it is taken once', async () => {
    const ask = (await openDeskAsk(h.deps, taskId, approval))!;
    const stop = h.sim.addComment(projectId, reminders()[0]!.id, '停', { userId: owner });
    expect(await look(ask.id)).toEqual({ kind: 'stop', commentId: stop.id });
    expect(await look(ask.id)).toEqual({ kind: 'none' });
  });

  it('closing: at the desk the reminder says so and is completed; a later comment answers nothing', async () => {
    const ask = (await openDeskAsk(h.deps, taskId, question))!;
    const reminder = reminders()[0]!;
    expect(await closeDeskAsk(h.deps, taskId, ask.id, { how: 'desk' })).toBe(true);
    expect(h.sim.getTask(reminder.id)?.status).toBe(2);
    expect(titles(reminder.id)).toEqual(['已在电脑上回答，这条提醒已完成。']);
    expect((await h.state()).works[taskId]?.asks).toBeUndefined();
    h.sim.addComment(projectId, reminder.id, '2', { userId: owner });
    expect(await look(ask.id)).toEqual({ kind: 'gone' });
    expect(await closeDeskAsk(h.deps, taskId, ask.id, { how: 'phone', summary: 'x' })).toBe(false);
  });

  it('closing: an answer from the phone is acknowledged on the Work; no answer in time is said there too', async () => {
    const a = (await openDeskAsk(h.deps, taskId, question))!;
    await closeDeskAsk(h.deps, taskId, a.id, { how: 'phone', summary: 'Postgres' });
    expect(titles(taskId).at(-1)).toBe('收到你的回答（#1）：Postgres，继续处理。');
    const b = (await openDeskAsk(h.deps, taskId, approval))!;
    await closeDeskAsk(h.deps, taskId, b.id, { how: 'timeout', minutes: 30 });
    expect(titles(taskId).at(-1)).toBe('30 分钟内没有收到回答（#2：bash：rm -rf build/），这次请求已被拒绝。');
    expect(reminders()).toEqual([]);
    // The acknowledgements are the bundle's: a later request does not read them as answers.
    const c = (await openDeskAsk(h.deps, taskId, question))!;
    expect(await look(c.id)).toEqual({ kind: 'none' });
  });

  it('withdrawn requests say why on their reminder; asks of a process that is gone on this machine are found', async () => {
    const ask = (await openDeskAsk(h.deps, taskId, question))!;
    const reminder = reminders()[0]!;
    expect(staleAsks(await h.state(), 'test-host', () => true)).toEqual([]);
    expect(staleAsks(await h.state(), 'other-host', () => false)).toEqual([]);
    expect(staleAsks(await h.state(), 'test-host', (pid) => pid !== 4242)).toEqual([{ key: taskId, ask: expect.objectContaining({ id: ask.id }) }]);
    await closeDeskAsk(h.deps, taskId, ask.id, { how: 'withdrawn', why: 'gone' });
    expect(titles(reminder.id)).toEqual(['这个请求已撤回：提出它的会话已经结束。会话恢复后如果还需要，会重新问你。']);
    expect(h.sim.getTask(reminder.id)?.status).toBe(2);
  });

  it('nothing is filed for a Work that is not open', async () => {
    await h.deps.state.update((s) => {
      s.works[taskId]!.phase = 'accepting';
    });
    const before = h.sim.totalRequests();
    expect(await openDeskAsk(h.deps, taskId, question)).toBeUndefined();
    expect(h.sim.totalRequests()).toBe(before);
    expect(reminders()).toEqual([]);
  });
});
