// What a comment or a priority from Dida means for a running Work (pure rules, no I/O): stop phrases, a pause by
// priority, a session whose Work the person paused.
import { parseDidaDate } from '../../dida/dida-date';
import type { Comment } from '../../dida/types';
import { normaliseTrigger } from '../queue/queue-trigger';
import type { EngineState } from '../work/work-state';

/** Comments that pause a running Work when the list's owner writes one of them (the whole comment). */
export const DEFAULT_STOP_PHRASES: readonly string[] = ['停', '暂停', 'stop', 'pause'];

/** The configured stop phrases of `deps` (the defaults when none are configured). */
export async function stopPhrasesOf(deps: { stopPhrases?: () => Promise<readonly string[]> }): Promise<readonly string[]> {
  return deps.stopPhrases ? await deps.stopPhrases() : DEFAULT_STOP_PHRASES;
}

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
