// After finalization: the person accepts (completes the acceptance todo) or asks for rework by commenting.
import { parseDidaDate } from '../../dida/dida-date';
import { isDidaError } from '../../dida/dida-error';
import type { Comment } from '../../dida/types';
import { reworkTitle } from './acceptance-report';
import { agentWorkFromTask } from '../work/work-reconcile';
import type { EngineDeps } from '../work/engine-context';
import { createOwnTask } from '../work/own-creates';
import { MAX_COMMENT_LENGTH, MAX_ITEM_TITLE_LENGTH, sanitizeForDida, showsAnything, stripInvisible, truncateGraphemes } from '../text/text-guard';
import { writeWork } from '../work/task-writer';
import { commentsIfAny, completeOwnTask, keyOf, loadWork, saveWork, stepIdFactory, withWork, workIn } from '../work/work-io';
import { visibleSteps } from '../work/work-state';
import type { WorkRecord } from '../work/work-state';

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
  return withWork(deps, key, async () => {
    const work = await loadWork(deps, key);
    const acceptance = work.acceptance;
    if (work.phase !== 'accepting' || !acceptance || acceptance.closed) return { status: 'skipped' };
    // A review rebuilt without an anchor (the state file was lost) learns the owner from the bundle's next comment.
    acceptance.ownerUserId ??= (await deps.state.read()).owners[work.projectId];
    // Comments are read also when the todo was completed: feedback written just before completing it is still rework.
    const comments = acceptanceOpen ? await deps.gateway.listComments(work.projectId, acceptance.taskId) : await commentsIfAny(deps, work.projectId, acceptance.taskId);
    const feedback = ownerFeedback(deps, work, comments);
    if (feedback.length === 0 && !acceptance.reworkTaskId) {
      if (acceptanceOpen || (await stillOpen(deps, work.projectId, acceptance.taskId))) return { status: 'pending' };
      acceptance.closed = true;
      work.phase = 'closed';
      work.outcome = 'accepted';
      await saveWork(deps, work);
      return { status: 'accepted' };
    }
    return rework(deps, work, feedback, comments);
  });
}

/** Whether a review todo missing from the list's read is in fact still open (a read that missed it is not an accept). */
async function stillOpen(deps: EngineDeps, projectId: string, taskId: string): Promise<boolean> {
  try {
    return (await deps.gateway.getTask(projectId, taskId)).status === 0;
  } catch (error) {
    if (isDidaError(error) && error.code === 'not_found') return false;
    throw error;
  }
}

function timeOf(comment: Comment | undefined): number {
  return parseDidaDate(comment?.createdTime)?.getTime() ?? 0;
}

/**
 * The owner's comments written after the anchor (by `createdTime`, never list position) that are not the bundle's own
 * texts and not handled yet, oldest first. The text is the person's and is taken whole, as written.
 */
export function ownerFeedback(deps: EngineDeps, work: WorkRecord, comments: readonly Comment[]): Comment[] {
  const acceptance = work.acceptance;
  if (!acceptance?.ownerUserId) return [];
  const anchor = comments.find((c) => c.id === acceptance.anchorCommentId);
  const after = anchor ? timeOf(anchor) : 0;
  const ownTexts = new Set([deps.locale.t('dida.acceptance.anchor'), ackText(deps, work)]);
  return comments
    .filter(
      (c) =>
        c.id !== acceptance.anchorCommentId &&
        timeOf(c) >= after &&
        c.userId === acceptance.ownerUserId &&
        !acceptance.handledCommentIds.includes(c.id) &&
        !ownTexts.has(c.title) &&
        showsAnything(c.title),
    )
    .sort((a, b) => timeOf(a) - timeOf(b) || a.id.localeCompare(b.id));
}

/** A checklist item title for one piece of feedback: its first line, cut at a grapheme boundary (the whole text is the body). */
function feedbackItemTitle(text: string): string {
  const firstLine = stripInvisible(text).split('\n').find((line) => line.trim() !== '') ?? '';
  return truncateGraphemes(firstLine.trim().replace(/\s+/g, ' '), MAX_ITEM_TITLE_LENGTH);
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
    const steps = feedback.map((c) => feedbackItemTitle(c.title));
    const unique = steps.map((s, i) => (steps.indexOf(s) === i ? s : `${s} (${i + 1})`));
    const { task, pendingId } = await createOwnTask(
      deps,
      {
        projectId: work.projectId,
        title,
        desc: feedback.map((c) => stripInvisible(c.title).trim()).join('\n\n'),
        priority: work.priority > 0 ? work.priority : 1,
        items: unique.map((t) => ({ title: t, status: 0 })),
      },
      { kind: 'rework', forKey: keyOf(work) },
    );
    const state = await deps.state.read();
    // The items are the person's feedback: human steps, whose text the agent never changes or deletes.
    const reworkWork = agentWorkFromTask(task, { now: deps.now(), newStepId: stepIdFactory(deps, state), reworkOf: keyOf(work), stepOrigin: 'human' });
    acceptance.reworkTaskId = task.id;
    acceptance.handledCommentIds.push(...feedback.map((c) => c.id));
    await saveWork(deps, work, (s) => {
      s.works[keyOf(reworkWork)] ??= reworkWork;
      delete s.pendingCreates[pendingId];
    });
  } else if (feedback.length > 0) {
    // Written while the rework was cut short: added to the rework Work. When that is no longer open (nothing can be
    // added to it), the comments are only marked handled.
    const added = await addToRework(deps, work, feedback);
    if (added === 0) acceptance.handledCommentIds.push(...feedback.map((c) => c.id));
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

/**
 * Owner comments written on a review todo after its rework Work was filed (while it is still open) are the person's
 * feedback too: each becomes a human step of the rework Work and its whole text is appended to the rework's
 * description. Marked handled before the write, so each comment is added once. Returns how many were added.
 */
export async function lateFeedback(deps: EngineDeps, key: string): Promise<number> {
  return withWork(deps, key, async () => {
    const review = await loadWork(deps, key);
    const acceptance = review.acceptance;
    const reworkKey = acceptance?.reworkTaskId;
    if (!acceptance || !reworkKey) return 0;
    const feedback = ownerFeedback(deps, review, await commentsIfAny(deps, review.projectId, acceptance.taskId)).filter((c) => c.title !== ackText(deps, review));
    if (feedback.length === 0) return 0;
    return addToRework(deps, review, feedback);
  });
}

/**
 * Adds owner comments to the review's open rework Work (see addFeedbackSteps), marked handled on the review before
 * the write. 0 when the rework Work is not open. Called with the review's lock held.
 */
async function addToRework(deps: EngineDeps, review: WorkRecord, feedback: readonly Comment[]): Promise<number> {
  const acceptance = review.acceptance as NonNullable<WorkRecord['acceptance']>;
  return addFeedbackSteps(deps, acceptance.reworkTaskId as string, feedback, async () => {
    acceptance.handledCommentIds.push(...feedback.map((c) => c.id));
    await saveWork(deps, review);
  });
}

/**
 * Adds the person's comments to the open Work `key`: a human step each (titles already taken are numbered on) and
 * their whole text appended to its description; `taken` records them as taken before Dida is written, so each is
 * added once. Returns how many were added: 0 when the Work is not open.
 */
export async function addFeedbackSteps(deps: EngineDeps, key: string, feedback: readonly Comment[], taken: () => Promise<void>): Promise<number> {
  return withWork(deps, key, async (lock) => {
    const state = await deps.state.read();
    const work = workIn(state, key);
    if (work.phase !== 'open') return 0;
    const newId = stepIdFactory(deps, state);
    const now = deps.now();
    const titles = new Set(visibleSteps(work).map((s) => s.title));
    for (const comment of feedback) {
      let title = feedbackItemTitle(comment.title);
      for (let n = 2; titles.has(title); n++) title = `${feedbackItemTitle(comment.title)} (${n})`;
      titles.add(title);
      work.steps.push({ id: newId(), title, status: 'pending', origin: 'human', updatedAt: now });
      work.nextStepNumber += 1;
    }
    const text = feedback.map((c) => stripInvisible(c.title).trim()).join('\n\n');
    work.pendingDesc = work.pendingDesc ? `${work.pendingDesc}\n\n${text}` : text;
    delete work.reopened;
    await saveWork(deps, work);
    await taken();
    await writeWork(deps, work, { state, lock });
    await saveWork(deps, work);
    return feedback.length;
  });
}
