// Shared moves of every Work mutation: load/save the record, re-read the task, write the steps back once.
import { isDidaError } from '../dida/dida-error';
import { isItemCompleted, type Task } from '../dida/types';
import type { EngineDeps } from './engine-context';
import { WorkError } from './engine-context';
import { humanFingerprint, rememberItemIds, taskUpdateFor } from './item-codec';
import { occurrenceKey } from './schedule';
import { reconcileWork, taskVersion, type ReconcileResult } from './work-reconcile';
import { workKey, type EngineState, type WorkRecord } from './work-state';
import { randomBytes } from 'node:crypto';

export function keyOf(work: Pick<WorkRecord, 'taskId' | 'occurrence'>): string {
  return workKey(work.taskId, work.occurrence);
}

export function lockKeyOf(key: string): string {
  return `work-${key}`;
}

/** A short step id the model sees: `s` + 6 base-32 characters, unique within `state`. */
export function stepIdFactory(deps: EngineDeps, state?: EngineState): () => string {
  if (deps.newStepId) return deps.newStepId;
  const taken = new Set<string>();
  if (state) for (const work of Object.values(state.works)) for (const step of work.steps) taken.add(step.id);
  return () => {
    for (;;) {
      const id = `s${randomBytes(4).readUInt32BE(0).toString(32).padStart(7, '0').slice(-6)}`;
      if (!taken.has(id)) {
        taken.add(id);
        return id;
      }
    }
  };
}

export async function loadWork(deps: EngineDeps, key: string): Promise<WorkRecord> {
  return workIn(await deps.state.read(), key);
}

/** The Work `key` of a state already read (no second read of the state file). */
export function workIn(state: EngineState, key: string): WorkRecord {
  const work = state.works[key];
  if (!work) throw new WorkError('work_not_found', `No Work has id ${key}; call todo_work list to see the current Works.`);
  return work;
}

/** Stores `work` (bumping its rev) and returns the state. */
export async function saveWork(deps: EngineDeps, work: WorkRecord, extra?: (state: EngineState) => void): Promise<EngineState> {
  work.updatedAt = deps.now();
  work.rev += 1;
  return deps.state.update((state) => {
    state.works[keyOf(work)] = structuredClone(work);
    extra?.(state);
  });
}

/**
 * Re-reads the Work's task inside its lock; a deleted task closes the Work and is reported. A 404 is confirmed
 * with the list's data first: a task still listed there is not deleted, and the 404 is thrown as the fault it is.
 */
export async function readTask(deps: EngineDeps, work: WorkRecord): Promise<Task> {
  try {
    return await deps.gateway.getTask(work.projectId, work.taskId);
  } catch (error) {
    if (isDidaError(error) && error.code === 'not_found') {
      const listed = (await deps.gateway.getProjectData(work.projectId)).tasks.some((t) => t.id === work.taskId);
      if (listed) throw error;
      work.phase = 'closed';
      work.outcome = 'deleted';
      await saveWork(deps, work);
      throw new WorkError('work_deleted_remotely', `The Dida task "${work.title}" was deleted; call todo_work list to pick other work.`);
    }
    throw error;
  }
}

/** Folds the fresh task into the Work (imports, human ticks, edits). */
export function reconcileWithTask(deps: EngineDeps, work: WorkRecord, task: Task, state?: EngineState): ReconcileResult {
  return reconcileWork(work, task, {
    now: deps.now(),
    newStepId: stepIdFactory(deps, state),
    occurrence: work.occurrence,
  });
}

/** Whether the items and desc Dida holds differ from what the Work's steps say they should be. */
export function needsWrite(task: Task, work: WorkRecord, now: number): boolean {
  if (work.mode !== 'checklist') return false;
  const { update } = taskUpdateFor(task, work, now);
  const before = task.items ?? [];
  const after = update.items ?? [];
  if (before.length !== after.length) return true;
  for (let i = 0; i < after.length; i++) {
    const a = before[i];
    const b = after[i];
    if (!a || !b || !('id' in b) || a.id !== b.id || a.title !== b.title || isItemCompleted(a) !== isItemCompleted({ status: b.status ?? 0 })) return true;
  }
  return (update.desc ?? '') !== (task.desc ?? '');
}

/**
 * Writes the Work's steps into its task (one whole-task update, fields the bundle does not own kept as read),
 * then re-matches item ids and refreshes the human fingerprint. Returns the task as Dida answered it, or the
 * input task when nothing needed writing.
 */
export async function writeSteps(deps: EngineDeps, work: WorkRecord, task: Task): Promise<Task> {
  if (!needsWrite(task, work, deps.now())) return task;
  const { update, plan } = taskUpdateFor(task, work, deps.now());
  const answered = await deps.gateway.updateTask(update);
  rememberItemIds(work.steps, plan, answered.items ?? []);
  work.humanFingerprint = humanFingerprint(answered);
  const version = taskVersion(answered);
  if (version) work.seenVersion = version;
  else delete work.seenVersion;
  return answered;
}

export function occurrenceOf(task: Task, zone: string): string {
  return occurrenceKey(task, zone);
}

/**
 * Completes a task the bundle filed (acceptance todo, reminder). A 404 means it is already gone (the person
 * deleted it) only when a re-read confirms it; a task still there and open keeps the 404 as the fault it is.
 */
export async function completeOwnTask(deps: EngineDeps, projectId: string, taskId: string): Promise<void> {
  try {
    await deps.gateway.completeTask(projectId, taskId);
  } catch (error) {
    if (!(isDidaError(error) && error.code === 'not_found')) throw error;
    let stillOpen: boolean;
    try {
      stillOpen = (await deps.gateway.getTask(projectId, taskId)).status === 0;
    } catch (readError) {
      if (isDidaError(readError) && readError.code === 'not_found') return;
      throw readError;
    }
    if (stillOpen) throw error;
  }
}
