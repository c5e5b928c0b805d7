// The one door for writes of a Work's task: read right before, merge the person's edits, send only what changes, check the answer.
import { DidaError, isDidaError } from '../../dida/dida-error';
import { baseGateway } from '../../dida/abortable-gateway';
import type { DidaGateway } from '../../dida/dida-gateway';
import { isItemCompleted, type ChecklistItem, type Task, type TaskUpdate } from '../../dida/types';
import type { EngineDeps, HeldLock } from './engine-context';
import { WorkError } from './engine-context';
import { planItems, rememberItemIds, type ItemPlan } from './item-codec';
import { readTask, reconcileWithTask } from './work-io';
import type { ReconcileResult } from './work-reconcile';
import type { EngineState, StepRecord, WorkRecord } from './work-state';

/** Dida keeps at most this many checklist items on a task; a write with more is refused before it is sent. */
export const MAX_CHECKLIST_ITEMS = 200;

export interface WriteOptions {
  /** Set the task's Dida priority (waiting for a person, resuming). */
  priority?: number;
  /** Set `priority` only when Dida shows 0 (resuming: a level the person chose meanwhile is kept). */
  onlyFromZero?: boolean;
  /**
   * Runs after the person's edits are merged and before anything is sent; throwing stops the write (finalization uses
   * it to stop when the person added or reopened an item meanwhile).
   */
  precheck?: (work: WorkRecord, merge: ReconcileResult) => void;
  /** When false (default true) the task is read and merged even when the record says nothing needs writing. */
  skipIfUnchanged?: boolean;
  /** The state the Work came from (for new step ids). */
  state?: EngineState;
  /** The Work's lock: nothing is sent once it was lost (this process was paused and another took it over). */
  lock?: HeldLock;
}

export interface WriteResult {
  /** The task as Dida last showed it (the answer to the write, or the read when nothing was sent); undefined when not read. */
  task?: Task;
  /** Whether an update was sent and applied. */
  wrote: boolean;
  /** The person's edits merged in by the read before the write (undefined when Dida was not read). */
  merge: ReconcileResult | undefined;
}

/** Thrown when the Work's lock was taken over (the holder was paused): the caller gives the operation up and retries. */
export class LockLostError extends Error {
  override readonly name = 'LockLostError';
  constructor(readonly key: string) {
    super(`The lock of Work ${key} was taken over by another process while this one was paused; the operation is retried.`);
  }
}

/** Throws LockLostError when the Work's lock is no longer this process's. */
export function assertHeld(lock: HeldLock | undefined, work: Pick<WorkRecord, 'taskId'>): void {
  if (lock && (lock.compromised.aborted || lock.stillHeld?.() === false)) throw new LockLostError(work.taskId);
}

/** The refusal of a Work that would have more checklist items than Dida keeps (nothing is written). */
export function tooManySteps(count: number): WorkError {
  return new WorkError(
    'too_many_steps',
    `Dida keeps at most ${MAX_CHECKLIST_ITEMS} checklist items and this Work would have ${count}; nothing was written — remove or merge steps (todo delete) instead of adding more.`,
  );
}

/** Gateways that were seen to ignore an update without `title` (one TickTick report): their updates carry it. */
const titleRequired = new WeakSet<DidaGateway>();

function itemState(step: StepRecord): { title: string; done: boolean } {
  return { title: step.origin === 'human' && step.seen ? step.seen.title : step.title, done: step.status === 'completed' };
}

/**
 * Whether the record holds a change Dida does not have yet, judged from the record alone (each step against the item
 * it last saw): a new step, a deleted agent step, a tick, an agent rename, or a priority to set.
 */
export function hasPendingWrite(work: WorkRecord, priority?: number): boolean {
  if (priority !== undefined && priority !== work.priority) return true;
  if (work.pendingDesc) return true;
  if (work.mode !== 'checklist') return false;
  for (const step of work.steps) {
    if (step.status === 'deleted') {
      if (step.origin === 'agent' && step.itemId) return true;
      continue;
    }
    if (!step.itemId || !step.seen) return true;
    const want = itemState(step);
    if (want.done !== step.seen.done || want.title !== step.seen.title) return true;
  }
  return false;
}

interface Prepared {
  body: TaskUpdate;
  plan: ItemPlan | undefined;
}

/**
 * The smallest update that carries the record's changes onto `task` as just read, or undefined when Dida already
 * shows them: `id`, `projectId`, the items when a step changes, `desc` only when the body must move out of `content`
 * (Dida may clear `content` once a text task gets items), `priority` when asked; `title` (as read) only for a service
 * that ignores updates without it. Never `status`, `completedTime` or `content`.
 */
export function minimalUpdate(task: Task, work: WorkRecord, options: { priority?: number; withTitle: boolean; now: number }): Prepared | undefined {
  const body: TaskUpdate = { id: task.id, projectId: task.projectId };
  let plan: ItemPlan | undefined;
  if (work.mode === 'checklist') {
    const candidate = planItems(task, work.steps, options.now);
    if (itemsDiffer(task.items ?? [], candidate.items)) {
      plan = candidate;
      body.items = candidate.items;
      const content = (task.content ?? '').trim();
      const desc = task.desc ?? '';
      if ((task.items ?? []).length === 0 && candidate.items.length > 0 && content !== '' && !desc.includes(content)) {
        body.desc = desc.trim() === '' ? content : `${desc.replace(/\s+$/, '')}\n\n${content}`;
      }
    }
  }
  const pending = (work.pendingDesc ?? '').trim();
  if (pending !== '' && !(task.desc ?? '').includes(pending)) {
    const desc = typeof body.desc === 'string' ? body.desc : (task.desc ?? '');
    body.desc = desc.trim() === '' ? pending : `${desc.replace(/\s+$/, '')}\n\n${pending}`;
  }
  if (options.priority !== undefined && task.priority !== options.priority) body.priority = options.priority;
  if (body.items === undefined && body.priority === undefined && body.desc === undefined) return undefined;
  if (options.withTitle) body.title = task.title;
  return { body, plan };
}

function itemsDiffer(before: readonly ChecklistItem[], after: ReadonlyArray<{ id?: string; title: string; status?: number }>): boolean {
  if (before.length !== after.length) return true;
  return after.some((b, i) => {
    const a = before[i] as ChecklistItem;
    return !b.id || a.id !== b.id || a.title !== b.title || isItemCompleted(a) !== isItemCompleted({ status: b.status ?? 0 });
  });
}

/** Whether Dida's answer shows what was sent (items by title and tick, priority, desc). */
function applied(sent: TaskUpdate, answered: Task): boolean {
  if (sent.priority !== undefined && answered.priority !== sent.priority) return false;
  if (typeof sent.desc === 'string' && (answered.desc ?? '') !== sent.desc) return false;
  if (sent.items) {
    const got = (answered.items ?? []).map((i) => `${isItemCompleted(i) ? 1 : 0}${i.title}`).sort();
    const want = (sent.items as Array<{ title: string; status?: number }>).map((i) => `${isItemCompleted({ status: i.status ?? 0 }) ? 1 : 0}${i.title}`).sort();
    if (got.length !== want.length || got.some((g, i) => g !== want[i])) return false;
  }
  return true;
}

/**
 * Writes the Work's pending changes into its task, the only way a Work's task is written:
 * 1. unless `skipIfUnchanged` is false, nothing is read or written when the record shows no pending change;
 * 2. the task is read immediately before the write (no state-file access or lock wait in between) and the person's
 *    edits are merged into the record (see reconcileWork), then `precheck` runs;
 * 3. only the changed fields are sent (see minimalUpdate), after checking Dida's item cap;
 * 4. the answer is held against what was sent: a service that ignored an update without `title` gets it again with
 *    the title as just read; any other mismatch throws `invalid_response` (the intent stays, the next write retries).
 * After a write the steps' item ids are re-matched and the answer is merged like a read (an edit that landed just
 * before the write shows there). A deleted task closes the Work (`work_deleted_remotely`, from readTask).
 * The caller holds the Work's lock and saves the record afterwards.
 */
export async function writeWork(deps: EngineDeps, work: WorkRecord, options: WriteOptions = {}): Promise<WriteResult> {
  if (options.skipIfUnchanged !== false && !hasPendingWrite(work, options.priority)) {
    return { wrote: false, merge: undefined };
  }
  for (let attempt = 0; attempt < 2; attempt++) {
    assertHeld(options.lock, work);
    const task = await readTask(deps, work);
    const merge = reconcileWithTask(deps, work, task, options.state);
    if (task.status !== 0) return { task, wrote: false, merge };
    options.precheck?.(work, merge);
    const priority = options.onlyFromZero && task.priority !== 0 ? undefined : options.priority;
    const prepared = minimalUpdate(task, work, { priority, withTitle: titleRequired.has(baseGateway(deps.gateway)), now: deps.now() });
    if (!prepared) {
      settledPending(work);
      return { task, wrote: false, merge };
    }
    const count = prepared.plan?.items.length ?? 0;
    if (count > MAX_CHECKLIST_ITEMS) throw tooManySteps(count);
    assertHeld(options.lock, work);
    const answered = await deps.gateway.updateTask(prepared.body);
    if (!applied(prepared.body, answered)) {
      if (!('title' in prepared.body) && attempt === 0) {
        titleRequired.add(baseGateway(deps.gateway));
        deps.log?.('Dida ignored an update without a title; updates now carry the title as just read.');
        continue;
      }
      throw new DidaError({ code: 'invalid_response', route: 'POST /task/{tid}', message: 'Dida answered the update of a Work without applying it; it will be written again at the next change.' });
    }
    recordWrite(work, prepared, answered);
    const after = reconcileWithTask(deps, work, answered, options.state);
    settledPending(work);
    return { task: answered, wrote: true, merge: combine(merge, after) };
  }
  throw new DidaError({ code: 'invalid_response', route: 'POST /task/{tid}', message: 'Dida did not apply the update of a Work.' });
}

/** Dida shows everything the record holds: nothing waits for the background writer any more. */
function settledPending(work: WorkRecord): void {
  if (hasPendingWrite(work)) return;
  delete work.pendingSince;
  delete work.writeFailure;
}

/**
 * After an applied write: the steps take the item ids Dida answered (re-matched) and their last-seen state becomes what
 * was sent, so the answer can then be merged like a read (anything else in it is the person's edit).
 */
export function recordWrite(work: WorkRecord, prepared: { body: TaskUpdate; plan: ItemPlan | undefined }, answered: Task): void {
  if (prepared.plan) {
    rememberItemIds(work.steps, prepared.plan, answered.items ?? []);
    for (const step of work.steps) {
      const index = prepared.plan.stepIndex.get(step.id);
      const sent = index === undefined ? undefined : (prepared.plan.items[index] as { title: string; status?: number });
      if (sent && step.itemId) step.seen = { title: sent.title, done: isItemCompleted({ status: sent.status ?? 0 }) };
    }
    for (const step of work.steps) if (step.status === 'deleted' && step.origin === 'agent') delete step.itemId;
  }
  if (work.pendingDesc && (answered.desc ?? '').includes(work.pendingDesc.trim())) delete work.pendingDesc;
}

function combine(a: ReconcileResult, b: ReconcileResult): ReconcileResult {
  return {
    changed: a.changed || b.changed,
    humanEdited: a.humanEdited || b.humanEdited,
    imported: [...a.imported, ...b.imported],
    completedByHuman: [...a.completedByHuman, ...b.completedByHuman],
    reopenedByHuman: [...a.reopenedByHuman, ...b.reopenedByHuman],
    removed: [...a.removed, ...b.removed],
  };
}

/** 4xx answers that say "not now" rather than "never": a timeout, too early, too many requests. */
const TRANSIENT_4XX: ReadonlySet<number> = new Set([408, 425, 429]);

/** Whether an error means Dida refused the write for good (nothing changed there): a 4xx answer other than 408, 425 and 429. */
export function isRefusal(error: unknown): boolean {
  return isDidaError(error) && error.status !== undefined && error.status >= 400 && error.status < 500 && !TRANSIENT_4XX.has(error.status);
}

