// Waiting for a person: priority to 0, a 🙋 reminder and a reason comment (or the person's own pause); resuming undoes it.
import { formatDidaDate } from '../../dida/dida-date';
import { waitingTitle } from '../review/acceptance-report';
import type { EngineDeps } from '../work/engine-context';
import { WorkError } from '../work/engine-context';
import { MAX_COMMENT_LENGTH, MAX_REPORT_LENGTH, sanitizeForDida } from '../text/text-guard';
import { dropComments, flushWorkOutbox, queueComment } from '../work/outbox';
import { writePending } from '../work/background-writer';
import { createOwnTask } from '../work/own-creates';
import { writeWork } from '../work/task-writer';
import { completeOwnTask, loadWork, saveWork, withWork } from '../work/work-io';
import type { WaitingRecord, WorkRecord } from '../work/work-state';
import { allowanceNow, usageOf } from '../usage/usage';

export const REMINDER_TRIGGERS = ['TRIGGER:PT0S'];

/** At most this many handled comment ids are kept per Work (the oldest are dropped). */
export const MAX_HANDLED_COMMENTS = 200;

/**
 * Marks a Work as waiting for a person: its Dida priority becomes 0 (so no host picks it up), a 🙋 reminder
 * task is filed and the reason is commented. Idempotent: calling it again while waiting changes nothing.
 * Steps are never faked complete.
 */
export async function waitForHuman(deps: EngineDeps, key: string, reason: string, cause = 'asked'): Promise<WorkRecord> {
  const text = sanitizeForDida(reason, { maxLength: 1000 });
  if (text === '') throw new WorkError('invalid_text', 'The reason is empty; say in one sentence what the person needs to do.');
  const outcome = await enterWaiting(deps, key, { reason: text, comment: waitingComment(deps, text), reminder: true, writePriority: true, cause });
  return outcome.work;
}

/** How the person paused a running Work: from Dida, or with a command of their own (`/dida pause`). */
export type PauseRequest =
  | { by: 'priority'; /** The priority the Work ran with before they set it to none. */ previousPriority: number }
  | { by: 'comment'; /** The owner's stop comment (handled once). */ commentId: string }
  | { by: 'command' };

/**
 * The person paused the Work from Dida: it waits for them (nothing continues it automatically) with `comment` (where it
 * stopped) posted on it; no 🙋 reminder (they know). A stop comment also sets the priority to 0, so no other host takes
 * it; a priority the person set to none is left as it is. Undefined when the Work is not open or already waits (the
 * stop comment is then only marked handled).
 */
export async function pauseForPerson(deps: EngineDeps, key: string, request: PauseRequest, comment: (work: WorkRecord) => string): Promise<WorkRecord | undefined> {
  const outcome = await enterWaiting(deps, key, {
    reason: comment,
    comment,
    reminder: false,
    // A stop the person asked for (a comment or a command) also sets the priority to none; it is recorded as a stop comment.
    writePriority: request.by !== 'priority',
    pausedBy: request.by === 'priority' ? 'priority' : 'comment',
    ...(request.by === 'priority' ? { previousPriority: request.previousPriority } : request.by === 'comment' ? { handled: [request.commentId] } : {}),
    onlyIfRunning: true,
  });
  return outcome.entered ? outcome.work : undefined;
}

interface WaitingSpec {
  reason: string | ((work: WorkRecord) => string);
  comment: string | ((work: WorkRecord) => string);
  reminder: boolean;
  writePriority: boolean;
  pausedBy?: WaitingRecord['pausedBy'];
  cause?: string;
  previousPriority?: number;
  handled?: string[];
  /** Only a Work that is open and not waiting enters (a pause); else an ask on a waiting Work just finishes its posts. */
  onlyIfRunning?: boolean;
}

/** Adds comment ids to the Work's handled list (bounded). */
export function markHandled(work: WorkRecord, ids: readonly string[]): void {
  if (ids.length === 0) return;
  const handled = [...(work.phoneHandled ?? []), ...ids.filter((id) => !work.phoneHandled?.includes(id))];
  work.phoneHandled = handled.slice(-MAX_HANDLED_COMMENTS);
}

async function enterWaiting(deps: EngineDeps, key: string, spec: WaitingSpec): Promise<{ work: WorkRecord; entered: boolean }> {
  return withWork(deps, key, async (lock) => {
    let work = await loadWork(deps, key);
    if (work.phase === 'accepting' || work.phase === 'closed' || (spec.onlyIfRunning && work.phase !== 'open')) {
      if (spec.onlyIfRunning) return { work, entered: false };
      throw new WorkError('work_closed', `The Work ${key} is already sent for review or closed; nothing is waiting on it.`);
    }
    // A pause that was cut short (recorded, not yet applied) is finished; any other waiting stays as it is.
    if (spec.onlyIfRunning && work.waiting && (work.waiting.applied || !work.waiting.pausedBy)) {
      if (spec.handled?.some((id) => !work.phoneHandled?.includes(id))) {
        markHandled(work, spec.handled);
        await saveWork(deps, work);
      }
      return { work, entered: false };
    }
    if (work.waiting?.applied) {
      await flushWorkOutbox(deps, key);
      return { work, entered: false };
    }
    // The person is about to read where the Work stopped: the steps the background writer still holds are written first
    // (a wait that writes the priority writes them with it).
    if (!work.waiting && !spec.writePriority && work.pendingSince !== undefined) {
      const written = await writePending(deps, key, lock);
      work = await loadWork(deps, key);
      if (written === 'closed') return { work, entered: false };
    }
    if (!work.waiting) {
      const comment = sanitizeForDida(typeof spec.comment === 'string' ? spec.comment : spec.comment(work), { maxLength: MAX_COMMENT_LENGTH });
      const reason = typeof spec.reason === 'string' ? spec.reason : spec.reason(work);
      const previous = spec.previousPriority ?? work.priority;
      work.waiting = {
        reason,
        previousPriority: previous > 0 ? previous : 1,
        applied: false,
        since: deps.now(),
        comment,
        ...(spec.pausedBy ? { pausedBy: spec.pausedBy } : {}),
        ...(spec.cause ? { cause: spec.cause } : {}),
      };
      markHandled(work, spec.handled ?? []);
      await saveWork(deps, work, (state) => queueComment(state, { projectId: work.projectId, taskId: work.taskId, workKey: key, text: comment, createdAt: deps.now() }));
    }
    const waiting = work.waiting;
    if (spec.writePriority) {
      await writeWork(deps, work, {
        priority: 0,
        skipIfUnchanged: false,
        lock,
        // The priority the person sees right now is the one to restore (they may have changed it since the last read).
        precheck: (w) => {
          if (w.priority > 0) waiting.previousPriority = w.priority;
        },
      });
    }
    if (spec.reminder && !waiting.reminderTaskId) {
      const { task: reminder, pendingId } = await createOwnTask(
        deps,
        {
          projectId: work.projectId,
          title: waitingTitle(deps.locale, work),
          content: sanitizeForDida(`${waiting.reason}\n\n${deps.locale.t('dida.waiting.howTo')}`, { maxLength: MAX_REPORT_LENGTH }),
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
    return { work, entered: true };
  });
}

/** The comment posted on a Work the agent asked a person about (what it needs, and how to answer). */
export function waitingComment(deps: Pick<EngineDeps, 'locale'>, reason: string): string {
  return sanitizeForDida(deps.locale.t('dida.comment.waiting', { reason }), { maxLength: MAX_COMMENT_LENGTH });
}

/**
 * Ends waiting. `explicit` (the agent, or the person's answer in Dida) restores the previous priority in Dida when it is
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
    const spend = waiting.cause === 'spend';
    delete work.waiting;
    work.priority = priority;
    await saveWork(deps, work, (state) => {
      // Letting a Work stopped by the spend guard go on gives it the same allowance again.
      if (spend) (state.usage[key] ??= { rounds: {} }).allowance = allowanceNow(usageOf(state, key));
      // A wait never applied takes back its own comment while that is still unposted: the person would otherwise read a
      // request for help on a Work that runs again. Once it may be out, "resumed" follows it.
      const ask = applied ? undefined : state.outbox.find((e) => e.workKey === key && e.text === waiting.comment && !e.uncertain);
      if (ask) dropComments(state, new Set([ask.id]));
      const askOut = applied || (waiting.comment !== undefined && !ask);
      if (askOut) queueComment(state, { projectId: work.projectId, taskId: work.taskId, workKey: key, text: deps.locale.t('dida.comment.resumed'), createdAt: deps.now() });
    });
    await flushWorkOutbox(deps, key);
    return work;
  });
}
