// The machine-wide request budget (src/dida/request-budget.ts): windows, priorities, the pause after a 429, the
// bounded wait of a tool call, and the shared file under its lock (src/store/budget-store.ts).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isDidaError } from '../../src/dida/dida-error';
import {
  BACKOFF_BASE_MS,
  BACKOFF_MAX_MS,
  BUDGET_MAX_WAIT_UNDER_LOCK_MS,
  boundPause,
  budgetWait,
  createRequestBudget,
  currentRequestPriority,
  emptyBudgetRecord,
  FIVE_MINUTES_MS,
  MINUTE_MS,
  pauseAfter429,
  cutShare,
  CUT_GAP_MS,
  HOLD_AFTER_CUT_MS,
  MIN_SHARE,
  PLATEAU_MS,
  PLATEAU_PART,
  RAISE_PER_MINUTE,
  sharedLimits,
  shareNow,
  shareOf,
  usedIn,
  withLockHeld,
  withRequestPriority,
  type BudgetRecord,
  type BudgetStorePort,
} from '../../src/dida/request-budget';
import { budgetStore, readBudgetFile, readBudgets, budgetFile } from '../../src/store/budget-store';

const LIMITS = { perMinute: 10, perFiveMinutes: 20 };

function memoryStore(record: BudgetRecord = emptyBudgetRecord()): BudgetStorePort & { record: BudgetRecord } {
  return {
    record,
    async transact(change) {
      return change(record);
    },
  };
}

/** A fake clock whose sleep moves time on at once (and records the waits). */
function fakeTime(start = 1_000_000) {
  const clock = { now: start, waits: [] as number[] };
  return {
    clock,
    now: () => clock.now,
    sleep: async (ms: number) => {
      clock.waits.push(ms);
      clock.now += ms;
    },
  };
}

describe('budget windows and priorities', () => {
  it('lets a request go while its share of both windows has room, and says when the next one may', () => {
    const now = 10 * MINUTE_MS;
    const record: BudgetRecord = { stamps: Array.from({ length: 9 }, (_, i) => now - 50_000 + i * 1000) };
    expect(budgetWait(record, LIMITS, 'foreground', now)).toBe(0);
    record.stamps.push(now - 1000);
    // Ten in the last minute: the next foreground request waits until the oldest leaves the minute.
    expect(budgetWait(record, LIMITS, 'foreground', now)).toBe(record.stamps[0]! + MINUTE_MS - now);
  });

  it('keeps a reserve for tool calls: background stops at 80 %, polling at 60 %', () => {
    const now = 10 * MINUTE_MS;
    const record: BudgetRecord = { stamps: Array.from({ length: 6 }, (_, i) => now - 30_000 + i) };
    expect(shareOf(10, 'poll')).toBe(6);
    expect(budgetWait(record, LIMITS, 'poll', now)).toBeGreaterThan(0);
    expect(budgetWait(record, LIMITS, 'background', now)).toBe(0);
    expect(budgetWait(record, LIMITS, 'foreground', now)).toBe(0);
    record.stamps.push(now - 10, now - 9);
    expect(budgetWait(record, LIMITS, 'background', now)).toBeGreaterThan(0);
    expect(budgetWait(record, LIMITS, 'foreground', now)).toBe(0);
  });

  it('counts the five-minute window too', () => {
    const now = 10 * MINUTE_MS;
    // 20 requests spread over the last 4 minutes, at most 5 in any minute.
    const record: BudgetRecord = { stamps: Array.from({ length: 20 }, (_, i) => now - 4 * MINUTE_MS + i * 12_000) };
    expect(usedIn(record, MINUTE_MS, now)).toBeLessThan(10);
    expect(budgetWait(record, LIMITS, 'foreground', now)).toBe(record.stamps[0]! + FIVE_MINUTES_MS - now);
  });

  it('pauses every priority after a 429: Retry-After when sent, else a backoff that doubles', () => {
    const now = 1_000_000;
    const record = emptyBudgetRecord();
    pauseAfter429(record, now, 7_000);
    expect(budgetWait(record, LIMITS, 'foreground', now)).toBe(7_000);
    const bare = emptyBudgetRecord();
    pauseAfter429(bare, now, undefined);
    expect(bare.pausedUntil).toBe(now + BACKOFF_BASE_MS);
    pauseAfter429(bare, now, undefined);
    expect(bare.pausedUntil).toBe(now + 2 * BACKOFF_BASE_MS);
    expect(bare.strikes).toBe(2);
  });

  it('a pause is never longer than the ceiling: a huge Retry-After, a far date, a 429 on top of a pause', () => {
    const now = 1_000_000;
    const record = emptyBudgetRecord();
    pauseAfter429(record, now, 21_600_000);
    expect(budgetWait(record, LIMITS, 'foreground', now)).toBe(BACKOFF_MAX_MS);
    pauseAfter429(record, now + 1000, 365 * 24 * 3600_000);
    expect(budgetWait(record, LIMITS, 'foreground', now + 1000)).toBe(BACKOFF_MAX_MS);
    // Control: a Retry-After under the ceiling is taken as sent.
    const short = emptyBudgetRecord();
    pauseAfter429(short, now, 90_000);
    expect(budgetWait(short, LIMITS, 'foreground', now)).toBe(90_000);
  });

  it('a pause read back is measured from a time not in the future: a clock stepped back, a file from a clock ahead', () => {
    const t = 50 * 60 * 60_000;
    // A 2-s Retry-After, then the clock steps back two hours: the pause is still 2 s, from now.
    const stepped = emptyBudgetRecord();
    pauseAfter429(stepped, t, 2_000);
    const back = t - 2 * 60 * 60_000;
    boundPause(stepped, back);
    expect(budgetWait(stepped, LIMITS, 'foreground', back)).toBe(2_000);
    // Written under a clock a day ahead: its stamps are dropped and its pause is at most the ceiling from now.
    const ahead: BudgetRecord = { stamps: [t + 86_400_000], pausedUntil: t + 86_400_000 + 60_000, pausedAt: t + 86_400_000 };
    boundPause(ahead, t);
    expect(budgetWait(ahead, LIMITS, 'foreground', t)).toBe(60_000);
    // A file of an older version (no pausedAt) with a pause a day long: the ceiling from now.
    const old: BudgetRecord = { stamps: [], pausedUntil: t + 86_400_000 };
    boundPause(old, t);
    expect(budgetWait(old, LIMITS, 'foreground', t)).toBe(BACKOFF_MAX_MS);
    // Control: an ordinary pause that is half over keeps what is left.
    const half = emptyBudgetRecord();
    pauseAfter429(half, t, 10_000);
    boundPause(half, t + 4_000);
    expect(budgetWait(half, LIMITS, 'foreground', t + 4_000)).toBe(6_000);
    // A pause that is over is forgotten.
    boundPause(half, t + 10_000);
    expect(half.pausedUntil).toBeUndefined();
    expect(half.pausedAt).toBeUndefined();
  });

  it('a priority set around a call reaches what the call awaits', async () => {
    expect(currentRequestPriority()).toBe('background');
    const seen = await withRequestPriority('foreground', async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return currentRequestPriority();
    });
    expect(seen).toBe('foreground');
    expect(currentRequestPriority()).toBe('background');
  });
});

describe('the gate', () => {
  it('stamps each request, and a request over the share waits until the window has room', async () => {
    const t = fakeTime();
    const store = memoryStore();
    const gate = createRequestBudget({ store, limits: () => LIMITS, now: t.now, sleep: t.sleep });
    // Background work may fill 8 of 10 per minute; the ninth waits for the first to leave the minute.
    for (let i = 0; i < 8; i++) await gate.acquire('GET /x');
    expect(t.clock.waits).toEqual([]);
    await gate.acquire('GET /x');
    expect(t.clock.waits).toHaveLength(1);
    expect(t.clock.waits[0]).toBeGreaterThanOrEqual(MINUTE_MS);
    expect(store.record.stamps).toHaveLength(9);
  });

  it('a tool call that would wait more than 20 s fails at once with rate_limited and the wait left', async () => {
    const t = fakeTime();
    const store = memoryStore();
    const gate = createRequestBudget({ store, limits: () => LIMITS, now: t.now, sleep: t.sleep });
    await gate.observe('POST /task', { status: 429, retryAfterMs: 45_000 });
    const error = await withRequestPriority('foreground', () => gate.acquire('POST /task')).catch((e: unknown) => e);
    expect(isDidaError(error) && error.code).toBe('rate_limited');
    expect(isDidaError(error) && error.retryAfterMs).toBe(45_000);
    expect(String((error as Error).message)).toMatch(/429.*Try again in 45 s/);
    expect(t.clock.waits).toEqual([]);
    // Background work waits it out instead (up to its own bound of 60 s).
    await gate.acquire('POST /comment');
    expect(t.clock.waits).toHaveLength(1);
    expect(t.clock.waits[0]).toBeGreaterThanOrEqual(45_000);
  });

  it('inside a Work’s lock no request waits longer than others wait for that lock; outside it, the same wait is sat out', async () => {
    const t = fakeTime();
    const store = memoryStore();
    const gate = createRequestBudget({ store, limits: () => LIMITS, now: t.now, sleep: t.sleep });
    await gate.observe('POST /task', { status: 429, retryAfterMs: 15_000 });
    // A settle holding the lock: 15 s is within background's 60 s, but not within the 10 s a locked section may wait.
    const error = await withLockHeld(() => gate.acquire('POST /comment')).catch((e: unknown) => e);
    expect(isDidaError(error) && error.code).toBe('rate_limited');
    expect(isDidaError(error) && error.retryAfterMs).toBe(15_000);
    expect(t.clock.waits).toEqual([]);
    expect(BUDGET_MAX_WAIT_UNDER_LOCK_MS).toBeLessThan(15_000);
    // A tool call under the lock is held to the same bound (its own is 20 s).
    const tool = await withLockHeld(() => withRequestPriority('foreground', () => gate.acquire('POST /task'))).catch((e: unknown) => e);
    expect(isDidaError(tool) && tool.code).toBe('rate_limited');
    // Control: the same request outside a lock waits the pause out.
    await gate.acquire('POST /comment');
    expect(t.clock.waits).toHaveLength(1);
    expect(t.clock.waits[0]).toBeGreaterThanOrEqual(15_000);
  });

  it('a success after 429s resets the backoff', async () => {
    const t = fakeTime();
    const store = memoryStore();
    const gate = createRequestBudget({ store, limits: () => LIMITS, now: t.now, sleep: t.sleep });
    await gate.acquire('GET /x');
    await gate.observe('GET /x', { status: 429 });
    await gate.observe('GET /x', { status: 429 });
    expect(store.record.strikes).toBe(2);
    await gate.acquire('GET /x');
    await gate.observe('GET /x', { status: 200 });
    expect(store.record.strikes).toBeUndefined();
  });

  it('a store that cannot answer lets the request go and says so once', async () => {
    const lines: string[] = [];
    const gate = createRequestBudget({
      store: { transact: async () => Promise.reject(new Error('lock busy')) },
      limits: () => LIMITS,
      log: (line) => lines.push(line),
    });
    await gate.acquire('GET /x');
    await gate.acquire('GET /x');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('lock busy');
  });
});

describe('the machine’s share of the account (several machines, one account)', () => {
  it('a 429 halves the share once per burst, never below the least share', () => {
    const record = emptyBudgetRecord();
    const t0 = 1_000_000_000;
    cutShare(record, t0);
    expect(record).toMatchObject({ share: 0.5, cutFrom: 1, cutAt: t0 });
    // More 429s of the same burst (requests that were in flight) change nothing.
    cutShare(record, t0 + CUT_GAP_MS - 1);
    expect(record.share).toBe(0.5);
    cutShare(record, t0 + CUT_GAP_MS);
    expect(record).toMatchObject({ share: 0.25, cutFrom: 0.5 });
    for (let i = 2; i < 10; i++) cutShare(record, t0 + i * CUT_GAP_MS);
    expect(record.share).toBe(MIN_SHARE);
  });

  it('the limits in force are the configured ones times the share, at least one request in each window', () => {
    expect(sharedLimits({ perMinute: 60, perFiveMinutes: 240 }, 1)).toEqual({ perMinute: 60, perFiveMinutes: 240 });
    expect(sharedLimits({ perMinute: 60, perFiveMinutes: 240 }, 0.25)).toEqual({ perMinute: 15, perFiveMinutes: 60 });
    expect(sharedLimits({ perMinute: 2, perFiveMinutes: 3 }, MIN_SHARE)).toEqual({ perMinute: 1, perFiveMinutes: 1 });
  });

  it('the share stays put for five minutes after a cut, then grows a step a minute only while the budget holds requests back', () => {
    const t0 = 2_000_000_000;
    const record = emptyBudgetRecord();
    cutShare(record, t0);
    cutShare(record, t0 + CUT_GAP_MS);
    expect(record.share).toBe(0.25);
    const after = t0 + CUT_GAP_MS + HOLD_AFTER_CUT_MS;
    // Held back during the hold: no growth until the hold ends and a minute passed with a request held back after it.
    record.heldAt = after - 1;
    expect(shareNow(record, after + 5 * MINUTE_MS)).toBe(0.25);
    record.heldAt = after + 30_000;
    expect(shareNow(record, after + 2 * MINUTE_MS + 1)).toBeCloseTo(0.25 + 2 * RAISE_PER_MINUTE);
    // No request held back since that raise: the share does not grow (this machine does not use what it has).
    expect(shareNow(record, after + 10 * MINUTE_MS)).toBeCloseTo(0.25 + 2 * RAISE_PER_MINUTE);
  });

  it('for half an hour after a cut the share grows back to just under the level that met the limit, later to the whole budget', () => {
    const t0 = 3_000_000_000;
    const record: BudgetRecord = { stamps: [], share: 0.2, cutFrom: 0.4, cutAt: t0, raisedAt: t0 };
    record.heldAt = t0 + PLATEAU_MS - 1;
    expect(shareNow(record, t0 + PLATEAU_MS - 1)).toBeCloseTo(0.4 * PLATEAU_PART);
    record.heldAt = t0 + PLATEAU_MS + MINUTE_MS;
    const later = shareNow(record, t0 + PLATEAU_MS + 60 * MINUTE_MS);
    expect(later).toBe(1);
    // Back at the whole budget nothing of the cut is kept.
    expect(record).toEqual({ stamps: [], heldAt: t0 + PLATEAU_MS + MINUTE_MS });
  });

  it('the gate cuts the share on a 429 and then lets only the shared limits through; a request held back marks it', async () => {
    const t = fakeTime(4_000_000_000);
    const store = memoryStore();
    const gate = createRequestBudget({ store, limits: () => ({ perMinute: 8, perFiveMinutes: 40 }), now: t.now, sleep: t.sleep });
    await gate.acquire('GET /x');
    await gate.observe('GET /x', { status: 429, retryAfterMs: 1_000 });
    expect(store.record.share).toBe(0.5);
    t.clock.now += 2_000;
    // Four a minute now (half of eight): after three more, the next one would wait most of a minute (a tool call is refused).
    for (let i = 0; i < 3; i++) await withRequestPriority('foreground', () => gate.acquire('GET /x'));
    expect(t.clock.waits).toHaveLength(0);
    expect(store.record.heldAt).toBeUndefined();
    const refused = await withRequestPriority('foreground', () => gate.acquire('GET /x')).catch((e: unknown) => e);
    expect(isDidaError(refused) && refused.code).toBe('rate_limited');
    expect(store.record.heldAt).toBe(t.clock.now);
    // Control: the same four requests under the whole budget go without a wait.
    const whole = memoryStore();
    const t2 = fakeTime(4_000_000_000);
    const gate2 = createRequestBudget({ store: whole, limits: () => ({ perMinute: 8, perFiveMinutes: 40 }), now: t2.now, sleep: t2.sleep });
    for (let i = 0; i < 5; i++) await withRequestPriority('foreground', () => gate2.acquire('GET /x'));
    expect(t2.clock.waits).toHaveLength(0);
  });
});

describe('the shared budget file', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'dida-budget-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps the stamps of every caller in one file per account, readable without the lock', async () => {
    const store = budgetStore(dir, path.join(dir, 'locks'), '0123456789abcdef');
    const gate = createRequestBudget({ store, limits: () => LIMITS, baseUrl: 'http://127.0.0.1:1/open/v1' });
    await Promise.all(Array.from({ length: 8 }, () => gate.acquire('GET /x')));
    const record = readBudgetFile(budgetFile(dir, '0123456789abcdef'));
    expect(record.stamps).toHaveLength(8);
    expect(record.baseUrl).toBe('http://127.0.0.1:1/open/v1');
    expect(readBudgets(dir).map((b) => b.key)).toEqual(['0123456789abcdef']);
  });

  it('a pause in the file is bounded by every process that reads it, and by the gate before it waits', async () => {
    const { mkdir, writeFile } = await import('node:fs/promises');
    await mkdir(path.join(dir, 'budget'), { recursive: true });
    const t = fakeTime(10 * 60 * 60_000);
    // Written by a process whose clock was a day ahead, after a 429 with a 40-s Retry-After.
    const ahead = t.clock.now + 86_400_000;
    const file = budgetFile(dir, 'bbbbbbbbbbbbbbbb');
    await writeFile(file, JSON.stringify({ stamps: [ahead], pausedAt: ahead, pausedUntil: ahead + 40_000, strikes: 1 }));
    expect(readBudgetFile(file).pausedAt).toBe(ahead);
    const store = budgetStore(dir, path.join(dir, 'locks'), 'bbbbbbbbbbbbbbbb');
    const gate = createRequestBudget({ store, limits: () => LIMITS, now: t.now, sleep: t.sleep });
    await gate.acquire('GET /x');
    expect(t.clock.waits).toHaveLength(1);
    expect(t.clock.waits[0]).toBeGreaterThanOrEqual(40_000);
    expect(t.clock.waits[0]).toBeLessThan(41_000);
    // The file now holds no pause (it is over) and the request's own stamp only.
    const record = readBudgetFile(file);
    expect(record.stamps).toEqual([t.clock.now]);
    expect(record.pausedUntil).toBeUndefined();
    // A six-hour pause in a file of an older version: a tool call is told the ceiling at most, not six hours.
    await writeFile(file, JSON.stringify({ stamps: [], pausedUntil: t.clock.now + 21_600_000, strikes: 1 }));
    const error = await withRequestPriority('foreground', () => gate.acquire('POST /task')).catch((e: unknown) => e);
    expect(isDidaError(error) && error.retryAfterMs).toBe(BACKOFF_MAX_MS);
  });

  it('keeps the machine’s share across processes, and drops a share out of range', async () => {
    const { mkdir, writeFile } = await import('node:fs/promises');
    await mkdir(path.join(dir, 'budget'), { recursive: true });
    const file = budgetFile(dir, 'cccccccccccccccc');
    await writeFile(file, JSON.stringify({ stamps: [], share: 0.25, cutAt: 5, cutFrom: 0.5, raisedAt: 5, heldAt: 7 }));
    expect(readBudgetFile(file)).toEqual({ stamps: [], share: 0.25, cutAt: 5, cutFrom: 0.5, raisedAt: 5, heldAt: 7 });
    await writeFile(file, JSON.stringify({ stamps: [], share: 3, cutAt: 'x' }));
    expect(readBudgetFile(file)).toEqual({ stamps: [] });
  });

  it('a damaged file counts as empty and is replaced', async () => {
    const { mkdir, writeFile } = await import('node:fs/promises');
    await mkdir(path.join(dir, 'budget'), { recursive: true });
    await writeFile(budgetFile(dir, 'aaaaaaaaaaaaaaaa'), '{"stamps": [1, 2');
    const store = budgetStore(dir, path.join(dir, 'locks'), 'aaaaaaaaaaaaaaaa');
    await createRequestBudget({ store, limits: () => LIMITS }).acquire('GET /x');
    expect(readBudgetFile(budgetFile(dir, 'aaaaaaaaaaaaaaaa')).stamps).toHaveLength(1);
  });
});
