// Waiting for a person: priority to 0, a 🙋 reminder and a reason comment; resuming undoes it.
import { formatDidaDate } from '../dida/dida-date';
import { waitingTitle } from './acceptance-report';
import type { EngineDeps } from './engine-context';
import { WorkError } from './engine-context';
import { MAX_COMMENT_LENGTH, sanitizeForDida } from './text-guard';
import { flushWorkOutbox, queueComment } from './outbox';
import { createOwnTask } from './own-creates';
import { writeWork } from './task-writer';
import { completeOwnTask, loadWork, saveWork, withWork } from './work-io';
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
  return withWork(deps, key, async (lock) => {
    const work = await loadWork(deps, key);
    if (work.phase === 'accepting' || work.phase === 'closed') {
      throw new WorkError('work_closed', `The Work ${key} is already sent for review or closed; nothing is waiting on it.`);
    }
    if (work.waiting?.applied) {
      await flushWorkOutbox(deps, key);
      return work;
    }
    if (!work.waiting) {
      work.waiting = { reason: text, previousPriority: work.priority > 0 ? work.priority : 1, applied: false, since: deps.now() };
      const comment = waitingComment(deps, text);
      await saveWork(deps, work, (state) => queueComment(state, { projectId: work.projectId, taskId: work.taskId, workKey: key, text: comment, createdAt: deps.now() }));
    }
    const waiting = work.waiting;
    await writeWork(deps, work, {
      priority: 0,
      skipIfUnchanged: false,
      lock,
      // The priority the person sees right now is the one to restore (they may have changed it since the last read).
      precheck: (w) => {
        if (w.priority > 0) waiting.previousPriority = w.priority;
      },
    });
    if (!waiting.reminderTaskId) {
      const { task: reminder, pendingId } = await createOwnTask(
        deps,
        {
          projectId: work.projectId,
          title: waitingTitle(deps.locale, work),
          content: waiting.reason,
          priority: waiting.previousPriority,
          startDate: formatDidaDate(deps.now()),
          dueDate: formatDidaDate(deps.now()),
          isAllDay: false,
          ...(deps.timeZone ? { timeZone: deps.timeZone } : {}),
          reminders: [...REMINDER_TRIGGERS],
        },
        { kind: 'reminder', forKey: key },
      );
      waiting.reminderTaskId = reminder.id;
      await saveWork(deps, work, (state) => {
        state.ownTasks[reminder.id] = 'reminder';
        delete state.pendingCreates[pendingId];
      });
    }
    await flushWorkOutbox(deps, key);
    waiting.applied = true;
    work.priority = 0;
    await saveWork(deps, work);
    return work;
  });
}

function waitingComment(deps: EngineDeps, reason: string): string {
  return sanitizeForDida(deps.locale.t('dida.comment.waiting', { reason }), { maxLength: MAX_COMMENT_LENGTH });
}

/**
 * Ends waiting. `explicit` (the agent or a person asked to resume) restores the previous priority in Dida when it is
 * still 0 (a level the person set meanwhile is kept); otherwise (sync saw the person restore it) the priority is taken
 * as it is. The Work's own reminder is completed and "resumed" is commented once.
 */
export async function resumeWork(deps: EngineDeps, key: string, options: { explicit: boolean }): Promise<WorkRecord> {
  return withWork(deps, key, async (lock) => {
    const work = await loadWork(deps, key);
    const waiting = work.waiting;
    if (!waiting) throw new WorkError('not_waiting', `The Work ${key} is not waiting for a person; nothing to resume.`);
    if (options.explicit) {
      await writeWork(deps, work, { priority: waiting.previousPriority, onlyFromZero: true, skipIfUnchanged: false, lock });
    } else if (work.priority === 0) {
      return work;
    }
    const priority = work.priority;
    if (waiting.reminderTaskId) await completeOwnTask(deps, work.projectId, waiting.reminderTaskId);
    const applied = waiting.applied;
    delete work.waiting;
    work.priority = priority;
    await saveWork(deps, work, (state) => {
      if (applied) queueComment(state, { projectId: work.projectId, taskId: work.taskId, workKey: key, text: deps.locale.t('dida.comment.resumed'), createdAt: deps.now() });
    });
    await flushWorkOutbox(deps, key);
    return work;
  });
}
