import { describe, expect, it } from 'vitest';
import { formatDidaDate, formatDidaDateMillis, parseDidaDate } from '../../src/dida/dida-date';

describe('Dida dates', () => {
  it('parses every form Dida sends', () => {
    const expected = Date.UTC(2019, 10, 13, 3, 0, 0);
    expect(parseDidaDate('2019-11-13T03:00:00+0000')?.getTime()).toBe(expected);
    expect(parseDidaDate('2019-11-13T03:00:00.000+0000')?.getTime()).toBe(expected);
    expect(parseDidaDate('2019-11-13T11:00:00+0800')?.getTime()).toBe(expected);
    expect(parseDidaDate('2019-11-13T11:00:00+08:00')?.getTime()).toBe(expected);
    expect(parseDidaDate('2019-11-13T03:00:00Z')?.getTime()).toBe(expected);
    expect(parseDidaDate('2019-11-12T22:00:00.000-0500')?.getTime()).toBe(expected);
  });

  it('returns undefined for absent or unreadable values', () => {
    expect(parseDidaDate(undefined)).toBeUndefined();
    expect(parseDidaDate(null)).toBeUndefined();
    expect(parseDidaDate('')).toBeUndefined();
    expect(parseDidaDate('tomorrow')).toBeUndefined();
  });

  it('formats in the documented +0000 form and round-trips', () => {
    const t = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
    expect(formatDidaDate(t)).toBe('2026-01-02T03:04:05+0000');
    expect(formatDidaDateMillis(t)).toBe('2026-01-02T03:04:05.678+0000');
    expect(parseDidaDate(formatDidaDateMillis(t))?.getTime()).toBe(t);
  });
});
