// The person-edit interleaving matrix: the operations, the person's edits and the checks that nothing they wrote is lost.
import { WorkError } from '../../src/core/work/engine-context';
import { isDidaError } from '../../src/dida/dida-error';
import type { SimRequestInfo, Simulator } from '../../src/sim/simulator';
import type { EngineHarness } from './engine-harness';

export const S = 'session-matrix';
export const TITLE = '整理发布说明';
export const P1 = '人的一项';
export const P2 = '人的第二项';
export const Q = '已完成的一项';
export const A = '写代码';
export const ADDED = '人加的一项';
export const RENAMED = '整理发布说明（人改过）';
export const BODY = '人改过的正文';
export const DESC = '人改过的描述';
export const COMMENT = '人留的评论';

export const EDITS = ['rename', 'body', 'desc', 'addItem', 'tick', 'untick', 'deleteItem', 'complete', 'reopen', 'delete', 'comment'] as const;
export type EditKind = (typeof EDITS)[number];
/** Edits of the checklist: `items` replaces the whole checklist, so these can be overwritten by a write in flight. */
export const ITEM_EDITS: ReadonlySet<EditKind> = new Set(['addItem', 'tick', 'untick', 'deleteItem']);

export interface World {
  listId: string;
  /** The task the person edits (the Work's task; for rework the review todo). */
  taskId: string;
  /** The Work's task. */
  workTaskId: string;
}

export interface MatrixOp {
  name: string;
  /** Which test file runs it: the operations on steps, or those of the Work's life (claim, wait, sync, settle, review). */
  concern: 'steps' | 'lifecycle';
  /** Brings a fresh list to just before the operation. */
  setup(h: EngineHarness): Promise<World>;
  /** The operation. Domain outcomes and Dida faults caused by the edit (deleted, completed) are expected. */
  run(h: EngineHarness, world: World): Promise<void>;
  /** What a session does next: settles, syncs. */
  converge(h: EngineHarness, world: World): Promise<void>;
  /** The edits that make sense here (default all). */
  edits?: readonly EditKind[];
  /** The task the edits target appears only during the operation (create). */
  targetLater?: boolean;
}

export async function ignoreExpected(promise: Promise<unknown>): Promise<void> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof WorkError || isDidaError(error)) return;
    if (error instanceof Error && /lock|changed by another/i.test(error.message)) return;
    throw error;
  }
}

/** A person's checklist task: two items of theirs, one the agent completed, one agent step still open. */
export async function humanWork(h: EngineHarness): Promise<World> {
  const list = h.sim.seedProject({ name: `矩阵-${Math.random().toString(36).slice(2, 8)}` });
  const task = h.sim.seedTask({
    projectId: list.id,
    title: TITLE,
    desc: '请按模块分组',
    content: '',
    priority: 3,
    tags: ['发布'],
    items: [{ title: P1 }, { title: P2 }, { title: Q }],
  });
  await h.engine.sync(list.id);
  await h.engine.switchTo(S, list.id, task.id);
  await h.engine.changeSteps(S, [
    { op: 'update', step: Q, status: 'completed', resolution: '整理出 12 条' },
    { op: 'add', title: A },
  ]);
  return { listId: list.id, taskId: task.id, workTaskId: task.id };
}

/**
 * Applies one edit the way the person would in the Dida app. Returns false when it does not apply at this moment
 * (the task is gone, or not completed for a re-open, or the item is missing).
 */
export function applyEdit(sim: Simulator, world: World, kind: EditKind): boolean {
  const task = sim.getTask(world.taskId);
  if (!task) return false;
  const items = task.items ?? [];
  const open = task.status === 0;
  switch (kind) {
    case 'rename':
      sim.editTask(task.id, { title: RENAMED });
      return true;
    case 'body':
      sim.editTask(task.id, { content: BODY });
      return true;
    case 'desc':
      sim.editTask(task.id, { desc: DESC });
      return true;
    case 'addItem':
      if (!open) return false;
      sim.editTask(task.id, { items: [...items, { title: ADDED, status: 0 }] });
      return true;
    case 'tick': {
      const i = items.findIndex((it) => it.title === P1 && it.status === 0);
      if (!open || i < 0) return false;
      sim.editTask(task.id, { items: items.map((it, j) => (j === i ? { ...it, status: 1 } : it)) });
      return true;
    }
    case 'untick': {
      const i = items.findIndex((it) => it.title === Q && it.status !== 0);
      if (!open || i < 0) return false;
      sim.editTask(task.id, { items: items.map((it, j) => (j === i ? { ...it, status: 0 } : it)) });
      return true;
    }
    case 'deleteItem': {
      if (!open || !items.some((it) => it.title === P2)) return false;
      sim.editTask(task.id, { items: items.filter((it) => it.title !== P2) });
      return true;
    }
    case 'complete':
      if (!open) return false;
      sim.editTask(task.id, { status: 2 });
      return true;
    case 'reopen':
      if (open) return false;
      sim.editTask(task.id, { status: 0 });
      return true;
    case 'delete':
      sim.removeTask(task.id);
      return true;
    case 'comment':
      sim.addComment(world.listId, task.id, COMMENT);
      return true;
    default: {
      const never: never = kind;
      return never;
    }
  }
}

/** Whether the person's edit still shows in Dida (and, where the Work is open, in the engine's record). */
export async function editKept(h: EngineHarness, world: World, kind: EditKind): Promise<boolean> {
  const task = h.sim.getTask(world.taskId);
  const titles = (task?.items ?? []).map((i) => i.title);
  const work = (await h.state()).works[world.workTaskId];
  const open = work?.phase === 'open';
  const step = (title: string) => work?.steps.find((s) => s.title === title && s.status !== 'deleted');
  switch (kind) {
    case 'rename':
      return task?.title === RENAMED && (!open || world.taskId !== world.workTaskId || work?.title === RENAMED);
    case 'body':
      return task?.content === BODY && (!open || world.taskId !== world.workTaskId || (work?.body ?? '').includes(BODY));
    case 'desc':
      return task?.desc === DESC && (!open || world.taskId !== world.workTaskId || (work?.body ?? '').includes(DESC));
    case 'addItem':
      return titles.includes(ADDED) && (!open || step(ADDED)?.origin === 'human');
    case 'tick':
      return task?.items?.find((i) => i.title === P1)?.status === 1 && (!open || step(P1)?.status === 'completed');
    case 'untick':
      return task?.items?.find((i) => i.title === Q)?.status === 0 && (!open || step(Q)?.status !== 'completed');
    case 'deleteItem':
      return !titles.includes(P2) && (!open || step(P2) === undefined);
    case 'complete':
      return task?.status === 2;
    case 'reopen':
      return task?.status === 0 && (world.taskId !== world.workTaskId || work?.phase === 'open');
    case 'delete':
      // Deleted while in review: the task stays deleted (the person's review todo stays theirs to accept or comment on).
      return task === undefined && (world.taskId !== world.workTaskId || work === undefined || work.phase === 'closed' || work.phase === 'accepting');
    case 'comment':
      return h.sim.listComments(world.taskId).some((c) => c.title === COMMENT) || (task === undefined && h.sim.getTask(world.taskId) === undefined);
    default: {
      const never: never = kind;
      return never;
    }
  }
}

/** Nothing is duplicated: checklist titles, review todos, rework tasks, reminders and the bundle's comments appear once. */
export function duplicates(h: EngineHarness, world: World): string[] {
  const problems: string[] = [];
  const all = h.sim.listTasks(world.listId, { includeCompleted: true });
  for (const task of all) {
    const titles = (task.items ?? []).map((i) => i.title);
    const twice = titles.filter((t, i) => titles.indexOf(t) !== i);
    if (twice.length) problems.push(`items twice on "${task.title}": ${twice.join(', ')}`);
    const texts = h.sim.listComments(task.id).map((c) => c.title).filter((t) => t !== COMMENT);
    const again = texts.filter((t, i) => texts.indexOf(t) !== i);
    if (again.length) problems.push(`comments twice on "${task.title}": ${again.join(' | ')}`);
  }
  for (const prefix of ['🧑‍🔬', '🙋', '返工：']) {
    const open = all.filter((t) => t.title.startsWith(prefix) && t.status === 0);
    if (open.length > 1) problems.push(`${open.length} open tasks starting with ${prefix}`);
  }
  return problems;
}

/** A request of an operation, as recorded in a run without edits. */
export interface Recorded {
  route: string;
  path: string;
  body: unknown;
}

export function record(sim: Simulator): { requests: Recorded[]; stop: () => void } {
  const requests: Recorded[] = [];
  const stop = sim.onRequest((info: SimRequestInfo) => void requests.push({ route: info.route, path: info.path, body: info.body }));
  return { requests, stop };
}

/**
 * The positions where an edit of the checklist (or, when the write carries the title, a rename) can be overwritten:
 * from the read of the Work's task to the writes of it that follow (Dida has no conditional write and `items` replaces
 * the whole checklist). Keys are `<index>:<phase>` with 1-based request indexes.
 */
export function flightWindow(requests: readonly Recorded[], taskId: string): { items: Set<string>; title: Set<string> } {
  const items = new Set<string>();
  const title = new Set<string>();
  const isRead = (r: Recorded) => r.route === 'GET /project/{pid}/task/{tid}' && r.path.endsWith(`/task/${taskId}`);
  const isWrite = (r: Recorded) =>
    (r.route === 'POST /task/{tid}' && r.path === `/task/${taskId}`) || (r.route === 'POST /project/{pid}/task/{tid}/complete' && r.path.includes(`/task/${taskId}/`));
  let lastRead: number | undefined;
  for (let i = 0; i < requests.length; i++) {
    const r = requests[i] as Recorded;
    if (isRead(r)) lastRead = i;
    if (!isWrite(r) || lastRead === undefined) continue;
    const body = (r.body ?? {}) as Record<string, unknown>;
    const carriesItems = 'items' in body || r.route.endsWith('/complete');
    for (let k = lastRead; k <= i; k++) {
      const keys = [...(k > lastRead ? [`${k + 1}:before`] : []), ...(k < i ? [`${k + 1}:after`] : [])];
      for (const key of keys) {
        if (carriesItems) items.add(key);
        if ('title' in body) title.add(key);
      }
    }
    // A write that follows this one at once (ticks, then completing the task) extends the same flight.
    const next = requests[i + 1];
    if (next && isWrite(next)) lastRead = i;
    else lastRead = undefined;
  }
  return { items, title };
}
