// The shapes of recorded usage and configured prices (src/core/usage/usage-schema.ts): what a short record is completed
// with, an allowance's parts, and the prices config.yaml may hold.
import { describe, expect, it } from 'vitest';
import { ModelPriceSchema, ModelUsageSchema, UsageAllowanceSchema, UsageSchema, WorkUsageSchema } from '../../src/core/usage/usage-schema';

describe('usage records', () => {
  it('a short usage record is completed with zeros', () => {
    expect(UsageSchema.parse({})).toEqual({ requests: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, ms: 0, continuations: 0, continuedRequests: 0, continuedTokens: 0, models: {} });
    expect(UsageSchema.parse({ requests: 2, models: { m: { requests: 1 } } }).models).toEqual({ m: { requests: 1, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0 } });
    expect(ModelUsageSchema.parse({})).toEqual({ requests: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0 });
    expect(UsageSchema.safeParse({ ms: 'long' }).success).toBe(false);
  });

  it('a Work’s usage has rounds and, after a stop the person let go on, an allowance', () => {
    expect(WorkUsageSchema.parse({})).toEqual({ rounds: {} });
    const allowance = { work: { tokens: 5, ms: 6 }, round: 2, roundUsage: { tokens: 1, ms: 2 } };
    expect(WorkUsageSchema.parse({ rounds: { '1': {} }, allowance }).allowance).toEqual(allowance);
    expect(UsageAllowanceSchema.safeParse({ work: { tokens: 5 }, round: 2, roundUsage: { tokens: 1, ms: 2 } }).success).toBe(false);
    expect(UsageAllowanceSchema.safeParse({ work: { tokens: 5, ms: 1 }, roundUsage: { tokens: 1, ms: 2 } }).success).toBe(false);
  });
});

describe('prices', () => {
  it('need input and output prices of zero or more; a cache price and a short currency are optional', () => {
    expect(ModelPriceSchema.parse({ input: 0, output: 2 })).toEqual({ input: 0, output: 2 });
    expect(ModelPriceSchema.parse({ input: 1, output: 2, cacheRead: 0.5, currency: 'USD' })).toEqual({ input: 1, output: 2, cacheRead: 0.5, currency: 'USD' });
    for (const bad of [{ input: -1, output: 1 }, { input: 1, output: -0.1 }, { input: 1, output: 1, cacheRead: -1 }, { input: 1, output: 1, currency: '' }, { input: 1, output: 1, currency: 'TOO-LONG-9' }, { output: 1 }]) {
      expect(ModelPriceSchema.safeParse(bad).success).toBe(false);
    }
    expect(ModelPriceSchema.safeParse({ input: 1, output: 1, currency: '12345678' }).success).toBe(true);
  });
});
