// The schedule background syncs read a person's comments on: the gap by kind and wait, what makes a look due, which due
// looks a sync takes.
import { describe, expect, it } from 'vitest';
import { lookDue, lookGap, MINUTE, nextLookAt, pickLooks } from '../../src/core/phone/comment-looks';

describe('lookGap', () => {
  it('answers: every sync for ten minutes, then a minute, after an hour five', () => {
    expect([0, 10 * MINUTE - 1, 10 * MINUTE, 60 * MINUTE - 1, 60 * MINUTE].map((w) => lookGap('answer', w))).toEqual([0, 0, MINUTE, MINUTE, 5 * MINUTE]);
  });
  it('reviews: two minutes for half an hour, then ten', () => {
    expect([0, 30 * MINUTE - 1, 30 * MINUTE].map((w) => lookGap('review', w))).toEqual([2 * MINUTE, 2 * MINUTE, 10 * MINUTE]);
  });
});

describe('lookDue', () => {
  const last = { first: 0, at: 5 * MINUTE, version: 'e1' };
  it('the first look is due at once', () => {
    expect(lookDue('review', undefined, 'e1', 0)).toBe('first');
  });
  it('a changed version is due at once; an unknown version never counts as a change', () => {
    expect(lookDue('review', last, 'e2', last.at)).toBe('changed');
    expect(lookDue('review', last, undefined, last.at)).toBeUndefined();
    expect(lookDue('review', { first: 0, at: last.at }, 'e2', last.at)).toBeUndefined();
  });
  it('otherwise when the gap for the time since the first look has passed', () => {
    expect(lookDue('review', last, 'e1', last.at + 2 * MINUTE - 1)).toBeUndefined();
    expect(lookDue('review', last, 'e1', last.at + 2 * MINUTE)).toBe('time');
    const old = { first: 0, at: 40 * MINUTE, version: 'e1' };
    expect(lookDue('review', old, 'e1', old.at + 9 * MINUTE)).toBeUndefined();
    expect(lookDue('review', old, 'e1', old.at + 10 * MINUTE)).toBe('time');
    expect(lookDue('answer', { first: 0, at: MINUTE }, undefined, MINUTE)).toBe('time');
  });
});

describe('pickLooks', () => {
  it('takes every first and changed look, and the timed ones looked at longest ago up to the limit', () => {
    const due = [
      { id: 'a', due: 'time' as const, last: { first: 0, at: 30 } },
      { id: 'b', due: 'changed' as const, last: { first: 0, at: 10 } },
      { id: 'c', due: 'time' as const, last: { first: 0, at: 10 } },
      { id: 'd', due: 'first' as const },
      { id: 'e', due: 'time' as const, last: { first: 0, at: 20 } },
    ];
    expect(pickLooks(due, 2).map((d) => d.id)).toEqual(['b', 'd', 'c', 'e']);
    expect(pickLooks(due, 0).map((d) => d.id)).toEqual(['b', 'd']);
  });
});

describe('nextLookAt', () => {
  it('is the first moment lookDue says time: the gap after the last look, the longer one once the wait crosses a step', () => {
    for (const [kind, last] of [
      ['answer', { first: 0, at: 5 * MINUTE }],
      ['answer', { first: 0, at: 9.5 * MINUTE }],
      ['answer', { first: 0, at: 45 * MINUTE }],
      ['answer', { first: 0, at: 59.5 * MINUTE }],
      ['answer', { first: 0, at: 70 * MINUTE }],
      ['review', { first: 0, at: 20 * MINUTE }],
      ['review', { first: 0, at: 29 * MINUTE }],
      ['review', { first: 0, at: 40 * MINUTE }],
    ] as const) {
      const at = nextLookAt(kind, last);
      expect(lookDue(kind, last, undefined, at), `${kind} ${last.at}`).toBe('time');
      expect(lookDue(kind, last, undefined, at - 1), `${kind} ${last.at}`).toBeUndefined();
    }
    expect(nextLookAt('answer', { first: 0, at: 45 * MINUTE })).toBe(46 * MINUTE);
    expect(nextLookAt('answer', { first: 0, at: 59.5 * MINUTE })).toBe(64.5 * MINUTE);
    expect(nextLookAt('review', { first: 0, at: 29 * MINUTE })).toBe(39 * MINUTE);
    expect(nextLookAt('answer', { first: 0, at: 9.5 * MINUTE })).toBe(9.5 * MINUTE);
  });
});
