// Whether a state's sessions may hold a turn crash recovery could resume (src/core/continuation/recovery-window.ts):
// only a clear "nothing" skips the look; the window's edges, turns in the future, live and dead processes.
import { describe, expect, it } from 'vitest';
import { CRASH_RECOVERY_WINDOW_MS, mayHoldInterruptedTurn } from '../../src/core/continuation/recovery-window';

const NOW = 10_000_000;
const dead = () => false;
const alive = () => true;

describe('mayHoldInterruptedTurn', () => {
  it('is a 30-minute window', () => {
    expect(CRASH_RECOVERY_WINDOW_MS).toBe(30 * 60_000);
  });

  it('no sessions section, or records without an open turn, hold nothing', () => {
    expect(mayHoldInterruptedTurn(undefined, NOW, dead)).toBe(false);
    expect(mayHoldInterruptedTurn({}, NOW, dead)).toBe(false);
    expect(mayHoldInterruptedTurn({ a: {}, b: { turnOpenPid: 4 } }, NOW, dead)).toBe(false);
  });

  it('a section or record of the wrong shape may hold one', () => {
    expect(mayHoldInterruptedTurn(null, NOW, dead)).toBe(true);
    expect(mayHoldInterruptedTurn([], NOW, dead)).toBe(true);
    expect(mayHoldInterruptedTurn('x', NOW, dead)).toBe(true);
    expect(mayHoldInterruptedTurn(5, NOW, dead)).toBe(true);
    expect(mayHoldInterruptedTurn(true, NOW, dead)).toBe(true);
    expect(mayHoldInterruptedTurn({ a: null }, NOW, dead)).toBe(true);
    expect(mayHoldInterruptedTurn({ a: 3 }, NOW, dead)).toBe(true);
    expect(mayHoldInterruptedTurn({ a: { turnOpenSince: '5' } }, NOW, dead)).toBe(true);
  });

  it('a turn opened within the window by a process that is gone may be resumed, up to the window edge', () => {
    expect(mayHoldInterruptedTurn({ a: { turnOpenSince: NOW, turnOpenPid: 7 } }, NOW, dead)).toBe(true);
    expect(mayHoldInterruptedTurn({ a: { turnOpenSince: NOW - CRASH_RECOVERY_WINDOW_MS, turnOpenPid: 7 } }, NOW, dead)).toBe(true);
    expect(mayHoldInterruptedTurn({ a: { turnOpenSince: NOW - CRASH_RECOVERY_WINDOW_MS - 1, turnOpenPid: 7 } }, NOW, dead)).toBe(false);
    // Opened in the future (a clock set back): not resumed.
    expect(mayHoldInterruptedTurn({ a: { turnOpenSince: NOW + 1, turnOpenPid: 7 } }, NOW, dead)).toBe(false);
  });

  it('a turn whose process still runs is not interrupted; one without a pid may be', () => {
    const asked: number[] = [];
    const live = (pid: number) => {
      asked.push(pid);
      return true;
    };
    expect(mayHoldInterruptedTurn({ a: { turnOpenSince: NOW - 5, turnOpenPid: 7 } }, NOW, live)).toBe(false);
    expect(asked).toEqual([7]);
    expect(mayHoldInterruptedTurn({ a: { turnOpenSince: NOW - 5 } }, NOW, alive)).toBe(true);
    expect(mayHoldInterruptedTurn({ a: { turnOpenSince: NOW - 5, turnOpenPid: '7' } }, NOW, alive)).toBe(true);
  });

  it('looks past records that hold nothing to a later one that does', () => {
    const sessions = {
      a: {},
      b: { turnOpenSince: NOW - CRASH_RECOVERY_WINDOW_MS - 10, turnOpenPid: 1 },
      c: { turnOpenSince: NOW - 5, turnOpenPid: 2 },
      d: { turnOpenSince: NOW - 5, turnOpenPid: 3 },
    };
    expect(mayHoldInterruptedTurn(sessions, NOW, (pid) => pid === 2)).toBe(true);
    expect(mayHoldInterruptedTurn(sessions, NOW, (pid) => pid !== 1)).toBe(false);
  });
});
