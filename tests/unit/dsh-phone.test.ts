// The phone as the control panel, adapter side, with the dsh fakes and a fake clock: answers reach the right session
// once (a follow-up when idle, a note at its next step, the first step of the next turn in the directory), and a pause
// found at a step boundary stops the turn with the hook cause, reading Dida at most every 30 s.
import { describe, expect, it, vi } from 'vitest';
import type { EngineDeps } from '../../src/core/work/engine-context';
import { getLocale } from '../../src/core/text/locale';
import { PAUSE_CHECK_INTERVAL_MS } from '../../src/core/phone/phone-signals';
import type { WorkRecord } from '../../src/core/work/work-state';
import { AnswerRelay } from '../../src/runtime/phone/answer-relay';
import { PAUSE_CANCEL_REASON, PAUSE_CHECK_WAIT_MS, PAUSED_NOTE, PauseGuard } from '../../src/runtime/phone/pause-guard';
import { PhoneControl } from '../../src/runtime/phone/phone-control';
import { Poller } from '../../src/runtime/polling/poller';
import { StretchCounter } from '../../src/runtime/session/stretch-counter';
import { createHarness, fakeAgent, fakeEngine, flush, personSays, queueOf, work, type FakeAgent } from '../helpers/dsh-fakes';
import { idlePolling } from '../helpers/poll-idle';

type Harness = ReturnType<typeof createHarness>;

function answered(key: string, text: string, extra: Partial<WorkRecord> = {}): WorkRecord {
  return work(key, ['in_progress'], { pendingAnswer: { text, commentIds: ['c1'], at: 0, question: 'which account?' }, ...extra });
}

function bindAgent(h: Harness, id: string, current?: string): FakeAgent {
  const agent = fakeAgent(id, { cwd: '/p' });
  const track = h.deps.tracker.add(agent);
  track.binding = { cwd: '/p', projectId: 'list-1' };
  if (current) h.state.value.sessions[id] = { currentWork: current, touched: [current], autoAttempts: 0, updatedAt: h.clock.now() };
  return agent;
}

describe('AnswerRelay', () => {
  it('wakes the idle session whose current Work was answered with one fenced follow-up, once', async () => {
    const h = createHarness();
    h.state.value.works.w1 = answered('w1', '用只读账号 readonly');
    const agent = bindAgent(h, 's1', 'w1');
    h.state.value.sessions.s1!.autoAttempts = 2;
    const relay = new AnswerRelay(h.deps, new StretchCounter(h.deps));
    await relay.deliver();
    expect(agent.followup).toHaveBeenCalledTimes(1);
    const message = agent.followup.mock.calls[0]![0];
    expect(message.source).toMatchObject({ kind: 'dida-todo', plugin: 'dida-todo' });
    const text: string = message.content[0].text;
    expect(text.indexOf('用只读账号 readonly')).toBeGreaterThan(text.indexOf('<<<DIDA_DATA label=answer'));
    expect(h.state.value.works.w1!.pendingAnswer).toBeUndefined();
    // Handed over a new stretch of work.
    expect(h.state.value.sessions.s1!.autoAttempts).toBe(0);
    await relay.deliver();
    expect(agent.followup).toHaveBeenCalledTimes(1);
  });

  it('a running session, or an idle one with a person’s message queued, gets it at its next step instead', async () => {
    const h = createHarness();
    h.state.value.works.w1 = answered('w1', 'A');
    h.state.value.works.w2 = answered('w2', 'B');
    const running = bindAgent(h, 's1', 'w1');
    running.status = 'running';
    const busy = bindAgent(h, 's2', 'w2');
    busy.inbox.nextTurn.push(personSays('hi'));
    await new AnswerRelay(h.deps, new StretchCounter(h.deps)).deliver();
    expect(running.followup).not.toHaveBeenCalled();
    expect(busy.followup).not.toHaveBeenCalled();
    expect(h.deps.tracker.get('s1')!.pendingNotes.map((m) => m.content[0]!.text)).toEqual([expect.stringContaining('Work w1')]);
    expect(h.deps.tracker.get('s2')!.pendingNotes).toHaveLength(1);
  });

  it('leaves answers of Works no live session has as current, of waiting Works, and of other lists; a failed follow-up puts the answer back', async () => {
    const h = createHarness();
    h.state.value.works.w1 = answered('w1', 'A', { waiting: { reason: 'r', previousPriority: 3, applied: true, since: 0 } });
    h.state.value.works.w3 = answered('w3', 'C');
    const agent = bindAgent(h, 's1', 'w1');
    const relay = new AnswerRelay(h.deps, new StretchCounter(h.deps));
    await relay.deliver();
    expect(agent.followup).not.toHaveBeenCalled();
    expect(h.state.value.works.w3!.pendingAnswer).toBeDefined();

    delete h.state.value.works.w1!.waiting;
    agent.followup.mockImplementation(() => {
      throw new Error('agent disposed');
    });
    await relay.deliver();
    expect(h.state.value.works.w1!.pendingAnswer?.text).toBe('A');
    expect(h.logs.some((l) => l.includes('kept for later'))).toBe(true);
  });

  it('at the first step of a turn, after the session’s first read, the session gets answers nobody else live works on', async () => {
    const h = createHarness();
    h.state.value.works.w1 = answered('w1', 'for the old session');
    h.state.value.works.other = answered('other', 'another list', { projectId: 'list-2' });
    const held = bindAgent(h, 's0', 'w1');
    const fresh = bindAgent(h, 's2');
    const track = h.deps.tracker.get('s2')!;
    const relay = new AnswerRelay(h.deps, new StretchCounter(h.deps));
    await relay.atTurnStart(track, { step: 1 });
    expect(track.pendingNotes).toEqual([]);

    h.deps.tracker.remove(held.id);
    // The answer arrives with the session's first read of its list, which the first step waits for.
    h.state.value.works.w1!.pendingAnswer = undefined;
    track.sessionSync = {
      startedAt: h.clock.now(),
      promise: Promise.resolve().then(() => {
        h.state.value.works.w1 = answered('w1', 'for the old session');
      }),
    };
    await relay.atTurnStart(track, { step: 2 });
    expect(track.pendingNotes).toEqual([]);
    await relay.atTurnStart(track, { step: 1 });
    expect(track.pendingNotes.map((m) => m.content[0]!.text)).toEqual([expect.stringContaining('for the old session')]);
    expect(h.state.value.works.other!.pendingAnswer).toBeDefined();
    expect(fresh.followup).not.toHaveBeenCalled();
  });
});

describe('AnswerRelay and route tags', () => {
  it('at the first step of a turn, an answer goes only to a directory the Work may run in, in either of two processes', async () => {
    const config = { version: 1, bindings: [
      { cwd: '/code/web', projectId: 'list-1', label: 'l', tag: 'web' },
      { cwd: '/code/api', projectId: 'list-1', label: 'l', tag: 'api' },
    ] } as never;
    // Two dsh processes of one machine: two adapters over one state file.
    const web = createHarness();
    const api = createHarness({ state: web.state.value });
    api.deps.state = web.state;
    web.state.value.works.w1 = answered('w1', '用只读账号', { tags: ['api'] });
    const track = (h: Harness, id: string, cwd: string, tag: string) => {
      const t = h.deps.tracker.add(fakeAgent(id, { cwd }));
      t.binding = { cwd, projectId: 'list-1', label: 'l', tag } as never;
      return t;
    };
    const webTrack = track(web, 'session-web', '/code/web', 'web');
    const apiTrack = track(api, 'session-api', '/code/api', 'api');
    await new AnswerRelay(web.deps, new StretchCounter(web.deps), () => config).atTurnStart(webTrack, { step: 1 });
    expect(webTrack.pendingNotes).toEqual([]);
    expect(web.state.value.works.w1!.pendingAnswer).toBeDefined();
    await new AnswerRelay(api.deps, new StretchCounter(api.deps), () => config).atTurnStart(apiTrack, { step: 1 });
    expect(apiTrack.pendingNotes.map((m) => m.content[0]!.text)).toEqual([expect.stringContaining('用只读账号')]);
    expect(web.state.value.works.w1!.pendingAnswer).toBeUndefined();
  });

  it('PhoneControl hands its config.yaml to the relay: the route decides at the first step there too', async () => {
    const config = { version: 1, bindings: [
      { cwd: '/code/web', projectId: 'list-1', label: 'l', tag: 'web' },
      { cwd: '/code/api', projectId: 'list-1', label: 'l', tag: 'api' },
    ] } as never;
    const h = createHarness();
    h.state.value.works.w1 = answered('w1', '用只读账号', { tags: ['api'] });
    const agent = fakeAgent('session-web', { cwd: '/code/web' });
    const track = h.deps.tracker.add(agent);
    track.binding = { cwd: '/code/web', projectId: 'list-1', label: 'l', tag: 'web' } as never;
    const control = new PhoneControl(h.deps, async () => ({ deps: {} as EngineDeps }), new StretchCounter(h.deps), () => config);
    await control.beforeStep(track, { agent, turn: 1, step: 1 } as never);
    expect(track.pendingNotes).toEqual([]);
    expect(h.state.value.works.w1!.pendingAnswer).toBeDefined();
    // Control: without the config the same step takes it.
    const open = new PhoneControl(h.deps, async () => ({ deps: {} as EngineDeps }), new StretchCounter(h.deps), () => undefined);
    await open.beforeStep(track, { agent, turn: 1, step: 1 } as never);
    expect(track.pendingNotes).toHaveLength(1);
  });
});

describe('the first step waits for nothing it does not need', () => {
  it('waits for the session’s first read of its list only when a Work of that list waits for the person or holds an answer', async () => {
    const h = createHarness();
    const agent = bindAgent(h, 's1');
    const track = h.deps.tracker.get('s1')!;
    const relay = new AnswerRelay(h.deps, new StretchCounter(h.deps));
    // A read that never ends: the step would hang on it for the full wait.
    track.sessionSync = { startedAt: h.clock.now(), promise: new Promise(() => undefined) };
    h.state.value.works.idle = work('idle', ['pending']);
    h.state.value.works.elsewhere = work('elsewhere', ['pending'], { projectId: 'list-2', waiting: { reason: 'which?', previousPriority: 3, applied: true, since: 0 } });
    let done = false;
    void relay.atTurnStart(track, { step: 1 }).then(() => (done = true));
    await flush();
    expect(done).toBe(true);

    h.state.value.works.asked = work('asked', ['pending'], { waiting: { reason: 'which?', previousPriority: 3, applied: true, since: 0 } });
    let waited = false;
    void relay.atTurnStart(track, { step: 1 }).then(() => (waited = true));
    await flush();
    expect(waited).toBe(false);
    expect(agent.followup).not.toHaveBeenCalled();
  });

  it('a session without a current Work is not looked at for a pause: no engine is made (its first Dida request waits)', async () => {
    const h = createHarness();
    bindAgent(h, 's1');
    const engineDeps = vi.fn(async () => {
      throw new Error('no engine should be made');
    });
    const guard = new PauseGuard(h.deps, engineDeps, () => ['stop']);
    await guard.beforeStep(h.deps.tracker.get('s1')!, { step: 1 });
    expect(engineDeps).not.toHaveBeenCalled();
    expect(h.logs.join('\n')).not.toContain('no engine');
  });
});

/** Engine deps over the harness state, with a Dida whose task and comments the test sets. */
function engineDeps(h: Harness) {
  const dida = {
    priority: 3,
    comments: [] as Array<{ id: string; title: string; userId: string; createdTime: string }>,
    posted: [] as string[],
    updates: [] as Array<Record<string, unknown>>,
  };
  const task = () => ({ id: 'w1', projectId: 'list-1', title: 'Work w1', status: 0, priority: dida.priority, items: [] });
  const gateway = {
    getTask: vi.fn(async () => task()),
    listComments: vi.fn(async () => dida.comments),
    addComment: vi.fn(async (_p: string, _t: string, text: string) => {
      dida.posted.push(text);
      return { id: `p${dida.posted.length}`, title: text, userId: 'owner' };
    }),
    updateTask: vi.fn(async (update: Record<string, unknown>) => {
      dida.updates.push(update);
      if (typeof update.priority === 'number') dida.priority = update.priority;
      return task();
    }),
  };
  const deps = {
    gateway,
    state: h.state,
    locks: { withLock: (_key: string, fn: (lock: { compromised: AbortSignal }) => Promise<unknown>) => fn({ compromised: new AbortController().signal }) },
    now: () => h.clock.now(),
    locale: getLocale('en'),
    log: (line: string) => h.logs.push(line),
  } as unknown as EngineDeps;
  return { deps, dida, gateway };
}

function pauseSetup(stopPhrases: readonly string[] = ['stop']) {
  const h = createHarness();
  h.state.value.works.w1 = work('w1', ['completed', 'in_progress', 'pending'], { mode: 'direct', priority: 3, humanFingerprint: '', body: '', nextStepNumber: 4, keepOpen: false, createdAt: 0, updatedAt: 0, rev: 1 });
  h.state.value.owners['list-1'] = 'owner';
  const agent = bindAgent(h, 's1', 'w1');
  agent.status = 'running';
  const cancel = vi.fn();
  (agent as FakeAgent & { cancel: typeof cancel }).cancel = cancel;
  const { deps, dida, gateway } = engineDeps(h);
  const guard = new PauseGuard(h.deps, async () => deps, () => stopPhrases);
  const track = h.deps.tracker.get('s1')!;
  const call = { tool: 'todo', exec: { agent } };
  return { h, agent, cancel, dida, gateway, guard, track, call };
}

describe('PauseGuard and the session', () => {
  it('tells the session of each pause it applies (the Work as paused), and of nothing else', async () => {
    const t = pauseSetup();
    const { deps } = engineDeps(t.h);
    const onPaused = vi.fn();
    const guard = new PauseGuard(t.h.deps, async () => deps, () => ['stop'], onPaused);
    await guard.afterToolCall(t.call);
    expect(onPaused).not.toHaveBeenCalled();
    t.h.state.value.works.w1!.priority = 0;
    await guard.afterToolCall(t.call);
    expect(onPaused).toHaveBeenCalledTimes(1);
    expect(onPaused.mock.calls[0]![0]).toBe(t.track);
    expect(onPaused.mock.calls[0]![1]).toMatchObject({ waiting: { pausedBy: 'priority' } });
    await guard.afterToolCall(t.call);
    expect(onPaused).toHaveBeenCalledTimes(1);
  });
});

describe('PauseGuard', () => {
  it('a priority set to none during the stretch stops the turn at the next todo call: the Work waits and says where it stopped', async () => {
    const t = pauseSetup();
    await t.guard.afterToolCall(t.call);
    expect(t.cancel).not.toHaveBeenCalled();
    // The task writer read the task in the next call and saw priority none; the record holds it (no new read needed).
    t.h.state.value.works.w1!.priority = 0;
    await t.guard.afterToolCall(t.call);
    expect(t.gateway.getTask).toHaveBeenCalledTimes(1);
    expect(t.cancel).toHaveBeenCalledTimes(1);
    expect(t.cancel).toHaveBeenCalledWith({ kind: 'hook', reason: PAUSE_CANCEL_REASON }, { keepInbox: true });
    expect(t.h.state.value.works.w1!.waiting).toMatchObject({ pausedBy: 'priority', previousPriority: 3, applied: true });
    expect(t.dida.posted).toEqual(['Paused: stopped at “step 1” (1/3 steps done).\nTo continue, set the priority back or comment here (for example “continue”, or more details).']);
    // No priority write: the person set it.
    expect(t.dida.updates).toEqual([]);
    // Waiting now: later boundaries find nothing to stop.
    await t.guard.afterToolCall(t.call);
    expect(t.cancel).toHaveBeenCalledTimes(1);
  });

  it('reads the task and its comments from Dida at most every 30 s per session; other tools never', async () => {
    const t = pauseSetup();
    await t.guard.afterToolCall({ tool: 'bash', exec: { agent: t.agent } });
    expect(t.gateway.getTask).not.toHaveBeenCalled();
    await t.guard.afterToolCall(t.call);
    await t.h.clock.advance(PAUSE_CHECK_INTERVAL_MS - 1);
    await t.guard.beforeStep(t.track, { step: 2 });
    expect(t.gateway.getTask).toHaveBeenCalledTimes(1);
    expect(t.gateway.listComments).toHaveBeenCalledTimes(1);
    await t.h.clock.advance(1);
    t.dida.priority = 0;
    await t.guard.beforeStep(t.track, { step: 3 });
    expect(t.gateway.getTask).toHaveBeenCalledTimes(2);
    expect(t.cancel).toHaveBeenCalledTimes(1);
  });

  it('the owner’s stop comment pauses it and sets the priority to none; a collaborator’s does not', async () => {
    const t = pauseSetup();
    t.dida.comments.push({ id: 'x', title: 'stop', userId: 'stranger', createdTime: '2026-11-30T02:00:00.000+0000' });
    await t.guard.afterToolCall(t.call);
    expect(t.cancel).not.toHaveBeenCalled();
    t.dida.comments.push({ id: 'c9', title: 'Stop!', userId: 'owner', createdTime: '2026-11-30T02:00:01.000+0000' });
    await t.h.clock.advance(PAUSE_CHECK_INTERVAL_MS);
    await t.guard.afterToolCall(t.call);
    expect(t.cancel).toHaveBeenCalledTimes(1);
    expect(t.h.state.value.works.w1!.waiting).toMatchObject({ pausedBy: 'comment', previousPriority: 3 });
    expect(t.h.state.value.works.w1!.phoneHandled).toEqual(['c9']);
    expect(t.dida.updates.map((u) => u.priority)).toEqual([0]);
  });

  it('at the start of a turn the person’s own message opened, the pause is recorded but their turn goes on; an automatic turn is stopped', async () => {
    const person = pauseSetup();
    await person.guard.afterToolCall(person.call);
    person.h.state.value.works.w1!.priority = 0;
    await person.guard.beforeStep(person.track, { step: 1, messages: [personSays('what is the state?')] });
    expect(person.h.state.value.works.w1!.waiting?.pausedBy).toBe('priority');
    expect(person.cancel).not.toHaveBeenCalled();

    const automatic = pauseSetup();
    await automatic.guard.afterToolCall(automatic.call);
    automatic.h.state.value.works.w1!.priority = 0;
    await automatic.guard.beforeStep(automatic.track, { step: 1, messages: [] });
    expect(automatic.cancel).toHaveBeenCalledTimes(1);
  });

  it('a priority set to none between turns is a pause at the next turn’s first look; the model is told; a draft taken at none is not', async () => {
    const t = pauseSetup();
    await t.guard.afterToolCall(t.call);
    t.guard.onIdle(t.track);
    // The person sets the held Work's priority to none while the session is idle, then types in the session.
    t.h.state.value.works.w1!.priority = 0;
    t.dida.priority = 0;
    await t.guard.beforeStep(t.track, { step: 1, turn: 2, messages: [personSays('继续')] });
    // Their own turn goes on (nothing cancelled) but the Work is paused in Dida and the model is told, once per turn.
    expect(t.cancel).not.toHaveBeenCalled();
    expect(t.h.state.value.works.w1!.waiting).toMatchObject({ pausedBy: 'priority', previousPriority: 3, applied: true });
    expect(t.track.pendingNotes.map((m) => m.content[0]!.text)).toEqual([PAUSED_NOTE('w1')]);
    await t.guard.beforeStep(t.track, { step: 1, turn: 2, messages: [] });
    expect(t.track.pendingNotes).toHaveLength(1);
    await t.guard.beforeStep(t.track, { step: 1, turn: 3, messages: [] });
    expect(t.track.pendingNotes).toHaveLength(2);

    // The control: a draft the session took at priority none never ran with a priority, so none is no pause.
    const draft = pauseSetup();
    draft.h.state.value.works.w1!.priority = 0;
    draft.dida.priority = 0;
    await draft.guard.afterToolCall(draft.call);
    draft.guard.onIdle(draft.track);
    await draft.guard.beforeStep(draft.track, { step: 1, turn: 2, messages: [personSays('继续')] });
    expect(draft.h.state.value.works.w1!.waiting).toBeUndefined();
    expect(draft.track.pendingNotes).toEqual([]);
  });

  it('after the poller read the list, an idle session’s Work at none is paused from the state alone (no request)', async () => {
    const t = pauseSetup();
    await t.guard.afterToolCall(t.call);
    t.guard.onIdle(t.track);
    t.agent.status = 'idle';
    t.h.state.value.works.w1!.priority = 0;
    const reads = t.gateway.getTask.mock.calls.length;
    await t.guard.afterPoll();
    expect(t.gateway.getTask.mock.calls.length).toBe(reads);
    expect(t.h.state.value.works.w1!.waiting).toMatchObject({ pausedBy: 'priority' });
    expect(t.cancel).not.toHaveBeenCalled();
    // A running session is left to its own next step.
    const running = pauseSetup();
    await running.guard.afterToolCall(running.call);
    running.agent.status = 'running';
    running.h.state.value.works.w1!.priority = 0;
    await running.guard.afterPoll();
    expect(running.h.state.value.works.w1!.waiting).toBeUndefined();
  });

  it('a priority set to none while dsh was down is a pause at the first look after the restart, crash recovery included', async () => {
    const ran = pauseSetup();
    await ran.guard.afterToolCall(ran.call);
    // The process dies mid-turn: what the state kept of the stretch is all the next process knows.
    const kept = structuredClone(ran.h.state.value.sessions.s1!);
    expect(kept).toMatchObject({ pauseSeen: { key: 'w1', priority: 3 } });
    for (const withRecord of [true, false]) {
      const t = pauseSetup();
      t.h.state.value.sessions.s1 = { ...structuredClone(kept), turnOpenSince: 1 } as typeof kept;
      if (!withRecord) delete (t.h.state.value.sessions.s1 as { pauseSeen?: unknown }).pauseSeen;
      t.dida.priority = 0;
      // Sync at the restart already folded the person's none into the record.
      t.h.state.value.works.w1!.priority = 0;
      // The resumed turn's first step (crash recovery's note is not a person's message).
      await t.guard.beforeStep(t.track, { step: 1, messages: [] });
      expect(t.gateway.getTask).toHaveBeenCalledTimes(1);
      if (withRecord) {
        expect(t.cancel).toHaveBeenCalledTimes(1);
        expect(t.h.state.value.works.w1!.waiting).toMatchObject({ pausedBy: 'priority', previousPriority: 3, applied: true });
      } else {
        // The control: without the kept priority, none at the first look is a draft the session was told to work on.
        expect(t.cancel).not.toHaveBeenCalled();
        expect(t.h.state.value.works.w1!.waiting).toBeUndefined();
      }
    }
  });

  it('a one-shot that takes over an interrupted session’s Work pauses it when it is at none now', async () => {
    const t = pauseSetup();
    t.h.state.value.sessions.old = { currentWork: 'w1', touched: ['w1'], autoAttempts: 0, updatedAt: 0, turnOpenSince: 1, pauseSeen: { key: 'w1', priority: 5 } } as never;
    t.dida.priority = 0;
    t.h.state.value.works.w1!.priority = 0;
    await t.guard.beforeStep(t.track, { step: 2 });
    expect(t.cancel).toHaveBeenCalledTimes(1);
    expect(t.h.state.value.works.w1!.waiting).toMatchObject({ pausedBy: 'priority', previousPriority: 5 });
  });

  it('idle keeps what the state kept of the stretch (a restart between turns still knows the Work ran with a priority)', async () => {
    const t = pauseSetup();
    await t.guard.afterToolCall(t.call);
    expect(t.h.state.value.sessions.s1).toMatchObject({ pauseSeen: { key: 'w1', priority: 3 } });
    const writes = t.h.state.writes;
    t.guard.onIdle(t.track);
    await flush();
    expect(t.h.state.value.sessions.s1).toMatchObject({ pauseSeen: { key: 'w1', priority: 3 } });
    expect(t.h.state.writes).toBe(writes);
  });

  it('a slow Dida holds a step up for at most 3 s; a stop it finds later still stops the turn', async () => {
    const t = pauseSetup();
    type Listed = Awaited<ReturnType<typeof t.gateway.listComments>>;
    let answer: (value: Listed) => void = () => undefined;
    t.gateway.listComments.mockImplementationOnce(() => new Promise<Listed>((resolve) => (answer = resolve)));
    let stepped = false;
    const step = t.guard.beforeStep(t.track, { step: 2 }).then(() => (stepped = true));
    await flush();
    expect(stepped).toBe(false);
    await t.h.clock.advance(PAUSE_CHECK_WAIT_MS);
    await step;
    expect(t.cancel).not.toHaveBeenCalled();
    answer([{ id: 'c1', title: 'stop', userId: 'owner', createdTime: '2026-11-30T02:00:00.000+0000' }]);
    await flush();
    expect(t.cancel).toHaveBeenCalledTimes(1);
    expect(t.track.background.size).toBe(0);
  });

  it('unbound sessions and subagents are never looked at; a Dida failure is logged and the next boundary looks again', async () => {
    const t = pauseSetup();
    t.track.binding = undefined;
    await t.guard.afterToolCall(t.call);
    t.track.binding = { cwd: '/p', projectId: 'list-1' };
    t.track.subagent = true;
    await t.guard.afterToolCall(t.call);
    expect(t.gateway.getTask).not.toHaveBeenCalled();
    t.track.subagent = false;
    t.gateway.getTask.mockRejectedValueOnce(new Error('Dida answered 503'));
    await t.guard.afterToolCall(t.call);
    expect(t.h.logs.filter((l) => l.includes('looking for a pause in Dida failed'))).toHaveLength(1);
    expect(t.cancel).not.toHaveBeenCalled();
    await t.h.clock.advance(PAUSE_CHECK_INTERVAL_MS);
    t.dida.priority = 0;
    await t.guard.afterToolCall(t.call);
    expect(t.cancel).toHaveBeenCalledTimes(1);
  });
});

describe('Poller and PhoneControl', () => {
  it('the poller hands answers out before waking anyone, and never wakes a session whose Work the person paused', async () => {
    const calls: string[] = [];
    const engine = fakeEngine({
      queue: async () => queueOf(['w2']),
      claimNext: async (sessionId: string) => {
        calls.push(`claim ${sessionId}`);
        return work('w2', ['pending']);
      },
    });
    const h = createHarness({ engine });
    h.state.value.works.w1 = work('w1', ['in_progress'], { waiting: { reason: 'r', previousPriority: 3, applied: true, since: 0, pausedBy: 'priority' } });
    const paused = bindAgent(h, 's1', 'w1');
    const poll = idlePolling(new Poller(h.deps, new StretchCounter(h.deps), async () => void calls.push('answers')), h.deps);
    await poll();
    expect(calls).toEqual(['answers']);
    expect(paused.followup).not.toHaveBeenCalled();
    delete h.state.value.works.w1!.waiting;
    await poll();
    expect(calls).toEqual(['answers', 'answers', 'claim s1']);
  });

  it('loads nothing for an unbound session or other tools; config.yaml’s stop phrases win over the row’s', async () => {
    const h = createHarness({ row: { stopPhrases: ['row phrase'] } });
    const { deps } = engineDeps(h);
    let config: { stopPhrases?: string[] } | undefined;
    const control = new PhoneControl(h.deps, async () => ({ deps }), new StretchCounter(h.deps), () => config as never);
    const load = vi.spyOn(control, 'load');
    const agent = fakeAgent('s1', { cwd: '/p' });
    const track = h.deps.tracker.add(agent);
    await control.beforeStep(track, { agent, turn: 1, step: 1 });
    await control.afterToolCall({ tool: 'dida_todo_setup', exec: { agent } });
    expect(load).not.toHaveBeenCalled();

    track.binding = { cwd: '/p', projectId: 'list-1' };
    const { pause } = await control.load();
    const phrases = (pause as unknown as { stopPhrases: () => readonly string[] }).stopPhrases;
    expect(phrases()).toEqual(['row phrase']);
    config = { stopPhrases: ['yaml phrase'] };
    expect(phrases()).toEqual(['yaml phrase']);
  });
});
