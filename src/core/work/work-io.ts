// Shared moves of every Work mutation: load/save the record, re-read the task, write the steps back once.
import { isDidaError } from '../../dida/dida-error';
import { withLockHeld } from '../../dida/request-budget';
import type { Comment, Task } from '../../dida/types';
import type { EngineDeps, HeldLock } from './engine-context';
import { WorkError } from './engine-context';
import { reconcileWork, type ReconcileResult } from './work-reconcile';
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

/** The rev each loaded or saved record had in the state file: a save checks nobody else saved the Work since. */
const storedRev = new WeakMap<WorkRecord, number>();

/** Thrown by saveWork when the Work was saved by someone else since it was loaded; the operation is retried. */
export class ConcurrentChangeError extends Error {
  override readonly name = 'ConcurrentChangeError';
  constructor(readonly key: string) {
    super(`The Work ${key} was changed by another process meanwhile; the operation is retried.`);
  }
}

export async function loadWork(deps: EngineDeps, key: string): Promise<WorkRecord> {
  return workIn(await deps.state.read(), key);
}

/** The Work `key` of a state already read (no second read of the state file). */
export function workIn(state: EngineState, key: string): WorkRecord {
  const work = state.works[key];
  if (!work) throw new WorkError('work_not_found', `No Work has id ${key}; call todo_work list to see the current Works.`);
  storedRev.set(work, work.rev);
  return work;
}

/**
 * Stores `work` and returns the state. A record that was loaded is saved only when the state file still holds the
 * revision it was loaded with (else ConcurrentChangeError: another process or a sync saved it meanwhile); the saved
 * record gets the next revision.
 */
export async function saveWork(deps: EngineDeps, work: WorkRecord, extra?: (state: EngineState) => void): Promise<EngineState> {
  const key = keyOf(work);
  const base = storedRev.get(work);
  work.updatedAt = deps.now();
  const saved = await deps.state.update((state) => {
    const current = state.works[key];
    if (base !== undefined && current && current.rev !== base) throw new ConcurrentChangeError(key);
    work.rev = Math.max(current?.rev ?? 0, base ?? 0, work.rev) + 1;
    state.works[key] = structuredClone(work);
    extra?.(state);
  });
  storedRev.set(work, work.rev);
  return saved;
}

/** Saves `previous` over `work` (a refused write: the record goes back to what it was); keeps the revision check. */
export async function restoreWork(deps: EngineDeps, work: WorkRecord, previous: WorkRecord, extra?: (state: EngineState) => void): Promise<void> {
  const rev = storedRev.get(work);
  if (rev !== undefined) storedRev.set(previous, rev);
  await saveWork(deps, previous, extra);
  Object.assign(work, structuredClone(previous));
  storedRev.set(work, previous.rev);
}

/**
 * Runs one Work operation under the Work's lock and retries it from the start (at most 3 times) when the lock was
 * taken over while this process was paused or the record was saved by someone else meanwhile: it never writes what it
 * read before that.
 */
export async function withWork<T>(deps: EngineDeps, key: string, fn: (lock: HeldLock) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      // Inside the lock, a request waits for the machine's budget less long than others wait for the lock.
      return await deps.locks.withLock(lockKeyOf(key), (lock) => withLockHeld(() => fn(lock)));
    } catch (error) {
      const retry = error instanceof ConcurrentChangeError || (error instanceof Error && error.name === 'LockLostError');
      if (!retry || attempt >= 3) throw error;
      deps.log?.(`${error.message}`);
    }
  }
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
      throw new WorkError('work_deleted_remotely', `The Dida task of Work ${keyOf(work)} was deleted in Dida; call todo_work list to pick other work.`);
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

/** The comments of a task that may have been deleted (none then). */
export async function commentsIfAny(deps: EngineDeps, projectId: string, taskId: string): Promise<Comment[]> {
  try {
    return await deps.gateway.listComments(projectId, taskId);
  } catch (error) {
    if (isDidaError(error) && error.code === 'not_found') return [];
    throw error;
  }
}
