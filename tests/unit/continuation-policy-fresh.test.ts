// Continuation rules (src/core/continuation/continuation-policy.ts) from a fresh import (the continuable codes and the
// recovery note are built at load), and crash recovery of a turn that was waiting for a limit's reset: it resumes at
// the reset, its window runs from then, and a reset older than the turn is no wait at all.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { CRASH_RECOVERY_WINDOW_MS } from '../../src/core/continuation/recovery-window';
import type { RecoveryInput } from '../../src/core/continuation/continuation-policy';
import { emptyEngineState } from '../../src/core/work/work-state';
import { makeStep, makeWork } from '../helpers/work-fixtures';

type Policy = typeof import('../../src/core/continuation/continuation-policy');
let p: Policy;
// Loaded afresh before each test (not once for the file), so what the load builds counts for that test.
beforeEach(async () => {
  vi.resetModules();
  p = await import('../../src/core/continuation/continuation-policy');
});

describe('continuation from a fresh import', () => {
  it('continues after exactly the transient failures', () => {
    expect([...p.CONTINUABLE_CODES].sort()).toEqual(['CONTENT_FILTER', 'EMPTY_RESPONSE', 'INSUFFICIENT_SYSTEM_RESOURCE', 'RATE_LIMIT', 'SERVER', 'TIMEOUT', 'TRANSPORT']);
    const base = { ownerAlive: false, attempts: 0, maxAutoContinue: 3, backoffSeconds: [1], hasUnfinishedWork: true };
    for (const code of p.CONTINUABLE_CODES) expect(p.decideContinuation({ ...base, failureCode: code }).kind, code).toBe('continue');
    expect(p.decideContinuation({ ...base, failureCode: '' })).toEqual({ kind: 'stop', reason: 'not_continuable' });
    expect(p.decideContinuation({ ...base, failureCode: 'AUTH' })).toEqual({ kind: 'stop', reason: 'not_continuable' });
  });

  it('the recovery note tells the model what happened and what to do', () => {
    expect(p.RECOVERY_MESSAGE).toMatch(/^\[dida-todo\] The previous turn was interrupted/);
    expect(p.RECOVERY_MESSAGE).toContain('todo list');
  });

  it('a zero backoff entry waits nothing; a fraction of a second is rounded to ms', () => {
    expect(p.backoffDelayMs([0], 0)).toBe(0);
    expect(p.backoffDelayMs([0.0004], 0)).toBe(0);
    expect(p.backoffDelayMs([0.25], 0)).toBe(250);
  });

  it('names which unfinished work keeps a session going', () => {
    const state = emptyEngineState();
    state.works.w1 = makeWork([makeStep({ id: 's1', title: 'a' })], { taskId: 'w1' });
    state.sessions.s1 = { touched: ['w1'], autoAttempts: 0, updatedAt: 0 };
    expect(p.unfinishedWork(state, 's1', { modelTodosOpen: 0 })).toBe('work');
    expect(p.unfinishedWork(state, 's2', { modelTodosOpen: 0, goalPhase: 'active' })).toBe('goal');
    expect(p.unfinishedWork(state, 's2', { modelTodosOpen: 2 })).toBe('todos');
    expect(p.unfinishedWork(state, 's2', { modelTodosOpen: 0 })).toBeUndefined();
  });
});

describe('crash recovery of a turn waiting for a reset', () => {
  const now = 50_000_000;
  const input: RecoveryInput = { openSince: now - 60_000, now, ownerAlive: false, attempts: 2, maxAutoContinue: 2, backoffSeconds: [5], hasUnfinishedWork: true };

  it('resumes at the reset, counted once already (even with every attempt used)', () => {
    expect(p.decideRecovery({ ...input, waitUntil: now + 90_000 })).toEqual({ kind: 'resume', delayMs: 90_000, attempt: 2 });
    expect(p.decideRecovery({ ...input, attempts: 0, waitUntil: now + 1_000 })).toEqual({ kind: 'resume', delayMs: 1_000, attempt: 1 });
    // A reset already past: at once.
    expect(p.decideRecovery({ ...input, waitUntil: now - 1_000 })).toEqual({ kind: 'resume', delayMs: 0, attempt: 2 });
    // A reset at the very moment the turn opened still counts.
    expect(p.decideRecovery({ ...input, waitUntil: input.openSince! })).toEqual({ kind: 'resume', delayMs: 0, attempt: 2 });
  });

  it('its window runs from the reset: an old turn whose reset is recent resumes; an old reset is stale', () => {
    const old = now - CRASH_RECOVERY_WINDOW_MS - 60_000;
    expect(p.decideRecovery({ ...input, openSince: old, waitUntil: now - 60_000 })).toEqual({ kind: 'resume', delayMs: 0, attempt: 2 });
    expect(p.decideRecovery({ ...input, openSince: old, waitUntil: now - CRASH_RECOVERY_WINDOW_MS - 1 })).toEqual({ kind: 'skip', reason: 'stale' });
    expect(p.decideRecovery({ ...input, openSince: old })).toEqual({ kind: 'skip', reason: 'stale' });
  });

  it('a reset from before the turn is no wait: the ordinary rules apply', () => {
    expect(p.decideRecovery({ ...input, waitUntil: input.openSince! - 1 })).toEqual({ kind: 'skip', reason: 'exhausted' });
    expect(p.decideRecovery({ ...input, attempts: 0, waitUntil: input.openSince! - 1 })).toEqual({ kind: 'resume', delayMs: 5_000, attempt: 1 });
    expect(p.decideRecovery({ ...input, waitUntil: now + 1_000, hasUnfinishedWork: false })).toEqual({ kind: 'skip', reason: 'no_work' });
  });
});
