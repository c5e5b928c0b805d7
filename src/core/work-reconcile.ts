// Folds a Dida task, as just read, into a Work record: adoption, imported items, human edits, id re-matching.
import { isItemCompleted, type ChecklistItem, type Task } from '../dida/types';
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
  return newWork(task, { origin: 'human', occurrence: options.occurrence, steps, body: (task.content ?? '').trim(), rev: 1, now: options.now });
}

/** A new Work for a task this bundle created (agent Work or rework): every item is an agent step. */
export function agentWorkFromTask(task: Task, options: Pick<ReconcileOptions, 'now' | 'newStepId'> & { body?: string; reworkOf?: string }): WorkRecord {
  const steps = (task.items ?? []).map((item) => ({ ...stepFromItem(item, options), origin: 'agent' as const }));
  return newWork(task, {
    origin: 'agent',
    occurrence: '',
    steps,
    body: options.body ?? '',
    rev: 0,
    now: options.now,
    ...(options.reworkOf ? { reworkOf: options.reworkOf } : {}),
  });
}

function stepFromItem(item: ChecklistItem, options: Pick<ReconcileOptions, 'now' | 'newStepId'>): StepRecord {
  return {
    id: options.newStepId(),
    ...(item.id ? { itemId: item.id } : {}),
    title: item.title,
    status: isItemCompleted(item) ? 'completed' : 'pending',
    origin: 'human',
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
 * Updates `work` in place from `task`: imports items the person added, marks items they ticked as
 * completed (a step the agent settled is never downgraded by a stale unticked item), renames steps the
 * person renamed, drops steps whose item the person removed, and on an edit of the title or body reopens
 * skipped steps and clears keepOpen.
 */
export function reconcileWork(work: WorkRecord, task: Task, options: ReconcileOptions): ReconcileResult {
  const result: ReconcileResult = { changed: false, humanEdited: false, imported: [], completedByHuman: [], removed: [] };
  const items = task.items ?? [];
  const pairs = pairStepsWithItems(work.steps, items);
  const pairedItems = new Set(pairs.values());

  for (const step of work.steps) {
    if (step.status === 'deleted') continue;
    const index = pairs.get(step.id);
    if (index === undefined) {
      if (step.itemId !== undefined && work.mode === 'checklist') {
        step.status = 'deleted';
        step.updatedAt = options.now;
        result.removed.push(step);
      }
      continue;
    }
    const item = items[index] as ChecklistItem;
    if (item.id && step.itemId !== item.id) {
      step.itemId = item.id;
      result.changed = true;
    }
    if (item.title !== step.title && item.title.trim() !== '') {
      step.title = item.title;
      step.updatedAt = options.now;
      result.changed = true;
    }
    if (isItemCompleted(item) && step.status !== 'completed') {
      step.status = 'completed';
      step.updatedAt = options.now;
      result.completedByHuman.push(step);
    }
  }

  items.forEach((item, i) => {
    if (pairedItems.has(i) || item.title.trim() === '') return;
    const step = stepFromItem(item, options);
    work.steps.push(step);
    result.imported.push(step);
  });
  if (result.imported.length > 0) work.nextStepNumber += result.imported.length;

  const fingerprint = humanFingerprint(task);
  if (fingerprint !== work.humanFingerprint) {
    result.humanEdited = true;
    work.humanFingerprint = fingerprint;
    work.title = task.title;
    const content = (task.content ?? '').trim();
    if (content !== '' && !(task.desc ?? '').includes(content)) work.body = content;
    if (work.keepOpen) work.keepOpen = false;
    for (const step of work.steps) {
      if (step.status === 'skipped') {
        step.status = 'pending';
        delete step.resolution;
        step.updatedAt = options.now;
      }
    }
  }
  if (work.priority !== task.priority) {
    work.priority = task.priority;
    result.changed = true;
  }
  if (result.humanEdited || result.imported.length || result.completedByHuman.length || result.removed.length) result.changed = true;
  if (result.changed) {
    work.updatedAt = options.now;
    work.rev += 1;
  }
  const version = taskVersion(task);
  if (version) work.seenVersion = version;
  else delete work.seenVersion;
  return result;
}
