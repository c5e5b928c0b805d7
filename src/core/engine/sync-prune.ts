// What a sync drops from the state file so it does not grow without end: Works closed long ago, with what only they
// referenced, and session records idle as long.
import type { EngineState } from '../work/work-state';
import { PENDING_CREATE_TTL_MS } from '../work/own-creates';

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
