// Maps a Work's steps onto Dida checklist items and back: read-merge-write payloads, id re-matching, body keeping.
import { createHash } from 'node:crypto';
import { formatDidaDate } from '../../dida/dida-date';
import { ITEM_COMPLETED, ITEM_OPEN, isItemCompleted, type ChecklistItem, type NewChecklistItem, type Task, type TaskUpdate } from '../../dida/types';
import type { StepRecord, WorkRecord } from './work-state';

type OutItem = ChecklistItem | NewChecklistItem;

/** Where each step sits in the items array that is about to be sent. */
export interface ItemPlan {
  items: OutItem[];
  /** step id → index in `items` */
  stepIndex: Map<string, number>;
}

/**
 * Builds the full items array for an update from the task as just read and the Work's steps.
 * Existing items keep their order and every field the bundle does not own; only `status` and
 * `completedTime` change (and the title of agent steps). Agent steps that are deleted are removed;
 * human items are never removed or renamed. New steps are appended without an id.
 */
export function planItems(task: Task, steps: readonly StepRecord[], now: number): ItemPlan {
  const current = task.items ?? [];
  const byItemId = new Map<string, StepRecord>();
  for (const step of steps) if (step.itemId) byItemId.set(step.itemId, step);
  const items: OutItem[] = [];
  const stepIndex = new Map<string, number>();
  for (const item of current) {
    const step = item.id ? byItemId.get(item.id) : undefined;
    if (!step) {
      items.push(item);
      continue;
    }
    if (step.status === 'deleted' && step.origin === 'agent') continue;
    const next: ChecklistItem = { ...item };
    applyStatus(next, step, now);
    if (step.origin === 'agent') next.title = step.title;
    stepIndex.set(step.id, items.length);
    items.push(next);
  }
  const present = new Set(current.map((i) => i.id));
  for (const step of steps) {
    if (step.status === 'deleted') continue;
    if (step.itemId && present.has(step.itemId)) continue;
    if (step.origin === 'human' && step.itemId) continue; // the human removed it; never re-add human items
    const fresh: NewChecklistItem = { title: step.title, status: ITEM_OPEN };
    applyStatus(fresh, step, now);
    stepIndex.set(step.id, items.length);
    items.push(fresh);
  }
  return { items, stepIndex };
}

function applyStatus(item: { status?: number; completedTime?: string | null }, step: StepRecord, now: number): void {
  const done = step.status === 'completed';
  const wasDone = item.status !== undefined && isItemCompleted({ status: item.status });
  if (done && !wasDone) {
    item.status = ITEM_COMPLETED;
    item.completedTime = formatDidaDate(now);
  } else if (!done && wasDone) {
    item.status = ITEM_OPEN;
    item.completedTime = null;
  }
}

/**
 * Pairs the items that were sent with the items Dida answered, one to one: first by id (when Dida
 * kept it), then by position among items with the same title. Returns sent index → answered item id.
 */
export function matchItemIds(sent: readonly OutItem[], answered: readonly ChecklistItem[]): Map<number, string> {
  const result = new Map<number, string>();
  const usedAnswers = new Set<number>();
  const answerById = new Map<string, number>();
  answered.forEach((item, j) => {
    if (item.id) answerById.set(item.id, j);
  });
  sent.forEach((item, i) => {
    const id = 'id' in item ? item.id : undefined;
    const j = id ? answerById.get(id) : undefined;
    if (j !== undefined && !usedAnswers.has(j)) {
      usedAnswers.add(j);
      result.set(i, id as string);
    }
  });
  const pendingByTitle = new Map<string, number[]>();
  answered.forEach((item, j) => {
    if (usedAnswers.has(j)) return;
    const list = pendingByTitle.get(item.title) ?? [];
    list.push(j);
    pendingByTitle.set(item.title, list);
  });
  sent.forEach((item, i) => {
    if (result.has(i)) return;
    const list = pendingByTitle.get(item.title);
    const j = list?.shift();
    const answer = j === undefined ? undefined : answered[j];
    if (answer?.id) result.set(i, answer.id);
  });
  return result;
}

/** Applies re-matched item ids to the steps after a write. */
export function rememberItemIds(steps: StepRecord[], plan: ItemPlan, answered: readonly ChecklistItem[]): void {
  const ids = matchItemIds(plan.items, answered);
  for (const step of steps) {
    const index = plan.stepIndex.get(step.id);
    if (index === undefined) continue;
    const id = ids.get(index);
    if (id) step.itemId = id;
  }
}

/**
 * The human-owned text of a task, stable across Dida clearing `content` after the body moved to `desc`: `desc`, plus
 * `content` when `desc` does not already hold it (so a person writing new text into either field changes it).
 */
export function humanFingerprint(task: Pick<Task, 'title' | 'content' | 'desc'>): string {
  const desc = (task.desc ?? '').trim();
  const content = (task.content ?? '').trim();
  const body = [desc, desc.includes(content) ? '' : content].filter((part) => part !== '').join('\n\n');
  return createHash('sha256').update(`${task.title}\u0000${body}`).digest('hex').slice(0, 32);
}

/** desc with the human body included exactly once (Dida may clear `content` when items appear). */
export function descWithBody(desc: string | null | undefined, body: string): string {
  const current = desc ?? '';
  const text = body.trim();
  if (text === '' || current.includes(text)) return current;
  return current.trim() === '' ? text : `${current.replace(/\s+$/, '')}\n\n${text}`;
}

/** The whole-task update that writes the Work's steps, keeping every field of the task as read. */
export function taskUpdateFor(task: Task, work: WorkRecord, now: number): { update: TaskUpdate; plan: ItemPlan } {
  const plan = planItems(task, work.steps, now);
  const update: TaskUpdate = { ...task, items: plan.items };
  if (plan.items.length > 0) update.desc = descWithBody(task.desc, work.body || (task.content ?? ''));
  return { update, plan };
}
