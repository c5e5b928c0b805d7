// Review todos filed for a Work that was not sent for review after all, whose removal failed: sync removes them later,
// and what the person wrote on one meanwhile goes to its Work rather than away with the todo.
import type { Comment } from '../../dida/types';
import { isDidaError } from '../../dida/dida-error';
import { showsAnything } from '../text/text-guard';
import type { EngineDeps } from '../work/engine-context';
import { commentsIfAny, completeOwnTask } from '../work/work-io';
import type { EngineState } from '../work/work-state';
import { addFeedbackSteps } from './acceptance';

/** A stray the list has not shown open for this long (completed or deleted by the person) is forgotten. */
export const STRAY_KEEP_MS = 30 * 24 * 60 * 60_000;

type Stray = EngineState['strayTasks'][number];

/**
 * Remembers a review todo that should not be in Dida (the Work `forKey` was not sent for review after all) but could
 * not be removed: it stays one of the bundle's own tasks, so it is never adopted as a Work, and the next sync of its
 * list removes it (see removeStrayReviews).
 */
export async function rememberStrayReview(deps: EngineDeps, projectId: string, taskId: string, forKey?: string): Promise<void> {
  await deps.state.update((state) => {
    if (state.strayTasks.some((s) => s.taskId === taskId)) return;
    state.strayTasks.push({ projectId, taskId, since: deps.now(), ...(forKey ? { forKey } : {}) });
  });
}

/**
 * Removes the stray review todos of one list that are open in Dida (`openIds`, from the sync's read), so a todo that
 * stopped applying does not keep reminding the person. The owner's comments on one (they took it for the review) are
 * first added to its Work as steps, as feedback on a review would be; when that Work is not open any more, the todo is
 * completed instead of removed, so their words stay in Dida. One the list does not show (the person completed or
 * deleted it) costs no request and is kept a while: re-opened, it is removed then. One whose removal fails stays for
 * the next sync. Returns the messages of the failures, for the sync's report. `state` is the sync's latest read.
 */
export async function removeStrayReviews(deps: EngineDeps, state: EngineState, projectId: string, openIds: ReadonlySet<string>): Promise<string[]> {
  const strays = state.strayTasks.filter((s) => s.projectId === projectId);
  const dropped: string[] = [];
  const removed: string[] = [];
  const errors: string[] = [];
  for (const stray of strays) {
    if (!openIds.has(stray.taskId)) {
      if (deps.now() - stray.since > STRAY_KEEP_MS) dropped.push(stray.taskId);
      continue;
    }
    let gone = true;
    try {
      if (await carryWords(deps, state, stray)) await deps.gateway.deleteTask(projectId, stray.taskId);
      else {
        await completeOwnTask(deps, projectId, stray.taskId);
        gone = false;
      }
    } catch (error) {
      if (!(isDidaError(error) && error.code === 'not_found')) {
        errors.push(`a review todo that no longer applies could not be removed (will retry): ${error instanceof Error ? error.message : String(error)}`);
        continue;
      }
    }
    dropped.push(stray.taskId);
    // A completed one stays the bundle's own: re-opened again, it is never taken for the person's task or a lost review.
    if (gone) removed.push(stray.taskId);
  }
  if (dropped.length === 0) return errors;
  await deps.state.update((state) => {
    state.strayTasks = state.strayTasks.filter((s) => !dropped.includes(s.taskId));
    for (const id of removed) delete state.ownTasks[id];
  });
  return errors;
}

/**
 * The owner's comments on the stray (not the bundle's anchor, not carried before) are added to its Work. True when
 * nothing of the person's stays behind (none written, or all carried): the todo may go.
 */
async function carryWords(deps: EngineDeps, state: EngineState, stray: Stray): Promise<boolean> {
  const owner = state.owners[stray.projectId];
  if (!owner) return true;
  const anchors = new Set([deps.locale.t('dida.acceptance.anchor')]);
  const words = (await commentsIfAny(deps, stray.projectId, stray.taskId)).filter(
    (c: Comment) => c.userId === owner && !anchors.has(c.title) && showsAnything(c.title) && !stray.carried?.includes(c.id),
  );
  if (words.length === 0) return true;
  if (!stray.forKey) return false;
  const added = await addFeedbackSteps(deps, stray.forKey, words, () =>
    deps.state
      .update((s) => {
        const entry = s.strayTasks.find((e) => e.taskId === stray.taskId);
        if (entry) entry.carried = [...(entry.carried ?? []), ...words.map((c) => c.id)];
      })
      .then(() => undefined),
  );
  return added > 0;
}
