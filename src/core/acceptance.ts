// After finalization: the person accepts (completes the acceptance todo) or asks for rework by commenting.
import { isDidaError } from '../dida/dida-error';
import type { Comment } from '../dida/types';
import { reworkTitle } from './acceptance-report';
import { agentWorkFromTask } from './work-reconcile';
import type { EngineDeps } from './engine-context';
import { MAX_COMMENT_LENGTH, MAX_ITEM_TITLE_LENGTH, MAX_REPORT_LENGTH, sanitizeForDida } from './text-guard';
import { completeOwnTask, keyOf, loadWork, lockKeyOf, saveWork, stepIdFactory } from './work-io';
import type { WorkRecord } from './work-state';

export type AcceptanceOutcome =
  | { status: 'accepted' }
  | { status: 'rework'; reworkKey: string; feedback: number }
  | { status: 'pending' }
  | { status: 'skipped' };

/**
 * Checks one Work awaiting review. `acceptanceOpen` says whether its acceptance todo is still open in Dida
 * (from the sync's project read). Completed (or removed) → accepted. Open → new comments by the owner (the
 * author of the anchor comment) after the anchor become one rework Work with a step per comment; the old
 * acceptance is acknowledged once and completed. Comments by anyone else are ignored. Idempotent across
 * restarts and hosts: every create first looks for what an interrupted run already made.
 */
export async function processAcceptance(deps: EngineDeps, key: string, acceptanceOpen: boolean): Promise<AcceptanceOutcome> {
  return deps.locks.withLock(lockKeyOf(key), async () => {
    const work = await loadWork(deps, key);
    const acceptance = work.acceptance;
    if (work.phase !== 'accepting' || !acceptance || acceptance.closed) return { status: 'skipped' };
    if (!acceptanceOpen && !acceptance.reworkTaskId) {
      acceptance.closed = true;
      work.phase = 'closed';
      work.outcome = 'accepted';
      await saveWork(deps, work);
      return { status: 'accepted' };
    }
    // An interrupted rework may have acknowledged and completed the acceptance already: read its comments then too.
    const comments = acceptanceOpen ? await deps.gateway.listComments(work.projectId, acceptance.taskId) : await commentsIfAny(deps, work.projectId, acceptance.taskId);
    const feedback = ownerFeedback(deps, work, comments);
    if (feedback.length === 0 && !acceptance.reworkTaskId) return { status: 'pending' };
    return rework(deps, work, feedback, comments);
  });
}

/** The comments of a task that may have been deleted (none then). */
async function commentsIfAny(deps: EngineDeps, projectId: string, taskId: string): Promise<Comment[]> {
  try {
    return await deps.gateway.listComments(projectId, taskId);
  } catch (error) {
    if (isDidaError(error) && error.code === 'not_found') return [];
    throw error;
  }
}

/** Comments by the owner after the anchor that are not the bundle's own texts and not handled yet. */
export function ownerFeedback(deps: EngineDeps, work: WorkRecord, comments: readonly Comment[]): Comment[] {
  const acceptance = work.acceptance;
  if (!acceptance?.ownerUserId) return [];
  const anchorIndex = comments.findIndex((c) => c.id === acceptance.anchorCommentId);
  const ownTexts = new Set([deps.locale.t('dida.acceptance.anchor'), ackText(deps, work)]);
  return comments.filter(
    (c, i) =>
      i > anchorIndex &&
      c.userId === acceptance.ownerUserId &&
      !acceptance.handledCommentIds.includes(c.id) &&
      !ownTexts.has(c.title) &&
      sanitizeForDida(c.title, { maxLength: MAX_ITEM_TITLE_LENGTH, singleLine: true }) !== '',
  );
}

function ackText(deps: EngineDeps, work: WorkRecord): string {
  return sanitizeForDida(deps.locale.t('dida.comment.reworkAck', { reworkTitle: reworkTitle(deps.locale, work) }), { maxLength: MAX_COMMENT_LENGTH });
}

async function rework(deps: EngineDeps, work: WorkRecord, feedback: Comment[], comments: readonly Comment[]): Promise<AcceptanceOutcome> {
  const { gateway, locale } = deps;
  const acceptance = work.acceptance as NonNullable<WorkRecord['acceptance']>;
  const title = reworkTitle(locale, work);
  let reworkKey: string;

  if (!acceptance.reworkTaskId) {
    const state = await deps.state.read();
    const known = new Set(Object.values(state.works).map((w) => w.taskId));
    const existing = (await gateway.getProjectData(work.projectId)).tasks.find((t) => t.title === title && !known.has(t.id));
    const steps = feedback.map((c) => sanitizeForDida(c.title, { maxLength: MAX_ITEM_TITLE_LENGTH, singleLine: true }));
    const unique = steps.map((s, i) => (steps.indexOf(s) === i ? s : `${s} (${i + 1})`));
    const task =
      existing ??
      (await gateway.createTask({
        projectId: work.projectId,
        title,
        desc: sanitizeForDida(feedback.map((c) => c.title).join('\n\n'), { maxLength: MAX_REPORT_LENGTH }),
        priority: work.priority > 0 ? work.priority : 1,
        items: unique.map((t) => ({ title: t, status: 0 })),
      }));
    const reworkWork = agentWorkFromTask(task, { now: deps.now(), newStepId: stepIdFactory(deps, state), reworkOf: keyOf(work) });
    acceptance.reworkTaskId = task.id;
    acceptance.handledCommentIds.push(...feedback.map((c) => c.id));
    await saveWork(deps, work, (s) => {
      s.works[keyOf(reworkWork)] ??= reworkWork;
    });
  } else {
    acceptance.handledCommentIds.push(...feedback.map((c) => c.id));
  }
  reworkKey = acceptance.reworkTaskId as string;

  const ack = ackText(deps, work);
  if (!comments.some((c) => c.title === ack)) {
    await gateway.addComment(work.projectId, acceptance.taskId, ack);
  }
  await completeOwnTask(deps, work.projectId, acceptance.taskId);
  acceptance.closed = true;
  work.phase = 'closed';
  work.outcome = 'rework';
  await saveWork(deps, work);
  return { status: 'rework', reworkKey, feedback: feedback.length };
}
