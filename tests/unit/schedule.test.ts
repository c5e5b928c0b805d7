import { describe, expect, it } from 'vitest';
import {
  localTime,
  localTimeIfAny,
  calendarDate,
  isRecurring,
  isValidTimeZone,
  levelFromPriority,
  occurrenceKey,
  priorityFromLevel,
  resolveTimeZone,
  timeGate,
  type TimeGateTask,
} from '../../src/core/time/schedule';

const at = (iso: string) => new Date(iso);

describe('calendarDate', () => {
  it.each([
    ['2026-12-01T16:00:00Z', 'Asia/Shanghai', '2026-12-02'],
    ['2026-12-01T15:59:59Z', 'Asia/Shanghai', '2026-12-01'],
    ['2026-12-01T16:00:00Z', 'UTC', '2026-12-01'],
    ['2026-12-01T23:30:00Z', 'America/New_York', '2026-12-01'],
    ['2026-12-02T04:59:59Z', 'America/New_York', '2026-12-01'],
    ['2026-12-02T05:00:00Z', 'America/New_York', '2026-12-02'],
    ['2026-03-09T03:59:00Z', 'America/New_York', '2026-03-08'],
    ['2026-03-09T04:00:00Z', 'America/New_York', '2026-03-09'],
    ['2026-12-31T23:00:00Z', 'Pacific/Kiritimati', '2027-01-01'],
    ['2026-01-01T05:00:00Z', 'Pacific/Pago_Pago', '2025-12-31'],
    ['2026-02-28T20:00:00Z', 'Asia/Kolkata', '2026-03-01'],
  ])('%s in %s is %s', (iso, zone, day) => {
    expect(calendarDate(at(iso), zone)).toBe(day);
  });

  it('accepts zone names case-insensitively', () => {
    expect(calendarDate(at('2026-12-01T16:00:00Z'), 'asia/shanghai')).toBe('2026-12-02');
  });

  it.each([
    ['Mars/Olympus_Mons', 'Asia/Shanghai', '2026-12-02'],
    ['', 'Asia/Shanghai', '2026-12-02'],
    ['+08:00', 'America/New_York', '2026-12-01'],
    ['Not/AZone', 'Also/Not', '2026-12-01'],
  ])('an invalid zone %j falls back to %s (then UTC) without throwing', (zone, fallback, day) => {
    expect(calendarDate(at('2026-12-01T16:00:00Z'), zone, fallback)).toBe(day);
  });

  it('treats a null or undefined zone as invalid', () => {
    expect(calendarDate(at('2026-12-01T16:00:00Z'), null, 'Asia/Shanghai')).toBe('2026-12-02');
    expect(calendarDate(at('2026-12-01T16:00:00Z'), undefined)).toBe('2026-12-01');
  });

  it('returns an empty string for an invalid Date', () => {
    expect(calendarDate(new Date(Number.NaN), 'UTC')).toBe('');
  });
});

describe('time zone resolution', () => {
  it.each([
    ['Asia/Shanghai', true],
    ['America/New_York', true],
    ['UTC', true],
    ['Mars/Base', false],
    ['', false],
    ['   ', false],
    [null, false],
    [undefined, false],
  ])('isValidTimeZone(%j) is %s', (zone, valid) => {
    expect(isValidTimeZone(zone)).toBe(valid);
  });

  it('prefers the zone, then the fallback, then UTC', () => {
    expect(resolveTimeZone('Europe/Berlin', 'Asia/Shanghai')).toBe('Europe/Berlin');
    expect(resolveTimeZone(' Europe/Berlin ', 'Asia/Shanghai')).toBe('Europe/Berlin');
    expect(resolveTimeZone('Bad/Zone', 'Asia/Shanghai')).toBe('Asia/Shanghai');
    expect(resolveTimeZone(null, 'Bad/Zone')).toBe('UTC');
    expect(resolveTimeZone(undefined)).toBe('UTC');
  });
});

describe('timeGate', () => {
  const shanghai = (fields: Partial<TimeGateTask>): TimeGateTask => ({ timeZone: 'Asia/Shanghai', ...fields });

  it('is always open for a task without dates', () => {
    expect(timeGate({}, at('2026-12-02T00:00:00Z'), 'Asia/Shanghai')).toEqual({ open: true });
    expect(timeGate({ startDate: null, dueDate: null, isAllDay: true }, at('2000-01-01T00:00:00Z'), 'UTC')).toEqual({ open: true });
    expect(timeGate({ startDate: '', dueDate: '' }, at('2026-12-02T00:00:00Z'), 'UTC')).toEqual({ open: true });
  });

  it('treats unreadable dates as absent', () => {
    expect(timeGate({ startDate: 'soon', dueDate: 'later' }, at('2026-12-02T00:00:00Z'), 'UTC')).toEqual({ open: true });
    expect(timeGate({ startDate: 'soon', dueDate: '2026-12-05T00:00:00+0000', isAllDay: true }, at('2026-12-02T00:00:00Z'), 'UTC')).toEqual({
      open: false,
      reason: 'not_today',
      day: '2026-12-05',
    });
  });

  // An all-day task for 2026-12-02 in Shanghai is stored as local midnight in UTC: 2026-12-01T16:00:00+0000.
  const allDayShanghai = shanghai({ startDate: '2026-12-01T16:00:00+0000', dueDate: '2026-12-01T16:00:00+0000', isAllDay: true });

  it.each([
    ['2026-12-01T15:59:59Z', { open: false, reason: 'not_today', day: '2026-12-02' }],
    ['2026-12-01T16:00:00Z', { open: true, day: '2026-12-02' }],
    ['2026-12-02T03:00:00Z', { open: true, day: '2026-12-02' }],
    ['2026-12-02T15:59:59Z', { open: true, day: '2026-12-02' }],
    ['2026-12-02T16:00:00Z', { open: false, reason: 'missed', day: '2026-12-02' }],
    ['2026-12-20T00:00:00Z', { open: false, reason: 'missed', day: '2026-12-02' }],
  ])('all-day Shanghai task at %s', (now, expected) => {
    expect(timeGate(allDayShanghai, at(now), 'UTC')).toEqual(expected);
  });

  it('computes the all-day day in the task zone, not from the UTC date', () => {
    // In UTC the stored instant is still 2026-12-01; the gate must say 2026-12-02.
    expect(timeGate(allDayShanghai, at('2026-12-01T20:00:00Z'), 'UTC')).toEqual({ open: true, day: '2026-12-02' });
  });

  // Timed task: 2026-12-02 09:30 Shanghai = 01:30Z.
  const timedShanghai = shanghai({ startDate: '2026-12-02T01:30:00.000+0000', dueDate: '2026-12-02T02:30:00.000+0000', isAllDay: false });

  it.each([
    ['2026-12-01T15:00:00Z', { open: false, reason: 'not_today', day: '2026-12-02' }],
    ['2026-12-01T16:00:00Z', { open: false, reason: 'before_start', day: '2026-12-02' }],
    ['2026-12-02T01:29:59Z', { open: false, reason: 'before_start', day: '2026-12-02' }],
    ['2026-12-02T01:30:00Z', { open: true, day: '2026-12-02' }],
    ['2026-12-02T10:00:00Z', { open: true, day: '2026-12-02' }],
    ['2026-12-02T15:59:59Z', { open: true, day: '2026-12-02' }],
    ['2026-12-02T16:00:00Z', { open: false, reason: 'missed', day: '2026-12-02' }],
  ])('timed Shanghai task (09:30 local) at %s', (now, expected) => {
    expect(timeGate(timedShanghai, at(now), 'UTC')).toEqual(expected);
  });

  it('treats a missing isAllDay as timed', () => {
    const task = shanghai({ startDate: '2026-12-02T01:30:00+0000' });
    expect(timeGate(task, at('2026-12-02T01:00:00Z'), 'UTC').reason).toBe('before_start');
  });

  it('uses the due date when there is no start date, including its time', () => {
    const task = shanghai({ dueDate: '2026-12-02T10:00:00+0000' }); // 18:00 Shanghai
    expect(timeGate(task, at('2026-12-02T09:00:00Z'), 'UTC')).toEqual({ open: false, reason: 'before_start', day: '2026-12-02' });
    expect(timeGate(task, at('2026-12-02T10:00:00Z'), 'UTC')).toEqual({ open: true, day: '2026-12-02' });
    expect(timeGate(task, at('2026-12-03T10:00:00Z'), 'UTC').reason).toBe('missed');
  });

  it('prefers the start date over the due date for the scheduled day', () => {
    const task = shanghai({ startDate: '2026-12-01T16:00:00+0000', dueDate: '2026-12-04T16:00:00+0000', isAllDay: true });
    expect(timeGate(task, at('2026-12-02T08:00:00Z'), 'UTC')).toEqual({ open: true, day: '2026-12-02' });
    expect(timeGate(task, at('2026-12-04T18:00:00Z'), 'UTC')).toEqual({ open: false, reason: 'missed', day: '2026-12-02' });
  });

  it('the same instant is a different day in UTC and in Shanghai', () => {
    const stored = { startDate: '2026-12-01T20:00:00+0000', isAllDay: false };
    const now = at('2026-12-01T21:00:00Z');
    expect(timeGate({ ...stored, timeZone: 'UTC' }, now, 'Asia/Shanghai')).toEqual({ open: true, day: '2026-12-01' });
    expect(timeGate({ ...stored, timeZone: 'Asia/Shanghai' }, now, 'UTC')).toEqual({ open: true, day: '2026-12-02' });
    expect(timeGate({ ...stored, timeZone: 'Asia/Shanghai' }, at('2026-12-01T15:00:00Z'), 'UTC').reason).toBe('not_today');
  });

  it.each([
    [null, 'Asia/Shanghai', '2026-12-02'],
    [undefined, 'Asia/Shanghai', '2026-12-02'],
    ['', 'Asia/Shanghai', '2026-12-02'],
    ['Atlantis/Capital', 'Asia/Shanghai', '2026-12-02'],
    [null, 'UTC', '2026-12-01'],
    ['Atlantis/Capital', 'Not/AZone', '2026-12-01'],
  ])('task zone %j falls back to the user zone %s', (zone, userZone, day) => {
    const gate = timeGate({ startDate: '2026-12-01T16:00:00+0000', isAllDay: true, timeZone: zone }, at('2026-12-01T17:00:00Z'), userZone);
    expect(gate.day).toBe(day);
  });

  describe('America/New_York DST days', () => {
    const ny = (startDate: string, isAllDay: boolean): TimeGateTask => ({ startDate, isAllDay, timeZone: 'America/New_York' });

    // 2026-03-08 is 23 hours long: midnight is 05:00Z (EST), the next midnight 04:00Z (EDT).
    const springAllDay = ny('2026-03-08T05:00:00+0000', true);
    it.each([
      ['2026-03-08T04:59:59Z', 'not_today'],
      ['2026-03-08T05:00:00Z', undefined],
      ['2026-03-09T03:59:59Z', undefined],
      ['2026-03-09T04:00:00Z', 'missed'],
    ])('spring-forward all-day task at %s → %s', (now, reason) => {
      const gate = timeGate(springAllDay, at(now), 'UTC');
      expect(gate.reason).toBe(reason);
      expect(gate.open).toBe(reason === undefined);
      expect(gate.day).toBe('2026-03-08');
    });

    // 03:30 EDT on 2026-03-08 = 07:30Z (02:00–03:00 local does not exist that day).
    const springTimed = ny('2026-03-08T07:30:00+0000', false);
    it.each([
      ['2026-03-08T06:59:00Z', 'before_start'],
      ['2026-03-08T07:29:59Z', 'before_start'],
      ['2026-03-08T07:30:00Z', undefined],
      ['2026-03-09T03:59:59Z', undefined],
      ['2026-03-09T04:00:00Z', 'missed'],
    ])('spring-forward timed task (03:30 EDT) at %s → %s', (now, reason) => {
      expect(timeGate(springTimed, at(now), 'UTC').reason).toBe(reason);
    });

    // 2026-11-01 is 25 hours long: midnight is 04:00Z (EDT), the next midnight 05:00Z (EST).
    const fallAllDay = ny('2026-11-01T04:00:00+0000', true);
    it.each([
      ['2026-11-01T03:59:59Z', 'not_today'],
      ['2026-11-01T04:00:00Z', undefined],
      ['2026-11-02T04:30:00Z', undefined],
      ['2026-11-02T04:59:59Z', undefined],
      ['2026-11-02T05:00:00Z', 'missed'],
    ])('fall-back all-day task at %s → %s', (now, reason) => {
      const gate = timeGate(fallAllDay, at(now), 'UTC');
      expect(gate.reason).toBe(reason);
      expect(gate.day).toBe('2026-11-01');
    });

    it('the repeated 01:30 hour: a task at the second 01:30 (EST) is before_start during the first', () => {
      const secondOneThirty = ny('2026-11-01T06:30:00+0000', false); // 01:30 EST
      expect(timeGate(secondOneThirty, at('2026-11-01T05:30:00Z'), 'UTC').reason).toBe('before_start'); // 01:30 EDT
      expect(timeGate(secondOneThirty, at('2026-11-01T06:30:00Z'), 'UTC')).toEqual({ open: true, day: '2026-11-01' });
    });
  });
});

describe('occurrenceKey', () => {
  it.each([
    [{ repeatFlag: 'RRULE:FREQ=DAILY;INTERVAL=1', startDate: '2026-12-01T16:00:00+0000', timeZone: 'Asia/Shanghai' }, '2026-12-02'],
    [{ repeatFlag: 'RRULE:FREQ=DAILY;INTERVAL=1', startDate: '2026-12-02T16:00:00+0000', timeZone: 'Asia/Shanghai' }, '2026-12-03'],
    [{ repeatFlag: 'RRULE:FREQ=WEEKLY', dueDate: '2026-12-01T16:00:00.000+0000', timeZone: 'Asia/Shanghai' }, '2026-12-02'],
    [{ repeatFlag: 'RRULE:FREQ=WEEKLY', startDate: '2026-12-01T16:00:00+0000', dueDate: '2026-12-05T16:00:00+0000', timeZone: 'Asia/Shanghai' }, '2026-12-02'],
    [{ repeatFlag: 'ERULE:NAME=CUSTOM;BYDATE=20261202', startDate: '2026-12-02T01:30:00+0000', timeZone: 'UTC' }, '2026-12-02'],
    [{ repeatFlag: 'RRULE:FREQ=DAILY', startDate: '2026-03-08T05:00:00+0000', timeZone: 'America/New_York' }, '2026-03-08'],
    [{ repeatFlag: 'RRULE:FREQ=DAILY', startDate: '2026-12-01T16:00:00+0000', timeZone: 'UTC' }, '2026-12-01'],
  ])('recurring %j → %s', (task, key) => {
    expect(occurrenceKey(task)).toBe(key);
  });

  it('is the same key for different times on the same local day', () => {
    const a = occurrenceKey({ repeatFlag: 'RRULE:FREQ=DAILY', startDate: '2026-12-01T16:00:00+0000', timeZone: 'Asia/Shanghai' });
    const b = occurrenceKey({ repeatFlag: 'RRULE:FREQ=DAILY', startDate: '2026-12-02T15:59:00.000+0000', timeZone: 'Asia/Shanghai' });
    expect(a).toBe(b);
  });

  it('falls back to the user zone, then UTC', () => {
    const task = { repeatFlag: 'RRULE:FREQ=DAILY', startDate: '2026-12-01T16:00:00+0000', timeZone: 'Bad/Zone' };
    expect(occurrenceKey(task, 'Asia/Shanghai')).toBe('2026-12-02');
    expect(occurrenceKey(task)).toBe('2026-12-01');
    expect(occurrenceKey({ ...task, timeZone: null }, 'Asia/Shanghai')).toBe('2026-12-02');
  });

  it.each([
    [{ repeatFlag: '', startDate: '2026-12-01T16:00:00+0000', timeZone: 'Asia/Shanghai' }],
    [{ repeatFlag: '   ', startDate: '2026-12-01T16:00:00+0000' }],
    [{ repeatFlag: null, startDate: '2026-12-01T16:00:00+0000' }],
    [{ startDate: '2026-12-01T16:00:00+0000' }],
    [{ repeatFlag: 'RRULE:FREQ=DAILY' }],
    [{ repeatFlag: 'RRULE:FREQ=DAILY', startDate: 'garbage', dueDate: null }],
  ])('is empty for a non-recurring or undated task %j', (task) => {
    expect(occurrenceKey(task)).toBe('');
  });

  it('isRecurring follows repeatFlag', () => {
    expect(isRecurring({ repeatFlag: 'RRULE:FREQ=DAILY' })).toBe(true);
    expect(isRecurring({ repeatFlag: ' ' })).toBe(false);
    expect(isRecurring({ repeatFlag: null })).toBe(false);
    expect(isRecurring({})).toBe(false);
  });
});

describe('priority levels', () => {
  it.each([
    ['low', 1],
    ['medium', 3],
    ['high', 5],
  ] as const)('priorityFromLevel(%s) = %i', (level, priority) => {
    expect(priorityFromLevel(level)).toBe(priority);
  });

  it.each([
    [0, 'none'],
    [-1, 'none'],
    [Number.NaN, 'none'],
    [Number.NEGATIVE_INFINITY, 'none'],
    [1, 'low'],
    [2, 'low'],
    [3, 'medium'],
    [4, 'medium'],
    [5, 'high'],
    [6, 'high'],
    [100, 'high'],
    [0.5, 'low'],
  ])('levelFromPriority(%d) = %s', (priority, level) => {
    expect(levelFromPriority(priority)).toBe(level);
  });

  it('round-trips every settable level', () => {
    for (const level of ['low', 'medium', 'high'] as const) expect(levelFromPriority(priorityFromLevel(level))).toBe(level);
  });
});

describe('localTimeIfAny', () => {
  const deps = { now: () => Date.parse('2026-12-02T04:00:00Z'), timeZone: 'Asia/Shanghai' };
  it('is localTime for a date, and nothing for what no date can be (beyond the range, not a number)', () => {
    expect(localTimeIfAny(deps, Date.parse('2026-12-02T05:07:00Z'))).toBe(localTime(deps, Date.parse('2026-12-02T05:07:00Z')));
    expect(localTimeIfAny(deps, Date.parse('2026-12-02T05:07:00Z'))).toBe('13:07');
    for (const at of [1e16, -1e16, Number.NaN, Number.POSITIVE_INFINITY]) expect(localTimeIfAny(deps, at), String(at)).toBeUndefined();
    expect(() => localTime(deps, 1e16)).toThrow();
  });
});
