// Pause from the phone: at a step boundary, the current Work's priority set to none or the owner's stop comment stops
// the agent; the Work then waits for the person, with a comment saying where it stopped.
import type { Comment, Task } from '../../dida/types';
import type { EngineDeps } from '../work/engine-context';
import { pausedByPriority, stopComments } from './phone-signals';
import { pauseForPerson, type PauseRequest } from './waiting';
import { visibleSteps, type EngineState, type WorkRecord } from '../work/work-state';
import type { OverLimit } from '../usage/usage';
import { spendOverLimit } from '../work/usage-records';

export interface BoundaryCheck {
  /** The current Work checked (open and not waiting), if any. */
  key?: string;
  /** Its priority as last seen (read now when `readDida`, else as the record holds it after the last read or write). */
  priority?: number;
  /** What asks the agent to stop, if anything. */
  pause?: PauseRequest;
  /** The spend guard's limit the Work passed (it stops like a pause). */
  spend?: OverLimit;
}

export interface BoundaryOptions {
  stopPhrases: readonly string[];
  /** Read the task and its comments from Dida (2 requests); otherwise only the record is looked at. */
  readDida: boolean;
  /** The Work's priority seen at an earlier boundary of this stretch (for the key in `seenFor`). */
  seenPriority?: number;
  seenFor?: string;
}

/** The Work a boundary looks at: the session's current Work while it is open and not waiting. */
export function boundaryWork(state: EngineState, sessionId: string): { key: string; work: WorkRecord } | undefined {
  const key = state.sessions[sessionId]?.currentWork;
  const work = key ? state.works[key] : undefined;
  return key && work && work.phase === 'open' && !work.waiting ? { key, work } : undefined;
}

/**
 * Looks at the session's current Work at a step boundary: a stop comment by the list's owner (when `readDida`), or its
 * priority now none after it ran with a priority (what the task writer read last, or a fresh read). Nothing when the
 * session has no open, non-waiting current Work. Dida faults are swallowed (the next boundary looks again).
 */
export async function checkBoundary(deps: EngineDeps, sessionId: string, options: BoundaryOptions): Promise<BoundaryCheck> {
  const state = await deps.state.read();
  const current = boundaryWork(state, sessionId);
  if (!current) return {};
  const { key, work } = current;
  let priority = work.priority;
  const spend = await spendOverLimit(deps, key);
  if (spend) return { key, priority, spend };
  if (options.readDida) {
    let task: Task;
    let comments: Comment[];
    try {
      [task, comments] = await Promise.all([deps.gateway.getTask(work.projectId, work.taskId), deps.gateway.listComments(work.projectId, work.taskId)]);
    } catch (error) {
      deps.log?.(`looking for a pause in Dida failed (looked at again at a later step): ${error instanceof Error ? error.message : String(error)}`);
      return { key, priority };
    }
    if (task.status !== 0) return { key, priority };
    priority = task.priority;
    const stop = stopComments(comments, state.owners[work.projectId], work.phoneHandled ?? [], options.stopPhrases)[0];
    if (stop) return { key, priority, pause: { by: 'comment', commentId: stop.id } };
  }
  const seen = options.seenFor === key ? options.seenPriority : undefined;
  if (pausedByPriority(seen, priority)) return { key, priority, pause: { by: 'priority', previousPriority: seen as number } };
  return { key, priority };
}

/** Where the Work stopped, for the person: the steps in progress, else the next one, with how many are done. */
export function pausedComment(deps: Pick<EngineDeps, 'locale'>, work: WorkRecord): string {
  const t = deps.locale.t;
  const steps = visibleSteps(work);
  const done = steps.filter((s) => s.status === 'completed' || s.status === 'skipped').length;
  const counts = { done, total: steps.length };
  const running = steps.filter((s) => s.status === 'in_progress').map((s) => s.title);
  const next = steps.find((s) => s.status === 'pending');
  const where = running.length
    ? t('dida.comment.pausedAt', { ...counts, steps: running.join(t('dida.comment.pausedJoin')) })
    : next
      ? t('dida.comment.pausedBefore', { ...counts, step: next.title })
      : t('dida.comment.pausedNoStep', counts);
  return `${where}\n${t('dida.comment.pausedHowTo')}`;
}

/** Pauses the Work as the person asked (see pauseForPerson); undefined when it was not running any more. */
export function pauseWork(deps: EngineDeps, key: string, request: PauseRequest): Promise<WorkRecord | undefined> {
  return pauseForPerson(deps, key, request, (work) => pausedComment(deps, work));
}
