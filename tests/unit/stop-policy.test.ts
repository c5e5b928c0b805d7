// The stop verdict of a failed model request (src/core/continuation/stop-policy.ts): which codes need the person at
// once and for which cause, when a known reset is waited for, when it is too far out, and the reminder's locale keys.
// The module is imported afresh before each test: its code sets and longest wait are built when it loads, so a code
// dropped from a set (a key error read as continuable) is seen.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { NeedsPersonCause } from '../../src/core/continuation/stop-policy';
import { getLocale } from '../../src/core/text/locale';

let classifyFailure: typeof import('../../src/core/continuation/stop-policy').classifyFailure;
let causeKey: typeof import('../../src/core/continuation/stop-policy').causeKey;
let DEFAULT_MAX_WAIT_MS: number;
let MAX_RESET_MS: number;
let NEEDS_PERSON_CAUSES: typeof import('../../src/core/continuation/stop-policy').NEEDS_PERSON_CAUSES;
beforeEach(async () => {
  vi.resetModules();
  ({ classifyFailure, causeKey, DEFAULT_MAX_WAIT_MS, MAX_RESET_MS, NEEDS_PERSON_CAUSES } = await import('../../src/core/continuation/stop-policy'));
});

const NOW = 1_000_000;
const base = { now: NOW, nextBackoffMs: 30_000 };

describe('classifyFailure', () => {
  it.each([
    ['AUTH', 'auth'],
    ['INVALID_CREDENTIAL', 'auth'],
    ['MISSING_CREDENTIAL', 'auth'],
    ['QUOTA', 'quota'],
    ['INVALID_REQUEST', 'invalid_request'],
    ['CONTEXT_WINDOW_EXCEEDED', 'invalid_request'],
    ['HTTP_400', 'invalid_request'],
    ['HTTP_404', 'invalid_request'],
    ['HTTP_413', 'invalid_request'],
    ['HTTP_422', 'invalid_request'],
    ['SOMETHING_NEW', 'unknown'],
    ['', 'unknown'],
    ['rate_limit', 'unknown'],
  ] as const)('%s needs the person (%s), whatever the service asked to wait', (code, cause) => {
    expect(classifyFailure({ ...base, code })).toEqual({ kind: 'needs_person', cause });
    expect(classifyFailure({ ...base, code, retryAfterMs: 60_000 })).toEqual({ kind: 'needs_person', cause });
  });

  it.each(['RATE_LIMIT', 'SERVER', 'TIMEOUT', 'TRANSPORT', 'EMPTY_RESPONSE', 'CONTENT_FILTER', 'INSUFFICIENT_SYSTEM_RESOURCE'])(
    '%s continues when no reset is known',
    (code) => {
      expect(classifyFailure({ ...base, code })).toEqual({ kind: 'continue' });
    },
  );

  it('continues when the reset is not beyond the next backoff, or is not a finite number', () => {
    expect(classifyFailure({ ...base, code: 'RATE_LIMIT', retryAfterMs: 30_000 })).toEqual({ kind: 'continue' });
    expect(classifyFailure({ ...base, code: 'RATE_LIMIT', retryAfterMs: 1 })).toEqual({ kind: 'continue' });
    expect(classifyFailure({ ...base, code: 'RATE_LIMIT', retryAfterMs: Number.POSITIVE_INFINITY })).toEqual({ kind: 'continue' });
    expect(classifyFailure({ ...base, code: 'RATE_LIMIT', retryAfterMs: Number.NaN })).toEqual({ kind: 'continue' });
  });

  it('a reset that is not a sensible date is an unknown reset: the backoff goes on (a millisecond epoch read as seconds, a far future)', () => {
    for (const retryAfterMs of [1e16, 1.76e15, 1.76e12, MAX_RESET_MS + 1, Number.MAX_VALUE]) {
      expect(classifyFailure({ ...base, code: 'RATE_LIMIT', retryAfterMs }), String(retryAfterMs)).toEqual({ kind: 'continue' });
      expect(classifyFailure({ ...base, code: 'RATE_LIMIT', retryAfterMs, maxWaitMs: 60_000 }), String(retryAfterMs)).toEqual({ kind: 'continue' });
    }
    // Control: a reset a month out is a date; beyond the longest wait it needs the person, told when.
    expect(MAX_RESET_MS).toBe(31 * 24 * 3600_000);
    expect(classifyFailure({ ...base, code: 'RATE_LIMIT', retryAfterMs: MAX_RESET_MS })).toEqual({ kind: 'needs_person', cause: 'limit', until: NOW + MAX_RESET_MS });
  });

  it('waits until a known reset beyond the backoff, rounded up to a whole millisecond', () => {
    expect(classifyFailure({ ...base, code: 'RATE_LIMIT', retryAfterMs: 30_001 })).toEqual({ kind: 'wait_until', until: NOW + 30_001 });
    expect(classifyFailure({ ...base, code: 'SERVER', retryAfterMs: 45_000.2 })).toEqual({ kind: 'wait_until', until: NOW + 45_001 });
  });

  it('a reset up to the longest wait is waited for; one further out needs the person, told when it resets', () => {
    expect(DEFAULT_MAX_WAIT_MS).toBe(18_000_000);
    expect(classifyFailure({ ...base, code: 'RATE_LIMIT', retryAfterMs: DEFAULT_MAX_WAIT_MS })).toEqual({ kind: 'wait_until', until: NOW + DEFAULT_MAX_WAIT_MS });
    expect(classifyFailure({ ...base, code: 'RATE_LIMIT', retryAfterMs: DEFAULT_MAX_WAIT_MS + 1 })).toEqual({
      kind: 'needs_person',
      cause: 'limit',
      until: NOW + DEFAULT_MAX_WAIT_MS + 1,
    });
    // A configured longest wait replaces the default.
    expect(classifyFailure({ ...base, code: 'RATE_LIMIT', retryAfterMs: 60_001, maxWaitMs: 60_000 })).toEqual({ kind: 'needs_person', cause: 'limit', until: NOW + 60_001 });
    expect(classifyFailure({ ...base, code: 'RATE_LIMIT', retryAfterMs: 60_000, maxWaitMs: 60_000 })).toEqual({ kind: 'wait_until', until: NOW + 60_000 });
  });
});

describe('causeKey', () => {
  it('names a reminder text of its own for every cause, in both locales', () => {
    expect(NEEDS_PERSON_CAUSES).toEqual(['auth', 'quota', 'invalid_request', 'limit', 'unknown']);
    for (const cause of NEEDS_PERSON_CAUSES) {
      const key = causeKey(cause);
      expect(key).toBe(`dida.waiting.cause.${cause}`);
      for (const locale of [getLocale('zh'), getLocale('en')]) expect(locale.t(key)).not.toBe(key);
    }
  });

  it('throws for a cause it has no words for', () => {
    expect(() => causeKey('other' as NeedsPersonCause)).toThrow('no words for other');
  });
});
