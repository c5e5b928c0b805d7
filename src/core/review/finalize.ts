// Finalization of a settled Work: acceptance todo (once per occurrence), anchor and summary comments, ticks, completion.
import { formatDidaDate } from '../../dida/dida-date';
import { isDidaError } from '../../dida/dida-error';
import type { Task } from '../../dida/types';
import { acceptanceReport, acceptanceTitle, reportOrigin } from './acceptance-report';
import { rememberStrayReview } from './stray-reviews';
import { addUsage, roundUsage, usageLine, usageOf, workUsage } from '../usage/usage';
import { spendSettingsOf } from '../work/usage-records';
import type { EngineDeps, HeldLock } from '../work/engine-context';
import { WorkError } from '../work/engine-context';
import { MAX_COMMENT_LENGTH, sanitizeForDida } from '../text/text-guard';
import { flushWorkOutbox, queueComment } from '../work/outbox';
import { createOwnTask } from '../work/own-creates';
import { assertHeld, writeWork } from '../work/task-writer';
import { keyOf, loadWork, saveWork, withWork } from '../work/work-io';
import { isSettled, visibleSteps, type WorkRecord } from '../work/work-state';
import { taskVersion } from '../work/work-reconcile';

export const ACCEPTANCE_REMINDERS = ['TRIGGER:PT0S', 'TRIGGER:PT3M'];
const ACCEPTANCE_DUE_MS = 3 * 60_000;

export type FinalizeOutcome =
  | { status: 'finalized'; acceptanceTaskId: string }
  | { status: 'already'; acceptanceTaskId?: string }
  | { status: 'not_ready'; code: 'not_settled' | 'keep_open' | 'draft' | 'waiting_for_human' | 'work_closed'; message: string }
  | { status: 'failed'; message: string };

/** Why a Work may not be finalized now, or undefined when it may. */
export function finalizeBlocker(work: WorkRecord): Extract<FinalizeOutcome, { status: 'not_ready' }> | undefined {
  const key = keyOf(work);
  if (work.phase === 'closed') return { status: 'not_ready', code: 'work_closed', message: `Work ${key} is closed.` };
  if (work.waiting) return { status: 'not_ready', code: 'waiting_for_human', message: `Work ${key} is waiting for a person.` };
  if (work.priority <= 0) return { status: 'not_ready', code: 'draft', message: `Work ${key} is a draft (priority none in Dida).` };
  if (work.keepOpen) return { status: 'not_ready', code: 'keep_open', message: `Work ${key} is kept open at the person's request.` };
  if (work.reopened) {
    return { status: 'not_ready', code: 'keep_open', message: `The person re-opened Work ${keyOf(work)} in Dida; it is sent for review again once its steps change in this round.` };
  }
  if (!isSettled(work)) {
    const open = visibleSteps(work).filter((s) => s.status !== 'completed' && s.status !== 'skipped').length;
    return { status: 'not_ready', code: 'not_settled', message: `Work ${key} still has ${open} unsettled step(s).` };
  }
  return undefined;
}

/** Thrown by the pre-write check when the person's edits made the Work unsettled again: finalization stops. */
class FinalizeStopped extends Error {
  constructor(readonly blocker: Extract<FinalizeOutcome, { status: 'not_ready' }>) {
    super(blocker.message);
  }
}

/**
 * Finalizes a settled Work, idempotently and crash-safely: each stage is recorded in state as soon as it is done, and a
 * create whose answer was lost is found by its marker. The person's edits are re-checked right before the Work's task
 * is written: an item they added or reopened, or an edit that reopened a skipped step, stops finalization exactly as
 * it would have before it started (the review todo filed for it is removed). Any failure leaves the Work in phase
 * `finalizing`, records the error and is retried at the next settle or sync.
 */
export async function finalizeWork(deps: EngineDeps, key: string): Promise<FinalizeOutcome> {
  return withWork(deps, key, async (lock) => {
    const work = await loadWork(deps, key);
    if (work.phase === 'accepting' || (work.phase === 'closed' && work.finalize?.workCompleted)) {
      return { status: 'already', ...(work.acceptance ? { acceptanceTaskId: work.acceptance.taskId } : {}) };
    }
    if (work.phase === 'open') {
      const blocker = finalizeBlocker(work);
      if (blocker) return blocker;
    }
    try {
      return await runStages(deps, work, lock);
    } catch (error) {
      if (error instanceof FinalizeStopped) return stop(deps, work, error.blocker);
      if (error instanceof WorkError) {
        // The task is gone (the Work is closed): a review todo filed for it would ask the person about nothing.
        await removeFiledReview(deps, work);
        return { status: 'not_ready', code: 'work_closed', message: error.message };
      }
      if (error instanceof Error && (error.name === 'LockLostError' || error.name === 'ConcurrentChangeError')) throw error;
      const message = isDidaError(error) ? error.message : error instanceof Error ? error.message : String(error);
      work.finalize = { ...(work.finalize ?? { attempts: 0 }), lastError: message, attempts: (work.finalize?.attempts ?? 0) + 1 };
      await saveWork(deps, work);
      deps.log?.(`finalizing Work ${key} failed (will retry): ${message}`);
      return { status: 'failed', message };
    }
  });
}

/** The person changed the Work meanwhile: back to open, and the review todo filed for this attempt is removed. */
async function stop(deps: EngineDeps, work: WorkRecord, blocker: Extract<FinalizeOutcome, { status: 'not_ready' }>): Promise<FinalizeOutcome> {
  work.phase = 'open';
  await removeFiledReview(deps, work);
  return blocker;
}

/** Removes the review todo an attempt filed (the Work is not sent for review after all) and forgets the attempt. */
async function removeFiledReview(deps: EngineDeps, work: WorkRecord): Promise<void> {
  const filed = work.finalize?.acceptanceTaskId;
  delete work.finalize;
  delete work.acceptance;
  let removed = true;
  if (filed) {
    try {
      await deps.gateway.deleteTask(work.projectId, filed);
    } catch (error) {
      removed = isDidaError(error) && error.code === 'not_found';
      if (!removed) deps.log?.(`a review todo filed too early could not be removed (the next sync removes it): ${error instanceof Error ? error.message : String(error)}`);
    }
    if (!removed) await rememberStrayReview(deps, work.projectId, filed, keyOf(work));
  }
  await saveWork(deps, work, (state) => {
    if (filed && removed) delete state.ownTasks[filed];
  });
}

/**
 * The review's usage line: this round, and every round of the Work and the Works it reworks when there is more than
 * this round (rework is a Work of its own, linked by `reworkOf`).
 */
async function reviewUsageLine(deps: EngineDeps, work: WorkRecord): Promise<string> {
  const state = await deps.state.read();
  const key = keyOf(work);
  const round = roundUsage(usageOf(state, key));
  let total = workUsage(usageOf(state, key));
  const seen = new Set([key]);
  for (let from = work.reworkOf; from && !seen.has(from); from = state.works[from]?.reworkOf) {
    seen.add(from);
    total = addUsage(total, workUsage(usageOf(state, from)));
  }
  const { pricing } = await spendSettingsOf(deps);
  return usageLine(deps.locale, round, pricing, total);
}

async function runStages(deps: EngineDeps, work: WorkRecord, lock: HeldLock): Promise<FinalizeOutcome> {
  const { gateway, locale } = deps;
  const key = keyOf(work);
  if (work.phase === 'open') {
    work.phase = 'finalizing';
    work.finalize = { attempts: work.finalize?.attempts ?? 0 };
    await saveWork(deps, work);
  }
  const fin = (work.finalize ??= { attempts: 0 });

  // 1. The acceptance todo: the recorded one, else the one an interrupted attempt made (found by its marker), else new.
  let createdNow = false;
  let filedVersion: string | undefined;
  if (!fin.acceptanceTaskId) {
    const usage = await reviewUsageLine(deps, work);
    const { task: created, pendingId } = await createOwnTask(
      deps,
      {
        projectId: work.projectId,
        title: acceptanceTitle(locale, work),
        content: acceptanceReport(locale, work, reportOrigin(work), usage),
        priority: work.priority > 0 ? work.priority : 1,
        startDate: formatDidaDate(deps.now() + ACCEPTANCE_DUE_MS),
        dueDate: formatDidaDate(deps.now() + ACCEPTANCE_DUE_MS),
        isAllDay: false,
        ...(deps.timeZone ? { timeZone: deps.timeZone } : {}),
        reminders: [...ACCEPTANCE_REMINDERS],
      },
      { kind: 'acceptance', forKey: key },
    );
    createdNow = true;
    filedVersion = taskVersion(created);
    fin.acceptanceTaskId = created.id;
    await saveWork(deps, work, (state) => {
      state.ownTasks[created.id] = 'acceptance';
      delete state.pendingCreates[pendingId];
    });
  }
  const acceptanceId = fin.acceptanceTaskId as string;

  // 2. The identity anchor on the acceptance todo: its author is the owner whose comments mean rework. When the list's
  //    owner is known already (the answer to a claim or another comment of the bundle named them) there is none: the
  //    todo's report tells the person how to ask for rework, and every comment on the new todo is written after it.
  const knownOwner = (await deps.state.read()).owners[work.projectId];
  if (fin.anchorCommentId === undefined && knownOwner) {
    fin.anchorCommentId = '';
    work.acceptance = { taskId: acceptanceId, ownerUserId: knownOwner, handledCommentIds: [], closed: false };
  }
  if (!fin.anchorCommentId && fin.anchorCommentId !== '') {
    const anchorText = locale.t('dida.acceptance.anchor');
    const existing = createdNow ? undefined : (await gateway.listComments(work.projectId, acceptanceId)).find((c) => c.title === anchorText);
    const anchor = existing ?? (await gateway.addComment(work.projectId, acceptanceId, anchorText));
    fin.anchorCommentId = anchor.id;
    work.acceptance = {
      taskId: acceptanceId,
      ...(anchor.userId ? { ownerUserId: anchor.userId } : {}),
      anchorCommentId: anchor.id,
      handledCommentIds: [],
      closed: false,
    };
    await saveWork(deps, work, (state) => {
      if (anchor.userId) state.owners[work.projectId] = anchor.userId;
    });
  }

  // 3. Re-check the person's edits and tick the completed items (skipped stay unticked), then 4. complete the Work
  //    right away: nothing is saved between the write and the completion.
  if (!fin.workCompleted) {
    const titleBefore = work.title;
    // The steps as merged with the person's edits, before Dida's answer is merged (see verifyTicks).
    let before: WorkRecord['steps'] = [];
    const written = await writeWork(deps, work, {
      skipIfUnchanged: false,
      lock,
      precheck: (w) => {
        const blocker = finalizeBlocker({ ...w, phase: 'open' });
        if (blocker) throw new FinalizeStopped(blocker);
        before = structuredClone(w.steps);
      },
    });
    if (written.task?.status === 0) {
      if (written.wrote) verifyTicks(work, written.task, before);
      assertHeld(lock, work);
      await gateway.completeTask(work.projectId, work.taskId);
    }
    fin.itemsTicked = true;
    fin.workCompleted = true;
    const summary = sanitizeForDida(locale.t('dida.comment.summary', { acceptanceTitle: acceptanceTitle(locale, work) }), { maxLength: MAX_COMMENT_LENGTH });
    fin.summaryPosted = true;
    await saveWork(deps, work, (state) => queueComment(state, { projectId: work.projectId, taskId: work.taskId, workKey: key, text: summary, createdAt: deps.now() }));
    if (work.title !== titleBefore) await renameOwnTask(deps, work.projectId, acceptanceId, acceptanceTitle(locale, work));
  }

  // 5. The completion summary on the Work (from the outbox: posted once).
  await flushWorkOutbox(deps, key);
  delete fin.lastError;
  work.phase = 'accepting';
  work.acceptance ??= { taskId: acceptanceId, handledCommentIds: [], closed: false };
  // A todo filed a moment ago has no comments yet: the background syncs' first look at them comes after the usual gap
  // (at once when Dida shows the todo changed), as if one had been made now.
  if (filedVersion && !fin.anchorCommentId) work.commentLook = { first: deps.now(), at: deps.now(), version: filedVersion, scope: `review ${acceptanceId}` };
  await saveWork(deps, work);
  return { status: 'finalized', acceptanceTaskId: acceptanceId };
}

/** Gives one of the bundle's own tasks a new title (the Work was renamed while it was being sent for review). */
async function renameOwnTask(deps: EngineDeps, projectId: string, taskId: string, title: string): Promise<void> {
  try {
    await deps.gateway.updateTask({ id: taskId, projectId, title });
  } catch (error) {
    deps.log?.(`the review todo keeps its old title: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * Dida's answer to the write must still show every item the task had (`before`: the steps before the answer was
 * merged). Else the steps go back to `before` (merging the answer took a lost item for the person's deletion) and the
 * attempt fails, to be retried.
 */
function verifyTicks(work: WorkRecord, task: Task, before: WorkRecord['steps']): void {
  if (work.mode !== 'checklist') return;
  const expected = before.filter((s) => s.status !== 'deleted' && s.itemId).length;
  const items = task.items ?? [];
  if (items.length < expected) {
    work.steps = before;
    throw new Error(`Dida shows ${items.length} checklist items for Work ${keyOf(work)} but ${expected} were expected; finalization will retry.`);
  }
}

