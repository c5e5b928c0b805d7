// The background writer: step changes a tool call recorded are written into Dida after its result (the task read right
// before the write, the person's edits merged in), together with the Work's progress comments; what it merged in or met
// waits in the record for the model's next call.
import { isDidaError } from '../../dida/dida-error';
import type { EngineDeps, HeldLock } from './engine-context';
import { WorkError } from './engine-context';
import { DEFAULT_PROGRESS_WINDOW_MS, flushWorkOutbox, queueComment, retryDelayMs, type FlushOptions } from './outbox';
import { hasPendingWrite, isRefusal, writeWork } from './task-writer';
import { saveWork, workIn } from './work-io';
import type { ReconcileResult } from './work-reconcile';
import { MAX_COMMENT_LENGTH, sanitizeForDida } from '../text/text-guard';
import type { EngineState, WorkNews, WorkRecord } from './work-state';

/** What one background write did. */
export type PendingWriteOutcome = 'nothing' | 'written' | 'failed' | 'closed';

/**
 * Marks step changes just recorded as waiting for the background writer (call before the save of the intent): since
 * when they wait, and a refused write is tried once more now that something changed.
 */
export function notePending(work: WorkRecord, now: number): void {
  if (!hasPendingWrite(work)) return;
  work.pendingSince ??= now;
  if (work.writeFailure?.refused) work.writeFailure = { ...work.writeFailure, refused: false, retryAt: now };
}

/**
 * Whether the Work's recorded changes may be written now by a flush that is not forced: they waited the progress
 * window (so a burst of steps is one write, sent with its comments), no retry delay runs after a transient failure,
 * and Dida did not refuse them (a refused write is tried again after the next change only).
 */
export function pendingWriteDue(work: WorkRecord, now: number, windowMs: number): boolean {
  if (work.pendingSince === undefined || work.phase !== 'open') return false;
  if (work.writeFailure?.refused) return false;
  if (work.writeFailure?.retryAt !== undefined && work.writeFailure.retryAt > now) return false;
  return now - work.pendingSince >= windowMs;
}

function addNews(work: WorkRecord, add: Partial<WorkNews>): void {
  const news: WorkNews = work.news ?? { imported: [], completedByHuman: [], reopenedByHuman: [], removed: [] };
  const ids = (list: string[], more: readonly string[] | undefined) => [...new Set([...list, ...(more ?? [])])];
  work.news = {
    ...news,
    ...add,
    imported: ids(news.imported, add.imported),
    completedByHuman: ids(news.completedByHuman, add.completedByHuman),
    reopenedByHuman: ids(news.reopenedByHuman, add.reopenedByHuman),
    removed: ids(news.removed, add.removed),
    ...(news.humanEdited || add.humanEdited ? { humanEdited: true } : {}),
  };
}

function mergeNews(merge: ReconcileResult | undefined): Partial<WorkNews> | undefined {
  if (!merge) return undefined;
  const news = {
    imported: merge.imported.map((s) => s.id),
    completedByHuman: merge.completedByHuman.map((s) => s.id),
    reopenedByHuman: merge.reopenedByHuman.map((s) => s.id),
    removed: merge.removed.map((s) => s.id),
    ...(merge.humanEdited ? { humanEdited: true } : {}),
  };
  const any = news.imported.length + news.completedByHuman.length + news.reopenedByHuman.length + news.removed.length > 0 || merge.humanEdited;
  return any ? news : undefined;
}

/** A short, Dida-text-free description of a failed write, for the model and the status command. */
function failureText(error: unknown): string {
  if (error instanceof WorkError) return error.code;
  if (isDidaError(error)) return error.status !== undefined ? `${error.code} (HTTP ${error.status})` : error.code;
  return error instanceof Error ? error.name : 'error';
}

/**
 * Writes the step changes the record of `key` holds and Dida does not show yet (the caller holds the Work's lock):
 * the task is read right before the write and the person's edits are merged in (see writeWork). Never throws for Dida
 * faults or domain outcomes, only when the lock was lost or the record changed meanwhile (the caller retries):
 * - written: the record is saved with what the read merged in kept as news for the model;
 * - closed: the person completed or deleted the task meanwhile; the Work is closed and its unwritten progress dropped;
 * - failed: the intent stays; a refusal (a 4xx, Dida's item cap) is kept until the next change and told to the person
 *   in Dida once, anything else is retried after a growing delay; either way the model is told at its next call.
 */
export async function writePending(deps: EngineDeps, key: string, lock?: HeldLock): Promise<PendingWriteOutcome> {
  const state = await deps.state.read();
  const work = workIn(state, key);
  if (work.phase !== 'open' || !hasPendingWrite(work)) {
    if (work.pendingSince === undefined && !work.writeFailure) return 'nothing';
    delete work.pendingSince;
    if (work.phase !== 'open') delete work.writeFailure;
    await saveWork(deps, work);
    return 'nothing';
  }
  const since = work.pendingSince ?? deps.now();
  try {
    const written = await writeWork(deps, work, { state, lock });
    if (written.task && written.task.status !== 0) {
      work.phase = 'closed';
      work.outcome = 'completed_by_human';
      delete work.pendingSince;
      delete work.writeFailure;
      addNews(work, { closed: 'completed_by_human' });
      // The progress of steps Dida never showed would tell of a task the person closed: dropped with the write.
      await saveWork(deps, work, (s) => dropUnwritten(s, key, since));
      return 'closed';
    }
    const news = mergeNews(written.merge);
    if (news) addNews(work, news);
    if (!hasPendingWrite(work)) delete work.pendingSince;
    delete work.writeFailure;
    await saveWork(deps, work);
    return 'written';
  } catch (error) {
    if (error instanceof Error && (error.name === 'LockLostError' || error.name === 'ConcurrentChangeError')) throw error;
    if (error instanceof WorkError && error.code === 'work_deleted_remotely') {
      // readTask closed the Work and saved it: the model is told, and its unwritten progress goes with the task.
      await deps.state.update((s) => {
        const closed = s.works[key];
        if (!closed) return;
        addNews(closed, { closed: 'deleted' });
        delete closed.pendingSince;
        delete closed.writeFailure;
        dropUnwritten(s, key, since);
      });
      return 'closed';
    }
    // A rejected token is not Dida refusing the change: it is written once the person logs in again.
    const refused = (isRefusal(error) && !(isDidaError(error) && error.code === 'auth')) || (error instanceof WorkError && error.code === 'too_many_steps');
    const failures = (work.writeFailure?.failures ?? 0) + 1;
    const message = failureText(error);
    const first = !work.writeFailure;
    work.writeFailure = { refused, message, at: deps.now(), failures, ...(refused ? {} : { retryAt: deps.now() + retryDelayMs(failures) }) };
    addNews(work, { failure: { refused, message } });
    deps.log?.(`the steps of Work ${key} could not be written into Dida yet (${message}); ${refused ? 'tried again after the next change' : 'retried later'}`);
    await saveWork(deps, work, (s) => {
      // The person reads in Dida that the checklist there is behind (once per run of refusals).
      if (refused && first) {
        const text = sanitizeForDida(deps.locale.t('dida.comment.writeRefused'), { maxLength: MAX_COMMENT_LENGTH });
        queueComment(s, { projectId: work.projectId, taskId: work.taskId, workKey: key, text, createdAt: deps.now() });
      }
    });
    return 'failed';
  }
}

/** Drops the Work's progress notes queued since `since` (their steps never reached Dida). */
function dropUnwritten(state: EngineState, key: string, since: number): void {
  state.outbox = state.outbox.filter((e) => e.workKey !== key || e.kind === 'note' || e.createdAt < since || e.sentAs !== undefined);
}

/**
 * What a Work's progress owes Dida, sent together under the Work's lock (the caller holds it): its recorded step
 * changes (see writePending) and then its progress comments (see flushWorkOutbox). With `onlyDue`, the write waits
 * the progress window like the comments (see pendingWriteDue). Returns how many comments still wait.
 */
export async function flushWorkProgress(deps: EngineDeps, key: string, lock?: HeldLock, options: FlushOptions = {}): Promise<number> {
  const work = (await deps.state.read()).works[key];
  if (work?.pendingSince !== undefined && (!options.onlyDue || pendingWriteDue(work, deps.now(), deps.progressWindowMs ?? DEFAULT_PROGRESS_WINDOW_MS))) {
    await writePending(deps, key, lock);
  }
  return flushWorkOutbox(deps, key, options);
}

/** The Works of `state` whose progress waits for a flush: comments in the outbox, or step changes not written yet. */
export function progressKeys(state: EngineState): string[] {
  const keys = new Set(state.outbox.map((e) => e.workKey));
  for (const [key, work] of Object.entries(state.works)) if (work.pendingSince !== undefined && work.phase === 'open') keys.add(key);
  return [...keys];
}
