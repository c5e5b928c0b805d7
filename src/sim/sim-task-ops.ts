// Pure task logic of the simulator: validating task bodies, building checklists, recurrence.
import { formatDidaDate, formatDidaDateMillis, parseDidaDate } from '../dida/dida-date';
import { PRIORITIES as DIDA_PRIORITIES, type ChecklistItem, type Task } from '../dida/types';
import { badRequest, isObject, MAX_ITEMS, newId, SORT_STEP, type JsonObject } from './sim-util';

/**
 * Behaviours of the live service that the Open API documentation leaves open; each is a switch so the engine can be
 * proven right under every plausible answer (see SIM_VARIANTS in sim-variants.ts).
 */
export interface SimQuirks {
  /** Live Dida gives every checklist item a new id on every update (default on). */
  rewriteItemIds: boolean;
  /** Live Dida clears `content` when a TEXT task becomes a CHECKLIST via update (default on). */
  clearContentOnChecklist: boolean;
  /**
   * `status` in `POST /task/{tid}`: `ignore` (default) or `honour` (0 re-opens a completed task and keeps its
   * completedTime; 2 completes it; -1 abandons it).
   */
  statusOnUpdate: 'ignore' | 'honour';
  /**
   * How every call on a task deleted with `DELETE` answers (read, update, complete, delete, comments): `404`
   * (default); `readable` (the task as it was plus `"deleted": 1`, writes still applied to it, as a trash);
   * `empty200` (a 200 without a body, nothing applied); `500` (a Dida error body naming the missing task).
   */
  deletedTaskRead: '404' | 'readable' | 'empty200' | '500';
  /** An update body without `title`: `apply` (default) or `ignore` (nothing changes; the task is answered as it is). */
  updateWithoutTitle: 'apply' | 'ignore';
  /** Order of `GET …/comments`: `oldest-first` (default) or `newest-first`. */
  commentOrder: 'oldest-first' | 'newest-first';
  /** Largest page of `GET …/comments` (`?offset=&limit=`, limit capped at this; default 200). */
  commentPageSize: number;
  /**
   * `sortOrder` in `POST /task`: `keep` (default: the task carries the value sent) or `assign` (the value sent is
   * ignored and the task gets the place the server picks, as for a create without one).
   */
  sortOrderOnCreate: 'keep' | 'assign';
  /** Requests per token allowed in any short window (`rateLimitWindowMs`); beyond it a 429 (0, the default: no limit). */
  rateLimitPerMinute: number;
  /** Requests per token allowed in any five short windows (0, the default: no limit). */
  rateLimitPerFiveMinutes: number;
  /** The short window in milliseconds (default 60000: a minute; tests shorten it; the long window is five of it). */
  rateLimitWindowMs: number;
  /** A 429's Retry-After header: `send` (seconds until a request would pass), `omit`, or `alternate` (default). */
  rateLimitRetryAfter: 'send' | 'omit' | 'alternate';
  /** A 429's body: `json` (a Dida error body), `empty`, or `alternate` (default; it alternates every second 429). */
  rateLimitBody: 'json' | 'empty' | 'alternate';
}

export const DEFAULT_QUIRKS: SimQuirks = {
  rewriteItemIds: true,
  clearContentOnChecklist: true,
  statusOnUpdate: 'ignore',
  deletedTaskRead: '404',
  updateWithoutTitle: 'apply',
  commentOrder: 'oldest-first',
  commentPageSize: 200,
  sortOrderOnCreate: 'keep',
  rateLimitPerMinute: 0,
  rateLimitPerFiveMinutes: 0,
  rateLimitWindowMs: 60_000,
  rateLimitRetryAfter: 'alternate',
  rateLimitBody: 'alternate',
};

const STATUS_ON_UPDATE = ['ignore', 'honour'] as const;
const DELETED_TASK_READ = ['404', 'readable', 'empty200', '500'] as const;
const UPDATE_WITHOUT_TITLE = ['apply', 'ignore'] as const;
const COMMENT_ORDER = ['oldest-first', 'newest-first'] as const;
const SORT_ORDER_ON_CREATE = ['keep', 'assign'] as const;
const RATE_LIMIT_RETRY_AFTER = ['send', 'omit', 'alternate'] as const;
const RATE_LIMIT_BODY = ['json', 'empty', 'alternate'] as const;

function oneOf<T extends string>(name: string, allowed: readonly T[], value: unknown): T {
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw new Error(`simulator quirk ${name} must be one of ${allowed.join(', ')} (got ${JSON.stringify(value)})`);
}

/** `base` with the fields of `patch` that are set; throws an Error naming a quirk whose value is not allowed. */
export function mergeQuirks(base: SimQuirks, patch: Partial<SimQuirks> | undefined): SimQuirks {
  const out = { ...base };
  if (!patch) return out;
  for (const key of ['rewriteItemIds', 'clearContentOnChecklist'] as const) {
    if (patch[key] === undefined) continue;
    if (typeof patch[key] !== 'boolean') throw new Error(`simulator quirk ${key} must be true or false`);
    out[key] = patch[key];
  }
  if (patch.statusOnUpdate !== undefined) out.statusOnUpdate = oneOf('statusOnUpdate', STATUS_ON_UPDATE, patch.statusOnUpdate);
  if (patch.deletedTaskRead !== undefined) out.deletedTaskRead = oneOf('deletedTaskRead', DELETED_TASK_READ, patch.deletedTaskRead);
  if (patch.updateWithoutTitle !== undefined) out.updateWithoutTitle = oneOf('updateWithoutTitle', UPDATE_WITHOUT_TITLE, patch.updateWithoutTitle);
  if (patch.commentOrder !== undefined) out.commentOrder = oneOf('commentOrder', COMMENT_ORDER, patch.commentOrder);
  if (patch.sortOrderOnCreate !== undefined) out.sortOrderOnCreate = oneOf('sortOrderOnCreate', SORT_ORDER_ON_CREATE, patch.sortOrderOnCreate);
  if (patch.commentPageSize !== undefined) {
    if (!Number.isInteger(patch.commentPageSize) || patch.commentPageSize < 1) {
      throw new Error(`simulator quirk commentPageSize must be a positive integer (got ${JSON.stringify(patch.commentPageSize)})`);
    }
    out.commentPageSize = patch.commentPageSize;
  }
  for (const key of ['rateLimitPerMinute', 'rateLimitPerFiveMinutes'] as const) {
    if (patch[key] === undefined) continue;
    if (!Number.isInteger(patch[key]) || patch[key] < 0) throw new Error(`simulator quirk ${key} must be a whole number ≥ 0 (got ${JSON.stringify(patch[key])})`);
    out[key] = patch[key];
  }
  if (patch.rateLimitWindowMs !== undefined) {
    if (!Number.isInteger(patch.rateLimitWindowMs) || patch.rateLimitWindowMs < 1) {
      throw new Error(`simulator quirk rateLimitWindowMs must be a positive integer (got ${JSON.stringify(patch.rateLimitWindowMs)})`);
    }
    out.rateLimitWindowMs = patch.rateLimitWindowMs;
  }
  if (patch.rateLimitRetryAfter !== undefined) out.rateLimitRetryAfter = oneOf('rateLimitRetryAfter', RATE_LIMIT_RETRY_AFTER, patch.rateLimitRetryAfter);
  if (patch.rateLimitBody !== undefined) out.rateLimitBody = oneOf('rateLimitBody', RATE_LIMIT_BODY, patch.rateLimitBody);
  return out;
}

/** Fields the server owns: a request body can never set them on a task. */
const SERVER_TASK_FIELDS = new Set(['id', 'projectId', 'etag', 'createdTime', 'modifiedTime', 'kind', 'status', 'completedTime', 'deleted']);

/** Task statuses an update may set when `statusOnUpdate` is `honour`: open, completed, abandoned. */
export const UPDATABLE_STATUSES: ReadonlySet<unknown> = new Set([0, 2, -1]);

/**
 * Live Dida silently drops a repeat rule on a task with neither a start nor a due date; applied to the task as
 * it results from a create or update.
 */
export function dropUndatedRepeat(task: Task): void {
  const dated = (value: unknown) => typeof value === 'string' && value !== '';
  if (typeof task.repeatFlag === 'string' && task.repeatFlag !== '' && !dated(task.startDate) && !dated(task.dueDate)) delete task.repeatFlag;
}

const PRIORITIES = new Set<number>(DIDA_PRIORITIES);

/** Checks the typed fields of a create/update body; unknown fields are accepted as they are. */
export function validateTaskBody(body: JsonObject): void {
  if ('priority' in body && body.priority !== null && (typeof body.priority !== 'number' || !PRIORITIES.has(body.priority))) {
    throw badRequest(`priority must be 0, 1, 3 or 5 (got ${JSON.stringify(body.priority)})`, 'invalid_priority');
  }
  for (const key of ['title', 'content', 'desc', 'startDate', 'dueDate', 'timeZone', 'repeatFlag'] as const) {
    if (key in body && body[key] !== null && typeof body[key] !== 'string') throw badRequest(`${key} must be a string`);
  }
  if ('isAllDay' in body && body.isAllDay !== null && typeof body.isAllDay !== 'boolean') throw badRequest('isAllDay must be a boolean');
  if ('sortOrder' in body && body.sortOrder !== null && typeof body.sortOrder !== 'number') throw badRequest('sortOrder must be a number');
  for (const key of ['tags', 'reminders'] as const) {
    const value = body[key];
    if (key in body && value !== null && (!Array.isArray(value) || value.some((v) => typeof v !== 'string'))) {
      throw badRequest(`${key} must be an array of strings`);
    }
  }
  for (const key of ['startDate', 'dueDate'] as const) {
    const value = body[key];
    if (typeof value === 'string' && value !== '' && parseDidaDate(value) === undefined) throw badRequest(`${key} is not a date`);
  }
  if ('items' in body && body.items !== null) {
    if (!Array.isArray(body.items)) throw badRequest('items must be an array');
    if (body.items.length > MAX_ITEMS) {
      throw badRequest(`a checklist holds at most ${MAX_ITEMS} items (got ${body.items.length})`, 'exceed_quota');
    }
    body.items.forEach((item: unknown, i: number) => {
      if (!isObject(item)) throw badRequest(`items[${i}] must be an object`);
      if ('title' in item && item.title !== null && typeof item.title !== 'string') throw badRequest(`items[${i}].title must be a string`);
      if ('status' in item && item.status !== null && typeof item.status !== 'number') throw badRequest(`items[${i}].status must be a number`);
    });
  }
}

/** The body fields a client may write, in body order (unknown fields included so they round-trip). */
export function writableFields(body: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(body)) {
    if (!SERVER_TASK_FIELDS.has(key) && value !== undefined) out[key] = value;
  }
  return out;
}

/**
 * Builds the stored checklist from a body's `items`. Items whose `id` names an existing item keep that item's
 * fields, overlaid by the body's; items without an id (or an unknown id) are new and get a fresh id.
 * With `rewriteIds` every item ends up with a fresh id, as live Dida does.
 */
export function buildItems(bodyItems: unknown[], existing: ChecklistItem[], rewriteIds: boolean): ChecklistItem[] {
  const byId = new Map(existing.filter((it) => typeof it.id === 'string').map((it) => [it.id as string, it]));
  return bodyItems.map((raw, index) => {
    const input = raw as JsonObject;
    const old = typeof input.id === 'string' ? byId.get(input.id) : undefined;
    const merged: JsonObject = old ? { ...old, ...input } : { ...input };
    if (!old || rewriteIds) merged.id = newId();
    if (typeof merged.title !== 'string') merged.title = '';
    if (typeof merged.status !== 'number') merged.status = 0;
    if (typeof merged.isAllDay !== 'boolean') merged.isAllDay = false;
    if (typeof merged.sortOrder !== 'number') merged.sortOrder = index * SORT_STEP;
    return merged as ChecklistItem;
  });
}

/** `CHECKLIST` when the task has items, else `TEXT` (a `NOTE` stays a note). */
export function kindFor(items: unknown, previous?: unknown): string {
  if (previous === 'NOTE') return 'NOTE';
  return Array.isArray(items) && items.length > 0 ? 'CHECKLIST' : 'TEXT';
}

const FREQ_RE = /(?:^|[:;])FREQ=(DAILY|WEEKLY|MONTHLY|YEARLY)(?:;|$)/;
const INTERVAL_RE = /(?:^|[:;])INTERVAL=(\d+)(?:;|$)/;

/**
 * The dates of the next occurrence of a repeating task, or undefined when it does not repeat in a way the
 * simulator models (RRULE with FREQ=DAILY/WEEKLY/MONTHLY/YEARLY and INTERVAL, on a task with a start or due date).
 */
export function nextOccurrence(task: Task): { startDate?: string; dueDate?: string } | undefined {
  const rule = typeof task.repeatFlag === 'string' ? task.repeatFlag : '';
  if (!rule.startsWith('RRULE:')) return undefined;
  const freq = FREQ_RE.exec(rule)?.[1];
  if (!freq) return undefined;
  const interval = Math.max(1, Number(INTERVAL_RE.exec(rule)?.[1] ?? '1'));
  const out: { startDate?: string; dueDate?: string } = {};
  for (const key of ['startDate', 'dueDate'] as const) {
    const raw = task[key];
    const date = parseDidaDate(raw);
    if (!date || typeof raw !== 'string') continue;
    const next = advance(date, freq, interval);
    out[key] = /\.\d{3}/.test(raw) ? formatDidaDateMillis(next) : formatDidaDate(next);
  }
  return out.startDate === undefined && out.dueDate === undefined ? undefined : out;
}

function advance(date: Date, freq: string, interval: number): Date {
  const next = new Date(date.getTime());
  if (freq === 'DAILY') next.setUTCDate(next.getUTCDate() + interval);
  else if (freq === 'WEEKLY') next.setUTCDate(next.getUTCDate() + 7 * interval);
  else addMonths(next, freq === 'MONTHLY' ? interval : 12 * interval);
  return next;
}

/** Adds months, clamping the day to the target month's length (Jan 31 + 1 month = Feb 28). */
function addMonths(date: Date, months: number): void {
  const day = date.getUTCDate();
  date.setUTCDate(1);
  date.setUTCMonth(date.getUTCMonth() + months);
  const lastDay = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 0)).getUTCDate();
  date.setUTCDate(Math.min(day, lastDay));
}
