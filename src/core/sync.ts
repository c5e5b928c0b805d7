// Sync of one bound list: one project-data read, adoption of new human tasks, folding in human edits,
// noticing Works completed or deleted in Dida, reviews (accept / rework), resumes and finalization retries.
import { isDidaError } from '../dida/dida-error';
import type { Task } from '../dida/types';
import { processAcceptance } from './acceptance';
import { isBundleTaskTitle, reworkTitle } from './acceptance-report';
import type { EngineDeps } from './engine-context';
import { WorkError } from './engine-context';
import { finalizeBlocker, finalizeWork } from './finalize';
import { getLocale } from './locale';
import { occurrenceKey } from './schedule';
import { resumeWork } from './waiting';
import { keyOf, stepIdFactory } from './work-io';
import { adoptTask, reconcileWork, taskVersion } from './work-reconcile';
import { workKey, type EngineState, type WorkRecord } from './work-state';

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
  finalized: string[];
  /** Problems met after the list was read; each was left for the next sync. */
  errors: string[];
}

const ALL_LOCALES = [getLocale('zh'), getLocale('en')];

/** The occurrence key of a task in the account's zone. */
export function taskOccurrence(task: Task, deps: EngineDeps): string {
  return occurrenceKey(task, deps.timeZone ?? 'UTC');
}

/**
 * Syncs one list. Reading never rewrites a person's task: Dida is written only to carry out what the person
 * asked for in Dida (rework from an owner comment, resuming when they restored the priority) or to finish an
 * interrupted finalization. A deleted list is `list_missing`, an archived one `list_closed` (WorkError).
 */
export async function syncList(deps: EngineDeps, projectId: string): Promise<SyncReport> {
  const report: SyncReport = { projectId, tasks: [], adopted: [], updated: [], closed: [], accepted: [], reworks: [], resumed: [], finalized: [], errors: [] };
  const before = await deps.state.read();
  const revs = new Map(Object.entries(before.works).map(([k, w]) => [k, w.rev]));
  let tasks: Task[];
  try {
    const data = await deps.gateway.getProjectData(projectId);
    if (data.project?.closed) throw new WorkError('list_closed', 'The bound Dida list is archived; reopen it in Dida or bind another list.');
    if (!data.project && data.tasks.length === 0) {
      const exists = (await deps.gateway.listProjects()).some((p) => p.id === projectId);
      if (!exists) throw new WorkError('list_missing', 'The bound Dida list no longer exists; bind another list with `dida-todo bind`.');
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
  const unchanged = tasks.every((task) => {
    if (before.ownTasks[task.id] || isBundleTaskTitle(ALL_LOCALES, task.title)) return true;
    const work = before.works[workKey(task.id, taskOccurrence(task, deps))];
    if (!work) return false;
    if (work.phase !== 'open') return true;
    const version = taskVersion(task);
    return version !== undefined && work.seenVersion === version;
  });
  const after = unchanged ? before : await deps.state.update((state) => {
    const newId = stepIdFactory(deps, state);
    const now = deps.now();
    pruneState(state, now);
    // A rework task an interrupted review already filed is that review's to pick up, not a new request.
    const reworksInFlight = new Set(
      Object.values(state.works)
        .filter((w) => w.projectId === projectId && w.phase === 'accepting' && w.acceptance && !w.acceptance.closed && !w.acceptance.reworkTaskId)
        .map((w) => reworkTitle(deps.locale, w)),
    );
    for (const task of tasks) {
      if (state.ownTasks[task.id] || isBundleTaskTitle(ALL_LOCALES, task.title)) continue;
      if (!state.works[workKey(task.id, taskOccurrence(task, deps))] && reworksInFlight.has(task.title)) continue;
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
      if (work.phase !== 'open' || (state.works[key]?.rev ?? 0) !== (revs.get(key) ?? 0)) continue;
      const result = reconcileWork(work, task, { now, newStepId: newId, occurrence });
      if (result.changed) report.updated.push(key);
    }
  });

  // Works that left the open list: completed or deleted in Dida (one read each, once).
  for (const work of Object.values(after.works)) {
    if (work.projectId !== projectId || openIds.has(work.taskId)) continue;
    if (work.phase !== 'open') continue;
    await noteGone(deps, work, report);
  }

  const touched = new Set(Object.values(after.sessions).flatMap((session) => session.touched));
  for (const work of Object.values(after.works)) {
    if (work.projectId !== projectId) continue;
    const key = keyOf(work);
    try {
      if (work.phase === 'accepting' && work.acceptance && !work.acceptance.closed) {
        const outcome = await processAcceptance(deps, key, openIds.has(work.acceptance.taskId));
        if (outcome.status === 'accepted') report.accepted.push(key);
        if (outcome.status === 'rework') report.reworks.push(outcome.reworkKey);
      } else if (work.phase === 'open' && work.waiting?.applied && openIds.has(work.taskId)) {
        const task = tasks.find((t) => t.id === work.taskId);
        if (task && task.priority > 0) {
          await resumeWork(deps, key, { explicit: false });
          report.resumed.push(key);
        }
      } else if (work.phase === 'finalizing' || orphanedSettled(work, touched, deps.now())) {
        const outcome = await finalizeWork(deps, key);
        if (outcome.status === 'finalized') report.finalized.push(key);
        else if (outcome.status === 'failed') report.errors.push(outcome.message);
      }
    } catch (error) {
      report.errors.push(error instanceof Error ? error.message : String(error));
    }
  }
  return report;
}

/** Closed Works and idle session records older than this are dropped from the state file. */
export const PRUNE_AFTER_MS = 30 * 24 * 60 * 60_000;

/**
 * Keeps the state file from growing without end: drops Works closed more than PRUNE_AFTER_MS ago (and the
 * bundle-task ids only they referenced) and session records idle as long. Open, finalizing and reviewing Works stay.
 */
export function pruneState(state: EngineState, now: number): void {
  const cutoff = now - PRUNE_AFTER_MS;
  for (const [key, work] of Object.entries(state.works)) {
    if (work.phase !== 'closed' || work.updatedAt >= cutoff) continue;
    delete state.works[key];
    for (const id of [work.acceptance?.taskId, work.finalize?.acceptanceTaskId, work.waiting?.reminderTaskId]) if (id) delete state.ownTasks[id];
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
