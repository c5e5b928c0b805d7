// The engine facade (src/core/engine/work-engine.ts) over the simulator, the calls the adapters make: a Work created
// (texts checked, level, body), listed and switched to, a model failure and a limit's wait said on the current Work,
// the session released at its end, settle and flushes that never throw, and what a session touched.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WorkEngine } from '../../src/core/engine/work-engine';
import { causeKey } from '../../src/core/continuation/stop-policy';
import { getLocale } from '../../src/core/text/locale';
import { localTime } from '../../src/core/time/schedule';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';

const zh = getLocale('zh');

describe('the engine facade', () => {
  let h: EngineHarness;
  let projectId: string;
  let logs: string[];
  const S = 'session-1';

  beforeEach(async () => {
    h = await startEngineHarness();
    projectId = h.sim.seedProject({ name: '门面' }).id;
    logs = [];
    h.deps.log = (line) => logs.push(line);
  });
  afterEach(async () => {
    await h.close();
  });
  const comments = (taskId: string) => h.sim.listComments(taskId).map((c) => c.title);

  it('a Work created: title, steps and body sanitised, medium priority by default, current for the session', async () => {
    const work = await h.engine.createWork(S, projectId, { title: ' 写\n周报 ', steps: ['收集', '汇总'], body: '说明\u0007文字' });
    const task = h.sim.getTask(work.taskId)!;
    expect(task.title).toBe('写 周报');
    expect(task.priority).toBe(3);
    expect(task.items?.map((i) => [i.title, i.status])).toEqual([
      ['收集', 0],
      ['汇总', 0],
    ]);
    expect(`${task.content ?? ''}${task.desc ?? ''}`).toContain('说明文字');
    expect((await h.engine.currentWork(S))?.taskId).toBe(work.taskId);
    expect((await h.state()).works[work.taskId]?.claim).toEqual({ holder: 'test-host#1', at: h.clock.now });
    const high = await h.engine.createWork(S, projectId, { title: '急事', level: 'high' });
    expect(h.sim.getTask(high.taskId)?.priority).toBe(5);
    expect(h.sim.getTask(high.taskId)?.items ?? []).toEqual([]);
    expect(`${h.sim.getTask(high.taskId)?.content ?? ''}`).toBe('');
  });

  it('an empty title or step, or two steps with one title, are refused before anything is written', async () => {
    const code = (p: Promise<unknown>) => p.then(() => 'ok', (e: { code?: string; message?: string }) => `${e.code}: ${e.message}`);
    expect(await code(h.engine.createWork(S, projectId, { title: ' \u200b ' }))).toBe('invalid_text: The Work title is empty; give the request a short plain-language title.');
    expect(await code(h.engine.createWork(S, projectId, { title: 'a', steps: ['一', ' '] }))).toBe('invalid_text: A step title is empty; give every step a short plain-language title.');
    expect(await code(h.engine.createWork(S, projectId, { title: 'a', steps: ['一', '二', '一'] }))).toBe('duplicate_step: Two steps are titled "一"; give each step a distinct title.');
    expect(h.sim.listTasks(projectId)).toEqual([]);
  });

  it('works lists the open ones of the list (closed ones when asked); switchTo by key or task id, not closed, not elsewhere', async () => {
    const a = h.sim.seedTask({ projectId, title: '甲', priority: 3 });
    const b = h.sim.seedTask({ projectId, title: '乙', priority: 3 });
    const other = h.sim.seedProject({ name: '别的' }).id;
    const c = h.sim.seedTask({ projectId: other, title: '丙', priority: 3 });
    await h.engine.sync(projectId);
    await h.engine.sync(other);
    await h.deps.state.update((s) => {
      s.works[b.id]!.phase = 'closed';
    });
    expect((await h.engine.works(projectId)).map((w) => w.taskId)).toEqual([a.id]);
    expect((await h.engine.works(projectId, { includeClosed: true })).map((w) => w.taskId).sort()).toEqual([a.id, b.id].sort());
    expect((await h.engine.switchTo(S, projectId, a.id)).taskId).toBe(a.id);
    expect((await h.engine.session(S))?.currentWork).toBe(a.id);
    await expect(h.engine.switchTo(S, projectId, c.id)).rejects.toMatchObject({ code: 'work_not_found', message: `No Work in the bound list has id ${c.id}; call todo_work list to see the current ids.` });
    await expect(h.engine.switchTo(S, projectId, 'nope')).rejects.toMatchObject({ code: 'work_not_found' });
    await expect(h.engine.switchTo(S, projectId, b.id)).rejects.toMatchObject({ code: 'work_closed', message: `The Work ${b.id} is already sent for review or closed; pick another one from todo_work list.` });
    await h.deps.state.update((s) => {
      s.works[a.id]!.phase = 'accepting';
    });
    await expect(h.engine.switchTo(S, projectId, a.id)).rejects.toMatchObject({ code: 'work_closed' });
    // A closed current Work is no current Work.
    expect(await h.engine.currentWork(S)).toBeDefined();
    await h.deps.state.update((s) => {
      s.works[a.id]!.phase = 'closed';
    });
    expect(await h.engine.currentWork(S)).toBeUndefined();
    await expect(h.engine.requireCurrent(S)).rejects.toMatchObject({ code: 'no_current_work' });
  });

  it('a model failure makes the current Work wait, saying why and until when; nothing without a current Work', async () => {
    expect(await h.engine.waitForModelFailure(S, 'quota', 'E42')).toBeUndefined();
    const work = await h.engine.createWork(S, projectId, { title: '额度' });
    const until = h.clock.now + 3 * 3600_000;
    const waited = await h.engine.waitForModelFailure(S, 'limit', 'rate_limit', until);
    const reason = zh.t(causeKey('limit'), { error: 'rate_limit', time: localTime(h.deps, until) });
    expect(waited?.waiting).toMatchObject({ reason, cause: 'limit' });
    expect(h.sim.getTask(work.taskId)?.priority).toBe(0);
    const other = await h.engine.createWork('session-2', projectId, { title: '认证' });
    const auth = await h.engine.waitForModelFailure('session-2', 'auth', '401');
    expect(auth?.waiting?.reason).toBe(zh.t(causeKey('auth'), { error: '401' }));
    expect(auth?.taskId).toBe(other.taskId);
  });

  it('a failure is flagged only on an unfinished current Work: a settled one is left to its review, on every path', async () => {
    const done = await h.engine.createWork(S, projectId, { title: '都做完了', steps: ['一', '二'] });
    await h.engine.changeSteps(S, [
      { op: 'update', step: '一', status: 'completed', resolution: '好' },
      { op: 'update', step: '二', status: 'skipped', resolution: '不需要' },
    ]);
    const before = comments(done.taskId).length;
    expect(await h.engine.waitForModelFailure(S, 'quota', 'QUOTA')).toBeUndefined();
    expect(await h.engine.waitAfterAttempts(S, 3, 'SERVER')).toBeUndefined();
    expect(await h.engine.noteWaitUntil(S, h.clock.now + 3600_000)).toBe(false);
    await h.engine.flushComments();
    expect(comments(done.taskId).slice(before).filter((c) => !c.startsWith('已完成') && !c.startsWith('已跳过'))).toEqual([]);
    expect(h.sim.getTask(done.taskId)?.priority).toBe(3);
    expect(h.sim.listTasks(projectId).filter((t) => t.title.startsWith('🙋'))).toEqual([]);
    expect((await h.engine.settle(S)).map((r) => r.outcome.status)).toEqual(['finalized']);
    // Control: an unfinished current Work is flagged by the same calls.
    const open = await h.engine.createWork(S, projectId, { title: '没做完', steps: ['一'] });
    expect((await h.engine.waitAfterAttempts(S, 3, 'SERVER'))?.waiting?.reason).toBe(zh.t('dida.waiting.exhausted', { attempts: 3, error: 'SERVER' }));
    expect(h.sim.getTask(open.taskId)?.priority).toBe(0);
  });

  it('a reset that cannot be told as a time still tells the person, in words that need no time', async () => {
    const work = await h.engine.createWork(S, projectId, { title: '怪时间', steps: ['一'] });
    expect(await h.engine.noteWaitUntil(S, 1e16)).toBe(true);
    const noTime = zh.t('dida.comment.waitUntilNoTime');
    expect(comments(work.taskId).filter((c) => c === noTime)).toHaveLength(1);
    const waited = await h.engine.waitForModelFailure(S, 'limit', 'RATE_LIMIT', 1e16);
    expect(waited?.waiting).toMatchObject({ reason: zh.t('dida.waiting.cause.limitNoTime'), cause: 'limit', applied: true });
    expect(h.sim.getTask(work.taskId)?.priority).toBe(0);
    expect(h.sim.listTasks(projectId).filter((t) => t.title === '🙋 需要你处理：怪时间')).toHaveLength(1);
    expect(comments(work.taskId).some((c) => c.startsWith('需要你帮忙：模型服务的用量限制'))).toBe(true);
  });

  it("a limit's reset is said once on the current Work; not on a waiting Work or without one", async () => {
    expect(await h.engine.noteWaitUntil(S, h.clock.now + 3600_000)).toBe(false);
    const work = await h.engine.createWork(S, projectId, { title: '等重置' });
    const until = h.clock.now + 3600_000;
    const said = zh.t('dida.comment.waitUntil', { time: localTime(h.deps, until) });
    expect(await h.engine.noteWaitUntil(S, until)).toBe(true);
    expect(comments(work.taskId).filter((c) => c === said)).toHaveLength(1);
    expect((await h.state()).outbox).toEqual([]);
    // Still queued (its post failed): not queued twice.
    h.sim.injectFault({ route: 'POST /project/{pid}/task/{tid}/comment', kind: 'status', status: 500, times: 3 });
    const later = until + 7200_000;
    expect(await h.engine.noteWaitUntil(S, later)).toBe(true);
    h.sim.clearFaults();
    expect(await h.engine.noteWaitUntil(S, later)).toBe(false);
    expect((await h.state()).outbox.filter((e) => e.workKey === work.taskId)).toHaveLength(1);
    await h.engine.waitForHuman(S, '问题');
    expect(await h.engine.noteWaitUntil(S, later + 3600_000)).toBe(false);
  });

  it('a session ends: every unsettled Work it holds is released, waiting or not; settled and others’ Works are not; a refused release is owed', async () => {
    const open = await h.engine.createWork(S, projectId, { title: '没做完', steps: ['一'] });
    const settled = await h.engine.createWork(S, projectId, { title: '做完了', steps: ['一'] });
    await h.engine.changeSteps(S, [{ op: 'update', step: '一', status: 'completed', resolution: '好' }], settled.taskId);
    const waiting = await h.engine.createWork(S, projectId, { title: '等人', steps: ['一'] });
    await h.engine.waitForHuman(S, '问题', waiting.taskId);
    const theirs = await h.engine.createWork('session-2', projectId, { title: '别人的', steps: ['一'] });
    await h.engine.touch(S, theirs.taskId, false);
    const none = await h.engine.createWork(S, projectId, { title: '无步骤' });
    expect((await h.engine.releaseSession(S)).sort()).toEqual([open.taskId, none.taskId, waiting.taskId].sort());
    // The waiting Work says who carries on: the next session, with the person's answer.
    expect(comments(waiting.taskId).at(-1)).toBe('🤖 test-host 停止处理（会话 1）：已完成 0/1 步。它在等你回复；你回复后，下一个会话会带着你的回复接着做。');
    expect(comments(open.taskId).at(-1)).toBe('🤖 test-host 停止处理（会话 1）：已完成 0/1 步。现在没有人在处理，其他会话可以接手。');
    expect((await h.state()).works[waiting.taskId]?.claim).toBeUndefined();
    expect((await h.state()).works[settled.taskId]?.claim?.holder).toBe('test-host#1');
    expect((await h.state()).works[theirs.taskId]?.claim?.holder).toBe('test-host#2');
    expect(await h.engine.releaseSession('session-unknown')).toEqual([]);

    const again = await h.engine.createWork('session-3', projectId, { title: '释放失败', steps: ['一'] });
    h.sim.injectFault({ route: 'POST /project/{pid}/task/{tid}/comment', kind: 'status', status: 500, times: 5 });
    expect(await h.engine.releaseSession('session-3')).toEqual([]);
    expect(logs.some((l) => l.startsWith(`could not release Work ${again.taskId} in Dida now (this machine sends the release at its next sync): `))).toBe(true);
    h.sim.clearFaults();
    // Owed, not lost: the next sync of this machine sends it in the session's name, lease or not.
    const report = await h.engine.sync(projectId);
    expect(report.released).toContain(again.taskId);
    expect(comments(again.taskId).at(-1)).toBe('🤖 test-host 停止处理（会话 3）：已完成 0/1 步。现在没有人在处理，其他会话可以接手。');
    expect((await h.state()).works[again.taskId]?.claim).toBeUndefined();
    // Once: the next sync says nothing more.
    const count = comments(again.taskId).length;
    await h.engine.sync(projectId);
    expect(comments(again.taskId)).toHaveLength(count);
  });

  it('settle reports a failed finalization and flushes the progress of the other Works it touched; failures are logged', async () => {
    const done = await h.engine.createWork(S, projectId, { title: '收尾', steps: ['一'] });
    await h.engine.changeSteps(S, [{ op: 'update', step: '一', status: 'completed', resolution: '好' }]);
    const busy = await h.engine.createWork(S, projectId, { title: '进行中', steps: ['一', '二'] });
    await h.engine.changeSteps(S, [{ op: 'update', step: '一', status: 'completed', resolution: '好' }]);
    expect((await h.state()).outbox.some((e) => e.workKey === busy.taskId)).toBe(true);
    h.sim.injectFault({ route: 'POST /task', kind: 'status', status: 500 });
    const outcomes = await h.engine.settle(S);
    expect(outcomes.map((o) => [o.key, o.outcome.status])).toEqual([[done.taskId, 'failed']]);
    expect((await h.state()).outbox.some((e) => e.workKey === busy.taskId)).toBe(false);

    await h.engine.changeSteps(S, [{ op: 'update', step: '二', status: 'in_progress' }], busy.taskId);
    h.sim.injectFault({ route: 'POST /project/{pid}/task/{tid}/comment', kind: 'status', status: 400, times: 10 });
    h.sim.injectFault({ route: 'POST /task', kind: 'status', status: 500 });
    await h.engine.settle(S);
    h.sim.clearFaults();
    expect((await h.engine.settle(S)).map((o) => [o.key, o.outcome.status])).toEqual([[done.taskId, 'finalized']]);
  });

  it('flushComments posts what waits (only the due ones when asked) and counts what still waits', async () => {
    const work = await h.engine.createWork(S, projectId, { title: '进度', steps: ['一', '二'] });
    await h.engine.changeSteps(S, [{ op: 'update', step: '一', status: 'completed', resolution: '好' }]);
    expect(await h.engine.flushComments({ onlyDue: true })).toBe(1);
    expect((await h.state()).outbox).toHaveLength(1);
    h.clock.now += 10 * 60_000;
    expect(await h.engine.flushComments({ onlyDue: true })).toBe(0);
    expect((await h.state()).outbox).toEqual([]);
    await h.engine.changeSteps(S, [{ op: 'update', step: '二', status: 'in_progress' }]);
    expect(await h.engine.flushComments()).toBe(0);
    expect(comments(work.taskId).length).toBeGreaterThanOrEqual(3);
  });

  it('touch records each Work once, at most 50, and writes nothing when nothing changes', async () => {
    for (let i = 0; i < 55; i++) await h.engine.touch(S, `k${i}`, false);
    const session = (await h.engine.session(S))!;
    expect(session.touched).toHaveLength(50);
    expect(session.touched[0]).toBe('k5');
    expect(session.touched.at(-1)).toBe('k54');
    expect(session.currentWork).toBeUndefined();
    await h.engine.touch(S, 'k54', true);
    expect((await h.engine.session(S))?.currentWork).toBe('k54');
    const before = await h.engine.session(S);
    h.clock.now += 1000;
    await h.engine.touch(S, 'k54', true);
    await h.engine.touch(S, 'k54', false);
    expect(await h.engine.session(S)).toEqual(before);
    // After a minute the record is refreshed.
    h.clock.now += 60_000;
    await h.engine.touch(S, 'k54', true);
    expect((await h.engine.session(S))?.updatedAt).toBe(h.clock.now);
    await h.engine.touch(S, 'k54', false);
    await h.engine.touch(S, 'k10', true);
    expect((await h.engine.session(S))?.touched.filter((k) => k === 'k10')).toHaveLength(1);
  });

  it('executable says whether a candidate may run now', () => {
    const candidate = { taskId: 't', title: 't', priority: 3, sortOrder: null, order: 0, task: { id: 't', projectId: 'p', title: 't' }, status: 'open' as const, hasPlan: false, unsettledSteps: 0, waitingForHuman: false, claimedByOtherHost: false, keepOpen: false, tags: [] };
    expect(WorkEngine.executable(candidate as never, h.clock.now, 'UTC')).toBe(true);
    expect(WorkEngine.executable({ ...candidate, priority: 0 } as never, h.clock.now, 'UTC')).toBe(false);
  });
});
