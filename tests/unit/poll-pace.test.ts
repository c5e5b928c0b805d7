// How often the machine's poller reads a list (src/runtime/polling/poll-pace.ts), read from a fresh import before each test (its
// constants are built when it loads): the base while the list changes, doubling per ten quiet minutes up to the
// ceiling, a ceiling below the base, and the pace taken from the plugin row and config.yaml.
import { beforeEach, describe, expect, it, vi } from 'vitest';

let pace: typeof import('../../src/runtime/polling/poll-pace');
beforeEach(async () => {
  vi.resetModules();
  pace = await import('../../src/runtime/polling/poll-pace');
});

const MINUTE = 60_000;

describe('pollInterval', () => {
  it('the constants: a poll brought forward at most every 5 s, the interval doubling every 10 quiet minutes', () => {
    expect(pace.MIN_POLL_GAP_MS).toBe(5_000);
    expect(pace.QUIET_STEP_MS).toBe(10 * MINUTE);
    expect(pace.DEFAULT_POLL_SECONDS).toBe(20);
  });

  it('the base while the list changes, doubled per ten quiet minutes, up to the ceiling', () => {
    const p = { baseMs: 20_000, ceilingMs: 5 * MINUTE };
    expect(pace.pollInterval(p, 0)).toBe(20_000);
    expect(pace.pollInterval(p, 10 * MINUTE - 1)).toBe(20_000);
    expect(pace.pollInterval(p, 10 * MINUTE)).toBe(40_000);
    expect(pace.pollInterval(p, 25 * MINUTE)).toBe(80_000);
    expect(pace.pollInterval(p, 30 * MINUTE)).toBe(160_000);
    expect(pace.pollInterval(p, 40 * MINUTE)).toBe(5 * MINUTE);
    expect(pace.pollInterval(p, 24 * 60 * MINUTE)).toBe(5 * MINUTE);
  });

  it('a quiet time from a clock that went back is no quiet; a ceiling below the base keeps the base', () => {
    expect(pace.pollInterval({ baseMs: 20_000, ceilingMs: 5 * MINUTE }, -30 * MINUTE)).toBe(20_000);
    expect(pace.pollInterval({ baseMs: 60_000, ceilingMs: 10_000 }, 0)).toBe(60_000);
    expect(pace.pollInterval({ baseMs: 60_000, ceilingMs: 10_000 }, 60 * MINUTE)).toBe(60_000);
  });
});

describe('pollPaceFrom', () => {
  it('config.yaml wins where it says something; the row and the default fill the rest', () => {
    expect(pace.pollPaceFrom({ pollIntervalMinutes: 5 })).toEqual({ baseMs: 20_000, ceilingMs: 5 * MINUTE });
    expect(pace.pollPaceFrom({ pollSeconds: 30, pollIntervalMinutes: 5 })).toEqual({ baseMs: 30_000, ceilingMs: 5 * MINUTE });
    expect(pace.pollPaceFrom({ pollSeconds: 30, pollIntervalMinutes: 5 }, { enabled: true, intervalMinutes: 15, intervalSeconds: 45 })).toEqual({ baseMs: 45_000, ceilingMs: 15 * MINUTE });
    // A config that does not enable its own interval keeps the row's ceiling.
    expect(pace.pollPaceFrom({ pollSeconds: 30, pollIntervalMinutes: 5 }, { enabled: false, intervalMinutes: 15 })).toEqual({ baseMs: 30_000, ceilingMs: 5 * MINUTE });
    // A ceiling under the base is the base.
    expect(pace.pollPaceFrom({ pollSeconds: 600, pollIntervalMinutes: 1 })).toEqual({ baseMs: 600_000, ceilingMs: 600_000 });
  });
});

describe('pollDue', () => {
  const fast = { baseMs: 20_000, ceilingMs: 10 * MINUTE };
  const list = { lastPollAt: 0, lastChangeAt: -60 * MINUTE, soon: false };
  it('the interval passed, a session went idle, or a comment look falls due', () => {
    // Quiet an hour: the ceiling.
    expect(pace.pollDue(fast, list, 10 * MINUTE - 1, undefined)).toBe(false);
    expect(pace.pollDue(fast, list, 10 * MINUTE, undefined)).toBe(true);
    expect(pace.pollDue(fast, { ...list, soon: true }, 4_999, undefined)).toBe(false);
    expect(pace.pollDue(fast, { ...list, soon: true }, 5_000, undefined)).toBe(true);
    expect(pace.pollDue(fast, list, MINUTE - 1, MINUTE)).toBe(false);
    expect(pace.pollDue(fast, list, MINUTE, MINUTE)).toBe(true);
  });
});
