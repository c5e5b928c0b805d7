// The machine-wide Dida request budget: sliding windows per minute and per five minutes shared by every process of one
// account, priorities (a tool call the model waits for goes first), the slow-down after a 429 that every process obeys,
// and the machine's share of the account, halved on a 429 and raised slowly while it is short (machines of one account).
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { sleep } from '../common/abortable-sleep';
import { DidaError } from './dida-error';

/**
 * Who waits for a request: `foreground` a tool call the model waits for; `background` settle, progress comments,
 * syncs nobody waits for; `poll` the poller looking for new work. Requests made outside any context are `background`.
 */
export type RequestPriority = 'foreground' | 'background' | 'poll';

const priority = new AsyncLocalStorage<RequestPriority>();

/** Runs `fn` with every Dida request it makes (also in what it starts and awaits) counted as `level`. */
export function withRequestPriority<T>(level: RequestPriority, fn: () => T): T {
  return priority.run(level, fn);
}

const lockHeld = new AsyncLocalStorage<boolean>();

/**
 * Runs `fn` — a section that holds a Work's lock — with every request it makes waiting for the budget at most
 * BUDGET_MAX_WAIT_UNDER_LOCK_MS: other sessions' tool calls wait for that lock (15 s at most), so a section must not
 * sit in the budget longer than they would wait for it. What cannot go in time fails `rate_limited` and is kept by its
 * caller for the next run, as any budget refusal.
 */
export function withLockHeld<T>(fn: () => T): T {
  return lockHeld.run(true, fn);
}

/** The longest a request made while a Work's lock is held waits for the budget (under the 15 s others wait for the lock). */
export const BUDGET_MAX_WAIT_UNDER_LOCK_MS = 10_000;

/** The priority of a request made here and now. */
export function currentRequestPriority(): RequestPriority {
  return priority.getStore() ?? 'background';
}

export interface BudgetLimits {
  /** Requests in any 60 seconds. */
  perMinute: number;
  /** Requests in any 5 minutes. */
  perFiveMinutes: number;
}

/** Well under the limits a client of the live service reported (100 per minute, 300 per 5 minutes). */
export const DEFAULT_BUDGET: BudgetLimits = { perMinute: 60, perFiveMinutes: 240 };

export const MINUTE_MS = 60_000;
export const FIVE_MINUTES_MS = 5 * MINUTE_MS;

/** The part of each window a priority may fill: background work leaves a reserve for tool calls, polling a larger one. */
export const BUDGET_SHARE: Record<RequestPriority, number> = { foreground: 1, background: 0.8, poll: 0.6 };

/** The longest a request of each priority waits for the budget before it fails with `rate_limited`. */
export const BUDGET_MAX_WAIT_MS: Record<RequestPriority, number> = { foreground: 20_000, background: 60_000, poll: 30_000 };

/** The first pause after a 429 without Retry-After; it doubles with each 429 in a row, up to BACKOFF_MAX_MS. */
export const BACKOFF_BASE_MS = 2_000;
/** Reports from the live service say its limit resets after about five quiet minutes. */
export const BACKOFF_MAX_MS = 5 * MINUTE_MS;

/** The name of one account's budget: a hash of its Dida base URL and token (the token itself is never stored). */
export function accountKey(baseUrl: string, token: string): string {
  return createHash('sha256').update(`${baseUrl}\n${token}`).digest('hex').slice(0, 16);
}

/** What the shared file holds for one account. */
export interface BudgetRecord {
  /** Times (ms since the epoch) of the requests sent in the last five minutes, oldest first. */
  stamps: number[];
  /** No request of this account is sent before this time (after a 429); never more than BACKOFF_MAX_MS after pausedAt. */
  pausedUntil?: number;
  /** When that pause was set: a pause read under a clock behind this one is measured from now instead (see boundPause). */
  pausedAt?: number;
  /** 429s in a row (reset by the next answer that is not a 429). */
  strikes?: number;
  /**
   * The part of the configured limits this machine uses now (1 when absent): halved by a 429 (the account's limit was
   * met, so other machines share it), raised step by step while the budget holds requests back (see shareNow).
   */
  share?: number;
  /** When the share was last cut, and the share it was cut from (the level at which Dida answered 429). */
  cutAt?: number;
  cutFrom?: number;
  /** When the share was last raised, and when a request last had to wait for the budget. */
  raisedAt?: number;
  heldAt?: number;
  /** The limits last used (for `dida-todo status`). */
  limits?: BudgetLimits;
  /** Which Dida the account is on (for `dida-todo status`; never the token). */
  baseUrl?: string;
}

/** The least share a machine keeps after 429s (its polls and tool calls still go, slowly). */
export const MIN_SHARE = 1 / 8;
/** 429s within this long of a cut are the same burst: they cut the share once. */
export const CUT_GAP_MS = 10_000;
/** After a cut the share stays put this long: the five-minute window must first lose the requests of before the cut. */
export const HOLD_AFTER_CUT_MS = 5 * MINUTE_MS;
/** While the budget holds requests back, the share grows by this much of the configured limits per minute. */
export const RAISE_PER_MINUTE = 1 / 32;
/**
 * For this long after a cut, the share grows back to at most this part of the share it was cut from (where the account's
 * limit was met): machines that share one account settle just under it instead of meeting it again.
 */
export const PLATEAU_MS = 30 * 60_000;
export const PLATEAU_PART = 0.8;

/**
 * A 429 at `now` (the account's limit was met: other machines use it too): the share is halved, once per burst of 429s
 * (CUT_GAP_MS), never below MIN_SHARE (multiplicative decrease).
 */
export function cutShare(record: BudgetRecord, now: number, minuteMs = MINUTE_MS): void {
  if (record.cutAt !== undefined && now - record.cutAt < CUT_GAP_MS * (minuteMs / MINUTE_MS) && now >= record.cutAt) return;
  const share = record.share ?? 1;
  record.cutFrom = share;
  record.share = Math.max(MIN_SHARE, share / 2);
  record.cutAt = now;
  record.raisedAt = now;
}

/**
 * The share at `now`, raised first when it may grow (additive increase): HOLD_AFTER_CUT_MS after the last cut, by
 * RAISE_PER_MINUTE for each full minute since the last raise in which the budget held a request back (a machine that
 * does not use its share has no reason to take more), up to PLATEAU_PART of the share it was cut from for PLATEAU_MS
 * after the cut, then up to 1.
 */
export function shareNow(record: BudgetRecord, now: number, minuteMs = MINUTE_MS): number {
  const share = record.share ?? 1;
  if (share >= 1 || record.cutAt === undefined) return Math.min(1, share);
  const holdEnd = record.cutAt + HOLD_AFTER_CUT_MS * (minuteMs / MINUTE_MS);
  if (now < holdEnd) return share;
  const from = Math.max(record.raisedAt ?? holdEnd, holdEnd);
  const minutes = Math.floor((now - from) / minuteMs);
  if (minutes < 1 || (record.heldAt ?? -Infinity) < from) return share;
  const plateau = now - record.cutAt < PLATEAU_MS * (minuteMs / MINUTE_MS) && record.cutFrom !== undefined ? Math.max(share, record.cutFrom * PLATEAU_PART) : 1;
  const raised = Math.min(plateau, 1, share + minutes * RAISE_PER_MINUTE);
  record.share = raised;
  record.raisedAt = from + minutes * minuteMs;
  if (raised >= 1) {
    delete record.share;
    delete record.cutAt;
    delete record.cutFrom;
    delete record.raisedAt;
  }
  return raised;
}

/** The configured limits times the machine's share (at least one request in each window). */
export function sharedLimits(limits: BudgetLimits, share: number): BudgetLimits {
  if (share >= 1) return limits;
  return { perMinute: Math.max(1, Math.floor(limits.perMinute * share)), perFiveMinutes: Math.max(1, Math.floor(limits.perFiveMinutes * share)) };
}

export function emptyBudgetRecord(): BudgetRecord {
  return { stamps: [] };
}

/** How many of `limit` a priority may use (at least one, so a tiny budget still lets every priority through). */
export function shareOf(limit: number, level: RequestPriority): number {
  return Math.max(1, Math.floor(limit * BUDGET_SHARE[level]));
}

/**
 * How long a request of `level` must wait at `now` (0: it may go now): until the pause after a 429 is over and each
 * window has room within the priority's share. Pure; `record.stamps` must be sorted.
 */
export function budgetWait(record: BudgetRecord, limits: BudgetLimits, level: RequestPriority, now: number, minuteMs = MINUTE_MS): number {
  let until = record.pausedUntil ?? 0;
  for (const [limit, windowMs] of [
    [limits.perMinute, minuteMs],
    [limits.perFiveMinutes, 5 * minuteMs],
  ] as const) {
    const allowed = shareOf(limit, level);
    const inWindow = record.stamps.filter((t) => t > now - windowMs);
    // Room comes when enough of the oldest requests in the window have left it.
    if (inWindow.length >= allowed) until = Math.max(until, (inWindow[inWindow.length - allowed] as number) + windowMs);
  }
  return Math.max(0, until - now);
}

/** Requests of the record in the window of `windowMs` before `now`. */
export function usedIn(record: Pick<BudgetRecord, 'stamps'>, windowMs: number, now: number): number {
  return record.stamps.filter((t) => t > now - windowMs).length;
}

/** A wait Dida asked for (its Retry-After), within the ceiling of a pause: nothing here waits longer than BACKOFF_MAX_MS. */
export function boundedRetryAfter(ms: number): number {
  return Math.min(BACKOFF_MAX_MS, Math.max(0, ms));
}

/**
 * Keeps the record's pause within the ceiling, measured from a time that is not in the future: a pause set under a
 * clock ahead of this one (or before this clock stepped back) lasts what it was set for, from now, and never more than
 * BACKOFF_MAX_MS; a pause without its start (an older file) at most BACKOFF_MAX_MS from now. An ended pause is dropped.
 */
export function boundPause(record: BudgetRecord, now: number): void {
  if (record.pausedUntil !== undefined) {
    const setAt = record.pausedAt ?? now;
    const start = Math.min(setAt, now);
    const until = start + boundedRetryAfter(record.pausedUntil - setAt);
    if (until > now) {
      record.pausedUntil = until;
      record.pausedAt = start;
      return;
    }
  }
  delete record.pausedUntil;
  delete record.pausedAt;
}

/** Drops stamps older than five minutes (and any from the future beyond a small clock step); bounds the pause. */
export function pruneBudget(record: BudgetRecord, now: number, minuteMs = MINUTE_MS): void {
  record.stamps = record.stamps.filter((t) => t > now - 5 * minuteMs && t <= now + MINUTE_MS).sort((a, b) => a - b);
  boundPause(record, now);
}

/**
 * The pause a 429 starts: the server's Retry-After when it sent one, else a backoff growing with each 429 in a row;
 * either at most BACKOFF_MAX_MS from now (a pause under way is bounded first, so it cannot carry a longer one on).
 */
export function pauseAfter429(record: BudgetRecord, now: number, retryAfterMs: number | undefined): void {
  const strikes = (record.strikes ?? 0) + 1;
  record.strikes = strikes;
  const pause = retryAfterMs !== undefined ? boundedRetryAfter(retryAfterMs) : Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** (strikes - 1));
  boundPause(record, now);
  if ((record.pausedUntil ?? 0) >= now + pause) return;
  record.pausedUntil = now + pause;
  record.pausedAt = now;
}

/**
 * Where the record lives: one read-modify-write at a time across the processes of the machine. `change` may mutate the
 * record it is given; what it returns is handed back. A store that cannot answer in time (a lock held too long) throws.
 */
export interface BudgetStorePort {
  transact<T>(change: (record: BudgetRecord) => T): Promise<T>;
}

/** Seen by every HTTP attempt (or `dida` command) of a gateway: asked before it is sent, told how it ended. */
export interface RequestGate {
  /** Resolves when the request may be sent; throws DidaError `rate_limited` when it would wait too long, or the abort reason. */
  acquire(route: string, signal?: AbortSignal): Promise<void>;
  /** The request ended: its status when Dida answered, and the Retry-After it sent. Never throws. */
  observe(route: string, outcome: { status?: number; retryAfterMs?: number }): Promise<void>;
}

export interface RequestBudgetOptions {
  store: BudgetStorePort;
  /** The limits in force (config.yaml is read again for each request: a stat when it did not change). */
  limits: () => Promise<BudgetLimits> | BudgetLimits;
  baseUrl?: string;
  now?: () => number;
  /** Waiting (tests pass a fake). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  log?: (line: string) => void;
  /** The length of a "minute" (default 60 s; the long window is five of it). Tests under a scaled rate limit shorten it. */
  minuteMs?: number;
}

/** The message of a request that would wait too long for the budget: what happened and when to try again. */
export function budgetExhaustedMessage(route: string, waitMs: number, paused: boolean): string {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return paused
    ? `Dida asked this machine to slow down (429); ${route} was not sent. Try again in ${seconds} s.`
    : `This machine's Dida request budget is used up for now; ${route} was not sent. Try again in ${seconds} s.`;
}

/**
 * The gate over a shared budget. A request takes a stamp when it goes; when its priority's share of a window is full (or
 * the account is paused after a 429) it waits, and fails with DidaError `rate_limited` (retryAfterMs: the wait left) once
 * the wait would pass BUDGET_MAX_WAIT_MS of its priority. A store that cannot answer lets the request go (logged once a
 * minute): a stuck lock must not stop the work, and a budget can only be overrun by what passes meanwhile.
 */
export function createRequestBudget(options: RequestBudgetOptions): RequestGate {
  const now = options.now ?? Date.now;
  const wait = options.sleep ?? sleep;
  const minuteMs = options.minuteMs ?? MINUTE_MS;
  let strikesSeen = 0;
  let loggedAt = -Infinity;
  const openFail = (error: unknown) => {
    if (now() - loggedAt < MINUTE_MS) return;
    loggedAt = now();
    options.log?.(`the shared Dida request budget could not be read (requests go out unchecked meanwhile): ${error instanceof Error ? error.message : String(error)}`);
  };
  return {
    async acquire(route, signal) {
      const level = currentRequestPriority();
      const maxWait = lockHeld.getStore() ? Math.min(BUDGET_MAX_WAIT_MS[level], BUDGET_MAX_WAIT_UNDER_LOCK_MS) : BUDGET_MAX_WAIT_MS[level];
      const deadline = now() + maxWait;
      for (;;) {
        signal?.throwIfAborted();
        const limits = await options.limits();
        let answer: { wait: number; paused: boolean };
        try {
          answer = await options.store.transact((record) => {
            const at = now();
            pruneBudget(record, at, minuteMs);
            record.limits = { perMinute: limits.perMinute, perFiveMinutes: limits.perFiveMinutes };
            if (options.baseUrl) record.baseUrl = options.baseUrl;
            strikesSeen = record.strikes ?? 0;
            const left = budgetWait(record, sharedLimits(limits, shareNow(record, at, minuteMs)), level, at, minuteMs);
            if (left === 0) record.stamps.push(at);
            // Held back by the budget itself (not by a pause after a 429): a sign this machine could use more.
            else if ((record.pausedUntil ?? 0) <= at) record.heldAt = at;
            return { wait: left, paused: (record.pausedUntil ?? 0) > at };
          });
        } catch (error) {
          openFail(error);
          return;
        }
        if (answer.wait === 0) return;
        if (now() + answer.wait > deadline) {
          throw new DidaError({ code: 'rate_limited', route, retryAfterMs: answer.wait, message: budgetExhaustedMessage(route, answer.wait, answer.paused) });
        }
        // A little spread, so processes that waited for the same moment do not all look at once.
        await wait(answer.wait + Math.floor(Math.random() * 25), signal);
      }
    },
    async observe(_route, outcome) {
      const limited = outcome.status === 429;
      if (!limited && strikesSeen === 0) return;
      try {
        await options.store.transact((record) => {
          if (limited) {
            pauseAfter429(record, now(), outcome.retryAfterMs);
            cutShare(record, now(), minuteMs);
          } else delete record.strikes;
          strikesSeen = record.strikes ?? 0;
        });
      } catch (error) {
        openFail(error);
      }
      if (limited) {
        const seconds = outcome.retryAfterMs !== undefined ? `${Math.ceil(outcome.retryAfterMs / 1000)} s (Retry-After)` : 'a growing backoff';
        options.log?.(`Dida answered 429 to ${_route}: every process of this machine waits ${seconds} before its next request`);
      }
    },
  };
}
