// Folds a Dida task, as just read, into a Work record: adoption, imported items, human edits, id re-matching.
import { isItemCompleted, type ChecklistItem, type Task } from '../../dida/types';
import { humanFingerprint } from './item-codec';
import type { StepRecord, WorkRecord } from './work-state';

export interface ReconcileOptions {
  now: number;
  newStepId: () => string;
  occurrence: string;
}

export interface ReconcileResult {
  changed: boolean;
  humanEdited: boolean;
  imported: StepRecord[];
  completedByHuman: StepRecord[];
  /** Agent-completed steps the person unticked: open again. */
  reopenedByHuman: StepRecord[];
  removed: StepRecord[];
}

/** Dida's version of a task: its etag, else its modification time; undefined when Dida sent neither. */
export function taskVersion(task: Pick<Task, 'etag' | 'modifiedTime'>): string | undefined {
  return task.etag || task.modifiedTime || undefined;
}

/** The fields every new Work record starts with; the callers choose origin, steps and body. */
function newWork(task: Task, fields: Pick<WorkRecord, 'origin' | 'occurrence' | 'steps' | 'body' | 'rev'> & { now: number; reworkOf?: string }): WorkRecord {
  const version = taskVersion(task);
  return {
    taskId: task.id,
    projectId: task.projectId,
    occurrence: fields.occurrence,
    title: task.title,
    origin: fields.origin,
    mode: 'checklist',
    priority: task.priority,
    ...(task.tags?.length ? { tags: [...task.tags] } : {}),
    phase: 'open',
    steps: fields.steps,
    nextStepNumber: fields.steps.length + 1,
    keepOpen: false,
    humanFingerprint: humanFingerprint(task),
    body: fields.body,
    ...(version ? { seenVersion: version } : {}),
    ...(fields.reworkOf ? { reworkOf: fields.reworkOf } : {}),
    createdAt: fields.now,
    updatedAt: fields.now,
    rev: fields.rev,
  };
}

/** A new Work for a task a person wrote in Dida. Writes nothing to Dida. */
export function adoptTask(task: Task, options: ReconcileOptions): WorkRecord {
  const steps = (task.items ?? []).map((item) => stepFromItem(item, options));
  return newWork(task, { origin: 'human', occurrence: options.occurrence, steps, body: bodyOf(task), rev: 1, now: options.now });
}

/**
 * A new Work for a task this bundle created: the model's Work (its items are agent steps) or a rework Work (its items
 * are the person's feedback, so they are human steps: status only).
 */
export function agentWorkFromTask(task: Task, options: Pick<ReconcileOptions, 'now' | 'newStepId'> & { reworkOf?: string; stepOrigin?: 'agent' | 'human' }): WorkRecord {
  const origin = options.stepOrigin ?? 'agent';
  const steps = (task.items ?? []).map((item) => ({ ...stepFromItem(item, options), origin }));
  return newWork(task, {
    origin: 'agent',
    occurrence: '',
    steps,
    body: bodyOf(task),
    rev: 0,
    now: options.now,
    ...(options.reworkOf ? { reworkOf: options.reworkOf } : {}),
  });
}

function stepFromItem(item: ChecklistItem, options: Pick<ReconcileOptions, 'now' | 'newStepId'>): StepRecord {
  const done = isItemCompleted(item);
  return {
    id: options.newStepId(),
    ...(item.id ? { itemId: item.id } : {}),
    title: item.title,
    status: done ? 'completed' : 'pending',
    origin: 'human',
    seen: { title: item.title, done },
    updatedAt: options.now,
  };
}

/**
 * Pairs steps with the task's items one to one: by item id first; then steps whose item id is stale or
 * not yet written are paired, in order, with unpaired items of the same title. Returns step id → item index.
 */
export function pairStepsWithItems(steps: readonly StepRecord[], items: readonly ChecklistItem[]): Map<string, number> {
  const pairs = new Map<string, number>();
  const used = new Set<number>();
  const indexById = new Map<string, number>();
  items.forEach((item, i) => {
    if (item.id) indexById.set(item.id, i);
  });
  const live = steps.filter((s) => s.status !== 'deleted');
  for (const step of live) {
    const i = step.itemId ? indexById.get(step.itemId) : undefined;
    if (i !== undefined && !used.has(i)) {
      pairs.set(step.id, i);
      used.add(i);
    }
  }
  const freeByTitle = new Map<string, number[]>();
  items.forEach((item, i) => {
    if (used.has(i)) return;
    const list = freeByTitle.get(item.title) ?? [];
    list.push(i);
    freeByTitle.set(item.title, list);
  });
  for (const step of live) {
    if (pairs.has(step.id)) continue;
    const i = freeByTitle.get(step.title)?.shift();
    if (i !== undefined) {
      pairs.set(step.id, i);
      used.add(i);
    }
  }
  return pairs;
}

/**
 * Orders the steps as Dida orders their items (steps without an item keep their order after them); returns whether the
 * order changed. The panel and the model then see the checklist as the person does.
 */
function orderLikeItems(work: WorkRecord, items: readonly ChecklistItem[]): boolean {
  const position = new Map<string, number>();
  items.forEach((item, i) => {
    if (item.id) position.set(item.id, i);
  });
  const rank = (step: StepRecord) => (step.itemId !== undefined && step.status !== 'deleted' ? (position.get(step.itemId) ?? Infinity) : Infinity);
  const sorted = work.steps.map((step, i) => ({ step, i, r: rank(step) })).sort((a, b) => (a.r === b.r ? a.i - b.i : a.r < b.r ? -1 : 1));
  if (sorted.every((entry, i) => entry.i === i)) return false;
  work.steps = sorted.map((entry) => entry.step);
  return true;
}

/**
 * The person's body of a task: for a checklist task Dida keeps it in `desc` (and may clear `content`), for a text
 * task in `content`. Both are read; text one field already holds is not repeated.
 */
export function bodyOf(task: Pick<Task, 'content' | 'desc'>): string {
  const desc = (task.desc ?? '').trim();
  const content = (task.content ?? '').trim();
  if (content === '' || desc.includes(content)) return desc;
  if (desc === '' || content.includes(desc)) return content;
  return `${desc}\n\n${content}`;
}

/**
 * Folds `task` (as just read, or as Dida answered a write) into `work`, as a three-way merge whose base is what Dida
 * showed last (each step's `seen`, the Work's fingerprint): whatever differs from the base is the person's edit and
 * wins; whatever only the Work differs in is the bundle's own change still to be written.
 * - items the person added become human steps; items they deleted delete their steps (never re-added);
 * - a tick or untick by the person wins: a step they ticked is completed, an agent-completed step they unticked is
 *   open again (reported, so the model is told);
 * - a title the person changed wins over the step's; the Work's title and body always follow Dida;
 * - an edit of the title or body reopens skipped steps and clears keepOpen.
 * Every paired step's `seen` becomes the item as read.
 */
export function reconcileWork(work: WorkRecord, task: Task, options: ReconcileOptions): ReconcileResult {
  const result: ReconcileResult = { changed: false, humanEdited: false, imported: [], completedByHuman: [], reopenedByHuman: [], removed: [] };
  const items = task.items ?? [];
  const pairs = pairStepsWithItems(work.steps, items);
  const pairedItems = new Set(pairs.values());
  const touch = (step: StepRecord) => {
    step.updatedAt = options.now;
    result.changed = true;
  };

  for (const step of work.steps) {
    if (step.status === 'deleted') continue;
    const index = pairs.get(step.id);
    if (index === undefined) {
      if (step.itemId !== undefined && work.mode === 'checklist') {
        step.status = 'deleted';
        touch(step);
        result.removed.push(step);
      }
      continue;
    }
    const item = items[index] as ChecklistItem;
    if (item.id && step.itemId !== item.id) {
      step.itemId = item.id;
      result.changed = true;
    }
    const seen = step.seen;
    if (item.title.trim() !== '' && item.title !== step.title && (step.origin === 'human' || !seen || item.title !== seen.title)) {
      step.title = item.title;
      touch(step);
    }
    const done = isItemCompleted(item);
    const personChanged = seen ? done !== seen.done : done;
    if (personChanged && done && step.status !== 'completed') {
      step.status = 'completed';
      touch(step);
      result.completedByHuman.push(step);
    } else if (personChanged && !done && step.status === 'completed') {
      step.status = 'pending';
      delete step.startedNoted;
      touch(step);
      result.reopenedByHuman.push(step);
    }
    if (!seen || seen.title !== item.title || seen.done !== done) {
      step.seen = { title: item.title, done };
      result.changed = true;
    }
  }

  // An item whose step the agent deleted is that deletion still to be written (a write that failed or was cut short),
  // not an item the person added.
  const deletedItems = new Set(work.steps.filter((s) => s.status === 'deleted' && s.itemId !== undefined).map((s) => s.itemId));
  items.forEach((item, i) => {
    if (pairedItems.has(i) || item.title.trim() === '' || (item.id && deletedItems.has(item.id))) return;
    const step = stepFromItem(item, options);
    work.steps.push(step);
    result.imported.push(step);
  });
  if (result.imported.length > 0) work.nextStepNumber += result.imported.length;
  if (orderLikeItems(work, items)) result.changed = true;

  const fingerprint = humanFingerprint(task);
  if (fingerprint !== work.humanFingerprint) {
    result.humanEdited = true;
    work.humanFingerprint = fingerprint;
    if (work.keepOpen) work.keepOpen = false;
    for (const step of work.steps) {
      if (step.status === 'skipped') {
        step.status = 'pending';
        delete step.resolution;
        step.updatedAt = options.now;
      }
    }
  }
  if (work.title !== task.title && task.title.trim() !== '') {
    work.title = task.title;
    result.changed = true;
  }
  const body = bodyOf(task);
  if (work.body !== body) {
    work.body = body;
    result.changed = true;
  }
  if (work.priority !== task.priority) {
    work.priority = task.priority;
    result.changed = true;
  }
  const tags = task.tags ?? [];
  if ((work.tags ?? []).join('\n') !== tags.join('\n')) {
    if (tags.length) work.tags = [...tags];
    else delete work.tags;
    result.changed = true;
  }
  if (result.humanEdited || result.imported.length || result.completedByHuman.length || result.reopenedByHuman.length || result.removed.length) result.changed = true;
  if (result.changed) {
    work.updatedAt = options.now;
    work.rev += 1;
  }
  const version = taskVersion(task);
  if (version) work.seenVersion = version;
  else delete work.seenVersion;
  return result;
}
