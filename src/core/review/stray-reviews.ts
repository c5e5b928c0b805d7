// Review todos filed for a Work that was not sent for review after all, whose removal failed: sync removes them later.
import { isDidaError } from '../../dida/dida-error';
import type { EngineDeps } from '../work/engine-context';
import type { EngineState } from '../work/work-state';

/**
 * Remembers a review todo that should not be in Dida (the Work was not sent for review after all) but could not be
 * removed: it stays one of the bundle's own tasks, so it is never adopted as a Work, and the next sync of its list
 * removes it (see removeStrayReviews).
 */
export async function rememberStrayReview(deps: EngineDeps, projectId: string, taskId: string): Promise<void> {
  await deps.state.update((state) => {
    if (state.strayTasks.some((s) => s.taskId === taskId)) return;
    state.strayTasks.push({ projectId, taskId, since: deps.now() });
  });
}

/**
 * Removes the stray review todos of one list that are still open in Dida (`openIds`, from the sync's read), so a todo
 * that stopped applying does not keep reminding the person. One the list no longer shows (the person completed or
 * deleted it) is dropped without a request but stays known as the bundle's own (were it re-opened, it is still never
 * taken for the person's task or for a lost review); one whose removal fails again stays for the next sync. Returns
 * the messages of the failures, for the sync's report. `state` is the sync's latest read.
 */
export async function removeStrayReviews(deps: EngineDeps, state: EngineState, projectId: string, openIds: ReadonlySet<string>): Promise<string[]> {
  const strays = state.strayTasks.filter((s) => s.projectId === projectId);
  const dropped: string[] = [];
  const removed: string[] = [];
  const errors: string[] = [];
  for (const stray of strays) {
    dropped.push(stray.taskId);
    if (!openIds.has(stray.taskId)) continue;
    try {
      await deps.gateway.deleteTask(projectId, stray.taskId);
    } catch (error) {
      if (!(isDidaError(error) && error.code === 'not_found')) {
        dropped.pop();
        errors.push(`a review todo that no longer applies could not be removed (will retry): ${error instanceof Error ? error.message : String(error)}`);
        continue;
      }
    }
    removed.push(stray.taskId);
  }
  if (dropped.length === 0) return errors;
  await deps.state.update((state) => {
    state.strayTasks = state.strayTasks.filter((s) => !dropped.includes(s.taskId));
    for (const id of removed) delete state.ownTasks[id];
  });
  return errors;
}
