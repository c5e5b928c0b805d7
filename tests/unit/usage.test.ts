// What a Work cost (src/core/usage.ts): answers summed, the review line in zh and en, the estimated price, and the
// spend guard's limits counted from the allowance the person gave.
import { describe, expect, it } from 'vitest';
import { getLocale } from '../../src/core/text/locale';
import { addUsage, allowanceNow, answerUsage, emptyUsage, estimatedCost, formatTokens, overLimit, totalTokens, usageLine, workUsage } from '../../src/core/usage/usage';
import type { Usage } from '../../src/core/usage/usage-schema';

const zh = getLocale('zh');
const en = getLocale('en');

function answers(list: Array<[number, number, number, string?]>, continued = false): Usage {
  return list.reduce((sum, [i, o, c, m]) => addUsage(sum, answerUsage({ model: m ?? 'deepseek-v4-flash', inputTokens: i, outputTokens: o, cacheReadTokens: c }, continued)), emptyUsage());
}

describe('usage', () => {
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
