// Which comment lists a sync reads: every review todo's and waiting Work's for a sync someone waits for, on the
// schedule of core/phone/comment-looks for a background one; and the record of each look on its Work.
import type { Task } from '../../dida/types';
import { lookDue, lookGap, nextLookAt, pickLooks, REVIEW_LOOK_SPACING_MS, REVIEW_LOOKS_PER_SYNC, type LookDue, type LookKind, type LookMode } from '../phone/comment-looks';
import type { EngineDeps } from '../work/engine-context';
import { keyOf } from '../work/work-io';
import { taskVersion } from '../work/work-reconcile';
import type { CommentLook, EngineState, WorkRecord } from '../work/work-state';

/** The Works whose comments this sync reads (`looked`, with the version of their tasks) and those it leaves (`skip`). */
export interface LookPlan {
  looked: Map<string, { version: string; scope: string }>;
  skip: Set<string>;
}

/** Whether the Work is one whose comments are watched: in review, or waiting for the person. */
function watched(work: WorkRecord): boolean {
  return (work.phase === 'accepting' && !!work.acceptance && !work.acceptance.closed) || (work.phase === 'open' && !!work.waiting);
}

/**
 * Which review todos and waiting Works have their comments read in this sync. `all` reads every one. `paced` reads a
 * Work whose task (or review todo, or 🙋 reminder) changed, or that Dida no longer shows open, or whose priority the
 * person set back, at once; the others on the schedule of lookDue, and reviews at most REVIEW_LOOKS_PER_SYNC a sync.
 */
export function planLooks(deps: EngineDeps, state: EngineState, projectId: string, tasks: readonly Task[], mode: LookMode): LookPlan {
  const plan: LookPlan = { looked: new Map(), skip: new Set() };
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const versionOf = (...ids: Array<string | undefined>) => ids.map((id) => (id && byId.has(id) ? (taskVersion(byId.get(id) as Task) ?? '') : '-')).join('/');
  const due: Array<{ key: string; kind: LookKind; due: LookDue; last?: CommentLook | undefined; version: string; scope: string }> = [];
  const now = deps.now();
  for (const work of Object.values(state.works)) {
    if (work.projectId !== projectId) continue;
    const key = keyOf(work);
    let kind: LookKind;
    let version: string;
    let scope: string;
    if (work.phase === 'accepting' && work.acceptance && !work.acceptance.closed) {
      kind = 'review';
      version = versionOf(work.acceptance.taskId);
      // Completed or removed in Dida (an accept, or feedback written just before it): its version reads '-' now, a change.
      scope = `review ${work.acceptance.taskId}`;
    } else if (work.phase === 'open' && work.waiting?.applied && byId.has(work.taskId)) {
      kind = 'answer';
      version = versionOf(work.taskId, work.waiting.reminderTaskId);
      scope = `wait ${work.waiting.since}`;
      // The person set the priority back: the resume is read now (also where Dida sends neither etag nor modified time).
      if ((byId.get(work.taskId) as Task).priority !== 0) {
        plan.looked.set(key, { version, scope });
        continue;
      }
    } else continue;
    if (mode === 'all') {
      plan.looked.set(key, { version, scope });
      continue;
    }
    // A look at an earlier review or wait of the Work does not count for this one.
    const last = work.commentLook?.scope === scope ? work.commentLook : undefined;
    const when = lookDue(kind, last, version, now);
    if (when) due.push({ key, kind, due: when, last, version, scope });
    else plan.skip.add(key);
  }
  // Reviews due by time alone: at most one a sync, and none within REVIEW_LOOK_SPACING_MS of the last look at a review of
  // the list (polls come every 20 s and sooner; many open reviews would otherwise cost a comment list at each of them).
  const lastReviewLook = Math.max(-Infinity, ...Object.values(state.works).filter((w) => w.projectId === projectId && w.commentLook?.scope?.startsWith('review ')).map((w) => w.commentLook!.at));
  const spaced = mode === 'paced' && now - lastReviewLook < REVIEW_LOOK_SPACING_MS;
  const reviews = pickLooks(due.filter((d) => d.kind === 'review' && !(spaced && d.due === 'time')), REVIEW_LOOKS_PER_SYNC);
  for (const d of due) {
    if (d.kind === 'answer' || reviews.includes(d)) plan.looked.set(d.key, { version: d.version, scope: d.scope });
    else plan.skip.add(d.key);
  }
  return plan;
}

/**
 * When the next background sync of the list should come for its comment looks (undefined: nothing watched): a Dida
 * comment changes nothing a list read shows, so a poller that slows down in quiet would otherwise leave an answer or a
 * rework comment unread for its whole interval. For each watched Work the time its look falls due (nextLookAt; a first
 * look at once), never sooner than `minGapMs` after the last poll (`lastPollAt`); a review's never sooner than its gap
 * after the last look at any review either, so twenty old reviews read one a sync bring the polls forward no more often
 * than one of them alone would.
 */
export function nextPacedLook(state: EngineState, projectId: string, lastPollAt: number, minGapMs: number): number | undefined {
  const watched: Array<{ kind: LookKind; last?: CommentLook | undefined }> = [];
  let lastReviewLook = -Infinity;
  for (const work of Object.values(state.works)) {
    if (work.projectId !== projectId) continue;
    const watch =
      work.phase === 'accepting' && work.acceptance && !work.acceptance.closed
        ? { kind: 'review' as const, scope: `review ${work.acceptance.taskId}` }
        : work.phase === 'open' && work.waiting?.applied
          ? { kind: 'answer' as const, scope: `wait ${work.waiting.since}` }
          : undefined;
    if (!watch) continue;
    const last = work.commentLook?.scope === watch.scope ? work.commentLook : undefined;
    if (watch.kind === 'review' && last) lastReviewLook = Math.max(lastReviewLook, last.at);
    watched.push({ kind: watch.kind, last });
  }
  let next: number | undefined;
  for (const { kind, last } of watched) {
    const lookAt = last ? nextLookAt(kind, last) : lastPollAt;
    const spread = kind === 'review' && last ? lastReviewLook + lookGap(kind, Math.max(0, lookAt - last.first)) : -Infinity;
    const at = Math.max(lookAt, spread, lastPollAt + minGapMs);
    next = next === undefined ? at : Math.min(next, at);
  }
  return next;
}

/**
 * Records this sync's looks on their Works (a Work that left review and waiting meanwhile drops its record). Written
 * without a new `rev`: a look is not a change of the Work, and a sync reading meanwhile must not skip it for one.
 */
export async function noteLooks(deps: EngineDeps, looked: LookPlan['looked']): Promise<void> {
  if (looked.size === 0) return;
  const now = deps.now();
  await deps.state.update((state) => {
    for (const [key, { version, scope }] of looked) {
      const work = state.works[key];
      if (!work) continue;
      if (!watched(work)) {
        delete work.commentLook;
        continue;
      }
      const first = work.commentLook?.scope === scope ? work.commentLook.first : now;
      work.commentLook = { first, at: now, version, scope };
    }
  });
}
