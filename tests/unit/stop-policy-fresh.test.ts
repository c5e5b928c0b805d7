// The stop verdict's code sets and longest wait (src/core/continuation/stop-policy.ts) are built when the module loads;
// read from a fresh import before each test, so a code dropped from a set (a key error read as continuable) is seen.
import { beforeEach, describe, expect, it, vi } from 'vitest';

let policy: typeof import('../../src/core/continuation/stop-policy');
beforeEach(async () => {
  vi.resetModules();
  policy = await import('../../src/core/continuation/stop-policy');
});

const base = { now: 0, nextBackoffMs: 30_000 };

describe('stop-policy, from a fresh import', () => {
  it('the longest wait is five hours', () => {
    expect(policy.DEFAULT_MAX_WAIT_MS).toBe(18_000_000);
  });

  it.each([
    ['AUTH', 'auth'],
    ['INVALID_CREDENTIAL', 'auth'],
    ['MISSING_CREDENTIAL', 'auth'],
    ['INVALID_REQUEST', 'invalid_request'],
    ['CONTEXT_WINDOW_EXCEEDED', 'invalid_request'],
    ['HTTP_400', 'invalid_request'],
    ['HTTP_404', 'invalid_request'],
    ['HTTP_413', 'invalid_request'],
    ['HTTP_422', 'invalid_request'],
  ] as const)('%s needs the person for its own cause (%s)', (code, cause) => {
    expect(policy.classifyFailure({ ...base, code })).toEqual({ kind: 'needs_person', cause });
  });

  it('the empty code is not one of the sets (it is unknown)', () => {
    expect(policy.classifyFailure({ ...base, code: '' })).toEqual({ kind: 'needs_person', cause: 'unknown' });
  });
});
