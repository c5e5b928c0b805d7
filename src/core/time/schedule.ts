// Scheduling rules: calendar days in IANA zones, the time gate, recurring-occurrence keys and priority levels.
import { parseDidaDate } from '../../dida/dida-date';
import type { Task } from '../../dida/types';

/** The zone used when neither the task's zone nor the given fallback is a valid IANA name. */
export const LAST_RESORT_ZONE = 'UTC';

const dayFormatters = new Map<string, Intl.DateTimeFormat | null>();

/** A cached `YYYY-MM-DD` formatter for `zone`, or null when the runtime does not know the zone. */
function dayFormatter(zone: string): Intl.DateTimeFormat | null {
  const cached = dayFormatters.get(zone);
  if (cached !== undefined) return cached;
  let formatter: Intl.DateTimeFormat | null;
  try {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      calendar: 'gregory',
      numberingSystem: 'latn',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
    });
  } catch {
    // RangeError for an unknown time zone name: the caller falls back to another zone.
    formatter = null;
  }
  if (dayFormatters.size > 200) dayFormatters.clear();
  dayFormatters.set(zone, formatter);
  return formatter;
}

/** True when `zone` is a non-empty time zone name the runtime accepts. */
export function isValidTimeZone(zone: string | null | undefined): zone is string {
  return typeof zone === 'string' && zone.trim() !== '' && dayFormatter(zone.trim()) !== null;
}

/** `zone` when valid, else `fallbackZone` when valid, else UTC. Never throws. */
export function resolveTimeZone(zone: string | null | undefined, fallbackZone: string | null | undefined = LAST_RESORT_ZONE): string {
  if (isValidTimeZone(zone)) return zone.trim();
  if (isValidTimeZone(fallbackZone)) return fallbackZone.trim();
  return LAST_RESORT_ZONE;
}

/**
 * The calendar date (`YYYY-MM-DD`) of `instant` as seen in `timeZone`. An invalid zone falls back to
 * `fallbackZone`, then to UTC; an invalid Date gives ''. Never throws.
 */
export function calendarDate(instant: Date, timeZone: string | null | undefined, fallbackZone: string = LAST_RESORT_ZONE): string {
  if (!(instant instanceof Date) || Number.isNaN(instant.getTime())) return '';
  const formatter = dayFormatter(resolveTimeZone(timeZone, fallbackZone)) ?? dayFormatter(LAST_RESORT_ZONE);
  if (!formatter) return instant.toISOString().slice(0, 10);
  let year = '';
  let month = '';
  let day = '';
  for (const part of formatter.formatToParts(instant)) {
    if (part.type === 'year') year = part.value;
    else if (part.type === 'month') month = part.value;
    else if (part.type === 'day') day = part.value;
  }
  return `${year.padStart(4, '0')}-${month}-${day}`;
}

export type TimeGateTask = Pick<Task, 'startDate' | 'dueDate' | 'isAllDay' | 'timeZone'>;
export type TimeGateReason = 'not_today' | 'before_start' | 'missed';

export interface TimeGate {
  open: boolean;
  /** Why the gate is closed; absent when open. */
  reason?: TimeGateReason;
  /** The scheduled calendar day in the task's zone; absent for a task without (readable) dates. */
  day?: string;
}

/** The instant a task is scheduled at: its readable `startDate`, else its readable `dueDate`. */
export function scheduledInstant(task: Pick<Task, 'startDate' | 'dueDate'>): Date | undefined {
  return parseDidaDate(task.startDate) ?? parseDidaDate(task.dueDate);
}

/**
 * Whether a task may be executed at `now`.
 *
 * - No (readable) `startDate` and no `dueDate`: always open.
 * - Otherwise the scheduled day is the calendar day of `startDate ?? dueDate` in the task's own `timeZone`
 *   (an absent or unknown zone falls back to `defaultZone`, the user's zone). The task is open only on that day
 *   in that zone: before it → `not_today`; after it → `missed` (a missed day is never back-filled).
 * - On that day a timed task (not `isAllDay`) is closed before its scheduled instant → `before_start`. With only a
 *   `dueDate`, that instant is the due time (Dida writes a single-time task with start = due).
 * - All-day dates are stored as local midnight of the task's zone expressed in UTC (`2026-12-01T16:00:00+0000` is
 *   2026-12-02 in Asia/Shanghai), so the day is always computed in the zone, never from the UTC date.
 * - Days are compared as zone-local calendar dates, never as 24-hour spans, so DST days of 23 or 25 hours
 *   (America/New_York on 2026-03-08 and 2026-11-01) open and close exactly at local midnight.
 */
export function timeGate(task: TimeGateTask, now: Date, defaultZone: string): TimeGate {
  const instant = scheduledInstant(task);
  if (!instant) return { open: true };
  const zone = resolveTimeZone(task.timeZone, defaultZone);
  const day = calendarDate(instant, zone);
  const today = calendarDate(now, zone);
  if (today < day) return { open: false, reason: 'not_today', day };
  if (today > day) return { open: false, reason: 'missed', day };
  if (task.isAllDay !== true && now.getTime() < instant.getTime()) return { open: false, reason: 'before_start', day };
  return { open: true, day };
}

/** True when the task carries a repeat rule (`RRULE:…` or `ERULE:…`). */
export function isRecurring(task: Pick<Task, 'repeatFlag'>): boolean {
  return typeof task.repeatFlag === 'string' && task.repeatFlag.trim() !== '';
}

/**
 * The occurrence a claim or acceptance belongs to. Recurring task: the calendar day (`YYYY-MM-DD`) of its current
 * `startDate ?? dueDate` in its own zone (fallback `defaultZone`, then UTC) — Dida moves these dates forward when an
 * occurrence is completed, so each occurrence gets a new key. Non-recurring task, or a recurring one without a
 * readable date (Dida drops such rules): ''. Identify an occurrence by `taskId` + key.
 */
export function occurrenceKey(
  task: Pick<Task, 'startDate' | 'dueDate' | 'timeZone' | 'repeatFlag'>,
  defaultZone: string = LAST_RESORT_ZONE,
): string {
  if (!isRecurring(task)) return '';
  const instant = scheduledInstant(task);
  return instant ? calendarDate(instant, resolveTimeZone(task.timeZone, defaultZone)) : '';
}

export type PriorityLevel = 'none' | 'low' | 'medium' | 'high';
export type SettablePriorityLevel = Exclude<PriorityLevel, 'none'>;

const PRIORITY_OF_LEVEL: Record<SettablePriorityLevel, 1 | 3 | 5> = { low: 1, medium: 3, high: 5 };

/** The Dida priority for a level agents may set: low 1, medium 3, high 5. */
export function priorityFromLevel(level: SettablePriorityLevel): 1 | 3 | 5 {
  return PRIORITY_OF_LEVEL[level];
}

/**
 * The level of any priority number Dida may send. Dida documents 0/1/3/5 and calls 2 and 4 invalid; they are read
 * generously by rounding down to the nearest valid level: ≤0 (or not a number) → none, 1–2 → low, 3–4 → medium,
 * 5 and above → high.
 */
export function levelFromPriority(priority: number): PriorityLevel {
  if (priority >= 5) return 'high';
  if (priority >= 3) return 'medium';
  if (priority > 0) return 'low';
  return 'none';
}

/**
 * `at` (ms) as a person reads it in the account's zone: `HH:MM` when it is today there, else `YYYY-MM-DD HH:MM`
 * (plain digits, the same in every locale).
 */
export function localTime(deps: { now: () => number; timeZone?: string }, at: number): string {
  const zone = resolveTimeZone(deps.timeZone);
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).formatToParts(new Date(at));
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  const time = `${part('hour')}:${part('minute')}`;
  return calendarDate(new Date(at), zone) === calendarDate(new Date(deps.now()), zone) ? time : `${part('year')}-${part('month')}-${part('day')} ${time}`;
}

/**
 * The local time of `at` as localTime gives it, or undefined when `at` is no date that can be told (beyond the Date
 * range, not a number, a zone the runtime cannot format): the caller then says what it says in words without a time.
 */
export function localTimeIfAny(deps: { now: () => number; timeZone?: string }, at: number): string | undefined {
  if (!Number.isFinite(at) || Number.isNaN(new Date(at).getTime())) return undefined;
  try {
    return localTime(deps, at);
  } catch {
    // Intl refused the date or the zone: no time to tell.
    return undefined;
  }
}
