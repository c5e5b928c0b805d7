// The first phase of a sync: the one read of the list, and folding what it shows into the state — the person's new
// tasks adopted, their edits folded into open Works, the bundle's own creates recognised, Works the person re-opened
// after review made the next round, and review todos whose records were lost found for rebuilding.
import { DidaError, isDidaError } from '../../dida/dida-error';
import type { Task } from '../../dida/types';
import { isBundleTaskTitle, reportedHost } from '../review/acceptance-report';
import { hostLabelOf } from '../queue/claim-holders';
import type { EngineDeps } from '../work/engine-context';
import { WorkError } from '../work/engine-context';
import { getLocale } from '../text/locale';
import { occurrenceKey } from '../time/schedule';
import { madeBy } from '../work/own-creates';
import { completeOwnTask, loadWork, saveWork, stepIdFactory, withWork } from '../work/work-io';
import { adoptTask, agentWorkFromTask, reconcileWork, taskVersion } from '../work/work-reconcile';
import { workKey, type EngineState, type WorkRecord } from '../work/work-state';
import { pruneState } from './sync-prune';

const ALL_LOCALES = [getLocale('zh'), getLocale('en')];

/** The occurrence key of a task in the account's zone. */
function taskOccurrence(task: Task, deps: EngineDeps): string {
  return occurrenceKey(task, deps.timeZone ?? 'UTC');
}

/** The open tasks of the list. A deleted list is `list_missing`, an archived one `list_closed` (WorkError). */
export async function readList(deps: EngineDeps, projectId: string): Promise<Task[]> {
  try {
    const data = await deps.gateway.getProjectData(projectId);
    if (data.project?.closed) throw new WorkError('list_closed', 'The bound Dida list is archived; reopen it in Dida or bind another list.');
    if (!data.project && data.tasks.length === 0) {
      const exists = (await deps.gateway.listProjects()).some((p) => p.id === projectId);
      if (!exists) throw new WorkError('list_missing', 'The bound Dida list no longer exists; bind another list with `dida-todo bind`.');
      // The list exists but the answer named neither it nor a task: not trusted as "the list is empty".
      throw new DidaError({ code: 'invalid_response', route: 'GET /project/{pid}/data', message: 'Dida answered the read of the bound list without the list; it will be read again later.' });
    }
    return data.tasks;
  } catch (error) {
    if (isDidaError(error) && error.code === 'not_found') {
      throw new WorkError('list_missing', 'The bound Dida list no longer exists; bind another list with `dida-todo bind`.');
    }
    throw error;
  }
}

/** Nothing new and no task changed since it was last folded in (and no comment of the list waits): nothing to fold. */
export function listUnchanged(deps: EngineDeps, state: EngineState, projectId: string, tasks: readonly Task[]): boolean {
  return (
    state.outbox.every((e) => e.projectId !== projectId) &&
    tasks.every((task) => {
      if (state.ownTasks[task.id] || filedElsewhere(deps, task)) return true;
      const work = state.works[workKey(task.id, taskOccurrence(task, deps))];
      if (!work) return false;
      if (work.phase !== 'open') return work.phase === 'finalizing';
      const version = taskVersion(task);
      return version !== undefined && work.seenVersion === version;
    })
  );
}

/** What folding the list's tasks into the state did, and what it left for the steps after it. */
export interface FoldOutcome {
  adopted: string[];
  updated: string[];
  closed: string[];
  /** Works the person re-opened in Dida after review (see reopenWork). */
  reopened: string[];
  /** Review todos of this machine no record knows (lost with the state file): to be rebuilt from Dida. */
  orphans: Task[];
}

/**
 * Folds the list's tasks into `state` (inside the caller's state update): prunes it, adopts the person's new tasks
 * and the bundle's own creates whose answer was lost, and folds the person's edits into open Works that nothing else
 * changed since `revs` (the record revisions read before the list).
 */
export function foldTasks(deps: EngineDeps, state: EngineState, tasks: readonly Task[], revs: ReadonlyMap<string, number>): FoldOutcome {
  const outcome: FoldOutcome = { adopted: [], updated: [], closed: [], reopened: [], orphans: [] };
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
        outcome.adopted.push(task.id);
      }
      continue;
    }
    if (isBundleTaskTitle(ALL_LOCALES, task.title)) {
      // Another machine's review (its report names the machine that did the work) is that machine's to watch.
      if (!knownBundleTask(state, task.id) && !filedElsewhere(deps, task)) outcome.orphans.push(task);
      continue;
    }
    const occurrence = taskOccurrence(task, deps);
    const key = workKey(task.id, occurrence);
    const work = state.works[key];
    if (!work) {
      state.works[key] = adoptTask(task, { now, newStepId: newId, occurrence });
      outcome.adopted.push(key);
      for (const [otherKey, other] of Object.entries(state.works)) {
        if (other.taskId === task.id && otherKey !== key && other.phase === 'open') {
          other.phase = 'closed';
          other.outcome = 'superseded';
          outcome.closed.push(otherKey);
        }
      }
      continue;
    }
    if (work.phase === 'accepting' || (work.phase === 'closed' && REOPENABLE.has(work.outcome ?? 'deleted'))) {
      outcome.reopened.push(key);
      continue;
    }
    if (work.phase !== 'open' || (state.works[key]?.rev ?? 0) !== (revs.get(key) ?? 0)) continue;
    if (reconcileWork(work, task, { now, newStepId: newId, occurrence }).changed) outcome.updated.push(key);
  }
  return outcome;
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
export async function reopenWork(deps: EngineDeps, key: string): Promise<boolean> {
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
