// What every suite shares: options from the runner, progress logging, number formatting and the JSON hand-off.
import { writeFileSync } from 'node:fs';

export interface SuiteOptions {
  /** `--quick`: a smoke run with few iterations; its figures are not meant to be quoted. */
  quick: boolean;
}

/** A table as the runner prints it: every cell already formatted. */
export interface BenchTable {
  title: string;
  columns: string[];
  rows: string[][];
  /** One-line remarks printed under the table. */
  notes?: string[];
}

export interface SuiteOutput {
  tables: BenchTable[];
  /** Raw figures (milliseconds, counts, bytes) for results.json; shape is up to the suite. */
  data: unknown;
}

export interface SuiteResult extends SuiteOutput {
  suite: string;
  title: string;
  quick: boolean;
  /** ISO time the suite finished. */
  measuredAt: string;
  /** Wall-clock seconds the suite took. */
  seconds: number;
}

export function suiteOptions(): SuiteOptions {
  return { quick: process.env.BENCH_QUICK === '1' || process.argv.includes('--quick') };
}

/** Progress goes to stderr so it never mixes with the result. */
export function log(message: string): void {
  process.stderr.write(`  · ${message}\n`);
}

/**
 * Runs one suite and hands its result to the runner through the file named by BENCH_RESULT_FILE
 * (or prints it as JSON when the suite bundle is started by hand). Exits non-zero when the suite throws.
 */
export function runSuite(suite: string, title: string, body: (options: SuiteOptions) => Promise<SuiteOutput>): void {
  const options = suiteOptions();
  const started = performance.now();
  body(options).then(
    (output) => {
      const result: SuiteResult = {
        suite,
        title,
        quick: options.quick,
        measuredAt: new Date().toISOString(),
        seconds: Math.round((performance.now() - started) / 100) / 10,
        ...output,
      };
      const json = `${JSON.stringify(result, null, 2)}\n`;
      const target = process.env.BENCH_RESULT_FILE;
      if (target) writeFileSync(target, json);
      else process.stdout.write(json);
      // Child processes, servers or keep-alive sockets must not keep a finished suite alive.
      process.exit(0);
    },
    (error: unknown) => {
      process.stderr.write(`suite ${suite} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}

/** Milliseconds with a precision that suits their size: 0.123, 1.23, 12.3, 123. */
export function ms(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  const abs = Math.abs(value);
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(2);
  return value.toFixed(3);
}

/** A ratio as `12.3×`. */
export function times(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  return `${value >= 10 ? value.toFixed(0) : value.toFixed(1)}×`;
}

export function bytes(value: number): string {
  if (value >= 1024 * 1024) return `${(value / 1024 / 1024).toFixed(2)} MiB`;
  if (value >= 1024) return `${(value / 1024).toFixed(1)} KiB`;
  return `${value} B`;
}

export function int(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}
