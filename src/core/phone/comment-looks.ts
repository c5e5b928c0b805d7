// How often a background sync reads the comments a person may write on the phone: on a review todo (rework) and on a
// Work that waits for the person (an answer). Dida says nothing when a comment is written (it is not known whether a
// comment changes the task's etag), so comments are read; but read on every poll, each open review would cost one
// request per poll, and a list with twenty reviews open would spend the machine's whole budget on them. So a look
// comes on a schedule that slows with the wait, at once when Dida shows the task changed, and a sync the model or
// the person asked for (a tool call, `dida-todo queue`) still reads them all.
import type { CommentLook } from '../work/work-state';

/** What the comments are read for: a review todo (rework) or a waiting Work and its 🙋 reminder (an answer). */
export type LookKind = 'review' | 'answer';

/** `all`: every comment list is read (a sync someone waits for); `paced`: on the schedule below (background syncs). */
export type LookMode = 'all' | 'paced';

export const MINUTE = 60_000;

/**
 * Paced reviews read at most this many comment lists per sync (besides first looks and those whose task changed): with
 * many reviews open, each is looked at less often rather than the polls costing more (a poll every 20 s reads at most
 * three review comment lists a minute).
 */
export const REVIEW_LOOKS_PER_SYNC = 1;

/**
 * And reviews due by time alone are looked at no sooner than this after the last look at any review of the list: with
 * n reviews open, each is read about every n minutes (but never less often than its own gap says once it is alone).
 */
export const REVIEW_LOOK_SPACING_MS = 60_000;

/**
 * The least time between two looks, by how long the review or the wait has lasted: a question the agent just asked is
 * looked at on every sync (the person is likely answering now), a fresh review every 2 minutes, and both slow down
 * once the person has let them be for a while.
 */
export function lookGap(kind: LookKind, waitedMs: number): number {
  if (kind === 'answer') return waitedMs < 10 * MINUTE ? 0 : waitedMs < 60 * MINUTE ? MINUTE : 5 * MINUTE;
  return waitedMs < 30 * MINUTE ? 2 * MINUTE : 10 * MINUTE;
}

/**
 * When a paced look at a Work last looked at `last` falls due by time alone (the earliest time lookDue says `time`):
 * the gap for how long it will have waited by then, after the last look.
 */
export function nextLookAt(kind: LookKind, last: CommentLook): number {
  let at = last.at + lookGap(kind, Math.max(0, last.at - last.first));
  // The gap only grows with the wait (three steps at most): move on while waiting longer asks for a longer gap.
  for (let step = 0; step < 3; step++) {
    const later = last.at + lookGap(kind, Math.max(0, at - last.first));
    if (later <= at) break;
    at = later;
  }
  return at;
}

/** Why a paced look is due now; undefined when it is not. */
export type LookDue = 'first' | 'changed' | 'time';

/**
 * Whether a paced look at one Work's comments is due: never looked at (`first`), the task(s) carrying the comments
 * changed in Dida since the last look (`changed`; `version` is their etags or modified times, joined), or the gap
 * for how long it has waited has passed (`time`).
 */
export function lookDue(kind: LookKind, last: CommentLook | undefined, version: string | undefined, now: number): LookDue | undefined {
  if (!last) return 'first';
  if (version !== undefined && last.version !== undefined && version !== last.version) return 'changed';
  return now - last.at >= lookGap(kind, Math.max(0, now - last.first)) ? 'time' : undefined;
}

/**
 * Of the Works due, those looked at in this sync: every `first` and `changed` one, and of those due by `time` the ones
 * looked at longest ago, up to `limit` (reviews; answers are not limited: a Work waits only when a session asked).
 */
export function pickLooks<T extends { due: LookDue; last?: CommentLook | undefined }>(due: readonly T[], limit: number): T[] {
  const urgent = due.filter((d) => d.due !== 'time');
  const timed = due.filter((d) => d.due === 'time').sort((a, b) => (a.last?.at ?? 0) - (b.last?.at ?? 0));
  return [...urgent, ...timed.slice(0, Math.max(0, limit))];
}
