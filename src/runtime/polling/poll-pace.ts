// How often the machine's poller reads a list: a base interval while sessions are idle and the list changes, doubling
// through long quiet up to a ceiling, brought forward (at most every few seconds) when a session goes idle, and when a
// look at the comments of a waiting Work or a review falls due.


/** A poll brought forward because a session went idle comes at most this often. */
export const MIN_POLL_GAP_MS = 5_000;
/** Every this long without a change in the list the interval doubles (up to the ceiling). */
export const QUIET_STEP_MS = 10 * 60_000;

export interface PollPace {
  /** The interval while the list changes and sessions are idle. */
  baseMs: number;
  /** The longest interval, reached after long quiet. */
  ceilingMs: number;
}

/** The interval between polls after `quietMs` without a change: the base, doubled per QUIET_STEP_MS, up to the ceiling. */
export function pollInterval(pace: PollPace, quietMs: number): number {
  const doubled = pace.baseMs * 2 ** Math.max(0, Math.floor(quietMs / QUIET_STEP_MS));
  return Math.max(pace.baseMs, Math.min(Math.max(pace.ceilingMs, pace.baseMs), doubled));
}

/**
 * Whether the list's next poll is due at `now`: its interval passed, a session went idle since (at most every
 * MIN_POLL_GAP_MS), or a look at the comments a person may write falls due (`lookAt`, see the core's nextPacedLook).
 */
export function pollDue(pace: PollPace, list: Pick<ListPace, 'lastPollAt' | 'lastChangeAt' | 'soon'>, now: number, lookAt: number | undefined): boolean {
  const since = now - list.lastPollAt;
  if (since >= pollInterval(pace, now - list.lastChangeAt)) return true;
  if (list.soon && since >= MIN_POLL_GAP_MS) return true;
  return lookAt !== undefined && now >= lookAt;
}

/** Seconds between polls by default while sessions are idle and the list changes (p95 pickup stays under 30 s). */
export const DEFAULT_POLL_SECONDS = 20;

/**
 * The pace from the plugin row and config.yaml's `poll` (config.yaml wins where it says something): the base from
 * `intervalSeconds` / `pollSeconds`, the ceiling from `intervalMinutes` / `pollIntervalMinutes`.
 */
export function pollPaceFrom(
  row: { pollSeconds?: number; pollIntervalMinutes: number },
  configured?: { enabled?: boolean; intervalMinutes: number; intervalSeconds?: number | undefined },
): PollPace {
  const seconds = configured?.intervalSeconds ?? row.pollSeconds ?? DEFAULT_POLL_SECONDS;
  // config.yaml's intervals count where it sets polling up (not where it turns it off).
  const minutes = configured && configured.enabled !== false ? configured.intervalMinutes : row.pollIntervalMinutes;
  return { baseMs: seconds * 1000, ceilingMs: Math.max(seconds * 1000, minutes * 60_000) };
}

/** What the leader keeps per list it polls. */
export interface ListPace {
  lastPollAt: number;
  lastChangeAt: number;
  fingerprint?: string;
  /** When each candidate was first seen idle (oldest idle goes first). */
  idleSince: Map<string, number>;
  /** A session went idle since the last poll: the next one comes as soon as MIN_POLL_GAP_MS allows. */
  soon: boolean;
  polling: boolean;
}
