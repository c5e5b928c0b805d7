// Scheduling rules (src/core/time/schedule.ts) from a fresh import (its zone fallback and priority table are built at
// load), and the edges the main suite leaves: years before 1000, zones written with spaces, an all-day task whose
// stored time is later in its day, and the time a person reads in a comment (today or another day, in their zone).
import { beforeEach, describe, expect, it, vi } from 'vitest';

type Schedule = typeof import('../../src/core/time/schedule');
let s: Schedule;
// Loaded afresh before each test (not once for the file), so what the load builds counts for that test.
beforeEach(async () => {
  vi.resetModules();
  s = await import('../../src/core/time/schedule');
});
const at = (iso: string) => new Date(iso);

describe('schedule from a fresh import', () => {
  it('falls back to UTC, and maps each level to its priority', () => {
    expect(s.LAST_RESORT_ZONE).toBe('UTC');
    expect(s.resolveTimeZone('Bad/Zone', 'Also/Bad')).toBe('UTC');
    expect(s.calendarDate(at('2026-12-01T23:30:00Z'), 'Bad/Zone', 'Also/Bad')).toBe('2026-12-01');
    expect([s.priorityFromLevel('low'), s.priorityFromLevel('medium'), s.priorityFromLevel('high')]).toEqual([1, 3, 5]);
  });

  it('writes a year before 1000 with four digits', () => {
    expect(s.calendarDate(at('0999-06-01T12:00:00Z'), 'UTC')).toBe('0999-06-01');
  });

  it('takes a zone written with spaces around it, as the zone and as the fallback; blank is no zone', () => {
    expect(s.isValidTimeZone(' Asia/Shanghai ')).toBe(true);
    expect(s.isValidTimeZone('   ')).toBe(false);
    expect(s.resolveTimeZone('Bad/Zone', ' Asia/Tokyo ')).toBe('Asia/Tokyo');
    expect(s.calendarDate(at('2026-12-01T16:00:00Z'), ' Asia/Shanghai ')).toBe('2026-12-02');
  });

  it('an all-day task is open all its day, even before the time Dida stored with it', () => {
    const task = { startDate: '2026-12-02T04:00:00.000+0000', isAllDay: true, timeZone: 'Asia/Shanghai' };
    expect(s.timeGate(task, at('2026-12-02T02:00:00Z'), 'UTC')).toEqual({ open: true, day: '2026-12-02' });
    expect(s.timeGate({ ...task, isAllDay: false }, at('2026-12-02T02:00:00Z'), 'UTC')).toEqual({ open: false, reason: 'before_start', day: '2026-12-02' });
  });

  it('localTime: the time alone today, the date and time on another day, both in the account zone', () => {
    const now = Date.parse('2026-12-02T03:00:00Z');
    const shanghai = { now: () => now, timeZone: 'Asia/Shanghai' };
    expect(s.localTime(shanghai, Date.parse('2026-12-02T05:07:00Z'))).toBe('13:07');
    expect(s.localTime(shanghai, Date.parse('2026-12-02T17:05:00Z'))).toBe('2026-12-03 01:05');
    expect(s.localTime({ now: () => now }, Date.parse('2026-12-02T17:05:00Z'))).toBe('17:05');
    expect(s.localTime({ now: () => now }, Date.parse('2026-11-30T00:00:00Z'))).toBe('2026-11-30 00:00');
  });
});
