// Sync of one bound list: one project-data read folded into the state (sync-fold.ts), then Works completed or deleted
// in Dida noticed, reviews (accept / rework), resumes and answers from the phone, lapsed claims and finalization retries
// looked at, and what the Works owe Dida sent.
import type { Task } from '../../dida/types';
import { isDidaError } from '../../dida/dida-error';
import { lateFeedback, processAcceptance } from '../review/acceptance';
import { DEFAULT_CLAIM_LEASE_MS, heldElsewhere, peersActive } from '../queue/claims';
import type { EngineDeps } from '../work/engine-context';
import { claimLapsed, reportExpiredClaim } from '../queue/claim-release';
import { finalizeBlocker, finalizeWork } from '../review/finalize';
import { removeStrayReviews } from '../review/stray-reviews';
import { sendOwed } from './sync-owed';
import { rebuildReview } from './sync-rebuild';
import { foldTasks, listUnchanged, readList, reopenWork, type FoldOutcome } from './sync-fold';
import { keyOf } from '../work/work-io';
import type { EngineState, WorkRecord } from '../work/work-state';
import type { LookMode } from '../phone/comment-looks';
import { noteLooks, planLooks } from './sync-looks';

export interface SyncReport {
  projectId: string;
  /** Open tasks of the list in Dida order, as read. */
  tasks: Task[];
  adopted: string[];
  updated: string[];
  closed: string[];
  accepted: string[];
  reworks: string[];
  resumed: string[];
  /** Works the person resumed by answering in Dida (their answer waits in the state for the model). */
  answered: string[];
  /** Works whose claim's holder was gone: said once in Dida, and back in the queue. */
  released: string[];
  finalized: string[];
  /** Works the person re-opened in Dida after review (a new round). */
  reopened: string[];
  /** Reviews rebuilt from Dida after their records were lost. */
  rebuilt: string[];
  /** Problems met after the list was read; each was left for the next sync. */
  errors: string[];
}

export interface SyncOptions {
  /**
   * How the comments a person may write on a review todo or a waiting Work are read: `all` (default) every list, for a
   * sync someone waits for; `paced` on the schedule of core/phone/comment-looks, for background syncs (the poller).
   */
  looks?: LookMode;
}

/**
 * Syncs one list. Reading never rewrites a person's task: Dida is written only to carry out what the person
 * asked for in Dida (rework from an owner comment, resuming when they restored the priority) or to finish an
 * interrupted finalization. A deleted list is `list_missing`, an archived one `list_closed` (WorkError).
 */
export async function syncList(deps: EngineDeps, projectId: string, options: SyncOptions = {}): Promise<SyncReport> {
  const report: SyncReport = { projectId, tasks: [], adopted: [], updated: [], closed: [], accepted: [], reworks: [], resumed: [], answered: [], released: [], finalized: [], reopened: [], rebuilt: [], errors: [] };
  const before = await deps.state.read();
  const revs = new Map(Object.entries(before.works).map(([k, w]) => [k, w.rev]));
  const tasks = await readList(deps, projectId);
  report.tasks = tasks;
  const openIds = new Set(tasks.map((t) => t.id));

  // Nothing new and no task changed since it was last folded in: the state is not even rewritten.
  let fold: FoldOutcome | undefined;
  const after = listUnchanged(deps, before, projectId, tasks) ? before : await deps.state.update((state) => void (fold = foldTasks(deps, state, tasks, revs)));
  report.adopted.push(...(fold?.adopted ?? []));
  report.updated.push(...(fold?.updated ?? []));
  report.closed.push(...(fold?.closed ?? []));
  await repair(deps, fold, report);

  const touched = new Set(Object.values(after.sessions).flatMap((session) => session.touched));
  await closeGone(deps, after, projectId, openIds, touched, report);
  // Review todos filed for a Work that was not sent for review after all, whose removal failed then (after the Works
  // that left the list, so the person's words on one go to a Work that is still open).
  report.errors.push(...(await removeStrayReviews(deps, after, projectId, openIds)));

  const current = report.rebuilt.length || fold?.reopened.length ? await deps.state.read() : after;
  const looks = planLooks(deps, current, projectId, tasks, options.looks ?? 'all');
  for (const work of Object.values(current.works)) {
    if (work.projectId !== projectId || looks.skip.has(keyOf(work))) continue;
    try {
      await lookAt(deps, work, { current, tasks, openIds, touched }, report);
    } catch (error) {
      report.errors.push(errorText(error));
    }
  }
  await noteLooks(deps, looks.looked);
  report.errors.push(...(await sendOwed(deps, projectId, current, openIds)));
  return report;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Works the person re-opened after review become a new round; review todos whose records were lost are rebuilt. */
async function repair(deps: EngineDeps, fold: FoldOutcome | undefined, report: SyncReport): Promise<void> {
  for (const key of fold?.reopened ?? []) {
    try {
      if (await reopenWork(deps, key)) report.reopened.push(key);
    } catch (error) {
      report.errors.push(errorText(error));
    }
  }
  for (const task of fold?.orphans ?? []) {
    try {
      const rebuilt = await rebuildReview(deps, task);
      if (rebuilt) report.rebuilt.push(rebuilt);
    } catch (error) {
      report.errors.push(errorText(error));
    }
  }
}

/** Open Works that left the open list: completed or deleted in Dida (one read each, once). */
async function closeGone(deps: EngineDeps, after: EngineState, projectId: string, openIds: ReadonlySet<string>, touched: ReadonlySet<string>, report: SyncReport): Promise<void> {
  for (const work of Object.values(after.works)) {
    if (work.projectId !== projectId || openIds.has(work.taskId) || work.phase !== 'open') continue;
    // Another machine holds it (its live claim), or, while other machines claim on the list, no session here ever
    // touched or claimed it: it was finished there; no read of a task this machine never worked on.
    const untouched = !touched.has(keyOf(work)) && !work.claim && peersActive(after, projectId, deps.now(), deps.claimLeaseMs ?? DEFAULT_CLAIM_LEASE_MS);
    if (heldElsewhere(deps, work, undefined, after) || untouched) {
      await markClosed(deps, keyOf(work), 'completed_by_human');
      report.closed.push(keyOf(work));
      continue;
    }
    await noteGone(deps, work, report);
  }
}

interface ListView {
  current: EngineState;
  tasks: readonly Task[];
  openIds: ReadonlySet<string>;
  touched: ReadonlySet<string>;
}

/** One Work of the list after the fold: its review, its wait for the person, late feedback, a lapsed claim, a finalize. */
async function lookAt(deps: EngineDeps, work: WorkRecord, list: ListView, report: SyncReport): Promise<void> {
  const key = keyOf(work);
  const { current, openIds } = list;
  if (work.phase === 'accepting' && work.acceptance && !work.acceptance.closed) {
    const outcome = await processAcceptance(deps, key, openIds.has(work.acceptance.taskId));
    if (outcome.status === 'accepted') report.accepted.push(key);
    if (outcome.status === 'rework') report.reworks.push(outcome.reworkKey);
  } else if (work.phase === 'open' && work.waiting?.applied && openIds.has(work.taskId)) {
    // The person answers on the 🙋 reminder or the Work (two comment reads), or sets the priority back.
    const task = list.tasks.find((t) => t.id === work.taskId);
    const { checkWaiting } = await import('../phone/phone-answers');
    const outcome = await checkWaiting(deps, key, task?.priority ?? 0);
    if (outcome.resumed) report.resumed.push(key);
    if (outcome.answers > 0) report.answered.push(key);
  } else if (work.phase === 'closed' && work.outcome === 'rework' && work.acceptance?.reworkTaskId && current.works[work.acceptance.reworkTaskId]?.phase === 'open') {
    const added = await lateFeedback(deps, key);
    if (added > 0) report.updated.push(work.acceptance.reworkTaskId);
  } else if (openIds.has(work.taskId) && claimLapsed(deps, current, work)) {
    // A claim whose holder is gone: said once in Dida, and the Work is back in the queue.
    if (await reportExpiredClaim(deps, key)) report.released.push(key);
  } else if (work.phase === 'finalizing' || orphanedSettled(work, list.touched, deps.now())) {
    const outcome = await finalizeWork(deps, key);
    if (outcome.status === 'finalized') report.finalized.push(key);
    else if (outcome.status === 'failed') report.errors.push(outcome.message);
  }
}

/** A settled Work is finalized at the next settle; one left behind by a session that ended first gets this long. */
export const ORPHANED_SETTLE_MS = 10 * 60_000;

/**
 * A Work an agent session worked on, settled and ready for review, untouched for ORPHANED_SETTLE_MS: its session
 * ended (or crashed) before settling, so sync finalizes it. Works nobody worked on are never finalized here, even
 * when the person ticked every item.
 */
function orphanedSettled(work: WorkRecord, touched: ReadonlySet<string>, now: number): boolean {
  return work.phase === 'open' && touched.has(keyOf(work)) && now - work.updatedAt >= ORPHANED_SETTLE_MS && finalizeBlocker(work) === undefined;
}

async function noteGone(deps: EngineDeps, work: WorkRecord, report: SyncReport): Promise<void> {
  const key = keyOf(work);
  try {
    const task = await deps.gateway.getTask(work.projectId, work.taskId);
    if (task.status === 0) return; // moved to another list or a stale read; look again next time
    await markClosed(deps, key, 'completed_by_human');
  } catch (error) {
    if (isDidaError(error) && error.code === 'not_found') await markClosed(deps, key, 'deleted');
    else {
      report.errors.push(errorText(error));
      return;
    }
  }
  report.closed.push(key);
}

async function markClosed(deps: EngineDeps, key: string, outcome: NonNullable<WorkRecord['outcome']>): Promise<void> {
  await deps.state.update((state) => {
    const work = state.works[key];
    if (!work || work.phase !== 'open') return;
    work.phase = 'closed';
    work.outcome = outcome;
    work.updatedAt = deps.now();
    work.rev += 1;
  });
}
