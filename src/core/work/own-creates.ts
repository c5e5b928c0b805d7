// Creating the bundle's own tasks exactly once: a create is recorded with a marker before it is sent, found by it after.
import { randomInt } from 'node:crypto';
import { isDidaError } from '../../dida/dida-error';
import type { NewTask, Task } from '../../dida/types';
import type { EngineDeps } from './engine-context';
import { isRefusal } from './task-writer';
import type { EngineState, PendingCreate } from './work-state';

/** Failures after which a create may or may not have happened (unless Dida answered with a 4xx: then it did not). */
const UNKNOWN_OUTCOME = new Set(['network', 'timeout', 'invalid_response', 'server']);

export interface OwnCreate {
  task: Task;
  /** The pending record to drop (in the same state update that records the task). */
  pendingId: string;
}

/**
 * A `sortOrder` no task of a person carries: far below the values Dida hands out (multiples of 2^40 near zero), from
 * the clock with a random tail, so a lost answer can be resolved by finding it. It also puts the bundle's tasks on top.
 */
export function newMarker(now: number): number {
  const ms = Math.floor(now);
  let used = tailsUsed.get(ms);
  if (!used) {
    used = new Set();
    tailsUsed.set(ms, used);
    // A few recent milliseconds are enough: markers of one millisecond only meet markers of the same one.
    if (tailsUsed.size > 64) tailsUsed.delete(tailsUsed.keys().next().value as number);
  }
  // Never the same tail twice in one millisecond in this process (two creates of one settle, a fixed test clock);
  // another process's tail collides with a chance of 1 in 1,024 within the same millisecond only.
  let tail = randomInt(1024);
  for (let i = 0; used.has(tail) && i < 1024; i++) tail = (tail + 1) % 1024;
  used.add(tail);
  return -(ms * 1024 + tail);
}

/** The tails this process handed out, by millisecond (see newMarker). */
const tailsUsed = new Map<number, Set<number>>();

/** Whether `task` is the one a pending create made (marker and title both match). */
export function madeBy(task: Pick<Task, 'sortOrder' | 'title' | 'projectId'>, pending: PendingCreate): boolean {
  return task.sortOrder === pending.marker && task.title === pending.title && task.projectId === pending.projectId;
}

/** The pending creates of `kind` for `forKey` (or, for Works, with that title) in the list. */
export function pendingFor(state: EngineState, kind: PendingCreate['kind'], projectId: string, match: { forKey?: string; title?: string }): Array<[string, PendingCreate]> {
  return Object.entries(state.pendingCreates).filter(
    ([, p]) => p.kind === kind && p.projectId === projectId && (match.forKey === undefined || p.forKey === match.forKey) && (match.title === undefined || p.title === match.title),
  );
}

/**
 * Creates one of the bundle's own tasks exactly once. If an earlier attempt for the same purpose is still pending (its
 * answer was lost, or the process died before recording the task), the list is read once and the task that attempt
 * made is taken — found by its marker, never by title alone. Otherwise the create is recorded (with a new marker) and
 * sent; when its answer is lost the list is read and the task found by the marker, else the failure is thrown and the
 * pending record stays for the next attempt. The caller drops `pendingId` when it records the task.
 */
export async function createOwnTask(deps: EngineDeps, input: NewTask, purpose: { kind: PendingCreate['kind']; forKey?: string }): Promise<OwnCreate> {
  const state = await deps.state.read();
  const earlier = pendingFor(state, purpose.kind, input.projectId, purpose.forKey !== undefined ? { forKey: purpose.forKey } : { title: input.title });
  if (earlier.length > 0) {
    const tasks = (await deps.gateway.getProjectData(input.projectId)).tasks;
    for (const [pendingId, pending] of earlier) {
      const found = tasks.find((t) => madeBy(t, pending));
      if (found) return { task: found, pendingId };
    }
  }
  const marker = newMarker(deps.now());
  const pendingId = `${purpose.kind}:${-marker}`;
  const pending: PendingCreate = {
    kind: purpose.kind,
    projectId: input.projectId,
    title: input.title,
    marker,
    startedAt: deps.now(),
    ...(purpose.forKey !== undefined ? { forKey: purpose.forKey } : {}),
  };
  await deps.state.update((s) => {
    for (const [id] of earlier) delete s.pendingCreates[id];
    s.pendingCreates[pendingId] = pending;
  });
  try {
    return { task: await deps.gateway.createTask({ ...input, sortOrder: marker }), pendingId };
  } catch (error) {
    if (!isDidaError(error) || !UNKNOWN_OUTCOME.has(error.code) || isRefusal(error)) {
      await deps.state.update((s) => {
        delete s.pendingCreates[pendingId];
      });
      throw error;
    }
    let found: Task | undefined;
    try {
      found = (await deps.gateway.getProjectData(input.projectId)).tasks.find((t) => madeBy(t, pending));
    } catch {
      // The list cannot be read either: the pending record stays and the next attempt looks again.
    }
    if (!found) throw error;
    return { task: found, pendingId };
  }
}

/** Pending creates older than this whose task never showed up are forgotten (the create did not happen). */
export const PENDING_CREATE_TTL_MS = 24 * 60 * 60_000;
