// The machine's one poller per account and list, with real engines over the simulator and one shared state file:
// only the elected process reads the list; it hands Works to idle sessions of every process (claim first, respecting
// route tags), an offer is taken by the session's own process, and a hand-over nobody takes is undone.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { POLL_TICK_MS } from '../../src/runtime/polling/machine-poller';
import { startPollWorld, type PollWorld } from '../helpers/poll-world';

let w: PollWorld;
beforeEach(async () => {
  w = await startPollWorld({ bound: '/code/app' });
});
afterEach(async () => {
  await w.close();
});


describe('one poller per machine and list', () => {
  it('two processes with idle sessions: one reads the list, the other never does', async () => {
    const a = w.process(101);
    const b = w.process(102);
    await a.session('session-aaaa1111', '/code/app');
    await b.session('session-bbbb2222', '/code/app');
    await a.tick();
    await b.tick();
    expect(w.reads()).toBe(1);
    // Three more rounds of looks at the base interval: one read per round.
    for (let round = 0; round < 3; round++) {
      await a.advance(20_000);
      await b.advance(20_000);
      await a.tick();
      await b.tick();
    }
    expect(w.reads()).toBe(4);
    expect(a.machine.leads('acct', w.list.id) !== b.machine.leads('acct', w.list.id)).toBe(true);
  });

  it('nothing idle on the machine: nothing is read', async () => {
    const a = w.process(101);
    await a.session('session-aaaa1111', '/code/app', 'running');
    await a.tick();
    await a.advance(60_000);
    await a.tick();
    expect(w.reads()).toBe(0);
  });

  it("the leader claims a Work for another process's idle session and hands it over; that process wakes it", async () => {
    const a = w.process(101);
    const b = w.process(102);
    const busy = await a.session('session-aaaa1111', '/code/app', 'running');
    await a.tick();
    const idle = await b.session('session-bbbb2222', '/code/app');
    // B's next look records that its session takes part; then a task arrives and A polls.
    await b.tick();
    const t1 = w.task('修复登录');
    await a.advance(20_000);
    await a.tick();
    expect(a.machine.leads('acct', w.list.id)).toBe(true);
    // Claimed for B's session before the hand-over: the claim comment is the acknowledgement.
    expect(w.claimsOf(t1.id).map((c) => c.session)).toEqual(['bbbb2222']);
    expect((await w.marks('session-bbbb2222'))?.pollOffer?.key).toBe(t1.id);
    expect(idle.woken).toHaveLength(0);
    await b.tick();
    expect(idle.woken).toHaveLength(1);
    expect(idle.woken[0]!.content[0]!.text).toContain('修复登录');
    expect(busy.woken).toHaveLength(0);
    const record = await w.marks('session-bbbb2222');
    expect(record?.pollOffer).toBeUndefined();
    expect(record?.currentWork).toBe(t1.id);
    expect(b.tracker.get('session-bbbb2222')!.queueGranted).toBe(true);
  });

  it('two Works and idle sessions in two processes: each session gets a different Work, each Work one claim', async () => {
    const a = w.process(101);
    const b = w.process(102);
    const sa = await a.session('session-aaaa1111', '/code/app');
    const sb = await b.session('session-bbbb2222', '/code/app');
    await w.rounds(1);
    const t1 = w.task('第一');
    const t2 = w.task('第二');
    await w.rounds(25);
    expect(sa.woken).toHaveLength(1);
    expect(sb.woken).toHaveLength(1);
    const current = [(await w.marks('session-aaaa1111'))?.currentWork, (await w.marks('session-bbbb2222'))?.currentWork].sort();
    expect(current).toEqual([t1.id, t2.id].sort());
    expect(w.claimsOf(t1.id)).toHaveLength(1);
    expect(w.claimsOf(t2.id)).toHaveLength(1);
    // Later polls offer neither again.
    await w.rounds(3, 20_000);
    expect(sa.woken).toHaveLength(1);
    expect(sb.woken).toHaveLength(1);
  });

  it('route tags: a task tagged for the other directory goes to the session there, whichever process it is in', async () => {
    w.config.value = {
      ...w.config.value,
      bindings: [
        { cwd: '/code/web', projectId: w.list.id, tag: 'web' },
        { cwd: '/code/api', projectId: w.list.id, tag: 'api' },
      ],
    };
    const a = w.process(101);
    const b = w.process(102);
    const web = await a.session('session-aaaa1111', '/code/web');
    const api = await b.session('session-bbbb2222', '/code/api');
    await w.rounds(1);
    const t1 = w.task('接口超时', ['api']);
    await w.rounds(25);
    expect(web.woken).toHaveLength(0);
    expect(api.woken).toHaveLength(1);
    expect(w.claimsOf(t1.id).map((c) => c.session)).toEqual(['bbbb2222']);
  });

  it('a Work claimed elsewhere (another machine) is not handed to anyone', async () => {
    const a = w.process(101);
    const sa = await a.session('session-aaaa1111', '/code/app');
    const t1 = w.task('别人的');
    // Another machine of the same account claims it first (the owner's account).
    w.sim.addComment(w.list.id, t1.id, '🤖 other-box 开始处理（会话 cafe0001）');
    // The owner is learned from the first claim this machine posts; seed it as a sync would have.
    await a.engine.deps.state.update((s) => {
      s.owners[w.list.id] = w.sim.userId;
    });
    await a.tick();
    expect(sa.woken).toHaveLength(0);
    expect(w.claimsOf(t1.id).map((c) => c.host)).toEqual(['other-box']);
  });

  it('a session that is busy when the hand-over arrives declines it: the claim is released and the Work offered again', async () => {
    const a = w.process(101);
    const b = w.process(102);
    const busy = await a.session('session-aaaa1111', '/code/app', 'running');
    await a.tick();
    const sb = await b.session('session-bbbb2222', '/code/app');
    await b.tick();
    const t1 = w.task('改文案');
    await a.advance(20_000);
    await a.tick();
    expect((await w.marks('session-bbbb2222'))?.pollOffer?.key).toBe(t1.id);
    sb.status = 'running';
    await b.tick();
    expect(sb.woken).toHaveLength(0);
    expect(w.releasesOf(t1.id)).toHaveLength(1);
    // A's session becomes idle: the Work is offered again and goes to it.
    busy.status = 'idle';
    await a.advance(20_000);
    await a.tick();
    expect(busy.woken).toHaveLength(1);
    expect((await w.marks('session-aaaa1111'))?.currentWork).toBe(t1.id);
  });

  it("a hand-over to a process that died is withdrawn: the claim is released and the Work goes to a live session", async () => {
    const a = w.process(101);
    const b = w.process(102);
    const sa = await a.session('session-aaaa1111', '/code/app', 'running');
    await a.tick();
    await b.session('session-bbbb2222', '/code/app');
    await b.tick();
    const t1 = w.task('换图标');
    await a.advance(20_000);
    await a.tick();
    expect((await w.marks('session-bbbb2222'))?.pollOffer?.key).toBe(t1.id);
    // B's process dies before its next look.
    b.close();
    w.alive.delete(102);
    sa.status = 'idle';
    await a.advance(1_000);
    await a.tick();
    expect(w.releasesOf(t1.id)).toHaveLength(1);
    expect((await w.marks('session-bbbb2222'))?.pollOffer).toBeUndefined();
    await a.advance(20_000);
    await a.tick();
    expect(sa.woken).toHaveLength(1);
    expect(w.claimsOf(t1.id).map((c) => c.session)).toEqual(['bbbb2222', 'aaaa1111']);
  });

  it('a process that is stopped (Ctrl-Z): its idle session is handed nothing, and an offer made before it stopped is withdrawn at once', async () => {
    const a = w.process(101);
    const b = w.process(102);
    const sa = await a.session('session-aaaa1111', '/code/app', 'running');
    await a.tick();
    await b.session('session-bbbb2222', '/code/app');
    await b.tick();
    // B stops: a task written now is not claimed for its session.
    w.frozen.add(102);
    const t1 = w.task('挂起时写的');
    await a.advance(20_000);
    await a.tick();
    expect(w.claimsOf(t1.id)).toEqual([]);
    expect((await w.marks('session-bbbb2222'))?.pollOffer).toBeUndefined();
    // Control: continued, it is handed the Work at the next poll.
    w.frozen.delete(102);
    await a.advance(20_000);
    await a.tick();
    expect((await w.marks('session-bbbb2222'))?.pollOffer?.key).toBe(t1.id);
    // Stopped again before it took the offer: withdrawn at the next look, not two minutes later, and handed to A's session.
    w.frozen.add(102);
    sa.status = 'idle';
    await a.advance(1_000);
    await a.tick();
    expect((await w.marks('session-bbbb2222'))?.pollOffer).toBeUndefined();
    expect(w.releasesOf(t1.id)).toHaveLength(1);
    await a.advance(20_000);
    await a.tick();
    expect(sa.woken).toHaveLength(1);
    expect(w.claimsOf(t1.id).map((c) => c.session)).toEqual(['bbbb2222', 'aaaa1111']);
  });

  it('an idle session that holds an unfinished Work is not handed another (its Work is not switched under it); a free one is', async () => {
    const a = w.process(101);
    const sa = await a.session('session-aaaa1111', '/code/app');
    const t1 = w.task('先做的');
    await a.tick();
    expect(sa.woken).toHaveLength(1);
    // The session went idle again without finishing it (its person may be talking to it): the next task waits.
    const t2 = w.task('后来的');
    await a.advance(20_000);
    await a.tick();
    expect(sa.woken).toHaveLength(1);
    expect((await w.marks('session-aaaa1111'))?.currentWork).toBe(t1.id);
    expect(w.claimsOf(t2.id)).toHaveLength(0);
    // A free session comes: it gets the second task (control: the poller does hand out work).
    const sb = await a.session('session-bbbb2222', '/code/app');
    await a.advance(20_000);
    await a.tick();
    expect(sb.woken).toHaveLength(1);
    expect(w.claimsOf(t2.id).map((c) => c.session)).toEqual(['bbbb2222']);
    expect(w.releasesOf(t1.id)).toHaveLength(0);
  });

  it('a session whose process restarted right after it was handed a Work is woken for it again, once', async () => {
    const a = w.process(101);
    const b = w.process(102);
    await a.session('session-aaaa1111', '/code/app', 'running');
    await a.tick();
    const sb = await b.session('session-bbbb2222', '/code/app');
    await b.tick();
    const t1 = w.task('重启以后');
    await a.advance(20_000);
    await a.tick();
    await b.tick();
    expect(sb.woken).toHaveLength(1);
    // B dies before the session's turn began (no turn for crash recovery); dsh restarts it as process 103.
    b.close();
    w.alive.delete(102);
    const c = w.process(103);
    const again = await c.session('session-bbbb2222', '/code/app');
    await c.tick();
    expect(again.woken).toHaveLength(1);
    expect(again.woken[0]!.content[0]!.text).toContain('重启以后');
    expect((await w.marks('session-bbbb2222'))?.currentWork).toBe(t1.id);
    // Its claim was its own: nothing new was posted, and it is not woken a second time.
    expect(w.claimsOf(t1.id)).toHaveLength(1);
    await c.advance(20_000);
    await c.tick();
    expect(again.woken).toHaveLength(1);
    // Control: the session in the same process going idle again is not woken for it again.
    await b.tick();
    expect(sb.woken).toHaveLength(1);
  });

  it('a session crash recovery resumes is woken once, by recovery: not again for its handed Work, nor handed another', async () => {
    const a = w.process(101);
    const b = w.process(102);
    await a.session('session-aaaa1111', '/code/app', 'running');
    await a.tick();
    await b.session('session-bbbb2222', '/code/app');
    await b.tick();
    const t1 = w.task('做到一半');
    await a.advance(20_000);
    await a.tick();
    await b.tick();
    // The session's turn on t1 is open (as TurnMarkers writes it) when B is killed; dsh restarts it as process 103.
    await b.deps.state.update((s) => {
      Object.assign(s.sessions['session-bbbb2222']!, { turnOpenSince: Date.now(), turnOpenPid: 102, turnOpenBy: 'b', updatedAt: Date.now() });
    });
    b.close();
    w.alive.delete(102);
    const c = w.process(103);
    const again = await c.session('session-bbbb2222', '/code/app');
    await c.tick();
    expect(again.woken).toHaveLength(0);
    // Crash recovery takes the turn (clears its marker, marks the resume due) and waits its backoff: no wake from here.
    await c.deps.state.update((s) => {
      const record = s.sessions['session-bbbb2222'] as Record<string, unknown>;
      delete record.turnOpenSince;
      record.resumeDue = { pid: 103, until: a.clock.now() + 90_000 }; // the leader's clock reads it
      record.updatedAt = Date.now();
    });
    await c.advance(1_000);
    await c.tick();
    expect(again.woken).toHaveLength(0);
    expect(c.logs.join('\n')).not.toContain('woken again');
    // Its Work ended meanwhile (accepted before the kill): a new task is not handed to it while it is due…
    await c.deps.state.update((s) => {
      Object.assign(s.works[t1.id]!, { phase: 'closed' });
    });
    const t2 = w.task('新来的');
    for (let round = 0; round < 3; round++) {
      await a.advance(20_000);
      await a.tick();
      await c.advance(1_000);
      await c.tick();
    }
    expect(again.woken).toHaveLength(0);
    expect(w.claimsOf(t2.id)).toHaveLength(0);
    // …and once the resume has lapsed (control: the same session is free), it is.
    // (Each process of this world has its own clock: both are moved past the mark.)
    await a.advance(60_000);
    await c.advance(150_000);
    await a.tick();
    await c.tick();
    expect(again.woken).toHaveLength(1);
    expect(again.woken[0]!.content[0]!.text).toContain('新来的');
    expect((await w.marks('session-bbbb2222'))?.currentWork).toBe(t2.id);
  });

  it('a session of the leader’s own process with an interrupted turn is not handed new work until it is resumed', async () => {
    const a = w.process(101);
    const sa = await a.session('session-aaaa1111', '/code/app');
    await a.deps.state.update((s) => {
      Object.assign(s.sessions['session-aaaa1111']!, { resumeDue: { pid: 101, until: a.clock.now() + 30_000 }, updatedAt: Date.now() });
    });
    const t1 = w.task('等它回来');
    await a.tick();
    await a.advance(20_000);
    await a.tick();
    expect(sa.woken).toHaveLength(0);
    // The resumed turn opened and closed (its marker replaced the mark): now it is free.
    await a.deps.state.update((s) => {
      delete (s.sessions['session-aaaa1111'] as Record<string, unknown>).resumeDue;
    });
    await a.advance(20_000);
    await a.tick();
    expect(sa.woken).toHaveLength(1);
    expect(w.claimsOf(t1.id).map((x) => x.session)).toEqual(['aaaa1111']);
  });

  it('when the leader stops, another process leads within seconds and polls', async () => {
    const a = w.process(101);
    const b = w.process(102);
    await a.session('session-aaaa1111', '/code/app');
    const sb = await b.session('session-bbbb2222', '/code/app');
    await a.tick();
    await b.tick();
    expect(a.machine.leads('acct', w.list.id)).toBe(true);
    a.close();
    w.alive.delete(101);
    const t1 = w.task('接手');
    await b.advance(2_000);
    await b.tick();
    expect(b.machine.leads('acct', w.list.id)).toBe(true);
    expect(sb.woken).toHaveLength(1);
    expect(w.claimsOf(t1.id).map((c) => c.session)).toEqual(['bbbb2222']);
  });

  it('slows down when the list does not change, and speeds up when a session goes idle', async () => {
    const a = w.process(101, { baseMs: 10_000, ceilingMs: 60_000 });
    const s1 = await a.session('session-aaaa1111', '/code/app');
    const step = async (ms: number) => {
      await a.advance(ms);
      await a.tick();
    };
    await a.tick();
    const first = w.reads();
    // 15 minutes of quiet: a poll every 10 s for ten minutes, then every 20 s.
    for (let t = 0; t < 15 * 60; t += 5) await step(5_000);
    expect(w.reads() - first).toBeGreaterThanOrEqual(70);
    expect(w.reads() - first).toBeLessThanOrEqual(76);
    // Quiet for half an hour: the interval reaches its ceiling of a minute.
    for (let t = 0; t < 20 * 60; t += 10) await step(10_000);
    const slow = w.reads();
    for (let t = 0; t < 50; t += 5) await step(5_000);
    expect(w.reads() - slow).toBeLessThanOrEqual(1);
    // The session goes busy and idle again: a poll comes within seconds (at most one per 5 s), not after a minute.
    s1.status = 'running';
    await step(1_000);
    const before = w.reads();
    s1.status = 'idle';
    await step(1_000);
    await step(5_000);
    expect(w.reads()).toBe(before + 1);
    // A change in the list brings the pace back to the base interval (the first session takes the task and holds it, so
    // a second idle session keeps the poller reading).
    await a.session('session-bbbb2222', '/code/app');
    w.task('新的');
    await step(60_000);
    const fresh = w.reads();
    for (let t = 0; t < 60; t += 5) await step(5_000);
    expect(w.reads() - fresh).toBeGreaterThanOrEqual(5);
  });

});

describe('how soon a comment in Dida is seen, with the poller on and the list quiet (how-it-works.md)', () => {
  type Proc = ReturnType<PollWorld['process']>;

  /**
   * With the list quiet, lets `minutes` pass (5-s looks), then waits for the next look at the comments of Work `key` and
   * writes `comment` on `taskId` right after it (the worst moment); then looks every second until `seen`. Returns how
   * long that took, and how many list reads the poller made meanwhile.
   */
  async function writtenAfterALook(a: Proc, key: string, minutes: number, taskId: string, comment: string, seen: () => Promise<boolean>): Promise<{ seenMs: number; reads: number }> {
    const step = async (ms: number) => {
      await a.advance(ms);
      await a.tick();
    };
    const start = a.clock.now();
    while (a.clock.now() - start < minutes * 60_000) await step(5_000);
    const lookedAt = async () => (await w.state()).works[key]!.commentLook?.at;
    const before = await lookedAt();
    for (let i = 0; i < 700 && (await lookedAt()) === before; i++) await step(1_000);
    expect(await lookedAt()).not.toBe(before);
    w.sim.addComment(w.list.id, taskId, comment);
    const written = a.clock.now();
    const reads = w.reads();
    for (let i = 0; i < 700 && !(await seen()); i++) await step(1_000);
    expect(await seen()).toBe(true);
    return { seenMs: a.clock.now() - written, reads: w.reads() - reads };
  }

  /** A session asks the person and goes idle; `minutes` into the wait they answer on the 🙋 reminder (seen: resumed). */
  async function answerAfter(minutes: number): Promise<{ seenMs: number; reads: number }> {
    const a = w.process(101, {}, { engineOnClock: true });
    const session = await a.session('session-aaaa1111', '/code/app');
    const task = w.task('接入支付');
    await a.engine.sync(w.list.id);
    await a.engine.switchTo(session.id, w.list.id, task.id);
    const asked = await a.engine.waitForHuman(session.id, '需要商户号');
    const outcome = await writtenAfterALook(a, task.id, minutes, asked.waiting!.reminderTaskId!, '商户号是 M-1024', async () => !(await w.state()).works[task.id]!.waiting);
    expect((await w.state()).works[task.id]!.pendingAnswer?.text).toBe('商户号是 M-1024');
    return outcome;
  }

  /** The same for a rework comment on a review todo open `minutes` (seen: the rework Work is filed). */
  async function reworkAfter(minutes: number): Promise<number> {
    const a = w.process(101, {}, { engineOnClock: true });
    const session = await a.session('session-aaaa1111', '/code/app');
    const work = await a.engine.createWork(session.id, w.list.id, { title: '改文案', steps: ['改'] });
    await a.engine.changeSteps(session.id, [{ op: 'update', step: '改', status: 'completed', resolution: '改好了' }]);
    await a.engine.settle(session.id);
    const review = (await w.state()).works[work.taskId]!.acceptance!.taskId;
    const reworked = async () => (await w.state()).works[work.taskId]!.acceptance?.reworkTaskId !== undefined;
    return (await writtenAfterALook(a, work.taskId, minutes, review, '标题再短一点', reworked)).seenMs;
  }

  it('a rework comment on a review open for 20 minutes: within 2 minutes', async () => {
    expect(await reworkAfter(20)).toBeLessThanOrEqual(2 * 60_000 + POLL_TICK_MS);
  });

  it('a rework comment on a review open for more than half an hour: within 10 minutes', async () => {
    const seen = await reworkAfter(40);
    expect(seen).toBeLessThanOrEqual(10 * 60_000 + POLL_TICK_MS);
    expect(seen).toBeGreaterThan(2 * 60_000);
  });

  it('many reviews open a long time bring the polls forward no more often than one would: one comment list a poll', async () => {
    const a = w.process(101, {}, { engineOnClock: true });
    const session = await a.session('session-aaaa1111', '/code/app');
    for (let i = 0; i < 6; i++) {
      await a.engine.createWork(session.id, w.list.id, { title: `小事 ${i}`, steps: ['做'] });
      await a.engine.changeSteps(session.id, [{ op: 'update', step: '做', status: 'completed', resolution: '好了' }]);
      await a.engine.settle(session.id);
    }
    const step = async (ms: number) => {
      await a.advance(ms);
      await a.tick();
    };
    for (let t = 0; t < 70 * 60; t += 5) await step(5_000);
    const reads = w.reads();
    const comments = w.sim.counters()['GET /project/{pid}/task/{tid}/comments'] ?? 0;
    // Half an hour later: the ceiling's three polls, and a look at most every 10 minutes on top.
    for (let t = 0; t < 30 * 60; t += 5) await step(5_000);
    expect(w.reads() - reads).toBeGreaterThanOrEqual(3);
    expect(w.reads() - reads).toBeLessThanOrEqual(6);
    const looked = (w.sim.counters()['GET /project/{pid}/task/{tid}/comments'] ?? 0) - comments;
    expect(looked).toBeGreaterThanOrEqual(1);
    expect(looked).toBeLessThanOrEqual(w.reads() - reads);
  });

  it('in the first 10 minutes of a wait: at the next poll (20 s)', async () => {
    const { seenMs } = await answerAfter(5);
    expect(seenMs).toBeLessThanOrEqual(20_000 + POLL_TICK_MS);
  });

  it('later within a minute (45 minutes into the wait)', async () => {
    const { seenMs, reads } = await answerAfter(45);
    expect(seenMs).toBeLessThanOrEqual(60_000 + POLL_TICK_MS);
    // One read for it, not a poll every few seconds.
    expect(reads).toBe(1);
  });

  it('after an hour within 5 minutes (70 minutes into the wait)', async () => {
    const { seenMs, reads } = await answerAfter(70);
    expect(seenMs).toBeLessThanOrEqual(5 * 60_000 + POLL_TICK_MS);
    expect(seenMs).toBeGreaterThan(60_000);
    expect(reads).toBeLessThanOrEqual(2);
  });
});
