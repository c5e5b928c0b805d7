// What a Work cost (src/core/usage/usage.ts): answers summed, the review line in zh and en, the estimated price, and the
// spend guard's limits counted from the allowance the person gave; then each at its edges: number formats at their
// thresholds, minutes, each model count summed, the cache price falling back to the input price, the price's decimals,
// rounds and allowances, and which limit is first.
import { describe, expect, it } from 'vitest';
import { getLocale } from '../../src/core/text/locale';
import { addUsage, allowanceNow, answerUsage, DEFAULT_SPEND_LIMITS, emptyUsage, estimatedCost, formatMinutes, formatTokens, overLimit, roundOf, roundUsage, totalTokens, usageLine, usageOf, workUsage } from '../../src/core/usage/usage';
import type { Usage } from '../../src/core/usage/usage-schema';

const zh = getLocale('zh');
const en = getLocale('en');

const off = { maxTokensPerWork: 0, maxMinutesPerWork: 0, maxTokensPerRound: 0, maxMinutesPerRound: 0 };

function used(input: number, output = 0, cache = 0, model = 'm'): Usage {
  return answerUsage({ model, inputTokens: input, outputTokens: output, cacheReadTokens: cache }, false);
}

function answers(list: Array<[number, number, number, string?]>, continued = false): Usage {
  return list.reduce((sum, [i, o, c, m]) => addUsage(sum, answerUsage({ model: m ?? 'deepseek-v4-flash', inputTokens: i, outputTokens: o, cacheReadTokens: c }, continued)), emptyUsage());
}

describe('what a Work cost: sums, the review line, the price, the spend guard', () => {
  it('sums answers as the model reported them, per model, with the continued share apart; bad counts are 0', () => {
    const u = addUsage(answers([[1000, 200, 300], [500, 100, 0, 'other']]), answers([[10, 5, 0]], true));
    expect(u).toMatchObject({ requests: 3, inputTokens: 1510, outputTokens: 305, cacheReadTokens: 300, continuedRequests: 1, continuedTokens: 15 });
    expect(u.models['deepseek-v4-flash']).toEqual({ requests: 2, inputTokens: 1010, outputTokens: 205, cacheReadTokens: 300 });
    expect(answerUsage({ inputTokens: -5, outputTokens: Number.NaN, cacheReadTokens: 2.7 }, false)).toMatchObject({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 2, models: { unknown: expect.anything() } });
    expect(totalTokens(u)).toBe(2115);
  });

  it('the review line in Chinese and English: tokens (cache apart), requests, minutes, continuations', () => {
    const u = { ...answers([[12_000, 2_300, 500], [100, 50, 0]]), ms: 8 * 60_000, continuations: 2 };
    expect(usageLine(zh, u)).toBe('用量：1.5万 token（其中缓存命中 500），2 次模型请求，用时 8 分钟，自动继续 2 次。');
    expect(usageLine(en, u)).toBe('Usage: 14.9k tokens (500 of them cache hits), 2 model requests, 8 min, 2 automatic continuations.');
    expect(usageLine(zh, { ...answers([[10, 7, 0]]), ms: 1 })).toBe('用量：17 token，1 次模型请求，用时 1 分钟。');
    expect(usageLine(zh, emptyUsage())).toBe('');
    const total = addUsage(u, answers([[50_000, 0, 0]]));
    expect(usageLine(zh, u, undefined, total)).toContain('这项工作各轮合计 6.5万 token、3 次请求。');
  });

  it('an estimated price only when every model used has one, in one currency', () => {
    const u = answers([[1_000_000, 500_000, 2_000_000]]);
    expect(estimatedCost(u, { 'deepseek-v4-flash': { input: 2, output: 8, cacheRead: 0.5 } })).toEqual({ amount: 2 + 4 + 1, currency: '¥' });
    expect(usageLine(zh, u, { 'deepseek-v4-flash': { input: 2, output: 8, cacheRead: 0.5 } })).toContain('估算花费 ¥7.00');
    expect(estimatedCost(u, { other: { input: 1, output: 1 } })).toBeUndefined();
    expect(estimatedCost(addUsage(u, answers([[1, 1, 0, 'b']])), { 'deepseek-v4-flash': { input: 1, output: 1 }, b: { input: 1, output: 1, currency: '$' } })).toBeUndefined();
    expect(usageLine(en, u)).not.toContain('about');
    expect(formatTokens(zh, 1_234_567)).toBe('123万');
    expect(formatTokens(en, 999)).toBe('999');
  });

  it('the spend guard: per Work and per round, 0 is off, and what the person allowed does not count again', () => {
    const limits = { maxTokensPerWork: 1000, maxMinutesPerWork: 0, maxTokensPerRound: 0, maxMinutesPerRound: 30 };
    const rounds = { '1': answers([[600, 100, 0]]), '2': { ...answers([[200, 0, 0]]), ms: 10 * 60_000 } };
    const work = { usage: { rounds }, round: 2 };
    expect(workUsage(work).requests).toBe(2);
    expect(overLimit(work, limits)).toBeUndefined();
    const more = { usage: { rounds: { ...rounds, '2': addUsage(rounds['2'], answers([[100, 0, 0]])) } }, round: 2 };
    expect(overLimit(more, limits)).toEqual({ what: 'tokens', scope: 'work', used: 1000, limit: 1000 });
    const allowed = { usage: { ...more.usage, allowance: allowanceNow(more) }, round: 2 };
    expect(overLimit(allowed, limits)).toBeUndefined();
    const long = { usage: { rounds: { '2': { ...emptyUsage(), ms: 31 * 60_000 } } }, round: 2 };
    expect(overLimit(long, limits)).toEqual({ what: 'minutes', scope: 'round', used: 31, limit: 30 });
    expect(overLimit(long, { ...limits, maxMinutesPerRound: 0 })).toBeUndefined();
  });
});

describe('formatTokens', () => {
  it('in Chinese: plain below 10 000 (with separators), 万 with one decimal, none from a million', () => {
    expect(formatTokens(zh, 9_999)).toBe('9,999');
    expect(formatTokens(zh, 10_000)).toBe('1万');
    expect(formatTokens(zh, 12_345)).toBe('1.2万');
    expect(formatTokens(zh, 999_999)).toBe('100万');
    expect(formatTokens(zh, 1_000_000)).toBe('100万');
    expect(formatTokens(zh, 1_050_000)).toBe('105万');
    expect(formatTokens(zh, 0)).toBe('0');
  });

  it('in English: plain below 1000, k with one decimal, none from 100k', () => {
    expect(formatTokens(en, 1_000)).toBe('1k');
    expect(formatTokens(en, 1_250)).toBe('1.3k');
    expect(formatTokens(en, 99_940)).toBe('99.9k');
    expect(formatTokens(en, 100_000)).toBe('100k');
    expect(formatTokens(en, 123_456)).toBe('123k');
    expect(formatTokens(en, 12_345)).toBe('12.3k');
  });
});

describe('formatMinutes', () => {
  it('is 0 only when nothing ran, at least 1 otherwise, rounded', () => {
    expect(formatMinutes(0)).toBe(0);
    expect(formatMinutes(-5)).toBe(0);
    expect(formatMinutes(1)).toBe(1);
    expect(formatMinutes(89_999)).toBe(1);
    expect(formatMinutes(90_000)).toBe(2);
    expect(formatMinutes(10 * 60_000)).toBe(10);
  });
});

describe('answers and sums', () => {
  it('an answer counts once, its model trimmed, a blank or missing model is unknown', () => {
    const u = answerUsage({ model: '  v4  ', inputTokens: 10, outputTokens: 5, cacheReadTokens: 1 }, true);
    expect(u).toEqual({
      ...emptyUsage(),
      requests: 1,
      inputTokens: 10,
      outputTokens: 5,
      cacheReadTokens: 1,
      continuedRequests: 1,
      continuedTokens: 16,
      models: { v4: { requests: 1, inputTokens: 10, outputTokens: 5, cacheReadTokens: 1 } },
    });
    expect(Object.keys(answerUsage({ model: '   ' }, false).models)).toEqual(['unknown']);
    expect(Object.keys(answerUsage({}, false).models)).toEqual(['unknown']);
    expect(answerUsage({ inputTokens: 0, outputTokens: Number.POSITIVE_INFINITY }, false)).toMatchObject({ inputTokens: 0, outputTokens: 0, continuedRequests: 0, continuedTokens: 0 });
  });

  it('adds every field, each model apart, without changing its inputs', () => {
    const a = { ...used(1, 2, 3, 'x'), ms: 10, continuations: 1, continuedRequests: 1, continuedTokens: 4 };
    const b = { ...used(10, 20, 30, 'x'), ms: 100, continuations: 2, continuedRequests: 3, continuedTokens: 40 };
    const before = structuredClone(a);
    expect(addUsage(a, b)).toEqual({
      requests: 2,
      inputTokens: 11,
      outputTokens: 22,
      cacheReadTokens: 33,
      ms: 110,
      continuations: 3,
      continuedRequests: 4,
      continuedTokens: 44,
      models: { x: { requests: 2, inputTokens: 11, outputTokens: 22, cacheReadTokens: 33 } },
    });
    expect(a).toEqual(before);
    // A partial delta (turn time only) leaves the counts.
    expect(addUsage(a, { ms: 5 })).toEqual({ ...a, ms: 15 });
    expect(addUsage(emptyUsage(), {})).toEqual(emptyUsage());
  });

  it('reads the rounds of a Work: the current one (1 by default) and all of them', () => {
    const rounds = { '1': used(100), '2': used(20), '3': used(3) };
    expect(roundOf({})).toBe(1);
    expect(roundOf({ round: 3 })).toBe(3);
    expect(roundUsage({ usage: { rounds } }).inputTokens).toBe(100);
    expect(roundUsage({ usage: { rounds }, round: 2 }).inputTokens).toBe(20);
    expect(roundUsage({ usage: { rounds }, round: 4 })).toEqual(emptyUsage());
    expect(roundUsage({})).toEqual(emptyUsage());
    expect(workUsage({ usage: { rounds } }).inputTokens).toBe(123);
    expect(workUsage({})).toEqual(emptyUsage());
    expect(usageOf({ usage: { k: { rounds } }, works: { k: { round: 2 } } }, 'k')).toEqual({ usage: { rounds }, round: 2 });
    expect(usageOf({ usage: {}, works: {} }, 'k')).toEqual({ usage: undefined, round: undefined });
  });
});

describe('estimatedCost', () => {
  it('prices cache hits at the input price when no cache price is set, per million tokens', () => {
    expect(estimatedCost(used(1_000_000, 1_000_000, 1_000_000), { m: { input: 2, output: 8 } })).toEqual({ amount: 12, currency: '¥' });
    expect(estimatedCost(used(500_000, 0, 0), { m: { input: 2, output: 8, currency: '$' } })).toEqual({ amount: 1, currency: '$' });
  });

  it('has no estimate without pricing or without a request', () => {
    expect(estimatedCost(used(1), undefined)).toBeUndefined();
    expect(estimatedCost(emptyUsage(), { m: { input: 1, output: 1 } })).toBeUndefined();
    expect(estimatedCost({ ...used(1), models: {} }, { m: { input: 1, output: 1 } })).toBeUndefined();
  });

  it('sums several models priced in the same currency', () => {
    const u = addUsage(used(1_000_000, 0, 0, 'a'), used(0, 1_000_000, 0, 'b'));
    expect(estimatedCost(u, { a: { input: 1, output: 100 }, b: { input: 100, output: 3 } })).toEqual({ amount: 4, currency: '¥' });
  });
});

describe('usageLine', () => {
  it('shows a small price with four decimals and a larger one with two', () => {
    const pricing = { m: { input: 1, output: 1 } };
    expect(usageLine(en, used(1000), pricing)).toBe('Usage: 1k tokens, 1 model requests, 0 min, about ¥0.0010.');
    expect(usageLine(en, used(10_000), pricing)).toBe('Usage: 10k tokens, 1 model requests, 0 min, about ¥0.01.');
  });

  it('adds the total of all rounds only when it holds more requests than this round', () => {
    const round = used(100);
    expect(usageLine(en, round, undefined, round)).toBe('Usage: 100 tokens, 1 model requests, 0 min.');
    expect(usageLine(en, round, undefined, addUsage(round, used(900)))).toBe('Usage: 100 tokens, 1 model requests, 0 min. All rounds of this Work: 1k tokens, 2 requests.');
  });

  it('names continuations only when there were some', () => {
    expect(usageLine(en, { ...used(5), continuations: 1 })).toContain('1 automatic continuations');
    expect(usageLine(en, used(5))).not.toContain('continuations');
  });
});

describe('overLimit', () => {
  const work = (rounds: Record<string, Usage>, round?: number, allowance?: ReturnType<typeof allowanceNow>) => ({ usage: { rounds, ...(allowance ? { allowance } : {}) }, ...(round ? { round } : {}) });

  it('has generous defaults per Work and none per round', () => {
    expect(DEFAULT_SPEND_LIMITS).toEqual({ maxTokensPerWork: 5_000_000, maxMinutesPerWork: 240, maxTokensPerRound: 0, maxMinutesPerRound: 0 });
    expect(overLimit(work({ '1': used(4_999_999) }), DEFAULT_SPEND_LIMITS)).toBeUndefined();
    expect(overLimit(work({ '1': used(5_000_000) }), DEFAULT_SPEND_LIMITS)).toEqual({ what: 'tokens', scope: 'work', used: 5_000_000, limit: 5_000_000 });
  });

  it('checks each limit, the Work before the round, tokens before minutes, and reports the minutes rounded', () => {
    const heavy = { ...used(500), ms: 90 * 60_000 + 20_000 };
    const w = work({ '1': heavy });
    expect(overLimit(w, { ...off, maxMinutesPerWork: 90 })).toEqual({ what: 'minutes', scope: 'work', used: 90, limit: 90 });
    expect(overLimit(w, { ...off, maxMinutesPerWork: 91 })).toBeUndefined();
    expect(overLimit(w, { ...off, maxTokensPerRound: 500 })).toEqual({ what: 'tokens', scope: 'round', used: 500, limit: 500 });
    expect(overLimit(w, { ...off, maxTokensPerRound: 501 })).toBeUndefined();
    expect(overLimit(w, { ...off, maxTokensPerWork: 500, maxMinutesPerWork: 1 })).toMatchObject({ what: 'tokens', scope: 'work' });
    expect(overLimit(w, { ...off, maxMinutesPerWork: 1, maxTokensPerRound: 1 })).toMatchObject({ what: 'minutes', scope: 'work' });
    expect(overLimit(w, { ...off, maxTokensPerRound: 1, maxMinutesPerRound: 1 })).toMatchObject({ what: 'tokens', scope: 'round' });
    expect(overLimit(w, off)).toBeUndefined();
    // A Work with nothing recorded is within every limit.
    expect(overLimit({}, { ...off, maxTokensPerWork: 1 })).toBeUndefined();
  });

  it('counts a round only for its own round, and the allowance of an earlier round not against the new one', () => {
    const r1 = { ...used(800), ms: 20 * 60_000 };
    const before = work({ '1': r1 });
    const allowance = allowanceNow(before);
    expect(allowance).toEqual({ work: { tokens: 800, ms: 20 * 60_000 }, round: 1, roundUsage: { tokens: 800, ms: 20 * 60_000 } });
    // Round 2 starts: the allowance of round 1 is not taken off round 2's own usage.
    const r2 = { ...used(300), ms: 5 * 60_000 };
    const later = work({ '1': r1, '2': r2 }, 2, allowance);
    expect(overLimit(later, { ...off, maxTokensPerRound: 300 })).toEqual({ what: 'tokens', scope: 'round', used: 300, limit: 300 });
    expect(overLimit(later, { ...off, maxMinutesPerRound: 5 })).toEqual({ what: 'minutes', scope: 'round', used: 5, limit: 5 });
    // The Work's total counts from the allowance.
    expect(overLimit(later, { ...off, maxTokensPerWork: 301 })).toBeUndefined();
    expect(overLimit(later, { ...off, maxTokensPerWork: 300 })).toMatchObject({ what: 'tokens', scope: 'work', used: 300 });
    expect(overLimit(later, { ...off, maxMinutesPerWork: 5 })).toMatchObject({ what: 'minutes', scope: 'work', used: 5 });
    expect(overLimit(later, { ...off, maxMinutesPerWork: 6 })).toBeUndefined();
    // In the same round, the allowance is taken off the round too.
    const same = work({ '1': addUsage(r1, { ...used(100), ms: 60_000 }) }, 1, allowance);
    expect(overLimit(same, { ...off, maxTokensPerRound: 101 })).toBeUndefined();
    expect(overLimit(same, { ...off, maxTokensPerRound: 100 })).toMatchObject({ scope: 'round', used: 100 });
    expect(overLimit(same, { ...off, maxMinutesPerRound: 1 })).toMatchObject({ what: 'minutes', scope: 'round', used: 1 });
    expect(overLimit(same, { ...off, maxMinutesPerRound: 2 })).toBeUndefined();
  });

  it('an allowance counts what was used across all rounds, and the current round apart', () => {
    const w = work({ '1': { ...used(10), ms: 1000 }, '2': { ...used(5), ms: 30 } }, 2);
    expect(allowanceNow(w)).toEqual({ work: { tokens: 15, ms: 1030 }, round: 2, roundUsage: { tokens: 5, ms: 30 } });
    expect(allowanceNow({})).toEqual({ work: { tokens: 0, ms: 0 }, round: 1, roundUsage: { tokens: 0, ms: 0 } });
  });
});
