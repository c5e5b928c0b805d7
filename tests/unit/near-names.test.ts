// List-name typos (src/core/text/near-names.ts): the normal form, how many edits each length allows, swaps as one
// edit, exact names left out, duplicates once, closest first.
import { describe, expect, it } from 'vitest';
import { editDistance, nearListNames, nearNameLimit, normaliseListName } from '../../src/core/text/near-names';

describe('normaliseListName', () => {
  it('folds width and case and drops spaces, punctuation, symbols and format characters', () => {
    expect(normaliseListName('  Ｗｏｒｋ　List! ')).toBe('worklist');
    expect(normaliseListName('🚀 发布·清单。')).toBe('发布清单');
    expect(normaliseListName('a\u200Bb\u00ADc')).toBe('abc');
    expect(normaliseListName('x-y_z')).toBe('xyz');
  });
});

describe('nearNameLimit', () => {
  it('allows no edit up to two characters, one up to nine, then one more per five', () => {
    expect([0, 1, 2].map((n) => nearNameLimit('a'.repeat(n)))).toEqual([0, 0, 0]);
    expect(nearNameLimit('abc')).toBe(1);
    expect(nearNameLimit('a'.repeat(9))).toBe(1);
    expect(nearNameLimit('a'.repeat(10))).toBe(2);
    expect(nearNameLimit('a'.repeat(14))).toBe(2);
    expect(nearNameLimit('a'.repeat(15))).toBe(3);
    // Counted in code points: three emoji are three characters.
    expect(nearNameLimit('🚀🚀🚀')).toBe(1);
    expect(nearNameLimit('🚀')).toBe(0);
  });
});

describe('editDistance', () => {
  it('counts a swap of neighbours once, and only of neighbours', () => {
    expect(editDistance('ab', 'ba')).toBe(1);
    expect(editDistance('abc', 'cba')).toBe(2);
    expect(editDistance('abcd', 'badc')).toBe(2);
    expect(editDistance('ca', 'abc')).toBe(3);
    expect(editDistance('abc', '')).toBe(3);
    expect(editDistance('a', 'b')).toBe(1);
    expect(editDistance('abcdef', 'abcfed')).toBe(2);
  });
});

describe('nearListNames', () => {
  it('finds names equal after normalising, or within the limit, closest first, each once', () => {
    const lists = ['工作清单', 'Work', 'WORK!', 'Worx', 'Work', 'Home'];
    expect(nearListNames('work', lists)).toEqual(['Work', 'WORK!', 'Worx']);
    expect(nearListNames('Work', lists)).toEqual(['WORK!', 'Worx']);
    expect(nearListNames('工作清丹', lists)).toEqual(['工作清单']);
    // Closest first, whatever order the lists come in.
    expect(nearListNames('work', ['Worx', 'WORK!', 'Home'])).toEqual(['WORK!', 'Worx']);
    expect(nearListNames('release notes x', ['relaese notes y', 'release notes y', 'Release Notes X!'])).toEqual(['Release Notes X!', 'release notes y', 'relaese notes y']);
  });

  it('allows more edits for longer names, none for very short ones', () => {
    expect(nearListNames('release notes 2026', ['relaese ntoes 2026'])).toEqual(['relaese ntoes 2026']);
    expect(nearListNames('release notes', ['relaese ntoes'])).toEqual(['relaese ntoes']);
    expect(nearListNames('notes', ['ntoes x'])).toEqual([]);
    expect(nearListNames('ab', ['ac', 'AB'])).toEqual(['AB']);
  });

  it('two names of nothing but punctuation are not the same list', () => {
    expect(nearListNames('!!', ['??', '…'])).toEqual([]);
    expect(nearListNames('!!', ['a'])).toEqual([]);
    expect(nearListNames('', ['a'])).toEqual([]);
  });
});
