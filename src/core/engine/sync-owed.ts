// What a sync sends after reading the list: step changes still owed to Dida and progress comments left behind.
import type { EngineDeps } from '../work/engine-context';
import { pendingWriteDue, writePending } from '../work/background-writer';
import { DEFAULT_PROGRESS_WINDOW_MS, flushWorkOutbox } from '../work/outbox';
import { hasPendingWrite } from '../work/task-writer';
import { keyOf, withWork } from '../work/work-io';
import type { EngineState, WorkRecord } from '../work/work-state';

/**
 * Writes the step changes of the list's open Works that Dida does not show — at once when their write had an unknown
 * outcome or was cut short; when a tool call left them to the background writer, once their progress window is over
 * (a refused one waits for the next change) — then posts the progress comments a failed or interrupted post left (a
 * Work's comments that wait with its steps go with them). Returns the problems met; each is left for the next sync.
 */
export async function sendOwed(deps: EngineDeps, projectId: string, current: EngineState, openIds: ReadonlySet<string>): Promise<string[]> {
  const errors: string[] = [];
  const windowMs = deps.progressWindowMs ?? DEFAULT_PROGRESS_WINDOW_MS;
  const waitsItsWindow = (work: WorkRecord | undefined) => work?.pendingSince !== undefined && !pendingWriteDue(work, deps.now(), windowMs);
  for (const work of Object.values(current.works)) {
    if (work.projectId !== projectId || work.phase !== 'open' || work.waiting || !openIds.has(work.taskId) || !hasPendingWrite(work)) continue;
    if (waitsItsWindow(work) || work.writeFailure?.refused) continue;
    const key = keyOf(work);
    try {
      const outcome = await withWork(deps, key, (lock) => writePending(deps, key, lock));
      if (outcome === 'failed') errors.push(`the steps of Work ${key} could not be written yet; they are kept`);
    } catch (error) {
      errors.push(error instanceof Error ? error.message : String(error));
    }
  }
  for (const key of new Set(current.outbox.filter((e) => e.projectId === projectId).map((e) => e.workKey))) {
    if (waitsItsWindow((await deps.state.read()).works[key])) continue;
    try {
      await withWork(deps, key, () => flushWorkOutbox(deps, key));
    } catch (error) {
      errors.push(error instanceof Error ? error.message : String(error));
    }
  }
  return errors;
}
