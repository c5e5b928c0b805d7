import { describe, expect, it } from 'vitest';
import { interleavedAB, mean, measure, median, p95, percentile, ratio, summarize } from '../../bench/lib/stats';

describe('bench stats', () => {
  it('median: middle value, mean of the two middles for an even count, input order irrelevant', () => {
    expect(median([7])).toBe(7);
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([10, 10, 1, 1000])).toBe(10);
  });

  it('median does not reorder the caller array', () => {
    const values = [3, 1, 2];
    median(values);
    expect(values).toEqual([3, 1, 2]);
  });

  it('p95 is nearest-rank: always a measured value', () => {
    const hundred = Array.from({ length: 100 }, (_, i) => 100 - i); // 100..1, unsorted
    expect(p95(hundred)).toBe(95);
    const twenty = Array.from({ length: 20 }, (_, i) => i + 1);
    expect(p95(twenty)).toBe(19); // ceil(0.95 × 20) = 19th value
    expect(p95([1, 2, 3, 4, 5, 6, 7, 8, 9, 1000])).toBe(1000); // ceil(9.5) = 10th
    expect(p95([42])).toBe(42);
  });

  it('percentile bounds: 0 is the minimum, 100 the maximum, 50 the lower middle', () => {
    const values = [5, 1, 4, 2, 3];
    expect(percentile(values, 0)).toBe(1);
    expect(percentile(values, 100)).toBe(5);
    expect(percentile(values, 50)).toBe(3);
    expect(percentile([1, 2, 3, 4], 50)).toBe(2);
    expect(() => percentile(values, 101)).toThrow(RangeError);
    expect(() => percentile(values, -1)).toThrow(RangeError);
  });

  it('mean and summarize', () => {
    expect(mean([1, 2, 3, 4])).toBe(2.5);
    expect(summarize([5, 1, 3])).toEqual({ n: 3, median: 3, p95: 5, mean: 3, min: 1, max: 5 });
  });

  it('rejects empty and non-finite samples', () => {
    expect(() => median([])).toThrow(RangeError);
    expect(() => p95([])).toThrow(RangeError);
    expect(() => mean([1, Number.NaN])).toThrow(RangeError);
    expect(() => summarize([Infinity])).toThrow(RangeError);
  });

  it('ratio: a / b, NaN instead of a fake figure when b is 0 or a side is not finite', () => {
    expect(ratio(150, 2)).toBe(75);
    expect(ratio(1, 4)).toBe(0.25);
    expect(ratio(0, 5)).toBe(0);
    expect(ratio(3, 0)).toBeNaN();
    expect(ratio(Number.NaN, 1)).toBeNaN();
    expect(ratio(1, Infinity)).toBeNaN();
  });

  it('interleavedAB alternates the order each round, drops warm-up rounds and times each side', async () => {
    let clock = 0;
    const calls: string[] = [];
    const result = await interleavedAB({
      warmup: 2,
      iterations: 4,
      now: () => clock,
      a: async () => {
        calls.push('a');
        clock += 1;
      },
      b: async () => {
        calls.push('b');
        clock += 10;
      },
    });
    expect(calls.join('')).toBe('ab' + 'ba' + 'ab' + 'ba' + 'ab' + 'ba');
    expect(result.order).toEqual(['ab', 'ba', 'ab', 'ba']);
    expect(result.a).toEqual([1, 1, 1, 1]);
    expect(result.b).toEqual([10, 10, 10, 10]);
  });

  it('measure runs warm-up unmeasured and passes the iteration index', async () => {
    let clock = 0;
    const seen: number[] = [];
    const samples = await measure(
      async (i) => {
        seen.push(i);
        clock += i + 1;
      },
      3,
      2,
      () => clock,
    );
    expect(seen).toEqual([0, 1, 0, 1, 2]);
    expect(samples).toEqual([1, 2, 3]);
  });
});
