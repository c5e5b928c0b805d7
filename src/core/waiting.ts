// Waiting for a person: priority to 0, a 🙋 reminder and a reason comment; resuming undoes it.
import { formatDidaDate } from '../dida/dida-date';
import type { Comment } from '../dida/types';
import { waitingTitle } from './acceptance-report';
import type { EngineDeps } from './engine-context';
import { WorkError } from './engine-context';
import { MAX_COMMENT_LENGTH, sanitizeForDida } from './text-guard';
import { completeOwnTask, loadWork, lockKeyOf, readTask, reconcileWithTask, saveWork } from './work-io';
import type { WorkRecord } from './work-state';

export const REMINDER_TRIGGERS = ['TRIGGER:PT0S'];

/**
 * Marks a Work as waiting for a person: its Dida priority becomes 0 (so no host picks it up), a 🙋 reminder
 * task is filed and the reason is commented. Idempotent: calling it again while waiting changes nothing.
 * Steps are never faked complete.
 */
export async function waitForHuman(deps: EngineDeps, key: string, reason: string): Promise<WorkRecord> {
  const text = sanitizeForDida(reason, { maxLength: 1000 });
  if (text === '') throw new WorkError('invalid_text', 'The reason is empty; say in one sentence what the person needs to do.');
  return deps.locks.withLock(lockKeyOf(key), async () => {
    const work = await loadWork(deps, key);
    if (work.phase === 'accepting' || work.phase === 'closed') {
      throw new WorkError('work_closed', `The Work "${work.title}" is already sent for review or closed; nothing is waiting on it.`);
    }
    if (work.waiting?.applied) return work;
    const task = await readTask(deps, work);
    work.waiting ??= {
      reason: text,
      previousPriority: task.priority > 0 ? task.priority : work.priority > 0 ? work.priority : 1,
      applied: false,
      since: deps.now(),
    };
    await saveWork(deps, work);
    const waiting = work.waiting;

    if (task.priority !== 0) reconcileWithTask(deps, work, await deps.gateway.updateTask({ ...task, priority: 0 }));
    if (!waiting.reminderTaskId) {
      const title = waitingTitle(deps.locale, work);
      const existing = (await deps.gateway.getProjectData(work.projectId)).tasks.find((t) => t.title === title);
      const reminder =
        existing ??
        (await deps.gateway.createTask({
          projectId: work.projectId,
          title,
          content: waiting.reason,
          priority: waiting.previousPriority,
          startDate: formatDidaDate(deps.now()),
          dueDate: formatDidaDate(deps.now()),
          isAllDay: false,
          ...(task.timeZone ? { timeZone: task.timeZone } : {}),
          reminders: [...REMINDER_TRIGGERS],
        }));
      waiting.reminderTaskId = reminder.id;
      await saveWork(deps, work, (state) => {
        state.ownTasks[reminder.id] = 'reminder';
      });
    }
    const comment = waitingComment(deps, waiting.reason);
    // A retry after a lost answer finds the comment already posted in this waiting spell.
    const spell = sinceLast(await deps.gateway.listComments(work.projectId, work.taskId), deps.locale.t('dida.comment.resumed'));
    if (!spell.includes(comment)) await deps.gateway.addComment(work.projectId, work.taskId, comment);
    waiting.applied = true;
    work.priority = 0;
    await saveWork(deps, work);
    return work;
  });
}

function waitingComment(deps: EngineDeps, reason: string): string {
  return sanitizeForDida(deps.locale.t('dida.comment.waiting', { reason }), { maxLength: MAX_COMMENT_LENGTH });
}

/** The texts of the comments after the last one whose text is `marker` (all of them when there is none). */
function sinceLast(comments: readonly Comment[], marker: string): string[] {
  const texts = comments.map((c) => c.title);
  return texts.slice(texts.lastIndexOf(marker) + 1);
}

/**
 * Ends waiting. `explicit` (the agent or a person asked to resume) restores the previous priority in Dida when
 * it is still 0; otherwise (sync saw the person restore it) the priority is taken as it is. The reminder is
 * completed and "resumed" is commented.
 */
export async function resumeWork(deps: EngineDeps, key: string, options: { explicit: boolean }): Promise<WorkRecord> {
  return deps.locks.withLock(lockKeyOf(key), async () => {
    const work = await loadWork(deps, key);
    const waiting = work.waiting;
    if (!waiting) throw new WorkError('not_waiting', `The Work "${work.title}" is not waiting for a person; nothing to resume.`);
    const task = await readTask(deps, work);
    let priority = task.priority;
    if (options.explicit && task.priority === 0) {
      priority = waiting.previousPriority;
      reconcileWithTask(deps, work, await deps.gateway.updateTask({ ...task, priority }));
    } else if (!options.explicit && task.priority === 0) {
      return work;
    }
    if (waiting.reminderTaskId) await completeOwnTask(deps, work.projectId, waiting.reminderTaskId);
    if (waiting.applied) {
      const resumed = deps.locale.t('dida.comment.resumed');
      const spell = sinceLast(await deps.gateway.listComments(work.projectId, work.taskId), waitingComment(deps, waiting.reason));
      if (!spell.includes(resumed)) await deps.gateway.addComment(work.projectId, work.taskId, resumed);
    }
    delete work.waiting;
    work.priority = priority;
    await saveWork(deps, work);
    return work;
  });
}
