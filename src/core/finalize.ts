// Finalization of a settled Work: acceptance todo (once per occurrence), anchor and summary comments, ticks, completion.
import { formatDidaDate } from '../dida/dida-date';
import { isDidaError } from '../dida/dida-error';
import type { Task } from '../dida/types';
import { acceptanceReport, acceptanceTitle } from './acceptance-report';
import type { EngineDeps } from './engine-context';
import { WorkError } from './engine-context';
import { MAX_COMMENT_LENGTH, sanitizeForDida } from './text-guard';
import { keyOf, loadWork, lockKeyOf, readTask, reconcileWithTask, saveWork, writeSteps } from './work-io';
import { isSettled, visibleSteps, type WorkRecord } from './work-state';

export const ACCEPTANCE_REMINDERS = ['TRIGGER:PT0S', 'TRIGGER:PT3M'];
const ACCEPTANCE_DUE_MS = 3 * 60_000;

export type FinalizeOutcome =
  | { status: 'finalized'; acceptanceTaskId: string }
  | { status: 'already'; acceptanceTaskId?: string }
  | { status: 'not_ready'; code: 'not_settled' | 'keep_open' | 'draft' | 'waiting_for_human' | 'work_closed'; message: string }
  | { status: 'failed'; message: string };

/** Why a Work may not be finalized now, or undefined when it may. */
export function finalizeBlocker(work: WorkRecord): Extract<FinalizeOutcome, { status: 'not_ready' }> | undefined {
  if (work.phase === 'closed') return { status: 'not_ready', code: 'work_closed', message: `The Work "${work.title}" is closed.` };
  if (work.waiting) return { status: 'not_ready', code: 'waiting_for_human', message: `The Work "${work.title}" is waiting for a person.` };
  if (work.priority <= 0) return { status: 'not_ready', code: 'draft', message: `The Work "${work.title}" is a draft (priority none in Dida).` };
  if (work.keepOpen) return { status: 'not_ready', code: 'keep_open', message: `The Work "${work.title}" is kept open at the person's request.` };
  if (!isSettled(work)) {
    const open = visibleSteps(work).filter((s) => s.status !== 'completed' && s.status !== 'skipped').length;
    return { status: 'not_ready', code: 'not_settled', message: `The Work "${work.title}" still has ${open} unsettled step(s).` };
  }
  return undefined;
}

/**
 * Finalizes a settled Work, idempotently and crash-safely: each stage is recorded in state as soon as it is done,
 * and every create first looks for what an interrupted run may already have made. Any failure leaves the Work
 * open (phase `finalizing`), records the error and is retried at the next settle or sync.
 */
export async function finalizeWork(deps: EngineDeps, key: string): Promise<FinalizeOutcome> {
  return deps.locks.withLock(lockKeyOf(key), async () => {
    const work = await loadWork(deps, key);
    if (work.phase === 'accepting' || (work.phase === 'closed' && work.finalize?.workCompleted)) {
      return { status: 'already', ...(work.acceptance ? { acceptanceTaskId: work.acceptance.taskId } : {}) };
    }
    if (work.phase === 'open') {
      const blocker = finalizeBlocker(work);
      if (blocker) return blocker;
    }
    try {
      return await runStages(deps, work);
    } catch (error) {
      if (error instanceof WorkError) {
        return { status: 'not_ready', code: 'work_closed', message: error.message };
      }
      const message = isDidaError(error) ? error.message : error instanceof Error ? error.message : String(error);
      work.finalize = { ...(work.finalize ?? { attempts: 0 }), lastError: message, attempts: (work.finalize?.attempts ?? 0) + 1 };
      await saveWork(deps, work);
      deps.log?.(`finalizing "${work.title}" failed (will retry): ${message}`);
      return { status: 'failed', message };
    }
  });
}

async function runStages(deps: EngineDeps, work: WorkRecord): Promise<FinalizeOutcome> {
  const { gateway, locale } = deps;
  let task = await readTask(deps, work);
  if (work.phase === 'open') {
    reconcileWithTask(deps, work, task);
    const blocker = finalizeBlocker(work);
    if (blocker) {
      await saveWork(deps, work);
      return blocker;
    }
    work.phase = 'finalizing';
    work.finalize = { attempts: work.finalize?.attempts ?? 0 };
    await saveWork(deps, work);
  }
  const fin = (work.finalize ??= { attempts: 0 });

  // 1. The acceptance todo: reuse the recorded one, else one an interrupted run made, else create it.
  let createdNow = false;
  if (!fin.acceptanceTaskId) {
    const title = acceptanceTitle(locale, work);
    const state = await deps.state.read();
    const taken = new Set(Object.values(state.works).flatMap((w) => [w.taskId, w.acceptance?.taskId, w.finalize?.acceptanceTaskId].filter((id): id is string => !!id)));
    const existing = (await gateway.getProjectData(work.projectId)).tasks.find((t) => t.title === title && !taken.has(t.id));
    createdNow = !existing;
    const created =
      existing ??
      (await gateway.createTask({
        projectId: work.projectId,
        title,
        content: acceptanceReport(locale, work),
        priority: work.priority > 0 ? work.priority : 1,
        startDate: formatDidaDate(deps.now() + ACCEPTANCE_DUE_MS),
        dueDate: formatDidaDate(deps.now() + ACCEPTANCE_DUE_MS),
        isAllDay: false,
        ...(task.timeZone ? { timeZone: task.timeZone } : deps.timeZone ? { timeZone: deps.timeZone } : {}),
        reminders: [...ACCEPTANCE_REMINDERS],
      }));
    fin.acceptanceTaskId = created.id;
    await saveWork(deps, work, (state) => {
      state.ownTasks[created.id] = 'acceptance';
    });
  }
  const acceptanceId = fin.acceptanceTaskId as string;

  // 2. The identity anchor on the acceptance todo: its author is the owner whose comments mean rework.
  if (!fin.anchorCommentId) {
    const anchorText = locale.t('dida.acceptance.anchor');
    // A todo created a moment ago in this same pass cannot carry an anchor from an earlier run: no need to look.
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

  // 3. One completion summary on the Work itself.
  if (!fin.summaryPosted) {
    const summary = sanitizeForDida(locale.t('dida.comment.summary', { acceptanceTitle: acceptanceTitle(locale, work) }), { maxLength: MAX_COMMENT_LENGTH });
    const already = (await gateway.listComments(work.projectId, work.taskId)).some((c) => c.title === summary);
    if (!already) await gateway.addComment(work.projectId, work.taskId, summary);
    fin.summaryPosted = true;
    await saveWork(deps, work);
  }

  // 4. Tick the completed items (skipped stay unticked), re-reading first and verifying the count.
  if (!fin.itemsTicked) {
    task = await readTask(deps, work);
    const answered = await writeSteps(deps, work, task);
    verifyTicks(work, answered);
    fin.itemsTicked = true;
    await saveWork(deps, work);
  }

  // 5. Complete the Work.
  if (!fin.workCompleted) {
    await gateway.completeTask(work.projectId, work.taskId);
    fin.workCompleted = true;
  }
  delete fin.lastError;
  work.phase = 'accepting';
  work.acceptance ??= { taskId: acceptanceId, handledCommentIds: [], closed: false };
  await saveWork(deps, work);
  return { status: 'finalized', acceptanceTaskId: acceptanceId };
}

function verifyTicks(work: WorkRecord, task: Task): void {
  if (work.mode !== 'checklist') return;
  const expected = visibleSteps(work).filter((s) => s.itemId).length;
  const items = task.items ?? [];
  if (items.length < expected) {
    throw new Error(`Dida shows ${items.length} checklist items for "${work.title}" but ${expected} were expected; finalization will retry.`);
  }
}

export { keyOf };
