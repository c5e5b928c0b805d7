// Continuation after a model error (src/runtime/turns/continuation.ts) with a fake clock: the backoff in order, the note inside
// the retried request, the cap, exhaustion ending the stretch, a person's message winning at every moment, and 0 = off.
import { describe, expect, it, vi } from 'vitest';
import { emptyEngineState } from '../../src/core/work/work-state';
import { Continuation } from '../../src/runtime/turns/continuation';
import { StretchCounter } from '../../src/runtime/session/stretch-counter';
import { createHarness, fakeAgent, fakeEngine, flush, personSays, work, type HarnessOptions } from '../helpers/dsh-fakes';

const failure = { code: 'SERVER', message: 'Overloaded', status: 503 };

/** A bound session with an unfinished Work. */
function setup(options: HarnessOptions & { unfinished?: boolean } = {}) {
  const state = emptyEngineState();
  state.works.w1 = work('w1', [options.unfinished === false ? 'completed' : 'in_progress']);
  state.sessions['session-1'] = { touched: ['w1'], currentWork: 'w1', autoAttempts: 0, updatedAt: 0 };
  const h = createHarness({ row: { maxAutoContinue: 3, backoff: [10, 20, 40] }, state, ...options });
  const agent = fakeAgent('session-1', { cwd: '/p' });
  const track = h.deps.tracker.add(agent);
  track.binding = { cwd: '/p', projectId: 'list-1' };
  const counter = new StretchCounter(h.deps);
  const continuation = new Continuation(h.deps, counter);
  return { ...h, agent, track, counter, continuation };
}

const notes = (agent: ReturnType<typeof fakeAgent>) => agent.session.append.mock.calls.filter((c) => c[0] === 'user/message').map((c) => c[1].content[0].text as string);

describe('Continuation.onRequestError', () => {
  it('waits the backoff in order, attempt by attempt, and appends a distinct note the retried request carries', async () => {
    const t = setup();
    const answers: unknown[] = [];
    for (let i = 0; i < 3; i++) {
      const pending = t.continuation.onRequestError({ agent: t.agent, failure, signal: new AbortController().signal });
      await flush();
      // Nothing before the wait is over.
      expect(notes(t.agent)).toHaveLength(i);
      await t.clock.advance([10, 20, 40][i]! * 1000);
      answers.push(await pending);
    }
    expect(answers).toEqual([{ kind: 'retry' }, { kind: 'retry' }, { kind: 'retry' }]);
    expect(t.clock.waits).toEqual([10_000, 20_000, 40_000]);
    expect(notes(t.agent).map((n) => n.slice(0, 40))).toEqual(['[dida-todo] Automatic continuation 1/3: ', '[dida-todo] Automatic continuation 2/3: ', '[dida-todo] Automatic continuation 3/3: ']);
    for (const call of t.agent.session.append.mock.calls) {
      expect(call[2]).toEqual({ surfaceOp: 'append' });
      expect(call[1].source).toEqual({ kind: 'dida-todo', plugin: 'dida-todo', form: 'notice' });
    }
    expect(t.agent.inject).not.toHaveBeenCalled();
    expect(t.state.value.sessions['session-1']!.autoAttempts).toBe(3);
    expect(t.state.value.sessions['session-1']!.lastAutoAt).toBe(t.clock.now() - 40_000);
  });

  it('the retry does not come before the full backoff', async () => {
    const t = setup();
    let answered = false;
    void t.continuation.onRequestError({ agent: t.agent, failure, signal: new AbortController().signal }).then(() => (answered = true));
    await t.clock.advance(9_999);
    expect(answered).toBe(false);
    await t.clock.advance(1);
    expect(answered).toBe(true);
  });

  it('after the last attempt: no retry, the current Work waits for the person, and the stretch starts afresh', async () => {
    const engine = fakeEngine({ waitAfterAttempts: vi.fn(async () => work('w1', ['in_progress'])) });
    const t = setup({ engine });
    t.state.value.sessions['session-1']!.autoAttempts = 3;
    expect(await t.continuation.onRequestError({ agent: t.agent, failure, signal: new AbortController().signal })).toBeUndefined();
    expect(engine.waitAfterAttempts).toHaveBeenCalledTimes(1);
    expect(engine.waitAfterAttempts.mock.calls[0]).toEqual(['session-1', 3, failure.code]);
    expect(t.clock.waits).toEqual([]);
    expect(notes(t.agent)).toEqual([]);
    // A 503 hours later is attempt 1 again, not an immediate hand-over.
    expect(t.state.value.sessions['session-1']!.autoAttempts).toBe(0);
    const later = t.continuation.onRequestError({ agent: t.agent, failure, signal: new AbortController().signal });
    await t.clock.advance(10_000);
    expect(await later).toEqual({ kind: 'retry' });
    expect(engine.waitAfterAttempts).toHaveBeenCalledTimes(1);
  });

  it('exhausted without an unfinished current Work only ends the stretch', async () => {
    const t = setup();
    t.state.value.sessions['session-1']!.autoAttempts = 3;
    expect(await t.continuation.onRequestError({ agent: t.agent, failure, signal: new AbortController().signal })).toBeUndefined();
    expect(t.engine.waitAfterAttempts).toHaveBeenCalledTimes(1);
    expect(t.engine.waitForHuman).not.toHaveBeenCalled();
    expect(t.logs).toContain(`automatic continuation gave up after 3 attempts (${failure.code}); no unfinished current Work to flag`);
    expect(t.state.value.sessions['session-1']!.autoAttempts).toBe(0);
  });

  it('maxAutoContinue 0: undefined at once, no wait, no note, no state written, no hand-over', async () => {
    const t = setup({ row: { maxAutoContinue: 0, backoff: [10] } });
    const writes = t.state.writes;
    expect(await t.continuation.onRequestError({ agent: t.agent, failure: { code: 'CONTENT_FILTER' }, signal: new AbortController().signal })).toBeUndefined();
    expect(t.clock.waits).toEqual([]);
    expect(t.agent.session.append).not.toHaveBeenCalled();
    expect(t.state.writes).toBe(writes);
    expect(t.engine.waitForHuman).not.toHaveBeenCalled();
  });

  it('a person\'s message already queued wins: no continuation at all', async () => {
    const t = setup();
    t.agent.inbox.nextTurn.push(personSays('stop, do X'));
    expect(await t.continuation.onRequestError({ agent: t.agent, failure, signal: new AbortController().signal })).toBeUndefined();
    expect(t.state.value.sessions['session-1']!.autoAttempts).toBe(0);
    expect(t.clock.waits).toEqual([]);
  });

  it('a person\'s message just before the wait starts (while the counter is written) ends it at once', async () => {
    const t = setup();
    const original = t.state.update;
    t.state.update = async (fn) => {
      const result = await original(fn);
      // The person writes between the counter write and the wait: the adapter replaces the signal.
      t.track.humanSignal.abort();
      t.track.humanSignal = new AbortController();
      return result;
    };
    const answer = await t.continuation.onRequestError({ agent: t.agent, failure, signal: new AbortController().signal });
    expect(answer).toBeUndefined();
    expect(notes(t.agent)).toEqual([]);
  });

  it('a person writing during the wait, the turn\'s abort, and disposal each end it with no retry', async () => {
    for (const stop of ['person', 'abort', 'dispose'] as const) {
      const t = setup();
      const turn = new AbortController();
      const pending = t.continuation.onRequestError({ agent: t.agent, failure, signal: turn.signal });
      await flush();
      expect(t.clock.waits).toEqual([10_000]);
      if (stop === 'person') t.track.humanSignal.abort();
      if (stop === 'abort') turn.abort({ kind: 'user' });
      if (stop === 'dispose') t.lifetime.abort();
      expect(await pending).toBeUndefined();
      expect(notes(t.agent)).toEqual([]);
    }
  });

  it('an already aborted turn or a disposed plugin answers undefined without reading anything', async () => {
    const t = setup();
    const turn = new AbortController();
    turn.abort();
    expect(await t.continuation.onRequestError({ agent: t.agent, failure, signal: turn.signal })).toBeUndefined();
    t.lifetime.abort();
    expect(await t.continuation.onRequestError({ agent: t.agent, failure, signal: new AbortController().signal })).toBeUndefined();
    expect(t.state.value.sessions['session-1']!.autoAttempts).toBe(0);
  });

  it('nothing unfinished: no continuation; a paused goal is not unfinished, an active one is', async () => {
    const goal = { id: 'g', revision: 1, phase: 'paused' as 'paused' | 'active' };
    const t = setup({ unfinished: false, goals: { get: () => goal, resume: vi.fn() } });
    expect(await t.continuation.onRequestError({ agent: t.agent, failure, signal: new AbortController().signal })).toBeUndefined();
    expect(t.clock.waits).toEqual([]);
    goal.phase = 'active';
    const pending = t.continuation.onRequestError({ agent: t.agent, failure, signal: new AbortController().signal });
    await t.clock.advance(10_000);
    expect(await pending).toEqual({ kind: 'retry' });
  });

  it('the model\'s own open todo_write items count as unfinished work', async () => {
    const t = setup({ unfinished: false });
    t.track.modelTodosOpen = 1;
    const pending = t.continuation.onRequestError({ agent: t.agent, failure, signal: new AbortController().signal });
    await t.clock.advance(10_000);
    expect(await pending).toEqual({ kind: 'retry' });
  });

  it('unknown or subagent sessions are left alone', async () => {
    const t = setup();
    const stranger = fakeAgent('session-x');
    expect(await t.continuation.onRequestError({ agent: stranger, failure, signal: new AbortController().signal })).toBeUndefined();
    const child = fakeAgent('child', { delegationDepth: 1 });
    t.deps.tracker.add(child);
    expect(await t.continuation.onRequestError({ agent: child, failure, signal: new AbortController().signal })).toBeUndefined();
    expect(t.clock.waits).toEqual([]);
  });

  it('when the session refuses the append, the note is queued instead', async () => {
    const t = setup();
    t.agent.session.append.mockImplementation(() => {
      throw new Error('session append cannot reenter');
    });
    const pending = t.continuation.onRequestError({ agent: t.agent, failure, signal: new AbortController().signal });
    await t.clock.advance(10_000);
    expect(await pending).toEqual({ kind: 'retry' });
    expect(t.agent.inject).toHaveBeenCalledTimes(1);
    expect(t.agent.inject.mock.calls[0]![0].content[0].text).toContain('Automatic continuation 1/3');
  });
});

describe('StretchCounter', () => {
  it('resets only on the events that end a stretch, and writes only when there is something to reset', async () => {
    const t = setup();
    await t.counter.record('session-1', 2);
    for (const event of [{ kind: 'turn_end', reason: 'error' }, { kind: 'turn_end', reason: 'aborted' }, { kind: 'continued' }] as const) {
      await t.counter.note('session-1', event);
      expect(await t.counter.attempts('session-1')).toBe(2);
    }
    await t.counter.note('session-1', { kind: 'turn_end', reason: 'completed' });
    expect(await t.counter.attempts('session-1')).toBe(0);
    const writes = t.state.writes;
    await t.counter.note('session-1', { kind: 'human_message' });
    expect(t.state.writes).toBe(writes);
    for (const kind of ['human_message', 'step_changed', 'new_work', 'exhausted'] as const) {
      await t.counter.record('session-1', 1);
      await t.counter.note('session-1', { kind });
      expect(await t.counter.attempts('session-1')).toBe(0);
    }
    expect(await t.counter.attempts('nobody')).toBe(0);
  });
});

describe('Continuation edges', () => {
  it('works without a turn signal, without a failure object, and with a goals service that has no goal', async () => {
    const t = setup({ goals: { get: () => undefined, resume: vi.fn() } });
    const pending = t.continuation.onRequestError({ agent: t.agent, failure } as never);
    await t.clock.advance(10_000);
    expect(await pending).toEqual({ kind: 'retry' });
    expect(t.logs).toContain('model request failed (SERVER); continuing automatically in 10 s (attempt 1/3)');
    expect(await t.continuation.onRequestError({ agent: t.agent } as never)).toBeUndefined();
  });

  it('exhausted while a person is already waiting: no hand-over (their message comes first)', async () => {
    const engine = fakeEngine({ currentWork: vi.fn(async () => work('w1', ['in_progress'])) });
    const t = setup({ engine });
    t.state.value.sessions['session-1']!.autoAttempts = 3;
    t.agent.inbox.nextStep.push(personSays('wait'));
    expect(await t.continuation.onRequestError({ agent: t.agent, failure, signal: new AbortController().signal })).toBeUndefined();
    expect(engine.waitForHuman).not.toHaveBeenCalled();
  });

  it('a person\'s message queued by the time the backoff ends wins over the retry', async () => {
    const t = setup();
    const pending = t.continuation.onRequestError({ agent: t.agent, failure, signal: new AbortController().signal });
    await flush();
    t.agent.inbox.nextTurn.push(personSays('new request'));
    await t.clock.advance(10_000);
    expect(await pending).toBeUndefined();
    expect(notes(t.agent)).toEqual([]);
  });

  it('exhausted in an unbound session hands nothing over', async () => {
    const engine = fakeEngine({ currentWork: vi.fn(async () => work('w1', ['in_progress'])) });
    const t = setup({ engine });
    t.track.binding = undefined;
    t.state.value.sessions['session-1']!.autoAttempts = 3;
    await t.continuation.onRequestError({ agent: t.agent, failure, signal: new AbortController().signal });
    expect(engine.waitForHuman).not.toHaveBeenCalled();
    expect(t.state.value.sessions['session-1']!.autoAttempts).toBe(0);
  });

  it('a failing hand-over is logged', async () => {
    const engine = fakeEngine({ waitAfterAttempts: vi.fn(async () => Promise.reject(new Error('Dida down'))) });
    const t = setup({ engine });
    t.state.value.sessions['session-1']!.autoAttempts = 3;
    await t.continuation.onRequestError({ agent: t.agent, failure, signal: new AbortController().signal });
    expect(t.logs).toContain('could not ask the person for help: Dida down');
  });
});
