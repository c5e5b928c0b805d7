// Small, dependency-free statistics for the benchmarks: median, nearest-rank percentiles, mean, ratios, A/B runs.

/** Ascending copy; the input is left untouched. Throws on an empty array or a non-finite sample. */
function sorted(values: readonly number[]): number[] {
  if (values.length === 0) throw new RangeError('No samples: a statistic needs at least one value.');
  for (const v of values) {
    if (!Number.isFinite(v)) throw new RangeError(`Sample ${String(v)} is not a finite number.`);
  }
  return [...values].sort((a, b) => a - b);
}

/** The middle value; for an even count, the mean of the two middle values. */
export function median(values: readonly number[]): number {
  const s = sorted(values);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/**
 * Nearest-rank percentile (`p` in 0..100): the smallest sample such that at least p % of the samples are ≤ it.
 * Never interpolates, so the result is always one of the measured values. p = 0 gives the minimum.
 */
export function percentile(values: readonly number[], p: number): number {
  if (!(p >= 0 && p <= 100)) throw new RangeError(`Percentile ${p} is outside 0..100.`);
  const s = sorted(values);
  const rank = Math.max(1, Math.ceil((p / 100) * s.length));
  return s[rank - 1] as number;
}

export function p95(values: readonly number[]): number {
  return percentile(values, 95);
}

export function mean(values: readonly number[]): number {
  const s = sorted(values);
  let sum = 0;
  for (const v of s) sum += v;
  return sum / s.length;
}

/** `a / b`; NaN when `b` is 0 (or either side is not finite), so a broken measurement never reads as a real ratio. */
export function ratio(a: number, b: number): number {
  if (!Number.isFinite(a) || !Number.isFinite(b) || b === 0) return Number.NaN;
  return a / b;
}

export interface Summary {
  n: number;
  median: number;
  p95: number;
  mean: number;
  min: number;
  max: number;
}

export function summarize(values: readonly number[]): Summary {
  const s = sorted(values);
  return {
    n: s.length,
    median: median(s),
    p95: p95(s),
    mean: mean(s),
    min: s[0] as number,
    max: s[s.length - 1] as number,
  };
}

export interface InterleavedOptions {
  /** Rounds run first and thrown away (JIT, sockets, disk cache). */
  warmup: number;
  /** Measured rounds; each round runs A once and B once. */
  iterations: number;
  a: () => Promise<unknown>;
  b: () => Promise<unknown>;
  /** Clock in milliseconds (default `performance.now`); injectable for tests. */
  now?: () => number;
}

export interface InterleavedResult {
  /** Milliseconds per measured run of A, in round order. */
  a: number[];
  b: number[];
  /** Which side ran first in each measured round. */
  order: Array<'ab' | 'ba'>;
}

/**
 * Runs A and B alternately: round i runs A then B when i is even and B then A when odd (warm-up rounds included),
 * so drift (thermal, caches, a noisy neighbour) and "runs second" effects hit both sides equally.
 */
export async function interleavedAB(options: InterleavedOptions): Promise<InterleavedResult> {
  const now = options.now ?? (() => performance.now());
  const result: InterleavedResult = { a: [], b: [], order: [] };
  const time = async (fn: () => Promise<unknown>): Promise<number> => {
    const started = now();
    await fn();
    return now() - started;
  };
  const total = options.warmup + options.iterations;
  for (let round = 0; round < total; round++) {
    const aFirst = round % 2 === 0;
    let ta: number;
    let tb: number;
    if (aFirst) {
      ta = await time(options.a);
      tb = await time(options.b);
    } else {
      tb = await time(options.b);
      ta = await time(options.a);
    }
    if (round >= options.warmup) {
      result.a.push(ta);
      result.b.push(tb);
      result.order.push(aFirst ? 'ab' : 'ba');
    }
  }
  return result;
}

/** Runs `fn` `warmup` times unmeasured, then `iterations` times measured; milliseconds per run. */
export async function measure(fn: (i: number) => Promise<unknown>, iterations: number, warmup = 0, now: () => number = () => performance.now()): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn(i);
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const started = now();
    await fn(i);
    samples.push(now() - started);
  }
  return samples;
}
