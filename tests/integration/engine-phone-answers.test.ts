// The parts of answers from the phone one at a time, over the real HTTP gateway and the simulator: which comments are
// the owner's answer, how an answer is taken and given back, which session holds a Work, and what the model is told.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { answerNote, checkWaiting, findAnswers, heldByOtherSession, returnAnswer, takeAnswers, type TakenAnswer } from '../../src/core/phone/phone-answers';
import { emptyEngineState, type WorkRecord } from '../../src/core/work/work-state';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';
import { makeWork } from '../helpers/work-fixtures';

let h: EngineHarness;
const S = 'session-1';
const STRANGER = 990011;

beforeEach(async () => {
  h = await startEngineHarness();
});
afterEach(async () => {
  await h.close();
});

/** A person's Work the session asked about: waiting, with its 🙋 reminder and its waiting comment in Dida. */
async function askedWork() {
  const list = h.sim.seedProject({ name: 'l' });
  const task = h.sim.seedTask({ projectId: list.id, title: '部署', priority: 5, items: [{ title: '申请权限' }, { title: '上线' }] });
  await h.engine.sync(list.id);
  await h.engine.switchTo(S, list.id, task.id);
  await h.engine.changeSteps(S, [{ op: 'update', step: '申请权限', status: 'in_progress' }]);
  await h.engine.waitForHuman(S, '需要数据库的只读账号');
  const work = await h.engine.getWork(task.id);
  return { list, task, work, reminderId: work.waiting!.reminderTaskId! };
}

const ownerOf = async (projectId: string): Promise<string> => (await h.state()).owners[projectId]!;
const titles = (found: { answers: Array<{ title: string }> }): string[] => found.answers.map((c) => c.title);

describe('finding the owner’s answers', () => {
  it('takes the owner’s comments on the reminder and after the waiting comment on the Work, oldest first; not the bundle’s own texts', async () => {
    const { list, task, work, reminderId } = await askedWork();
    const owner = await ownerOf(list.id);
    h.sim.addComment(list.id, task.id, '已恢复处理。');
    h.sim.addComment(list.id, reminderId, '账号是 readonly');
    h.sim.addComment(list.id, task.id, '已恢复处理。 另外：密码在保险箱里');
    h.sim.addComment(list.id, task.id, '\u200b\u200b');
    h.sim.addComment(list.id, reminderId, ' \u2060\ufeff ');
    h.sim.addComment(list.id, task.id, '我来回答', { userId: STRANGER });
    const found = await findAnswers(h.deps, work, owner);
    expect(titles(found)).toEqual(['账号是 readonly', '已恢复处理。 另外：密码在保险箱里']);
    expect(found.stops).toEqual([]);
    expect(found.anchor).toMatchObject({ id: expect.any(String), at: expect.any(Number) });
  });

  it('comments already handled are left out; on a Work the person paused, stop phrases are told apart; a Work not waiting has none', async () => {
    const { list, task, work, reminderId } = await askedWork();
    const owner = await ownerOf(list.id);
    const paused = { ...work, waiting: { ...work.waiting!, pausedBy: 'priority' as const } };
    const first = h.sim.addComment(list.id, reminderId, '第一句');
    h.sim.addComment(list.id, reminderId, '停');
    const found = await findAnswers(h.deps, { ...paused, phoneHandled: [first.id] }, owner);
    expect(titles(found)).toEqual([]);
    expect(found.stops.map((c) => c.title)).toEqual(['停']);
    expect(await findAnswers(h.deps, { ...work, waiting: undefined }, owner)).toEqual({ answers: [], stops: [] });
    const learning = await findAnswers(h.deps, paused, undefined);
    expect(learning.learnedOwner).toBe(owner);
    expect(titles(learning)).toEqual(['第一句']);
    void task;
  });

  it('on a Work waiting for an answer the agent asked for, "stop" or "停" is the answer, whatever the phrases', async () => {
    const { list, work, reminderId } = await askedWork();
    const owner = await ownerOf(list.id);
    h.sim.addComment(list.id, reminderId, '停');
    h.sim.addComment(list.id, reminderId, 'Stop.');
    for (const phrases of [undefined, [] as string[], ['停', 'stop']]) {
      h.deps.stopPhrases = phrases === undefined ? undefined : async () => phrases;
      const found = await findAnswers(h.deps, work, owner);
      expect(titles(found)).toEqual(['停', 'Stop.']);
      expect(found.stops).toEqual([]);
    }
  });

  it('on a paused Work the configured phrases decide what a stop is (not the defaults), and [] turns stops off', async () => {
    const { list, work, reminderId } = await askedWork();
    const owner = await ownerOf(list.id);
    const paused = { ...work, waiting: { ...work.waiting!, pausedBy: 'comment' as const } };
    h.sim.addComment(list.id, reminderId, '停');
    h.sim.addComment(list.id, reminderId, '够了');
    h.deps.stopPhrases = async () => ['够了'];
    let found = await findAnswers(h.deps, paused, owner);
    expect(titles(found)).toEqual(['停']);
    expect(found.stops.map((c) => c.title)).toEqual(['够了']);
    h.deps.stopPhrases = async () => [];
    found = await findAnswers(h.deps, paused, owner);
    expect(titles(found)).toEqual(['停', '够了']);
    expect(found.stops).toEqual([]);
  });

  it('sync hands "停" on the 🙋 reminder to the model as the answer to its question', async () => {
    const { list, task, reminderId } = await askedWork();
    h.deps.stopPhrases = async () => [];
    const stop = h.sim.addComment(list.id, reminderId, '停');
    expect(await checkWaiting(h.deps, task.id, 0)).toEqual({ resumed: true, answers: 1 });
    const taken = await takeAnswers(h.deps, () => true);
    expect(taken.map((t) => [t.answer.text, t.answer.question])).toEqual([['停', '需要数据库的只读账号']]);
    expect(taken[0]!.answer.commentIds).toEqual([stop.id]);
  });

  it('with a known anchor, only comments from its time on count (the anchor itself never does)', async () => {
    const { list, task, work } = await askedWork();
    const owner = await ownerOf(list.id);
    const early = h.sim.addComment(list.id, task.id, '早先的话');
    const late = h.sim.addComment(list.id, task.id, '之后的话');
    const at = Date.parse(late.createdTime);
    const anchored: WorkRecord = { ...work, waiting: { ...work.waiting!, anchorCommentId: early.id, anchorAt: at } };
    const found = await findAnswers(h.deps, anchored, owner);
    expect(titles(found)).toEqual(['之后的话']);
    expect(found.anchor).toBeUndefined();
  });

  it('the bundle’s own texts after the waiting comment are never an answer: progress, a second waiting comment, a claim', async () => {
    const { list, task, work } = await askedWork();
    const owner = await ownerOf(list.id);
    const withSteps: WorkRecord = { ...work, steps: [...work.steps, { ...work.steps[0]!, id: 'extra', title: '申请权限并上线' }] };
    h.sim.addComment(list.id, task.id, '开始处理：申请权限');
    h.sim.addComment(list.id, task.id, '已完成：申请权限并上线');
    h.sim.addComment(list.id, task.id, work.waiting!.comment!);
    h.sim.addComment(list.id, task.id, '🤖 other-box 开始处理（会话 abc12345）');
    h.sim.addComment(list.id, task.id, '已完成：申请权限 —— 我自己做完了');
    expect(titles(await findAnswers(h.deps, withSteps, owner))).toEqual(['已完成：申请权限 —— 我自己做完了']);
  });

  it('the newest waiting comment is the anchor; an owner already known is kept', async () => {
    const { list, task, work } = await askedWork();
    const owner = await ownerOf(list.id);
    const tick = () => new Promise((resolve) => setTimeout(resolve, 5));
    h.sim.addComment(list.id, task.id, '之间的话');
    await tick();
    const again = h.sim.addComment(list.id, task.id, work.waiting!.comment!);
    await tick();
    h.sim.addComment(list.id, task.id, '最后的话');
    const found = await findAnswers(h.deps, work, owner);
    expect(found.anchor?.id).toBe(again.id);
    expect(found.learnedOwner).toBeUndefined();
    expect(titles(found)).toEqual(['最后的话']);
  });

  it('answers on the reminder and on the Work come in the order they were written', async () => {
    const { list, task, work, reminderId } = await askedWork();
    const owner = await ownerOf(list.id);
    h.sim.addComment(list.id, task.id, '先写在工作上');
    await new Promise((resolve) => setTimeout(resolve, 5));
    h.sim.addComment(list.id, reminderId, '后写在提醒上');
    expect(titles(await findAnswers(h.deps, work, owner))).toEqual(['先写在工作上', '后写在提醒上']);
  });

  it('a reminder the person deleted has no comments; any other failure to read them is thrown', async () => {
    const { list, work, reminderId } = await askedWork();
    const owner = await ownerOf(list.id);
    h.sim.removeTask(reminderId);
    expect(titles(await findAnswers(h.deps, work, owner))).toEqual([]);
    h.sim.injectFault({ route: 'GET /project/{pid}/task/{tid}/comments', kind: 'status', status: 403 });
    await expect(findAnswers(h.deps, work, owner)).rejects.toMatchObject({ code: 'forbidden' });
  });
});

describe('sync’s look at a waiting Work', () => {
  it('a Work that is not open, or whose wait was never written, is left alone', async () => {
    const { list, task, reminderId } = await askedWork();
    h.sim.addComment(list.id, reminderId, '答案');
    await h.deps.state.update((state) => {
      state.works[task.id]!.waiting!.applied = false;
    });
    expect(await checkWaiting(h.deps, task.id, 0)).toEqual({ resumed: false, answers: 0 });
    await h.deps.state.update((state) => {
      state.works[task.id]!.waiting!.applied = true;
      state.works[task.id]!.phase = 'finalizing';
    });
    expect(await checkWaiting(h.deps, task.id, 0)).toEqual({ resumed: false, answers: 0 });
    const work = (await h.state()).works[task.id]!;
    expect(work.pendingAnswer).toBeUndefined();
    expect(work.waiting).toBeDefined();
  });

  it('nothing said and the priority still none: it keeps waiting, and only the anchor is recorded', async () => {
    const { task } = await askedWork();
    expect(await checkWaiting(h.deps, task.id, 0)).toEqual({ resumed: false, answers: 0 });
    const work = (await h.state()).works[task.id]!;
    expect(work.waiting?.anchorCommentId).toBeDefined();
    expect(work.waiting?.answered).toBeUndefined();
    expect(work.pendingAnswer).toBeUndefined();
  });

  it('the priority set back without a word resumes it with an empty answer to the question asked', async () => {
    const { task } = await askedWork();
    h.sim.editTask(task.id, { priority: 1 });
    // What sync read from the list is in the record by the time it looks at the waiting Work.
    await h.deps.state.update((state) => {
      state.works[task.id]!.priority = 1;
    });
    expect(await checkWaiting(h.deps, task.id, 1)).toEqual({ resumed: true, answers: 0 });
    const work = (await h.state()).works[task.id]!;
    expect(work.pendingAnswer).toMatchObject({ text: '', commentIds: [], question: '需要数据库的只读账号' });
    expect(work.waiting).toBeUndefined();
    expect(h.sim.getTask(task.id)?.priority).toBe(1);
  });

  it('a new answer joins one not handed over yet, and a paused Work’s answer says it was paused; stops are marked handled', async () => {
    const { list, task, reminderId } = await askedWork();
    await h.deps.state.update((state) => {
      state.works[task.id]!.pendingAnswer = { text: '早先的回答', commentIds: ['c0'], at: 0, question: '旧问题' };
      state.works[task.id]!.waiting!.pausedBy = 'priority';
    });
    const answer = h.sim.addComment(list.id, reminderId, '  新的回答  ');
    const stop = h.sim.addComment(list.id, reminderId, '停');
    expect(await checkWaiting(h.deps, task.id, 0)).toEqual({ resumed: true, answers: 1 });
    const work = (await h.state()).works[task.id]!;
    expect(work.pendingAnswer).toEqual({ text: '早先的回答\n\n新的回答', commentIds: ['c0', answer.id], at: h.clock.now, paused: true });
    expect(work.phoneHandled).toEqual(expect.arrayContaining([answer.id, stop.id]));
    expect(h.sim.getTask(task.id)?.priority).toBe(5);
  });
});

describe('taking and giving back', () => {
  const answer = (text: string) => ({ text, commentIds: [`c-${text}`], at: 1, question: '问题' });

  async function seedWorks(): Promise<void> {
    await h.deps.state.update((state) => {
      state.works.a = makeWork([], { taskId: 'a', pendingAnswer: answer('A'), rev: 3 });
      state.works.b = makeWork([], { taskId: 'b', pendingAnswer: answer('B') });
      state.works.c = makeWork([], { taskId: 'c', pendingAnswer: answer('C'), waiting: { reason: 'r', previousPriority: 3, applied: true, since: 0 } });
      state.works.d = makeWork([], { taskId: 'd', pendingAnswer: answer('D'), phase: 'accepting' });
      state.works.e = makeWork([], { taskId: 'e' });
    });
  }

  it('takes only resumed open Works the caller picks, at most `limit`, and moves their revision on', async () => {
    await seedWorks();
    h.clock.now += 5_000;
    const first = await takeAnswers(h.deps, () => true, 1);
    expect(first.map((t) => t.key)).toEqual(['a']);
    const works = (await h.state()).works;
    expect(works.a!.pendingAnswer).toBeUndefined();
    expect(works.a!.rev).toBe(4);
    expect(works.a!.updatedAt).toBe(h.clock.now);
    expect(works.b!.pendingAnswer?.text).toBe('B');
    expect(await takeAnswers(h.deps, (key) => key !== 'b')).toEqual([]);
    expect((await takeAnswers(h.deps, () => true)).map((t) => t.key)).toEqual(['b']);
    expect((await h.state()).works.c!.pendingAnswer?.text).toBe('C');
  });

  it('an answer given back keeps a newer one after it; a closed or missing Work takes nothing back', async () => {
    await seedWorks();
    const [taken] = await takeAnswers(h.deps, (key) => key === 'a');
    await h.deps.state.update((state) => {
      state.works.a!.pendingAnswer = { text: '补充', commentIds: ['c2'], at: 2, question: '问题' };
    });
    await returnAnswer(h.deps, taken!);
    let a = (await h.state()).works.a!;
    expect(a.pendingAnswer).toMatchObject({ text: 'A\n\n补充', commentIds: ['c-A', 'c2'] });
    expect(a.rev).toBe(5);

    const [again] = await takeAnswers(h.deps, (key) => key === 'a');
    await h.deps.state.update((state) => {
      state.works.a!.pendingAnswer = { text: '', commentIds: [], at: 3 };
    });
    await returnAnswer(h.deps, again!);
    a = (await h.state()).works.a!;
    expect(a.pendingAnswer?.text).toBe('A\n\n补充');

    await returnAnswer(h.deps, { key: 'gone', title: 'x', answer: answer('X') });
    await returnAnswer(h.deps, { key: 'd', title: 'x', answer: answer('X') });
    const state = await h.state();
    expect(state.works.gone).toBeUndefined();
    expect(state.works.d!.pendingAnswer?.text).toBe('D');
  });

  it('another session holds a Work while its record names it and was updated within 30 minutes', () => {
    const state = emptyEngineState();
    const now = 100 * 60_000;
    state.sessions.me = { currentWork: 'w', touched: [], autoAttempts: 0, updatedAt: now };
    state.sessions.other = { currentWork: 'w', touched: [], autoAttempts: 0, updatedAt: now - 30 * 60_000 + 1 };
    state.sessions.elsewhere = { currentWork: 'v', touched: [], autoAttempts: 0, updatedAt: now };
    expect(heldByOtherSession(state, 'w', 'me', now)).toBe(true);
    expect(heldByOtherSession(state, 'w', 'me', now + 1)).toBe(false);
    expect(heldByOtherSession(state, 'w', 'other', now)).toBe(true);
    expect(heldByOtherSession(state, 'x', undefined, now)).toBe(false);
  });
});

describe('what the model is told', () => {
  const taken = (extra: Partial<TakenAnswer['answer']>): TakenAnswer => ({ key: 'w1', title: '部署', answer: { text: '用 readonly', commentIds: [], at: 0, question: '要哪个账号？', ...extra } });

  it('an answer to a question: the Work id and the question outside the fence, how to go on, the answer inside', () => {
    const note = answerNote(taken({}));
    expect(note.split('\n')[0]).toBe(
      '[dida-todo] Work w1 is no longer waiting for the person. The person resumed it from Dida with this answer. You had asked: "要哪个账号？". Carry on with it using their answer (check its steps with todo list; switch to it with todo_work switch if it is not your current Work).',
    );
    expect(note).toContain('Title: 部署\nAnswer:\n用 readonly');
  });

  it('a Work the person had paused: no question, carry on where it stopped', () => {
    const note = answerNote(taken({ paused: true, question: undefined, text: '' }));
    expect(note.split('\n')[0]).toBe(
      '[dida-todo] Work w1 is no longer waiting for the person. The person had paused it from Dida and resumed it without writing anything (they set its priority back). Carry on where it stopped (check its steps with todo list; switch to it with todo_work switch if it is not your current Work).',
    );
    expect(note).not.toContain('Answer:');
  });
});

describe('a session that asked and ended', () => {
  const B = 'session-2';
  const fromB = (key: string, work: WorkRecord, state: Parameters<typeof heldByOtherSession>[0]) => work.projectId !== '' && !heldByOtherSession(state, key, B, h.clock.now);

  it('holds nothing: its release says the next session carries on, and the session handed the answer takes the Work', async () => {
    const { list, task, reminderId } = await askedWork();
    // The one-shot run ends: the waiting Work is released too.
    expect(await h.engine.releaseSession(S)).toEqual([task.id]);
    const release = h.sim.listComments(task.id).at(-1)!.title;
    expect(release).toBe('🤖 test-host 停止处理（会话 1）：已完成 0/2 步。它在等你回复；你回复后，下一个会话会带着你的回复接着做。');
    // Another session of the machine (the poller's, todo_work next) no longer sees it held once it is back in the queue.
    h.sim.addComment(list.id, reminderId, '账号是 readonly，密码在保险箱');
    expect((await h.engine.sync(list.id)).answered).toEqual([task.id]);
    const queue = await h.engine.queue(list.id, 'session-3');
    expect(queue.ranked.map((e) => e.candidate.taskId)).toEqual([task.id]);
    // The next run is handed the answer, only the person's words (the release is the bundle's), and carries on with it.
    const taken = await takeAnswers(h.deps, fromB);
    expect(taken.map((a) => a.answer.text)).toEqual(['账号是 readonly，密码在保险箱']);
    const work = await h.engine.switchTo(B, list.id, task.id);
    expect(work.claim?.holder).toBe('test-host#2');
    expect(h.sim.listComments(task.id).filter((c) => c.title.includes('已停止'))).toEqual([]);
  });

  it('whose release Dida refused at its end: the session handed the answer sends it in its name and takes the Work', async () => {
    const { list, task, reminderId } = await askedWork();
    h.sim.injectFault({ route: 'POST /project/{pid}/task/{tid}/comment', kind: 'status', status: 500, times: 5 });
    expect(await h.engine.releaseSession(S)).toEqual([]);
    h.sim.clearFaults();
    expect((await h.state()).works[task.id]?.claim?.holder).toBe('test-host#1');
    h.sim.addComment(list.id, reminderId, '可以了');
    await h.engine.sync(list.id);
    expect((await takeAnswers(h.deps, fromB)).map((a) => a.answer.text)).toEqual(['可以了']);
    const before = h.sim.listComments(task.id).length;
    const work = await h.engine.switchTo(B, list.id, task.id);
    expect(work.claim?.holder).toBe('test-host#2');
    // The owed release first, then this session's claim; nothing else, and never a claim lost to a session that ended.
    expect(h.sim.listComments(task.id).slice(before).map((c) => c.title)).toEqual([
      '🤖 test-host 停止处理（会话 1）：已完成 0/2 步。现在没有人在处理，其他会话可以接手。',
      '🤖 test-host 开始处理（会话 2）',
    ]);
  });
});
