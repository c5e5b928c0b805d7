// Continuation's other verdicts (src/runtime/turns/continuation.ts) with a fake clock: a failure that needs the person at once
// (which engine call, which log line), a limit with a known reset waited for in 5-minute looks for a pause and kept
// in the session record, its cap, and the person or the turn's abort ending that wait.
import { describe, expect, it, vi } from 'vitest';
import { emptyEngineState } from '../../src/core/work/work-state';
import { Continuation, PAUSE_LOOK_MS, appendNote, liveFacts } from '../../src/runtime/turns/continuation';
import { StretchCounter } from '../../src/runtime/session/stretch-counter';
import { createHarness, fakeAgent, fakeEngine, flush, personSays, work, type HarnessOptions } from '../helpers/dsh-fakes';

const MIN = 60_000;

function setup(options: HarnessOptions & { unfinished?: boolean; paused?: boolean[]; row?: Record<string, unknown> } = {}) {
  const state = emptyEngineState();
  state.works.w1 = work('w1', [options.unfinished === false ? 'completed' : 'in_progress']);
  state.sessions['session-1'] = { touched: ['w1'], currentWork: 'w1', autoAttempts: 0, updatedAt: 0 };
  const h = createHarness({ state, ...options, row: { maxAutoContinue: 3, backoff: [10, 20, 40], ...options.row } });
  const agent = fakeAgent('session-1', { cwd: '/p' });
  const track = h.deps.tracker.add(agent);
  track.binding = { cwd: '/p', projectId: 'list-1' };
  const counter = new StretchCounter(h.deps);
  const answers = [...(options.paused ?? [])];
  const lookForPause = vi.fn(async () => answers.shift() ?? false);
  const continued = vi.fn();
  const continuation = new Continuation(h.deps, counter, lookForPause, continued);
  const session = () => h.state.value.sessions['session-1'] as Record<string, unknown>;
  return { ...h, agent, track, counter, continuation, lookForPause, continued, session };
}

const notes = (agent: ReturnType<typeof fakeAgent>) => agent.session.append.mock.calls.filter((c) => c[0] === 'user/message').map((c) => c[1].content[0].text as string);
const limited = (retryAfterMs: number, code = 'RATE_LIMIT') => ({ code, message: 'slow down', providerRetryAfterMs: retryAfterMs });

describe('a failure no retry fixes', () => {
  it('the current Work waits for the person with the cause, the stretch ends, and the log names the Work', async () => {
    const engine = fakeEngine({ waitForModelFailure: vi.fn(async () => ({ taskId: 'w1' })) });
    const t = setup({ engine });
    t.state.value.sessions['session-1']!.autoAttempts = 2;
    expect(await t.continuation.onRequestError({ agent: t.agent, failure: { code: 'AUTH' } })).toBeUndefined();
    expect(engine.waitForModelFailure).toHaveBeenCalledWith('session-1', 'auth', 'AUTH', undefined);
    expect(t.logs).toEqual(['model request failed (AUTH): no retry can fix it; Work w1 now waits for the person']);
    expect(t.state.value.sessions['session-1']!.autoAttempts).toBe(0);
    expect(t.clock.waits).toEqual([]);
    expect(notes(t.agent)).toEqual([]);
  });

  it('no current Work to flag, an unbound session, and an unknown code', async () => {
    const t = setup();
    await t.continuation.onRequestError({ agent: t.agent, failure: { code: 'QUOTA' } });
    expect(t.engine.waitForModelFailure).toHaveBeenCalledWith('session-1', 'quota', 'QUOTA', undefined);
    expect(t.logs).toEqual(['model request failed (QUOTA): no retry can fix it; no unfinished current Work to flag']);
    const u = setup();
    u.track.binding = undefined;
    await u.continuation.onRequestError({ agent: u.agent, failure: {} as never });
    expect(u.engine.waitForModelFailure).not.toHaveBeenCalled();
    expect(u.logs).toEqual(['model request failed (UNKNOWN): no retry can fix it']);
  });

  it('a failing hand-over is logged; a person already waiting gets no hand-over', async () => {
    const engine = fakeEngine({ waitForModelFailure: vi.fn(async () => Promise.reject(new Error('Dida down'))) });
    const t = setup({ engine });
    expect(await t.continuation.onRequestError({ agent: t.agent, failure: { code: 'INVALID_REQUEST' } })).toBeUndefined();
    expect(t.logs).toEqual(['could not ask the person for help: Dida down']);
    const u = setup();
    u.agent.inbox.nextTurn.push(personSays('I will fix the key'));
    expect(await u.continuation.onRequestError({ agent: u.agent, failure: { code: 'AUTH' } })).toBeUndefined();
    expect(u.engine.waitForModelFailure).not.toHaveBeenCalled();
  });

  it('a person writing while the attempts are read stops the hand-over', async () => {
    const t = setup();
    const read = t.state.read;
    t.state.read = (async () => {
      t.track.humanSignal.abort();
      return read();
    }) as typeof read;
    expect(await t.continuation.onRequestError({ agent: t.agent, failure: { code: 'AUTH' } })).toBeUndefined();
    expect(t.engine.waitForModelFailure).not.toHaveBeenCalled();
  });

  it('a limit whose reset lies beyond the longest wait goes to the person, told when it resets', async () => {
    const t = setup({ row: { maxWaitMinutes: 60 } });
    const now = t.clock.now();
    await t.continuation.onRequestError({ agent: t.agent, failure: limited(61 * MIN) });
    expect(t.engine.waitForModelFailure).toHaveBeenCalledWith('session-1', 'limit', 'RATE_LIMIT', now + 61 * MIN);
    expect(t.clock.waits).toEqual([]);
  });

  it('with automatic continuation off, a known reset is told to the person and nothing waits', async () => {
    const t = setup({ row: { maxAutoContinue: 0 } });
    const now = t.clock.now();
    expect(await t.continuation.onRequestError({ agent: t.agent, failure: limited(12 * MIN) })).toBeUndefined();
    expect(t.engine.waitForModelFailure).toHaveBeenCalledWith('session-1', 'limit', 'RATE_LIMIT', now + 12 * MIN);
    expect(t.clock.waits).toEqual([]);
    expect(t.session().waitUntil).toBeUndefined();
    const u = setup({ row: { maxAutoContinue: 0 } });
    u.agent.inbox.nextStep.push(personSays('hi'));
    await u.continuation.onRequestError({ agent: u.agent, failure: limited(12 * MIN) });
    expect(u.engine.waitForModelFailure).not.toHaveBeenCalled();
  });
});

describe("waiting for a limit's reset", () => {
  it('says when it carries on, keeps the wait in the record, looks for a pause every 5 minutes, then retries once', async () => {
    const t = setup();
    const until = t.clock.now() + 12 * MIN;
    const pending = t.continuation.onRequestError({ agent: t.agent, failure: limited(12 * MIN), signal: new AbortController().signal });
    await flush();
    expect(t.session().waitUntil).toEqual({ until, code: 'RATE_LIMIT' });
    expect(t.session().autoAttempts).toBe(1);
    expect(t.engine.noteWaitUntil).toHaveBeenCalledWith('session-1', until);
    expect(t.logs).toEqual(['model request failed (RATE_LIMIT); the limit resets in 12 min: waiting until then (attempt 1/3)']);
    await t.clock.advance(5 * MIN);
    expect(t.lookForPause).toHaveBeenCalledTimes(1);
    await t.clock.advance(5 * MIN);
    expect(t.lookForPause).toHaveBeenCalledTimes(2);
    expect(notes(t.agent)).toEqual([]);
    await t.clock.advance(2 * MIN - 1);
    expect(notes(t.agent)).toEqual([]);
    await t.clock.advance(1);
    expect(await pending).toEqual({ kind: 'retry' });
    // The last stretch of the wait (under 5 minutes) needs no look: the retry comes right after it.
    expect(t.lookForPause).toHaveBeenCalledTimes(2);
    expect(t.clock.waits).toEqual([PAUSE_LOOK_MS, PAUSE_LOOK_MS, 2 * MIN]);
    expect(notes(t.agent)).toHaveLength(1);
    expect(notes(t.agent)[0]).toContain('Automatic continuation 1/3');
    expect(notes(t.agent)[0]).toContain('(RATE_LIMIT)');
    expect(t.continued).toHaveBeenCalledTimes(1);
    expect(t.session().waitUntil).toBeUndefined();
  });

  it('a pause found from the phone ends the wait without a retry, and the record forgets the wait', async () => {
    const t = setup({ paused: [false, true] });
    const pending = t.continuation.onRequestError({ agent: t.agent, failure: limited(30 * MIN) });
    await flush();
    await t.clock.advance(10 * MIN);
    expect(await pending).toBeUndefined();
    expect(t.lookForPause).toHaveBeenCalledTimes(2);
    expect(notes(t.agent)).toEqual([]);
    expect(t.continued).not.toHaveBeenCalled();
    expect(t.session().waitUntil).toBeUndefined();
  });

  it('an unbound session waits without a word in Dida and without looking for a pause', async () => {
    const t = setup();
    t.track.binding = undefined;
    const pending = t.continuation.onRequestError({ agent: t.agent, failure: limited(11 * MIN) });
    await flush();
    await t.clock.advance(11 * MIN);
    expect(await pending).toEqual({ kind: 'retry' });
    expect(t.engine.noteWaitUntil).not.toHaveBeenCalled();
    expect(t.lookForPause).not.toHaveBeenCalled();
  });

  it('a failure to say so in Dida is logged and the wait goes on', async () => {
    const engine = fakeEngine({ noteWaitUntil: vi.fn(async () => Promise.reject(new Error('no network'))) });
    const t = setup({ engine });
    const pending = t.continuation.onRequestError({ agent: t.agent, failure: limited(2 * MIN) });
    await flush();
    expect(t.logs).toContain('could not say in Dida when the work carries on: no network');
    await t.clock.advance(2 * MIN);
    expect(await pending).toEqual({ kind: 'retry' });
    // A wait under 5 minutes never looks for a pause.
    expect(t.lookForPause).not.toHaveBeenCalled();
  });

  it("a person's message or the turn's abort ends the wait with no retry, and the wait is forgotten", async () => {
    const t = setup();
    const pending = t.continuation.onRequestError({ agent: t.agent, failure: limited(20 * MIN) });
    await flush();
    await t.clock.advance(MIN);
    t.track.humanSignal.abort();
    expect(await pending).toBeUndefined();
    expect(t.session().waitUntil).toBeUndefined();
    expect(notes(t.agent)).toEqual([]);

    const u = setup();
    const turn = new AbortController();
    const aborted = u.continuation.onRequestError({ agent: u.agent, failure: limited(20 * MIN), signal: turn.signal });
    await flush();
    turn.abort();
    expect(await aborted).toBeUndefined();
    expect(u.session().waitUntil).toBeUndefined();
  });

  it("a person's message queued by the time the reset comes wins over the retry", async () => {
    const t = setup();
    const pending = t.continuation.onRequestError({ agent: t.agent, failure: limited(3 * MIN) });
    await flush();
    t.agent.inbox.nextTurn.push(personSays('never mind'));
    await t.clock.advance(3 * MIN);
    expect(await pending).toBeUndefined();
    expect(notes(t.agent)).toEqual([]);
    expect(t.session().waitUntil).toBeUndefined();
  });

  it('nothing unfinished: no wait at all', async () => {
    const t = setup({ unfinished: false });
    expect(await t.continuation.onRequestError({ agent: t.agent, failure: limited(12 * MIN) })).toBeUndefined();
    expect(t.clock.waits).toEqual([]);
    expect(t.state.value.sessions['session-1']!.autoAttempts).toBe(0);
  });

  it('after the last attempt the Work waits for the person instead (no wait)', async () => {
    const engine = fakeEngine({ waitAfterAttempts: vi.fn(async () => work('w1', ['in_progress'])) });
    const t = setup({ engine });
    t.state.value.sessions['session-1']!.autoAttempts = 3;
    expect(await t.continuation.onRequestError({ agent: t.agent, failure: limited(12 * MIN) })).toBeUndefined();
    expect(engine.waitAfterAttempts).toHaveBeenCalledTimes(1);
    expect(t.clock.waits).toEqual([]);
    expect(t.session().waitUntil).toBeUndefined();
    // One attempt left still waits.
    const u = setup();
    u.state.value.sessions['session-1']!.autoAttempts = 2;
    const pending = u.continuation.onRequestError({ agent: u.agent, failure: limited(6 * MIN) });
    await flush();
    expect(u.logs[0]).toContain('(attempt 3/3)');
    expect(u.logs[0]).toContain('resets in 6 min');
    await u.clock.advance(6 * MIN);
    expect(await pending).toEqual({ kind: 'retry' });
  });

  it('a reset within the backoff is an ordinary backoff, not a wait', async () => {
    const t = setup();
    const pending = t.continuation.onRequestError({ agent: t.agent, failure: limited(5_000) });
    await flush();
    await t.clock.advance(10_000);
    expect(await pending).toEqual({ kind: 'retry' });
    expect(t.clock.waits).toEqual([10_000]);
    expect(t.engine.noteWaitUntil).not.toHaveBeenCalled();
  });
});

describe('continuation helpers', () => {
  it('appendNote appends to the session; a refused append is queued with inject and logged', () => {
    const h = createHarness();
    const agent = fakeAgent('a1');
    const track = h.deps.tracker.add(agent);
    appendNote(h.deps, track, 'hello');
    expect(agent.session.append).toHaveBeenCalledWith('user/message', expect.objectContaining({ id: 'id-1', content: [{ type: 'text', text: 'hello' }] }), { surfaceOp: 'append' });
    agent.session.append.mockImplementation(() => {
      throw new Error('closed');
    });
    appendNote(h.deps, track, 'again');
    expect(agent.inject).toHaveBeenCalledWith(expect.objectContaining({ id: 'id-2', content: [{ type: 'text', text: 'again' }] }));
    expect(h.logs).toEqual(['could not add the note to the session, queueing it instead: closed']);
  });

  it('liveFacts carries the open todo count and the goal phase when there is one', () => {
    const goals = { get: vi.fn(() => ({ id: 'g', revision: 1, phase: 'active' as const })), resume: vi.fn() };
    const h = createHarness({ goals });
    const track = h.deps.tracker.add(fakeAgent('a1'));
    track.modelTodosOpen = 2;
    expect(liveFacts(h.deps, track)).toEqual({ modelTodosOpen: 2, goalPhase: 'active' });
    const bare = createHarness();
    expect(liveFacts(bare.deps, bare.deps.tracker.add(fakeAgent('a2')))).toEqual({ modelTodosOpen: 0 });
  });
});

describe('from a fresh import', () => {
  it('a long wait looks for a pause every five minutes', async () => {
    vi.resetModules();
    const fresh = await import('../../src/runtime/turns/continuation');
    expect(fresh.PAUSE_LOOK_MS).toBe(5 * MIN);
  });
});
