// The answer relay's log lines and guards (src/runtime/phone/answer-relay.ts): who was woken or given an answer (said on
// stderr's log), a new stretch for the woken session, nothing handed out while unloading, and the bounded first-step
// wait for the session's read when an answer may come with it.
import { describe, expect, it } from 'vitest';
import type { WorkRecord } from '../../src/core/work/work-state';
import { ANSWER_SYNC_WAIT_MS, AnswerRelay } from '../../src/runtime/phone/answer-relay';
import { StretchCounter } from '../../src/runtime/session/stretch-counter';
import { createHarness, fakeAgent, work } from '../helpers/dsh-fakes';

type Harness = ReturnType<typeof createHarness>;

function answered(key: string, extra: Partial<WorkRecord> = {}): WorkRecord {
  return work(key, ['in_progress'], { pendingAnswer: { text: 'use the read-only account', commentIds: ['c1'], at: 0, question: 'which account?' }, ...extra });
}

function bind(h: Harness, id: string, current?: string) {
  const agent = fakeAgent(id, { cwd: '/p' });
  const track = h.deps.tracker.add(agent);
  track.binding = { cwd: '/p', projectId: 'list-1' };
  if (current) h.state.value.sessions[id] = { currentWork: current, touched: [current], autoAttempts: 3, updatedAt: 0 };
  return { agent, track };
}

describe('AnswerRelay.deliver', () => {
  it('says which session it woke for which Work, and starts its stretch afresh', async () => {
    const h = createHarness();
    h.state.value.works.w1 = answered('w1');
    const { agent } = bind(h, 's1', 'w1');
    await new AnswerRelay(h.deps, new StretchCounter(h.deps)).deliver();
    expect(agent.followup).toHaveBeenCalledTimes(1);
    expect(h.logs).toEqual(['the person answered Work w1 in Dida; woke session s1 with it']);
    expect(h.state.value.sessions.s1!.autoAttempts).toBe(0);
  });

  it('a failed wake is logged with the session and the answer kept', async () => {
    const h = createHarness();
    h.state.value.works.w1 = answered('w1');
    const { agent } = bind(h, 's1', 'w1');
    agent.followup.mockImplementation(() => {
      throw new Error('disposed');
    });
    await new AnswerRelay(h.deps, new StretchCounter(h.deps)).deliver();
    expect(h.logs).toEqual(["could not wake session s1 with the person's answer (kept for later): disposed"]);
    expect(h.state.value.works.w1!.pendingAnswer).toBeDefined();
  });

  it('hands nothing out while unloading, to subagents, or to unbound sessions', async () => {
    const h = createHarness();
    h.state.value.works.w1 = answered('w1');
    const { agent } = bind(h, 's1', 'w1');
    h.lifetime.abort();
    await new AnswerRelay(h.deps, new StretchCounter(h.deps)).deliver();
    expect(agent.followup).not.toHaveBeenCalled();
    const u = createHarness();
    u.state.value.works.w1 = answered('w1');
    const child = bind(u, 'c1', 'w1');
    child.track.subagent = true;
    const loose = bind(u, 's2');
    loose.track.binding = undefined;
    u.state.value.sessions.s2 = { currentWork: 'w1', touched: ['w1'], autoAttempts: 0, updatedAt: 0 };
    await new AnswerRelay(u.deps, new StretchCounter(u.deps)).deliver();
    expect(child.agent.followup).not.toHaveBeenCalled();
    expect(loose.agent.followup).not.toHaveBeenCalled();
    expect(u.state.value.works.w1!.pendingAnswer).toBeDefined();
  });
});

describe('AnswerRelay.atTurnStart', () => {
  it('says which answers it gave to which session; a turn with no step number counts as its first', async () => {
    const h = createHarness();
    h.state.value.works.w1 = answered('w1');
    h.state.value.works.w2 = answered('w2');
    const { track } = bind(h, 's1');
    await new AnswerRelay(h.deps, new StretchCounter(h.deps)).atTurnStart(track, {});
    expect(track.pendingNotes).toHaveLength(2);
    expect(h.logs).toEqual(["gave the person's answer to w1, w2 to session s1"]);
  });

  it('nothing taken, nothing said; subagents and unbound sessions take nothing', async () => {
    const h = createHarness();
    const { track } = bind(h, 's1');
    const relay = new AnswerRelay(h.deps, new StretchCounter(h.deps));
    await relay.atTurnStart(track, { step: 1 });
    expect(h.logs).toEqual([]);
    h.state.value.works.w1 = answered('w1');
    track.subagent = true;
    await relay.atTurnStart(track, { step: 1 });
    track.subagent = false;
    track.binding = undefined;
    await relay.atTurnStart(track, { step: 1 });
    expect(track.pendingNotes).toEqual([]);
  });

  it("waits for the session's read at most 5 s when a Work of the list may bring an answer", async () => {
    const h = createHarness();
    h.state.value.works.w1 = work('w1', ['in_progress'], { waiting: { reason: 'q', previousPriority: 3, applied: true, since: 0 } as never });
    const { track } = bind(h, 's1');
    track.syncing = new Promise(() => undefined);
    let done = false;
    const start = new AnswerRelay(h.deps, new StretchCounter(h.deps)).atTurnStart(track, { step: 1 }).then(() => (done = true));
    await h.clock.advance(ANSWER_SYNC_WAIT_MS - 1);
    expect(done).toBe(false);
    await h.clock.advance(1);
    await start;
    expect(done).toBe(true);
  });

  it("takes the answer of the session's own current Work, not one another live session works on; a subagent's Work is no other session's", async () => {
    const h = createHarness();
    h.state.value.works.own = answered('own');
    h.state.value.works.theirs = answered('theirs');
    h.state.value.works.childs = answered('childs');
    const { track } = bind(h, 's1', 'own');
    bind(h, 's2', 'theirs');
    const child = bind(h, 'c1', 'childs');
    child.track.subagent = true;
    // A live session with no record yet holds no Work.
    bind(h, 's3');
    await new AnswerRelay(h.deps, new StretchCounter(h.deps)).atTurnStart(track, { step: 1 });
    expect(h.logs).toEqual(["gave the person's answer to own, childs to session s1"]);
    expect(h.state.value.works.theirs!.pendingAnswer).toBeDefined();
    expect(h.state.value.works.own!.pendingAnswer).toBeUndefined();
  });

  it('a later step of the turn takes nothing', async () => {
    const h = createHarness();
    h.state.value.works.w1 = answered('w1');
    const { track } = bind(h, 's1');
    await new AnswerRelay(h.deps, new StretchCounter(h.deps)).atTurnStart(track, { step: 2 });
    expect(track.pendingNotes).toEqual([]);
    expect(h.state.value.works.w1!.pendingAnswer).toBeDefined();
  });
});

describe('AnswerRelay.deliver, which session', () => {
  it("wakes only the session whose current Work was answered; a Work still waiting is not handed out; a session without a record takes nothing", async () => {
    const h = createHarness();
    h.state.value.works.w1 = answered('w1');
    h.state.value.works.w2 = answered('w2', { waiting: { reason: 'q', previousPriority: 3, applied: true, since: 0 } as never });
    h.state.value.works.w3 = work('w3', ['in_progress']);
    const one = bind(h, 's1', 'w1');
    const two = bind(h, 's2', 'w2');
    const three = bind(h, 's3', 'w3');
    const bare = bind(h, 's4');
    // A record whose current Work the state no longer has.
    bind(h, 's5', 'gone');
    delete h.state.value.works.gone;
    await new AnswerRelay(h.deps, new StretchCounter(h.deps)).deliver();
    expect(one.agent.followup).toHaveBeenCalledTimes(1);
    for (const other of [two, three, bare]) expect(other.agent.followup).not.toHaveBeenCalled();
    expect(h.state.value.works.w2!.pendingAnswer).toBeDefined();
    expect(h.logs).toEqual(['the person answered Work w1 in Dida; woke session s1 with it']);
  });
});

describe('AnswerRelay.deliver, nothing to hand', () => {
  it('no session holds an answered Work: the state is only read', async () => {
    const h = createHarness();
    h.state.value.works.w1 = answered('w1');
    bind(h, 's1', 'w9');
    h.state.value.works.w9 = work('w9', ['in_progress']);
    const writes = h.state.writes;
    await new AnswerRelay(h.deps, new StretchCounter(h.deps)).deliver();
    expect(h.state.writes).toBe(writes);
    expect(h.state.value.works.w1!.pendingAnswer).toBeDefined();
  });
});


describe('AnswerRelay and the session', () => {
  it('tells the session of each answer it hands over (woken or at its next step), by the Work’s title', async () => {
    const h = createHarness();
    h.state.value.works.w1 = answered('w1', { title: '部署' });
    h.state.value.works.w2 = answered('w2', { title: '发布' });
    const idle = bind(h, 's1', 'w1');
    const running = bind(h, 's2', 'w2');
    running.agent.status = 'running';
    const told: Array<[string, string]> = [];
    const relay = new AnswerRelay(h.deps, new StretchCounter(h.deps), () => undefined, (track, title) => told.push([track.sessionId, title]));
    await relay.deliver();
    expect(told.sort()).toEqual([
      ['s1', '部署'],
      ['s2', '发布'],
    ]);
    expect(idle.agent.followup).toHaveBeenCalledTimes(1);
    await relay.deliver();
    expect(told).toHaveLength(2);
  });
});
