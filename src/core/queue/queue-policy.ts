// Queue policy: which Works may run and in what order, the queue grant, and the queue payload shown to the model.
import { createHash } from 'node:crypto';
import type { Task } from '../../dida/types';
import { routeVerdict, type Route } from './route-tags';
import { levelFromPriority, timeGate, type PriorityLevel, type TimeGate } from '../time/schedule';
import { fenceUntrusted, truncateGraphemes, UNTRUSTED_PREAMBLE } from '../text/text-guard';

/** One open Work as the queue sees it; built by the engine from Dida project data plus local state. */
export interface QueueCandidate {
  taskId: string;
  title: string;
  /** Dida priority (0 none = draft, 1 low, 3 medium, 5 high). */
  priority: number;
  sortOrder?: number | null;
  /** Index of the task in Dida's project-data order. */
  order: number;
  task: Pick<Task, 'startDate' | 'dueDate' | 'isAllDay' | 'timeZone' | 'repeatFlag' | 'content' | 'desc'>;
  status: 'open' | 'completed';
  hasPlan: boolean;
  /** Steps neither completed, skipped nor deleted. */
  unsettledSteps: number;
  waitingForHuman: boolean;
  claimedByOtherHost: boolean;
  /** Informational: keepOpen does not make a settled Work executable, it only prevents automatic acceptance. */
  keepOpen?: boolean;
  /** The task's Dida tags (route tags decide which bound directory runs it). */
  tags?: readonly string[] | null;
}

export type SkipReason = 'draft' | 'closed' | 'routed' | 'settled' | 'time_gate' | 'waiting_for_human' | 'claimed';

export type Executability = { ok: true } | { ok: false; reason: SkipReason; gate?: TimeGate; routedTo?: string };

/**
 * Whether the queue may pick `c` at `now` in a directory with `route`. Executable = open, routed here (see
 * `routeVerdict`), not waiting for a person, priority > 0 (0 is a draft), unsettled steps or no plan yet, time gate
 * open (see `timeGate`, in the task's zone or `defaultZone`), and not claimed by another host. The first failing rule
 * in that order is the reason, so a Work waiting for a person (whose priority the engine set to 0) reports
 * `waiting_for_human`, not `draft`, and a Work for another directory reports `routed` whatever else holds it. A
 * `time_gate` result carries the gate; a `routed` one the other binding's tag when one matched.
 */
export function isExecutable(c: QueueCandidate, now: Date, defaultZone: string, route?: Route): Executability {
  if (c.status !== 'open') return { ok: false, reason: 'closed' };
  const routed = routeVerdict(c.tags, route);
  if (!routed.ok) return { ok: false, reason: 'routed', ...(routed.routedTo ? { routedTo: routed.routedTo } : {}) };
  if (c.waitingForHuman) return { ok: false, reason: 'waiting_for_human' };
  if (!(c.priority > 0)) return { ok: false, reason: 'draft' };
  if (c.hasPlan && c.unsettledSteps <= 0) return { ok: false, reason: 'settled' };
  const gate = timeGate(c.task, now, defaultZone);
  if (!gate.open) return { ok: false, reason: 'time_gate', gate };
  if (c.claimedByOtherHost) return { ok: false, reason: 'claimed' };
  return { ok: true };
}

export interface RankedWork {
  /** 1-based position in the queue. */
  position: number;
  level: PriorityLevel;
  candidate: QueueCandidate;
}

export interface SkippedWork {
  reason: SkipReason;
  /** The closed time gate when `reason` is `time_gate`. */
  gate?: TimeGate;
  /** When `reason` is `routed`: the route tag of the other bound directory it belongs to, when known here. */
  routedTo?: string;
  candidate: QueueCandidate;
}

export interface RankedQueue {
  ranked: RankedWork[];
  /** Every candidate not executable, in Dida order. */
  skipped: SkippedWork[];
}

function byDidaOrder(a: QueueCandidate, b: QueueCandidate): number {
  if (a.order !== b.order) return a.order - b.order;
  const sa = a.sortOrder ?? Number.POSITIVE_INFINITY;
  const sb = b.sortOrder ?? Number.POSITIVE_INFINITY;
  if (sa !== sb) return sa < sb ? -1 : 1;
  return a.taskId < b.taskId ? -1 : a.taskId > b.taskId ? 1 : 0;
}

/**
 * The executable candidates (in a directory with `route`) ordered by priority (highest first), then Dida order
 * (`order` ascending; `sortOrder` and then `taskId` only break exact ties so the result is deterministic), and every
 * other candidate with its reason. Pure: the same input always gives the same output.
 */
export function rankQueue(candidates: readonly QueueCandidate[], now: Date, defaultZone: string, route?: Route): RankedQueue {
  const runnable: QueueCandidate[] = [];
  const skipped: SkippedWork[] = [];
  for (const candidate of [...candidates].sort(byDidaOrder)) {
    const verdict = isExecutable(candidate, now, defaultZone, route);
    if (verdict.ok) runnable.push(candidate);
    else skipped.push({ reason: verdict.reason, ...(verdict.gate ? { gate: verdict.gate } : {}), ...(verdict.routedTo ? { routedTo: verdict.routedTo } : {}), candidate });
  }
  runnable.sort((a, b) => b.priority - a.priority || byDidaOrder(a, b));
  return {
    ranked: runnable.map((candidate, index) => ({ position: index + 1, level: levelFromPriority(candidate.priority), candidate })),
    skipped,
  };
}


/** Model-visible wording of the queue payload, taken from the locale. */
export interface QueuePayloadStrings {
  /** First line, e.g. "Executable work, highest priority first:". */
  heading: string;
  /** Shown instead of entries when nothing is executable. */
  empty: string;
  /** Level names, e.g. { none: 'none', low: 'low', medium: 'medium', high: 'high' }. */
  levels: Record<PriorityLevel, string>;
  /** Word introducing the task id, e.g. "id". */
  idLabel: string;
  /** Fence labels; default `title` and `body`. */
  titleLabel?: string;
  bodyLabel?: string;
  /** Word introducing the time the queue was read, e.g. "as of". */
  asOf?: string;
}

export interface QueuePayloadOptions {
  /** Works listed at most (default 20); more are counted. */
  maxEntries?: number;
  strings: QueuePayloadStrings;
  now: Date;
  /** Longest body shown per Work (UTF-16 units, ellipsis included); default 500. */
  maxBodyLength?: number;
  /** Longest title shown per Work; default 200. */
  maxTitleLength?: number;
}

export const DEFAULT_QUEUE_BODY_LENGTH = 500;
const DEFAULT_QUEUE_TITLE_LENGTH = 200;
const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The body a person wrote: `content`, then `desc` when it adds something. */
function bodyOf(task: QueueCandidate['task']): string {
  const content = (task.content ?? '').trim();
  const desc = (task.desc ?? '').trim();
  if (!desc || desc === content) return content;
  if (!content) return desc;
  return `${content}\n\n${desc}`;
}

/**
 * The text given to the model listing the queue in rank order: a heading with the read time, the untrusted-data
 * preamble, then per Work its position, priority level and id (ids that are not plain `[A-Za-z0-9_-]` are left out),
 * its title and its (truncated) body, each in its own untrusted-data fence. An empty queue gives the heading and
 * `strings.empty`.
 */
export function renderQueuePayload(ranked: readonly RankedWork[], opts: QueuePayloadOptions): string {
  const { strings } = opts;
  const maxBody = opts.maxBodyLength ?? DEFAULT_QUEUE_BODY_LENGTH;
  const maxTitle = opts.maxTitleLength ?? DEFAULT_QUEUE_TITLE_LENGTH;
  const stamp = Number.isNaN(opts.now.getTime()) ? '' : opts.now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const head = stamp ? `${strings.heading} (${strings.asOf ?? 'as of'} ${stamp})` : strings.heading;
  if (ranked.length === 0) return `${head}\n${strings.empty}`;
  const lines = [head, UNTRUSTED_PREAMBLE];
  const shown = ranked.slice(0, opts.maxEntries ?? DEFAULT_QUEUE_ENTRIES);
  for (const entry of shown) {
    const { candidate } = entry;
    const id = SAFE_ID.test(candidate.taskId) ? ` · ${strings.idLabel} ${candidate.taskId}` : '';
    lines.push('', `${entry.position}. [${strings.levels[entry.level]}]${id}`);
    lines.push(fenceUntrusted(strings.titleLabel ?? 'title', truncateGraphemes(candidate.title.trim(), maxTitle)));
    const body = bodyOf(candidate.task);
    if (body) lines.push(fenceUntrusted(strings.bodyLabel ?? 'body', truncateGraphemes(body, maxBody)));
  }
  if (ranked.length > shown.length) lines.push('', `… (${ranked.length - shown.length} more Works; take the top one with todo_work next)`);
  return lines.join('\n');
}

/** Works listed in one queue payload at most. */
export const DEFAULT_QUEUE_ENTRIES = 20;

/**
 * The ranked Works in the order one machine among several tries them: by priority as ranked, and within a priority in
 * an order of its own (a hash of its name and the task), so machines that read the same list at the same moment seldom
 * claim the same Work (each lost claim costs requests). Dida order holds where one machine works the list alone.
 */
export function orderForMachine<T extends { candidate: { taskId: string; priority: number } }>(ranked: readonly T[], host: string): T[] {
  const spread = (taskId: string) => createHash('sha256').update(`${host}\n${taskId}`).digest().readUInt32BE(0);
  return ranked
    .map((entry, index) => ({ entry, index, key: spread(entry.candidate.taskId) }))
    .sort((a, b) => b.entry.candidate.priority - a.entry.candidate.priority || a.key - b.key || a.index - b.index)
    .map((x) => x.entry);
}
