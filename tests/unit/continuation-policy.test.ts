// The continuation policy: order of delays, the cap, what ends a stretch, 0 = off on every path, crash recovery rules.
import { describe, expect, it } from 'vitest';
import { CRASH_RECOVERY_WINDOW_MS } from '../../src/core/continuation/recovery-window';
import {
  backoffDelayMs,
  CONTINUABLE_CODES,
  continuationMessage,
  decideContinuation,
  decideRecovery,
  goalWantsWork,
  resetsCounter,
  touchedWorkUnfinished,
  waitUnlessAborted,
  type ContinuationInput,
  type RecoveryInput,
} from '../../src/core/continuation/continuation-policy';
import { emptyEngineState, type EngineState } from '../../src/core/work/work-state';
import { work } from '../helpers/dsh-fakes';

const base: ContinuationInput = { failureCode: 'SERVER', attempts: 0, maxAutoContinue: 5, backoffSeconds: [30, 60, 120, 300, 600], hasUnfinishedWork: true };

describe('backoffDelayMs', () => {
  it('walks the schedule in order and then repeats its last entry', () => {
    const schedule = [1, 2, 5];
    expect([0, 1, 2, 3, 7].map((n) => backoffDelayMs(schedule, n))).toEqual([1000, 2000, 5000, 5000, 5000]);
  });

  it('falls back to 30 s for an empty schedule and never waits a negative or broken delay', () => {
    expect(backoffDelayMs([], 0)).toBe(30_000);
    expect(backoffDelayMs([-5], 0)).toBe(0);
    expect(backoffDelayMs([Number.NaN], 0)).toBe(0);
    expect(backoffDelayMs([0.25], 0)).toBe(250);
    expect(backoffDelayMs([1, 2], -3)).toBe(1000);
    expect(backoffDelayMs([1, 2], 1.7)).toBe(2000);
  });
});

describe('decideContinuation', () => {
  it('continues attempt by attempt with the schedule in order until the cap, then is exhausted', () => {
    const decisions = [0, 1, 2, 3, 4, 5, 6].map((attempts) => decideContinuation({ ...base, attempts }));
    expect(decisions.slice(0, 5)).toEqual([30, 60, 120, 300, 600].map((s, i) => ({ kind: 'continue', delayMs: s * 1000, attempt: i + 1, variant: 'error' })));
    expect(decisions[5]).toEqual({ kind: 'stop', reason: 'exhausted' });
    expect(decisions[6]).toEqual({ kind: 'stop', reason: 'exhausted' });
  });

  it('maxAutoContinue 0 is off for every code, with or without work and attempts', () => {
    for (const code of [...CONTINUABLE_CODES, 'AUTH']) {
      for (const attempts of [0, 3]) {
        for (const hasUnfinishedWork of [true, false]) {
          expect(decideContinuation({ ...base, failureCode: code, attempts, hasUnfinishedWork, maxAutoContinue: 0 })).toEqual({ kind: 'stop', reason: 'off' });
        }
      }
    }
  });

  it('does not continue failures that another try cannot fix, or sessions with nothing unfinished', () => {
    for (const code of ['AUTH', 'INVALID_REQUEST', 'CONTEXT_WINDOW_EXCEEDED', 'UNKNOWN']) {
      expect(decideContinuation({ ...base, failureCode: code })).toEqual({ kind: 'stop', reason: 'not_continuable' });
    }
    expect(decideContinuation({ ...base, hasUnfinishedWork: false })).toEqual({ kind: 'stop', reason: 'no_work' });
  });

  it('continues every listed code, and marks the content filter so the note asks for a rephrase', () => {
    for (const code of ['RATE_LIMIT', 'SERVER', 'TIMEOUT', 'TRANSPORT', 'EMPTY_RESPONSE', 'CONTENT_FILTER', 'INSUFFICIENT_SYSTEM_RESOURCE']) {
      expect(decideContinuation({ ...base, failureCode: code })).toMatchObject({ kind: 'continue', variant: code === 'CONTENT_FILTER' ? 'content_filter' : 'error' });
    }
    expect(CONTINUABLE_CODES.size).toBe(7);
  });

  it('a cap of 1 allows exactly one attempt', () => {
    expect(decideContinuation({ ...base, maxAutoContinue: 1, attempts: 0 })).toMatchObject({ kind: 'continue', attempt: 1 });
    expect(decideContinuation({ ...base, maxAutoContinue: 1, attempts: 1 })).toEqual({ kind: 'stop', reason: 'exhausted' });
  });
});

describe('continuationMessage', () => {
  it('names the attempt, the cap and the code, so no two attempts send the same words', () => {
    const one = continuationMessage({ kind: 'continue', delayMs: 0, attempt: 1, variant: 'content_filter' }, 3, 'CONTENT_FILTER');
    const two = continuationMessage({ kind: 'continue', delayMs: 0, attempt: 2, variant: 'content_filter' }, 3, 'CONTENT_FILTER');
    expect(one).toContain('Automatic continuation 1/3');
    expect(one).toContain('(CONTENT_FILTER)');
    expect(one).toContain('rephrase');
    expect(two).toContain('Automatic continuation 2/3');
    expect(one).not.toBe(two);
    const plain = continuationMessage({ kind: 'continue', delayMs: 0, attempt: 1, variant: 'error' }, 3, 'SERVER');
    expect(plain).not.toContain('rephrase');
    expect(plain).toContain('todo list');
  });
});

describe('decideRecovery', () => {
  const now = 10_000_000;
  const input: RecoveryInput = { openSince: now - 60_000, now, ownerAlive: false, attempts: 0, maxAutoContinue: 3, backoffSeconds: [5, 10], hasUnfinishedWork: true };

  it('resumes an interrupted turn with the backoff of the attempts made, counting one more', () => {
    expect(decideRecovery(input)).toEqual({ kind: 'resume', delayMs: 5_000, attempt: 1 });
    expect(decideRecovery({ ...input, attempts: 1 })).toEqual({ kind: 'resume', delayMs: 10_000, attempt: 2 });
    expect(decideRecovery({ ...input, attempts: 2 })).toEqual({ kind: 'resume', delayMs: 10_000, attempt: 3 });
  });

  it('is off with maxAutoContinue 0, before any other rule', () => {
    expect(decideRecovery({ ...input, maxAutoContinue: 0 })).toEqual({ kind: 'skip', reason: 'off' });
    expect(decideRecovery({ ...input, maxAutoContinue: 0, openSince: undefined })).toEqual({ kind: 'skip', reason: 'off' });
  });

  it('skips what was not interrupted, still runs, is older than 30 minutes, has nothing unfinished, or used every attempt', () => {
    expect(decideRecovery({ ...input, openSince: undefined })).toEqual({ kind: 'skip', reason: 'not_interrupted' });
    expect(decideRecovery({ ...input, ownerAlive: true })).toEqual({ kind: 'skip', reason: 'owner_alive' });
    expect(decideRecovery({ ...input, openSince: now - CRASH_RECOVERY_WINDOW_MS - 1 })).toEqual({ kind: 'skip', reason: 'stale' });
    expect(decideRecovery({ ...input, openSince: now + 1 })).toEqual({ kind: 'skip', reason: 'stale' });
    expect(decideRecovery({ ...input, hasUnfinishedWork: false })).toEqual({ kind: 'skip', reason: 'no_work' });
    expect(decideRecovery({ ...input, attempts: 3 })).toEqual({ kind: 'skip', reason: 'exhausted' });
  });

  it('the 30-minute window includes its edges', () => {
    expect(decideRecovery({ ...input, openSince: now - CRASH_RECOVERY_WINDOW_MS }).kind).toBe('resume');
    expect(decideRecovery({ ...input, openSince: now }).kind).toBe('resume');
  });
});

describe('resetsCounter', () => {
  it('a person, progress, new work or a hand-over to the person start the count afresh; failures keep counting', () => {
    expect(resetsCounter({ kind: 'human_message' })).toBe(true);
    expect(resetsCounter({ kind: 'step_changed' })).toBe(true);
    expect(resetsCounter({ kind: 'new_work' })).toBe(true);
    expect(resetsCounter({ kind: 'exhausted' })).toBe(true);
    expect(resetsCounter({ kind: 'turn_end', reason: 'completed' })).toBe(true);
    for (const reason of ['error', 'aborted', 'interrupted', 'blocked', 'max-tokens', '']) expect(resetsCounter({ kind: 'turn_end', reason })).toBe(false);
    expect(resetsCounter({ kind: 'continued' })).toBe(false);
  });
});

describe('goalWantsWork', () => {
  it('only an active goal wants the session to keep working', () => {
    expect(goalWantsWork('active')).toBe(true);
    for (const phase of ['paused', 'blocked', 'complete', undefined]) expect(goalWantsWork(phase)).toBe(false);
  });
});

describe('touchedWorkUnfinished', () => {
  function stateWith(...works: ReturnType<typeof work>[]): EngineState {
    const state = emptyEngineState();
    for (const w of works) state.works[w.taskId] = w;
    state.sessions.s = { touched: works.map((w) => w.taskId), autoAttempts: 0, updatedAt: 0 };
    return state;
  }

  it('an open Work with an unsettled step, or with no plan yet, is unfinished', () => {
    expect(touchedWorkUnfinished(stateWith(work('a', ['completed', 'pending'])), 's')).toBe(true);
    expect(touchedWorkUnfinished(stateWith(work('a', ['in_progress'])), 's')).toBe(true);
    expect(touchedWorkUnfinished(stateWith(work('a', [])), 's')).toBe(true);
  });

  it('settled, waiting, sent-for-review, deleted-only or untouched Works are not', () => {
    expect(touchedWorkUnfinished(stateWith(work('a', ['completed', 'skipped'])), 's')).toBe(false);
    expect(touchedWorkUnfinished(stateWith(work('a', ['pending'], { waiting: { reason: 'x', previousPriority: 3, applied: true, since: 0 } })), 's')).toBe(false);
    expect(touchedWorkUnfinished(stateWith(work('a', ['pending'], { phase: 'accepting' })), 's')).toBe(false);
    expect(touchedWorkUnfinished(stateWith(work('a', ['completed', 'deleted'])), 's')).toBe(false);
    expect(touchedWorkUnfinished(stateWith(work('a', ['pending'])), 'other')).toBe(false);
    const missing = stateWith();
    missing.sessions.s!.touched = ['gone'];
    expect(touchedWorkUnfinished(missing, 's')).toBe(false);
  });

  it('one unfinished Work among settled ones is enough', () => {
    expect(touchedWorkUnfinished(stateWith(work('a', ['completed']), work('b', ['pending'])), 's')).toBe(true);
  });
});

describe('waitUnlessAborted', () => {
  it('resolves true after the time, false at once for an aborted signal, false when one aborts meanwhile', async () => {
    expect(await waitUnlessAborted(5, [])).toBe(true);
    const done = new AbortController();
    done.abort();
    expect(await waitUnlessAborted(60_000, [undefined, done.signal])).toBe(false);
    const later = new AbortController();
    const pending = waitUnlessAborted(60_000, [later.signal]);
    later.abort();
    expect(await pending).toBe(false);
  });
});
