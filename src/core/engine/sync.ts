// Sync of one bound list: one project-data read, adoption of new human tasks, folding in human edits,
// noticing Works completed or deleted in Dida, reviews (accept / rework), resumes and answers from the phone, and
// finalization retries.
import { DidaError, isDidaError } from '../../dida/dida-error';
import type { Task } from '../../dida/types';
import { lateFeedback, processAcceptance } from '../review/acceptance';
import { isBundleTaskTitle, reportedHost } from '../review/acceptance-report';
import { hostLabelOf } from '../queue/claim-holders';
import { DEFAULT_CLAIM_LEASE_MS, heldElsewhere, peersActive } from '../queue/claims';
import type { EngineDeps } from '../work/engine-context';
import { WorkError } from '../work/engine-context';
import { claimLapsed, reportExpiredClaim } from '../queue/claim-release';
import { finalizeBlocker, finalizeWork } from '../review/finalize';
import { removeStrayReviews } from '../review/stray-reviews';
import { getLocale } from '../text/locale';
import { occurrenceKey } from '../time/schedule';
import { sendOwed } from './sync-owed';
import { rebuildReview } from './sync-rebuild';
import { madeBy, PENDING_CREATE_TTL_MS } from '../work/own-creates';
import { completeOwnTask, keyOf, loadWork, saveWork, stepIdFactory, withWork } from '../work/work-io';
import { adoptTask, agentWorkFromTask, reconcileWork, taskVersion } from '../work/work-reconcile';
import { workKey, type EngineState, type WorkRecord } from '../work/work-state';
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

const ALL_LOCALES = [getLocale('zh'), getLocale('en')];

/** The occurrence key of a task in the account's zone. */
export function taskOccurrence(task: Task, deps: EngineDeps): string {
  return occurrenceKey(task, deps.timeZone ?? 'UTC');
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
  let tasks: Task[];
  try {
    const data = await deps.gateway.getProjectData(projectId);
    if (data.project?.closed) throw new WorkError('list_closed', 'The bound Dida list is archived; reopen it in Dida or bind another list.');
    if (!data.project && data.tasks.length === 0) {
      const exists = (await deps.gateway.listProjects()).some((p) => p.id === projectId);
      if (!exists) throw new WorkError('list_missing', 'The bound Dida list no longer exists; bind another list with `dida-todo bind`.');
      // The list exists but the answer named neither it nor a task: not trusted as "the list is empty".
      throw new DidaError({ code: 'invalid_response', route: 'GET /project/{pid}/data', message: 'Dida answered the read of the bound list without the list; it will be read again later.' });
    }
    tasks = data.tasks;
  } catch (error) {
    if (isDidaError(error) && error.code === 'not_found') {
      throw new WorkError('list_missing', 'The bound Dida list no longer exists; bind another list with `dida-todo bind`.');
    }
    throw error;
  }
  report.tasks = tasks;
  const openIds = new Set(tasks.map((t) => t.id));

  // Nothing new and no task changed since it was last folded in: the state is not even rewritten.
  const unchanged =
    before.outbox.every((e) => e.projectId !== projectId) &&
    tasks.every((task) => {
      if (before.ownTasks[task.id] || filedElsewhere(deps, task)) return true;
      const work = before.works[workKey(task.id, taskOccurrence(task, deps))];
      if (!work) return false;
      if (work.phase !== 'open') return work.phase === 'finalizing';
      const version = taskVersion(task);
      return version !== undefined && work.seenVersion === version;
    });
  const reopened: string[] = [];
  const orphans: Task[] = [];
  const after = unchanged ? before : await deps.state.update((state) => {
    const newId = stepIdFactory(deps, state);
    const now = deps.now();
    pruneState(state, now);
    for (const task of tasks) {
      if (state.ownTasks[task.id]) continue;
      // The bundle's own create whose answer was lost or whose process died before recording it: never a person's task.
      const pending = Object.entries(state.pendingCreates).find(([, p]) => madeBy(task, p));
      if (pending) {
        const [pendingId, made] = pending;
        if (made.kind === 'work' && !state.works[task.id]) {
          state.works[task.id] = agentWorkFromTask(task, { now, newStepId: newId });
          delete state.pendingCreates[pendingId];
          report.adopted.push(task.id);
        }
        continue;
      }
      if (isBundleTaskTitle(ALL_LOCALES, task.title)) {
        // Another machine's review (its report names the machine that did the work) is that machine's to watch.
        if (!knownBundleTask(state, task.id) && !filedElsewhere(deps, task)) orphans.push(task);
        continue;
      }
      const occurrence = taskOccurrence(task, deps);
      const key = workKey(task.id, occurrence);
      const work = state.works[key];
      if (!work) {
        state.works[key] = adoptTask(task, { now, newStepId: newId, occurrence });
        report.adopted.push(key);
        for (const [otherKey, other] of Object.entries(state.works)) {
          if (other.taskId === task.id && otherKey !== key && other.phase === 'open') {
            other.phase = 'closed';
            other.outcome = 'superseded';
            report.closed.push(otherKey);
          }
        }
        continue;
      }
      if (work.phase === 'accepting' || (work.phase === 'closed' && REOPENABLE.has(work.outcome ?? 'deleted'))) {
        reopened.push(key);
        continue;
      }
      if (work.phase !== 'open' || (state.works[key]?.rev ?? 0) !== (revs.get(key) ?? 0)) continue;
      const result = reconcileWork(work, task, { now, newStepId: newId, occurrence });
      if (result.changed) report.updated.push(key);
    }
  });

  // Works the person re-opened in Dida after review: a new round of the same Work.
  for (const key of reopened) {
    try {
      if (await reopenWork(deps, key)) report.reopened.push(key);
    } catch (error) {
      report.errors.push(error instanceof Error ? error.message : String(error));
    }
  }
  // Review todos whose records were lost with the state file: the review is rebuilt from Dida.
  for (const task of orphans) {
    try {
      const rebuilt = await rebuildReview(deps, task);
      if (rebuilt) report.rebuilt.push(rebuilt);
    } catch (error) {
      report.errors.push(error instanceof Error ? error.message : String(error));
    }
  }

  const touched = new Set(Object.values(after.sessions).flatMap((session) => session.touched));
  // Works that left the open list: completed or deleted in Dida (one read each, once).
  for (const work of Object.values(after.works)) {
    if (work.projectId !== projectId || openIds.has(work.taskId)) continue;
    if (work.phase !== 'open') continue;
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
  // Review todos filed for a Work that was not sent for review after all, whose removal failed then (after the Works
  // that left the list, so the person's words on one go to a Work that is still open).
  report.errors.push(...(await removeStrayReviews(deps, after, projectId, openIds)));

  const current = report.rebuilt.length || reopened.length ? await deps.state.read() : after;
  const looks = planLooks(deps, current, projectId, tasks, options.looks ?? 'all');
  for (const work of Object.values(current.works)) {
    if (work.projectId !== projectId) continue;
    const key = keyOf(work);
    try {
      if (looks.skip.has(key)) continue;
      if (work.phase === 'accepting' && work.acceptance && !work.acceptance.closed) {
        const outcome = await processAcceptance(deps, key, openIds.has(work.acceptance.taskId));
        if (outcome.status === 'accepted') report.accepted.push(key);
        if (outcome.status === 'rework') report.reworks.push(outcome.reworkKey);
      } else if (work.phase === 'open' && work.waiting?.applied && openIds.has(work.taskId)) {
        // The person answers on the 🙋 reminder or the Work (two comment reads), or sets the priority back.
        const task = tasks.find((t) => t.id === work.taskId);
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
      } else if (work.phase === 'finalizing' || orphanedSettled(work, touched, deps.now())) {
        const outcome = await finalizeWork(deps, key);
        if (outcome.status === 'finalized') report.finalized.push(key);
        else if (outcome.status === 'failed') report.errors.push(outcome.message);
      }
    } catch (error) {
      report.errors.push(error instanceof Error ? error.message : String(error));
    }
  }
  await noteLooks(deps, looks.looked);
  report.errors.push(...(await sendOwed(deps, projectId, current, openIds)));
  return report;
}

/** How a Work that ended can be re-opened by the person (not when it was deleted or replaced by another occurrence). */
const REOPENABLE: ReadonlySet<string> = new Set(['accepted', 'completed_by_human', 'rework']);

/** A bundle task another machine filed: a review whose report names another machine as the one that did the work. */
function filedElsewhere(deps: EngineDeps, task: Task): boolean {
  if (!isBundleTaskTitle(ALL_LOCALES, task.title)) return false;
  const host = reportedHost(task.content);
  return host !== undefined && host !== hostLabelOf(deps);
}

function knownBundleTask(state: EngineState, taskId: string): boolean {
  return Object.values(state.works).some((w) => w.acceptance?.taskId === taskId || w.finalize?.acceptanceTaskId === taskId || w.waiting?.reminderTaskId === taskId);
}

/**
 * A Work the person re-opened in Dida after it was sent for review (or completed): confirmed with one read, it becomes
 * open again as the next round of the same Work; its review todo, if still open, is completed (it is superseded) and
 * the items the person added or unticked are merged in.
 */
async function reopenWork(deps: EngineDeps, key: string): Promise<boolean> {
  return withWork(deps, key, async () => {
    const work = await loadWork(deps, key);
    if (work.phase === 'open' || work.phase === 'finalizing') return false;
    const task = await deps.gateway.getTask(work.projectId, work.taskId);
    if (task.status !== 0) return false;
    const review = work.acceptance && !work.acceptance.closed ? work.acceptance.taskId : undefined;
    if (review) await completeOwnTask(deps, work.projectId, review);
    work.phase = 'open';
    work.round = (work.round ?? 1) + 1;
    work.reopened = true;
    delete work.finalize;
    delete work.acceptance;
    delete work.outcome;
    const state = await deps.state.read();
    reconcileWorkWith(deps, work, task, state);
    await saveWork(deps, work);
    return true;
  });
}

function reconcileWorkWith(deps: EngineDeps, work: WorkRecord, task: Task, state: EngineState): void {
  reconcileWork(work, task, { now: deps.now(), newStepId: stepIdFactory(deps, state), occurrence: work.occurrence });
}

/** Closed Works and idle session records older than this are dropped from the state file. */
export const PRUNE_AFTER_MS = 30 * 24 * 60 * 60_000;

/**
 * Keeps the state file from growing without end: drops Works closed more than PRUNE_AFTER_MS ago (and the
 * bundle-task ids and progress comments only they referenced) and session records idle as long. Open, finalizing and reviewing Works stay.
 */
export function pruneState(state: EngineState, now: number): void {
  const cutoff = now - PRUNE_AFTER_MS;
  for (const [key, work] of Object.entries(state.works)) {
    if (work.phase !== 'closed' || work.updatedAt >= cutoff) continue;
    delete state.works[key];
    // Its progress comments can wait no longer than the Work is known, and its usage goes with it.
    state.outbox = state.outbox.filter((e) => e.workKey !== key);
    delete state.usage[key];
    for (const id of [work.acceptance?.taskId, work.finalize?.acceptanceTaskId, work.waiting?.reminderTaskId]) if (id) delete state.ownTasks[id];
  }
  for (const [id, pending] of Object.entries(state.pendingCreates)) {
    if (now - pending.startedAt > PENDING_CREATE_TTL_MS) delete state.pendingCreates[id];
  }
  for (const [id, session] of Object.entries(state.sessions)) {
    // A turn left open that long ago is far past the crash-recovery window too.
    if (session.updatedAt >= cutoff) continue;
    delete state.sessions[id];
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
      report.errors.push(error instanceof Error ? error.message : String(error));
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
