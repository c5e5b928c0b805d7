// dsh asking the person, adapter side (src/runtime/phone/desk-asks.ts), over the simulator with a manual clock for the looks:
// the first answer wins (the phone against dsh web's card, and the reverse), the phone is the answerer where dsh has
// none (within the wait, then "no answer" / refused), a stop phrase pauses the Work and stops the turn, a stopped turn
// withdraws the request, sessions without a Work and subagents pass straight through, and how often Dida is read.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DeskAsk } from '../../src/core/work/work-state';
import { DeskAsks, FIRST_LOOK_MS, NO_ANSWER_TEXT, STOPPED_TEXT } from '../../src/runtime/phone/desk-asks';
import { PAUSE_CANCEL_REASON } from '../../src/runtime/phone/pause-guard';
import type { ApprovalOutcome, ApprovalRequest, QuestionAnswer, QuestionRequest } from '../../src/runtime/session/session-ports';
import { createHarness, eventually, fakeAgent, type FakeAgent } from '../helpers/dsh-fakes';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';

const S = 'session-1';
const questions: QuestionRequest['questions'] = [{ id: 'q1', question: 'Which one?', header: 'Pick', options: [{ label: 'Alpha' }, { label: 'Beta' }] }];

describe('dsh asking the person, raced against Dida', () => {
  let e: EngineHarness;
  let h: ReturnType<typeof createHarness>;
  let asks: DeskAsks;
  let agent: FakeAgent & { cancel: ReturnType<typeof import('vitest').vi.fn> };
  let projectId: string;
  let taskId: string;
  let owner: number;
  let alive: Set<number>;

  beforeEach(async () => {
    e = await startEngineHarness();
    projectId = e.sim.seedProject({ name: '问答' }).id;
    taskId = e.sim.seedTask({ projectId, title: '换数据库', priority: 3, items: [{ title: '选型' }] }).id;
    await e.engine.sync(projectId);
    await e.engine.switchTo(S, projectId, taskId);
    owner = Number((await e.state()).owners[projectId] ?? e.sim.state().userId);
    h = createHarness();
    alive = new Set([7]);
    h.deps.state = e.deps.state;
    asks = new DeskAsks(h.deps, { engineDeps: async () => e.deps, pid: 7, isAlive: (pid) => alive.has(pid), waitMinutes: () => 10 });
    const { vi } = await import('vitest');
    agent = Object.assign(fakeAgent(S, { cwd: '/p' }), { cancel: vi.fn() });
    const track = h.deps.tracker.add(agent);
    track.binding = { cwd: '/p', projectId, label: '问答' } as never;
  });
  afterEach(async () => {
    h.lifetime.abort();
    await asks.settled();
    await e.close();
  });

  const reminder = () => e.sim.listTasks(projectId, { includeCompleted: true }).find((t) => t.title.startsWith('🙋'));
  const workComments = () => e.sim.listComments(taskId).map((c) => c.title);
  /** The request is in Dida and the looks have begun (the first one is waited for). */
  const filed = (looksBefore = 0) => eventually(() => !!reminder() && e.sim.listComments(taskId).length > 0 && h.clock.waits.length > looksBefore);
  const askRecord = async (): Promise<DeskAsk | undefined> => (await e.state()).works[taskId]?.asks?.[0];
  /** Lets the next look happen: advances the manual clock by the wait the loop asked for, then waits for the look. */
  async function nextLook(): Promise<void> {
    const before = h.clock.waits.length;
    await h.clock.advance(h.clock.waits.at(-1) ?? FIRST_LOOK_MS);
    await eventually(() => h.clock.waits.length > before || settledNow);
  }
  let settledNow = false;
  function track<T>(p: Promise<T>): Promise<T> {
    settledNow = false;
    void p.finally(() => (settledNow = true)).catch(() => undefined);
    return p;
  }
  /** dsh web's card: a desk answer that waits until `answer` is called, and records the signal it was given. */
  function desk<T>() {
    let resolve!: (value: T) => void;
    let reject!: (error: unknown) => void;
    const seen: { signal?: AbortSignal } = {};
    const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
    return { seen, promise, resolve, reject };
  }

  it('a question answered “2” on the 🙋 goes to the waiting call as option 2, and dsh web’s card is withdrawn', async () => {
    const card = desk<QuestionAnswer>();
    const original = async (request: QuestionRequest) => {
      card.seen.signal = request.signal;
      request.signal?.addEventListener('abort', () => card.reject(Object.assign(new Error('aborted'), { code: 'ASK_ABORTED' })));
      return card.promise;
    };
    const answer = track(asks.question({ questions, agent, signal: new AbortController().signal }, original));
    await filed();
    expect(reminder()?.content).toContain('  2) Beta');
    await nextLook();
    e.sim.addComment(projectId, reminder()!.id, '2', { userId: owner });
    await nextLook();
    expect(await answer).toEqual({ answers: [{ id: 'q1', selected: ['Beta'] }] });
    expect(card.seen.signal?.aborted).toBe(true);
    expect(reminder()?.status).toBe(2);
    expect(workComments().at(-1)).toBe('收到你的回答（#1）：Beta，继续处理。');
    expect(await askRecord()).toBeUndefined();
  });

  it('answered in dsh web first: the 🙋 is completed with a note, and a later Dida comment changes nothing', async () => {
    const card = desk<QuestionAnswer>();
    const answer = track(asks.question({ questions, agent }, async () => card.promise));
    await filed();
    card.resolve({ answers: [{ id: 'q1', selected: ['Alpha'] }] });
    expect(await answer).toEqual({ answers: [{ id: 'q1', selected: ['Alpha'] }] });
    expect(reminder()?.status).toBe(2);
    expect(e.sim.listComments(reminder()!.id).map((c) => c.title)).toEqual(['已在电脑上回答，这条提醒已完成。']);
    const requests = e.sim.totalRequests();
    e.sim.addComment(projectId, reminder()!.id, '2', { userId: owner });
    await h.clock.advance(120_000);
    expect(e.sim.totalRequests()).toBe(requests);
  });

  it('with no question provider the phone answers, in the person’s words (fenced for the model)', async () => {
    const original = async () => {
      throw Object.assign(new Error('no user-questions provider is registered'), { code: 'NO_PROVIDER' });
    };
    const answer = track(asks.question({ questions, agent }, original));
    await filed();
    await nextLook();
    e.sim.addComment(projectId, taskId, '都不要', { userId: owner });
    for (let i = 0; i < 3 && !settledNow; i++) await nextLook();
    const result = await answer;
    expect(result.answers[0]?.selected).toEqual([]);
    expect(result.answers[0]?.custom).toMatch(/<<<DIDA_DATA label=answer nonce=\w+>>>\n都不要\n<<<END_DIDA_DATA/);
  });

  it('with no provider and no answer in time: “no answer” for the model, and the Work says so', async () => {
    const original = async () => {
      throw Object.assign(new Error('none'), { code: 'NO_PROVIDER' });
    };
    const answer = track(asks.question({ questions, agent }, original));
    await filed();
    for (let i = 0; i < 200 && !settledNow; i++) await nextLook();
    expect(await answer).toEqual({ answers: [{ id: 'q1', selected: [], custom: NO_ANSWER_TEXT(10) }] });
    expect(workComments().at(-1)).toBe('10 分钟内没有收到回答（#1：Pick：Which one?），智能体会在没有你回答的情况下决定怎么做。');
    expect(reminder()?.status).toBe(2);
  });

  it('an approval with no answerer in dsh: “允许” allows once, “拒绝” refuses; the tool and command are shown', async () => {
    agent.session.events = [{ type: 'tool/call', data: { callId: 'c1', name: 'bash', arguments: JSON.stringify({ command: 'touch /etc/x', justification: 'needs /etc' }) } }];
    const request: ApprovalRequest = { agent, toolName: 'bash', callId: 'c1', reason: 'escalate sandbox to danger-full-access: needs /etc' };
    const first = track(asks.approval(request, async () => 'unavailable'));
    await filed();
    expect(reminder()?.content).toContain('内容：touch /etc/x');
    expect(reminder()?.content).toContain('理由：needs /etc');
    await nextLook();
    e.sim.addComment(projectId, reminder()!.id, '允许', { userId: owner });
    await nextLook();
    expect(await first).toBe('allowed-once');
    const looks = h.clock.waits.length;
    const second = track(asks.approval({ ...request, callId: 'c2' }, async () => 'unavailable'));
    await eventually(() => e.sim.listTasks(projectId).some((t) => t.title.startsWith('🙋')) && h.clock.waits.length > looks);
    await nextLook();
    e.sim.addComment(projectId, e.sim.listTasks(projectId).find((t) => t.title.startsWith('🙋'))!.id, '拒绝', { userId: owner });
    await nextLook();
    expect(await second).toBe('rejected');
  });

  it('an approval raced against dsh web: Dida first withdraws the card (its signal aborts); the card first wins', async () => {
    let cardSignal: AbortSignal | undefined;
    const request: ApprovalRequest = { agent, toolName: 'bash', callId: 'c1', signal: new AbortController().signal };
    const phoneFirst = track(
      asks.approval(request, () => {
        cardSignal = request.signal;
        return new Promise<ApprovalOutcome>((resolve) => cardSignal?.addEventListener('abort', () => resolve('cancelled')));
      }),
    );
    await filed();
    await nextLook();
    e.sim.addComment(projectId, reminder()!.id, 'allow', { userId: owner });
    await nextLook();
    expect(await phoneFirst).toBe('allowed-once');
    expect(cardSignal?.aborted).toBe(true);
    // The request's own signal is put back as dsh handed it over.
    expect(request.signal?.aborted).toBe(false);
    const deskFirst = track(asks.approval({ agent, toolName: 'bash' }, async () => 'rejected'));
    expect(await deskFirst).toBe('rejected');
  });

  it('a stop phrase on the 🙋 pauses the Work and stops the turn; the approval is refused', async () => {
    const answer = track(asks.approval({ agent, toolName: 'bash' }, async () => 'unavailable'));
    await filed();
    await nextLook();
    e.sim.addComment(projectId, reminder()!.id, '停', { userId: owner });
    await nextLook();
    expect(await answer).toBe('rejected');
    await eventually(() => agent.cancel.mock.calls.length > 0);
    expect(agent.cancel).toHaveBeenCalledWith({ kind: 'hook', reason: PAUSE_CANCEL_REASON }, { keepInbox: true });
    const work = (await e.state()).works[taskId];
    expect(work?.waiting?.pausedBy).toBe('comment');
    expect(e.sim.getTask(taskId)?.priority).toBe(0);
    await expect(track(asks.question({ questions, agent }, async () => ({ answers: [] })))).resolves.toEqual({ answers: [] });
    // A question while the Work is paused reaches Dida no more (the session holds no open, running Work).
    expect(e.sim.listTasks(projectId).filter((t) => t.title.startsWith('🙋'))).toEqual([]);
  });

  it('the person’s stop in the question’s place fails the tool call with a plain reason', async () => {
    const answer = track(asks.question({ questions, agent }, () => new Promise<QuestionAnswer>(() => undefined)));
    await filed();
    await nextLook();
    e.sim.addComment(projectId, taskId, 'stop', { userId: owner });
    // The Work's comments are read at every other look.
    for (let i = 0; i < 2 && !settledNow; i++) await nextLook();
    await expect(answer).rejects.toThrow(STOPPED_TEXT);
  });

  it('a turn stopped at the desk withdraws the request in Dida; a later “允许” answers nothing', async () => {
    const call = new AbortController();
    const answer = track(asks.approval({ agent, toolName: 'bash', signal: call.signal }, () => new Promise<ApprovalOutcome>((resolve) => call.signal.addEventListener('abort', () => resolve('cancelled')))));
    await filed();
    call.abort();
    expect(await answer).toBe('cancelled');
    expect(e.sim.listComments(reminder()!.id).map((c) => c.title)).toEqual(['这个请求已撤回：会话停下了，不再需要回答。']);
    expect(reminder()?.status).toBe(2);
    expect(await askRecord()).toBeUndefined();
    // The person's late “允许” on the withdrawn request grants nothing — not the next request either.
    const old = reminder()!;
    e.sim.addComment(projectId, old.id, '允许', { userId: owner });
    e.sim.addComment(projectId, taskId, '允许', { userId: owner });
    const looks = h.clock.waits.length;
    const next = track(asks.approval({ agent, toolName: 'bash', callId: 'c9' }, async () => 'unavailable'));
    await eventually(() => h.clock.waits.length > looks);
    for (let i = 0; i < 4; i++) await nextLook();
    expect(settledNow).toBe(false);
    e.sim.addComment(projectId, e.sim.listTasks(projectId).find((t) => t.title.startsWith('🙋') && t.status === 0)!.id, '拒绝', { userId: owner });
    await nextLook();
    expect(await next).toBe('rejected');
  });

  it('sessions without a Work, unbound ones and subagents pass straight through: nothing reaches Dida', async () => {
    const before = e.sim.totalRequests();
    const other = fakeAgent('session-2', { cwd: '/p' });
    h.deps.tracker.add(other).binding = { cwd: '/p', projectId, label: '问答' } as never;
    const child = fakeAgent('child', { cwd: '/p', delegationDepth: 1 });
    h.deps.tracker.add(child);
    const stranger = fakeAgent('stranger', { cwd: '/elsewhere' });
    for (const who of [other, child, stranger]) {
      expect(await asks.question({ questions, agent: who }, async () => ({ answers: [{ id: 'q1', selected: ['Alpha'] }] }))).toEqual({ answers: [{ id: 'q1', selected: ['Alpha'] }] });
      expect(await asks.approval({ agent: who, toolName: 'bash' }, async () => 'unavailable')).toBe('unavailable');
    }
    expect(e.sim.totalRequests()).toBe(before);
  });

  it('Dida is read on the schedule: a look after 3 s, then every 5 s for the first minute, then every 10 s; the Work’s comments every other look', async () => {
    const answer = track(asks.approval({ agent, toolName: 'bash' }, async () => 'unavailable'));
    await filed();
    const reads = () => (e.sim.counters()['GET /project/{pid}/task/{tid}/comments'] ?? 0);
    const before = reads();
    const gaps: number[] = [];
    for (let i = 0; i < 14; i++) {
      gaps.push(h.clock.waits.at(-1) ?? 0);
      await nextLook();
    }
    expect(gaps[0]).toBe(FIRST_LOOK_MS);
    expect(gaps.slice(1, 13)).toEqual(Array(12).fill(5_000));
    expect(gaps[13]).toBe(10_000);
    // 14 looks: 14 reads of the reminder's comments and 7 of the Work's (looks 1, 3, 5, …, 13).
    expect(reads() - before).toBe(21);
    h.lifetime.abort();
    expect(await answer).toBe('cancelled');
  });

  it('an answer on the 🙋 is seen within one gap of the schedule: 5 s in the first minute, 10 s to 5 min, 20 s to 30 min, 30 s after', async () => {
    const bound = (at: number) => (at < 60_000 ? 5_000 : at < 5 * 60_000 ? 10_000 : at < 30 * 60_000 ? 20_000 : 30_000);
    const latencies: string[] = [];
    for (const at of [4_000, 50_000, 3 * 60_000, 12 * 60_000, 29 * 60_000, 42 * 60_000]) {
      // dsh web's card waits too (no deadline): only the phone answers.
      const answer = track(asks.approval({ agent, toolName: 'bash' }, () => new Promise<ApprovalOutcome>(() => undefined)));
      const looks = h.clock.waits.length;
      await eventually(() => h.clock.waits.length > looks);
      const start = h.clock.now();
      const filedReminder = e.sim.listTasks(projectId).find((t) => t.title.startsWith('🙋') && t.status === 0)!;
      // Time passes without an answer until `at`; then the person answers and the looks go on.
      let written: number | undefined;
      for (let i = 0; i < 400 && !settledNow; i++) {
        const gap = h.clock.waits.at(-1)!;
        if (written === undefined && h.clock.now() + gap > start + at) {
          await h.clock.advance(start + at - h.clock.now());
          e.sim.addComment(projectId, filedReminder.id, '允许', { userId: owner });
          written = h.clock.now();
          continue;
        }
        await nextLook();
      }
      expect(await answer).toBe('allowed-once');
      const latency = h.clock.now() - (written as number);
      latencies.push(`${at / 1000}s→${latency / 1000}s`);
      expect(latency, `answered ${at / 1000} s in`).toBeLessThanOrEqual(bound(at));
    }
    console.log(`[desk latency] answer written at → seen after: ${latencies.join(', ')}`);
  });

  it('at start, a request of a process that is gone is withdrawn; one of a live process stays', async () => {
    const answer = track(asks.approval({ agent, toolName: 'bash' }, async () => 'unavailable'));
    await filed();
    expect(await asks.sweep()).toBe(0);
    const id = (await askRecord())!.id;
    await e.deps.state.update((s) => {
      s.works[taskId]!.asks![0]!.pid = 99;
    });
    const later = new DeskAsks(h.deps, { engineDeps: async () => e.deps, pid: 8, isAlive: (pid) => alive.has(pid), waitMinutes: () => 10 });
    expect(await later.sweep()).toBe(1);
    expect((await e.state()).works[taskId]?.asks?.some((a) => a.id === id)).toBeFalsy();
    expect(e.sim.listComments(reminder()!.id).at(-1)?.title).toContain('提出它的会话已经结束');
    await nextLook();
    expect(await answer).toBe('cancelled');
  });
});
