// Who a claim names on this machine: the host label and session tag claims are signed with, whether a holder is a
// session live here or gone (ended, or its process died between turns), and the words of a release in its name.
import type { Comment } from '../../dida/types';
import { processAlive } from '../../common/process-alive';
import type { EngineDeps } from '../work/engine-context';
import { MAX_COMMENT_LENGTH, sanitizeForDida } from '../text/text-guard';
import { SETTLED, visibleSteps, type EngineState, type WorkRecord } from '../work/work-state';

/** The label this host signs claims with (sanitized, single line). */
export function hostLabelOf(deps: EngineDeps): string {
  return sanitizeForDida(deps.hostLabel ?? 'dsh', { maxLength: 60, singleLine: true }) || 'dsh';
}

/** A short tag naming a session in claim comments (the first 8 letters/digits of its id after `session-`). */
export function sessionTag(sessionId: string): string {
  return sessionId.replace(/^session[-_]?/i, '').replace(/[^0-9A-Za-z]/g, '').slice(0, 8) || 'main';
}

/** Who holds a claim: host label and session tag. */
export function holderOf(deps: EngineDeps, sessionId: string): string {
  return `${hostLabelOf(deps)}#${sessionTag(sessionId)}`;
}

/** Where a Work stopped, for the person: how many steps are done and the last one settled. Ends with a separator. */
export function whereItStopped(deps: Pick<EngineDeps, 'locale'>, work: WorkRecord): string {
  const steps = visibleSteps(work);
  const settled = steps.filter((s) => SETTLED.has(s.status)).sort((a, b) => a.updatedAt - b.updatedAt);
  const counts = { done: settled.length, total: steps.length };
  const last = settled.at(-1);
  return last ? deps.locale.t('dida.comment.whereLast', { ...counts, step: last.title }) : deps.locale.t('dida.comment.whereNone', counts);
}

/** What a session record keeps while the session is live in a process, and once it ended (the schema keeps unknown keys). */
export interface LiveMark {
  livePid?: number;
  /** The session ended (its one-shot run, or it was disposed): it holds nothing, even where its release did not reach Dida. */
  goneAt?: number;
}

/**
 * Whether the claim `holder` (host#session) names a session of this machine that is gone: it ended (goneAt), or its
 * process died between turns. A turn a crash left open is crash recovery's to resume (that session takes it up again),
 * so it is not gone; nor is a session whose process still runs, or one this machine has no record of.
 */
export function holderGoneHere(state: EngineState, holder: string, host: string, isAlive: (pid: number) => boolean = processAlive): boolean {
  if (!holder.startsWith(`${host}#`)) return false;
  const tag = holder.slice(host.length + 1);
  const records = Object.entries(state.sessions).filter(([id]) => sessionTag(id) === tag);
  return (
    records.length > 0 &&
    records.every(([, record]) => {
      const mark = record as LiveMark;
      if (mark.livePid !== undefined && isAlive(mark.livePid)) return false;
      return mark.goneAt !== undefined || (mark.livePid !== undefined && record.turnOpenSince === undefined);
    })
  );
}

/** Whether the claim `holder` (host#session) names a session live in a process of this machine (host label `host`). */
export function holderLiveHere(state: EngineState, holder: string, host: string, isAlive: (pid: number) => boolean = processAlive): boolean {
  if (!holder.startsWith(`${host}#`)) return false;
  const tag = holder.slice(host.length + 1);
  return Object.entries(state.sessions).some(([id, record]) => sessionTag(id) === tag && (record as LiveMark).livePid !== undefined && isAlive((record as LiveMark).livePid as number));
}

/**
 * Posts the release of the claim of this machine's session `tag` on the Work (inside its lock): how far it got, and
 * that nobody works on it now — or, while it waits for the person, that the next session carries on with their answer.
 * Returns the comment as Dida answered it.
 */
export async function postRelease(deps: EngineDeps, work: WorkRecord, tag: string): Promise<Comment> {
  const key = work.waiting ? 'dida.comment.releasedWaiting' : 'dida.comment.released';
  const text = sanitizeForDida(deps.locale.t(key, { host: hostLabelOf(deps), session: tag, where: whereItStopped(deps, work) }), { maxLength: MAX_COMMENT_LENGTH });
  return deps.gateway.addComment(work.projectId, work.taskId, text);
}

