// Waiting for a person (src/core/phone/waiting.ts) over the simulator: empty and closed cases, the priority to restore
// (a draft's, one the person set while an ask was cut short), the 🙋 reminder as filed, the person's pauses (by
// priority, by comment, by command; on a Work already waiting), the bounded handled list, and resuming (kept priority,
// no resume while Dida still shows 0, the spend allowance, no "resumed" for a wait never applied).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatDidaDate } from '../../src/dida/dida-date';
import { waitingTitle } from '../../src/core/review/acceptance-report';
import { getLocale } from '../../src/core/text/locale';
import { MAX_HANDLED_COMMENTS, markHandled, pauseForPerson, REMINDER_TRIGGERS, resumeWork, waitForHuman, waitingComment } from '../../src/core/phone/waiting';
import { flushWorkOutbox, queueComment } from '../../src/core/work/outbox';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';
import { makeWork } from '../helpers/work-fixtures';

const zh = getLocale('zh');

describe('waiting for a person', () => {
  let h: EngineHarness;
  let projectId: string;
  const S = 'session-1';

  beforeEach(async () => {
    h = await startEngineHarness();
    projectId = h.sim.seedProject({ name: '等待' }).id;
  });
  afterEach(async () => {
    await h.close();
  });

  async function work(priority = 3, title = '部署') {
    const task = h.sim.seedTask({ projectId, title, priority, items: [{ title: '一步' }] });
    await h.engine.sync(projectId);
    await h.engine.switchTo(S, projectId, task.id);
    return task;
  }
  const reminders = () => h.sim.listTasks(projectId, { includeCompleted: true }).filter((t) => t.title.startsWith('🙋'));
  const comments = (taskId: string) => h.sim.listComments(taskId).map((c) => c.title);

  it('an empty reason is refused; a Work sent for review or closed has nothing to wait on', async () => {
    const task = await work();
    await expect(waitForHuman(h.deps, task.id, ' \u200b ')).rejects.toMatchObject({ code: 'invalid_text' });
    expect((await h.state()).works[task.id]?.waiting).toBeUndefined();
    await h.deps.state.update((s) => {
      s.works[task.id]!.phase = 'accepting';
    });
    await expect(waitForHuman(h.deps, task.id, '问题')).rejects.toMatchObject({ code: 'work_closed', message: `The Work ${task.id} is already sent for review or closed; nothing is waiting on it.` });
    await h.deps.state.update((s) => {
      s.works[task.id]!.phase = 'closed';
    });
    await expect(waitForHuman(h.deps, task.id, '问题')).rejects.toMatchObject({ code: 'work_closed' });
    expect(reminders()).toEqual([]);
  });

  it('the reminder as filed: titled for the Work, the reason and how to answer, due now in the account zone', async () => {
    const task = await work(5, '发布');
    const reason = '需要你确认版本号'.repeat(1);
    const waited = await h.engine.waitForHuman(S, reason);
    expect(waited.waiting).toMatchObject({ reason, previousPriority: 5, applied: true, since: h.clock.now, cause: 'asked', comment: waitingComment(h.deps, reason) });
    expect(waited.priority).toBe(0);
    const [reminder] = reminders();
    expect(reminder).toMatchObject({
      title: waitingTitle(zh, { title: '发布' }),
      content: `${reason}\n\n${zh.t('dida.waiting.howTo')}`,
      priority: 5,
      isAllDay: false,
      timeZone: 'Asia/Shanghai',
      reminders: REMINDER_TRIGGERS,
      startDate: formatDidaDate(h.clock.now),
      dueDate: formatDidaDate(h.clock.now),
    });
    expect(REMINDER_TRIGGERS).toEqual(['TRIGGER:PT0S']);
    expect((await h.state()).ownTasks[reminder!.id]).toBe('reminder');
    expect(waited.waiting?.reminderTaskId).toBe(reminder!.id);
    expect(Object.keys((await h.state()).pendingCreates)).toEqual([]);
    expect(comments(task.id)).toContain(waitingComment(h.deps, reason));
  });

  it('a long reason is cut to 1000 characters; a model failure records its cause', async () => {
    await work();
    const waited = await h.engine.waitForHuman(S, '长'.repeat(1500), undefined, 'quota');
    expect(waited.waiting?.reason.length).toBeLessThanOrEqual(1000);
    expect(waited.waiting?.reason.length).toBeGreaterThan(900);
    expect(waited.waiting?.cause).toBe('quota');
  });

  it('a draft asked about is restored to low priority; its reminder has low priority', async () => {
    const task = await work(0);
    const waited = await waitForHuman(h.deps, task.id, '用哪个分支？');
    expect(waited.waiting?.previousPriority).toBe(1);
    expect(reminders()[0]?.priority).toBe(1);
    await h.engine.resume(S, task.id);
    expect(h.sim.getTask(task.id)?.priority).toBe(1);
  });

  it('an ask cut short before its write is finished by the next ask, restoring the priority the person set meanwhile', async () => {
    const task = await work(3);
    h.sim.injectFault({ route: 'POST /task/{tid}', kind: 'status', status: 500 });
    await expect(waitForHuman(h.deps, task.id, '要哪个颜色？')).rejects.toBeDefined();
    const cut = (await h.state()).works[task.id]!;
    expect(cut.waiting).toMatchObject({ applied: false, previousPriority: 3 });
    expect(reminders()).toEqual([]);
    h.sim.editTask(task.id, { priority: 5 });
    const waited = await waitForHuman(h.deps, task.id, '另一个理由');
    // The reason recorded first stands; the priority to restore is the one Dida showed right before the write.
    expect(waited.waiting).toMatchObject({ reason: '要哪个颜色？', previousPriority: 5, applied: true });
    expect(h.sim.getTask(task.id)?.priority).toBe(0);
    expect(reminders().map((t) => t.priority)).toEqual([5]);
    expect(comments(task.id).filter((c) => c === waitingComment(h.deps, '要哪个颜色？'))).toHaveLength(1);
    expect(comments(task.id).some((c) => c.includes('另一个理由'))).toBe(false);
  });

  it('the person paused it by priority: no priority write, no reminder, the priority it ran with is kept to restore', async () => {
    const task = await work(3);
    h.sim.editTask(task.id, { priority: 0 });
    let writes = 0;
    const off = h.sim.onRequest((req) => {
      if (req.route === 'POST /task/{tid}') writes++;
    });
    const paused = await pauseForPerson(h.deps, task.id, { by: 'priority', previousPriority: 4 }, (w) => `已暂停：${w.title}`);
    off();
    expect(writes).toBe(0);
    expect(paused?.waiting).toMatchObject({ pausedBy: 'priority', previousPriority: 4, applied: true, reason: '已暂停：部署', comment: '已暂停：部署' });
    expect(paused?.waiting?.reminderTaskId).toBeUndefined();
    expect(reminders()).toEqual([]);
    expect(comments(task.id)).toContain('已暂停：部署');
  });

  it('a stop comment pauses with priority none and is marked handled; on a Work already waiting it is only marked handled', async () => {
    const task = await work(3);
    const paused = await pauseForPerson(h.deps, task.id, { by: 'comment', commentId: 'c1' }, () => '收到，已暂停');
    expect(paused?.waiting).toMatchObject({ pausedBy: 'comment', previousPriority: 3, applied: true });
    expect(paused?.phoneHandled).toEqual(['c1']);
    expect(h.sim.getTask(task.id)?.priority).toBe(0);
    expect(reminders()).toEqual([]);
    const before = comments(task.id).length;
    expect(await pauseForPerson(h.deps, task.id, { by: 'comment', commentId: 'c2' }, () => '又一次')).toBeUndefined();
    expect((await h.state()).works[task.id]?.phoneHandled).toEqual(['c1', 'c2']);
    const rev = (await h.state()).works[task.id]!.rev;
    // The same comment again, or a command: nothing to save.
    expect(await pauseForPerson(h.deps, task.id, { by: 'comment', commentId: 'c2' }, () => '又一次')).toBeUndefined();
    expect(await pauseForPerson(h.deps, task.id, { by: 'command' }, () => '又一次')).toBeUndefined();
    expect((await h.state()).works[task.id]!.rev).toBe(rev);
    expect(comments(task.id)).toHaveLength(before);
  });

  it('a pause on an ask already waiting leaves it as asked; a pause on a closed Work does nothing', async () => {
    const task = await work(3);
    await waitForHuman(h.deps, task.id, '问题');
    expect(await pauseForPerson(h.deps, task.id, { by: 'command' }, () => '暂停')).toBeUndefined();
    expect((await h.state()).works[task.id]?.waiting?.pausedBy).toBeUndefined();
    const other = await work(3, '另一个');
    await h.deps.state.update((s) => {
      s.works[other.id]!.phase = 'finalizing';
    });
    expect(await pauseForPerson(h.deps, other.id, { by: 'command' }, () => '暂停')).toBeUndefined();
    expect((await h.state()).works[other.id]?.waiting).toBeUndefined();
  });

  it('a pause cut short (recorded, not applied) is finished by the next stop', async () => {
    const task = await work(3);
    h.sim.injectFault({ route: 'POST /task/{tid}', kind: 'status', status: 500 });
    await expect(pauseForPerson(h.deps, task.id, { by: 'command' }, () => '暂停了')).rejects.toBeDefined();
    expect((await h.state()).works[task.id]?.waiting).toMatchObject({ applied: false, pausedBy: 'comment' });
    const finished = await pauseForPerson(h.deps, task.id, { by: 'comment', commentId: 'c9' }, () => '暂停了');
    expect(finished?.waiting?.applied).toBe(true);
    expect(h.sim.getTask(task.id)?.priority).toBe(0);
  });

  it('the handled list keeps each id once and at most MAX_HANDLED_COMMENTS, the newest', () => {
    const w = makeWork([]);
    markHandled(w, []);
    expect(w.phoneHandled).toBeUndefined();
    markHandled(w, ['a', 'b']);
    markHandled(w, ['b', 'c']);
    expect(w.phoneHandled).toEqual(['a', 'b', 'c']);
    markHandled(w, Array.from({ length: MAX_HANDLED_COMMENTS }, (_, i) => `n${i}`));
    expect(w.phoneHandled).toHaveLength(MAX_HANDLED_COMMENTS);
    expect(w.phoneHandled?.[0]).toBe('n0');
    expect(w.phoneHandled?.at(-1)).toBe(`n${MAX_HANDLED_COMMENTS - 1}`);
    expect(MAX_HANDLED_COMMENTS).toBe(200);
  });

  it('resuming keeps a priority the person set meanwhile; without an explicit call a priority still 0 does not resume', async () => {
    const task = await work(3);
    await waitForHuman(h.deps, task.id, '问题');
    const unchanged = await resumeWork(h.deps, task.id, { explicit: false });
    expect(unchanged.waiting).toBeDefined();
    expect(reminders()[0]?.status).toBe(0);
    h.sim.editTask(task.id, { priority: 1 });
    const resumed = await resumeWork(h.deps, task.id, { explicit: true });
    expect(resumed.waiting).toBeUndefined();
    expect(h.sim.getTask(task.id)?.priority).toBe(1);
    expect(resumed.priority).toBe(1);
    expect(reminders()[0]?.status).toBe(2);
    expect(comments(task.id).filter((c) => c === zh.t('dida.comment.resumed'))).toHaveLength(1);
    await expect(resumeWork(h.deps, task.id, { explicit: true })).rejects.toMatchObject({ code: 'not_waiting', message: `The Work ${task.id} is not waiting for a person; nothing to resume.` });
  });

  it('a spend stop let go gets its allowance; a wait never applied resumes without a "resumed" comment', async () => {
    const task = await work(3);
    await h.deps.state.update((s) => {
      const round = { requests: 1, inputTokens: 70, outputTokens: 30, cacheReadTokens: 0, ms: 9, continuations: 0, continuedRequests: 0, continuedTokens: 0, models: {} };
      s.usage[task.id] = { rounds: { '1': round } };
    });
    await waitForHuman(h.deps, task.id, '超出预算', 'spend');
    await resumeWork(h.deps, task.id, { explicit: true });
    expect((await h.state()).usage[task.id]?.allowance).toMatchObject({ work: { tokens: 100, ms: 9 } });

    const other = await work(3, '另一个');
    h.sim.injectFault({ route: 'POST /task/{tid}', kind: 'status', status: 500 });
    await expect(waitForHuman(h.deps, other.id, '问题')).rejects.toBeDefined();
    expect((await h.state()).works[other.id]?.waiting?.applied).toBe(false);
    await resumeWork(h.deps, other.id, { explicit: true });
    expect(comments(other.id).filter((c) => c === zh.t('dida.comment.resumed'))).toEqual([]);
    // Not even merged into the ask's own comment, which was still waiting to be posted.
    expect(comments(other.id).filter((c) => c.includes(zh.t('dida.comment.resumed')))).toEqual([]);
    // Nor does its request for help reach the phone: the Work runs again, so the unposted ask is taken back.
    expect(comments(other.id).filter((c) => c.includes('问题'))).toEqual([]);
    expect((await h.state()).outbox.filter((e) => e.workKey === other.id)).toEqual([]);
    expect((await h.state()).usage[other.id]?.allowance).toBeUndefined();
  });

  it('a wait never applied whose request for help was already posted is followed by "resumed"', async () => {
    const task = await work(3);
    const control = await work(3, '对照');
    h.sim.injectFault({ route: 'POST /task/{tid}', kind: 'status', status: 500 });
    await expect(waitForHuman(h.deps, task.id, '要密码')).rejects.toBeDefined();
    await flushWorkOutbox(h.deps, task.id);
    expect(comments(task.id).filter((c) => c.includes('要密码'))).toHaveLength(1);
    await resumeWork(h.deps, task.id, { explicit: true });
    expect(comments(task.id).at(-1)).toBe(zh.t('dida.comment.resumed'));
    // The ask's comment is taken back only when it is this Work's: another Work's same-text comment stays queued.
    const third = await work(3, '第三');
    await h.deps.state.update((s) => {
      queueComment(s, { projectId, taskId: control.id, workKey: control.id, text: waitingComment(h.deps, '要密码'), createdAt: h.deps.now() });
    });
    h.sim.injectFault({ route: 'POST /task/{tid}', kind: 'status', status: 500 });
    await expect(waitForHuman(h.deps, third.id, '要密码')).rejects.toBeDefined();
    await resumeWork(h.deps, third.id, { explicit: true });
    expect((await h.state()).outbox.filter((e) => e.workKey === control.id)).toHaveLength(1);
    expect(comments(third.id).filter((c) => c.includes('要密码') || c === zh.t('dida.comment.resumed'))).toEqual([]);
  });
});
