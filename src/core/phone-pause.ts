// Pause from the phone: at a step boundary, the current Work's priority set to none or the owner's stop comment stops
// the agent; the Work then waits for the person, with a comment saying where it stopped.
import { parseDidaDate } from '../dida/dida-date';
import type { Comment, Task } from '../dida/types';
import type { EngineDeps } from './engine-context';
import { normaliseTrigger } from './queue-policy';
import { pauseForPerson, type PauseRequest } from './waiting';
import { visibleSteps, type EngineState, type WorkRecord } from './work-state';

/** Comments that pause a running Work when the list's owner writes one of them (the whole comment). */
export const DEFAULT_STOP_PHRASES: readonly string[] = ['停', '暂停', 'stop', 'pause'];

/** A step boundary reads the Work's task and comments from Dida at most this often per session. */
export const PAUSE_CHECK_INTERVAL_MS = 30_000;

const EDGE_PUNCTUATION = /^[\p{P}\p{S}\s]+|[\p{P}\p{S}\s]+$/gu;

/** The comparison form of a stop phrase or comment: as a queue trigger (NFKC, lower case, trimmed), edge punctuation removed. */
export function normalisePhrase(text: string): string {
  return normaliseTrigger(text).replace(EDGE_PUNCTUATION, '');
}

/** True when the whole comment is one of `phrases` (`停`, ` 停！`, `STOP.` match; `停一下再说` does not). */
export function isStopPhrase(text: string, phrases: readonly string[]): boolean {
  const said = normalisePhrase(text);
  return said !== '' && phrases.some((phrase) => normalisePhrase(phrase) === said);
}

/** The owner's stop comments on a task not handled yet, oldest first. */
export function stopComments(comments: readonly Comment[], owner: string | undefined, handled: readonly string[], phrases: readonly string[]): Comment[] {
  if (!owner) return [];
  return comments
    .filter((c) => c.userId === owner && !handled.includes(c.id) && isStopPhrase(c.title, phrases))
    .sort((a, b) => commentTime(a) - commentTime(b) || a.id.localeCompare(b.id));
}

/** A comment's `createdTime` in ms (0 when Dida sent none). */
export function commentTime(comment: Pick<Comment, 'createdTime'> | undefined): number {
  return parseDidaDate(comment?.createdTime)?.getTime() ?? 0;
}

/** True when `priority` (as Dida shows it now) is none while the Work ran with `seenPriority` > 0 in this stretch. */
export function pausedByPriority(seenPriority: number | undefined, priority: number): boolean {
  return seenPriority !== undefined && seenPriority > 0 && priority === 0;
}

/** Whether the session's current Work is one the person paused (the poller does not wake such a session). */
export function sessionPaused(state: EngineState, sessionId: string): boolean {
  const key = state.sessions[sessionId]?.currentWork;
  return !!(key && state.works[key]?.waiting?.pausedBy);
}

export interface BoundaryCheck {
  /** The current Work checked (open and not waiting), if any. */
  key?: string;
  /** Its priority as last seen (read now when `readDida`, else as the record holds it after the last read or write). */
  priority?: number;
  /** What asks the agent to stop, if anything. */
  pause?: PauseRequest;
}

export interface BoundaryOptions {
  stopPhrases: readonly string[];
  /** Read the task and its comments from Dida (2 requests); otherwise only the record is looked at. */
  readDida: boolean;
  /** The Work's priority seen at an earlier boundary of this stretch (for the key in `seenFor`). */
  seenPriority?: number;
  seenFor?: string;
}

/**
 * Looks at the session's current Work at a step boundary: a stop comment by the list's owner (when `readDida`), or its
 * priority now none after it ran with a priority (what the task writer read last, or a fresh read). Nothing when the
 * session has no open, non-waiting current Work. Dida faults are swallowed (the next boundary looks again).
 */
export async function checkBoundary(deps: EngineDeps, sessionId: string, options: BoundaryOptions): Promise<BoundaryCheck> {
  const state = await deps.state.read();
  const key = state.sessions[sessionId]?.currentWork;
  const work = key ? state.works[key] : undefined;
  if (!key || !work || work.phase !== 'open' || work.waiting) return {};
  let priority = work.priority;
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
