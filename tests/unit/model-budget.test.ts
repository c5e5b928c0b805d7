// The caps on what the model reads (src/core/text/model-budget.ts): text within its cap is untouched, longer text is
// cut at a grapheme boundary within the cap and says how many characters stayed in Dida.
import { describe, expect, it } from 'vitest';
import { MODEL_BUDGET, withinBudget } from '../../src/core/text/model-budget';

describe('withinBudget', () => {
  it('keeps text up to its cap as it is', () => {
    expect(withinBudget('', 0)).toBe('');
    expect(withinBudget('abc', 3)).toBe('abc');
    expect(withinBudget('x'.repeat(200), MODEL_BUDGET.title)).toBe('x'.repeat(200));
  });

  it('cuts longer text within the cap, naming the characters left out', () => {
    const cut = withinBudget('a'.repeat(100), 50);
    expect(cut).toBe(`${'a'.repeat(18)} … (82 more characters in Dida)`);
    expect(cut.length).toBeLessThanOrEqual(50);
    const one = withinBudget('b'.repeat(51), 50);
    expect(one).toBe(`${'b'.repeat(19)} … (32 more characters in Dida)`);
    expect(one.length).toBe(50);
  });

  it('never splits a grapheme, and with no room keeps only the marker', () => {
    const family = '👨‍👩‍👧';
    const text = family.repeat(20);
    const cut = withinBudget(text, 40);
    const kept = cut.slice(0, cut.indexOf(' … ('));
    expect(kept.length % family.length).toBe(0);
    expect(cut).toBe(`${kept} … (${text.length - kept.length} more characters in Dida)`);
    expect(withinBudget('z'.repeat(30), 5)).toBe(' … (30 more characters in Dida)');
    // An ellipsis inside the kept text stays; only the cut's own is replaced by the marker.
    expect(withinBudget(`a…b${'c'.repeat(100)}`, 50)).toBe(`a…b${'c'.repeat(15)} … (85 more characters in Dida)`);
  });

  it('has a cap for every kind of text a result carries', () => {
    expect(MODEL_BUDGET).toEqual({ title: 200, item: 200, resolution: 300, body: 2500, steps: 4000, works: 20, result: 8000 });
  });
});
