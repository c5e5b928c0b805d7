// Decides whether stopped work is continued automatically (after a model error or a crash), when, with what words,
// and which events start the count of consecutive failures afresh.
import { CRASH_RECOVERY_WINDOW_MS } from './recovery-window';
import { SETTLED, visibleSteps, type EngineState, type WorkRecord } from '../work/work-state';

/** Failure codes worth another try after dsh's own retries gave up (or never applied, as for content filters). */
export const CONTINUABLE_CODES: ReadonlySet<string> = new Set([
  'RATE_LIMIT',
  'SERVER',
  'TIMEOUT',
  'TRANSPORT',
  'EMPTY_RESPONSE',
  'CONTENT_FILTER',
  'INSUFFICIENT_SYSTEM_RESOURCE',
]);


/** Used when the configured schedule is empty. */
const FALLBACK_DELAY_SECONDS = 30;

/**
 * The wait before automatic attempt `attempts + 1`: `backoff[attempts]`, the last entry repeating once the schedule
 * runs out. Negative or non-finite entries wait nothing.
 */
export function backoffDelayMs(backoffSeconds: readonly number[], attempts: number): number {
  const schedule = backoffSeconds.length > 0 ? backoffSeconds : [FALLBACK_DELAY_SECONDS];
  const index = Math.min(Math.max(0, Math.floor(attempts)), schedule.length - 1);
  const seconds = schedule[index] as number;
  return Number.isFinite(seconds) && seconds > 0 ? Math.round(seconds * 1000) : 0;
}

export interface ContinuationInput {
  failureCode: string;
  /** Consecutive automatic continuations already made in this stretch of work. */
  attempts: number;
  maxAutoContinue: number;
  /** Delays in seconds; see `backoffDelayMs`. */
  backoffSeconds: readonly number[];
  /** See `hasUnfinishedWork`. */
  hasUnfinishedWork: boolean;
}

export type ContinuationDecision =
  | { kind: 'continue'; delayMs: number; attempt: number; variant: 'content_filter' | 'error' }
  | { kind: 'stop'; reason: 'off' | 'not_continuable' | 'no_work' | 'exhausted' };

/** After dsh's own retries: continue (after `delayMs`) or stop, and why. `maxAutoContinue` 0 is always off. */
export function decideContinuation(input: ContinuationInput): ContinuationDecision {
  if (input.maxAutoContinue <= 0) return { kind: 'stop', reason: 'off' };
  if (!CONTINUABLE_CODES.has(input.failureCode)) return { kind: 'stop', reason: 'not_continuable' };
  if (!input.hasUnfinishedWork) return { kind: 'stop', reason: 'no_work' };
  if (input.attempts >= input.maxAutoContinue) return { kind: 'stop', reason: 'exhausted' };
  return {
    kind: 'continue',
    delayMs: backoffDelayMs(input.backoffSeconds, input.attempts),
    attempt: input.attempts + 1,
    variant: input.failureCode === 'CONTENT_FILTER' ? 'content_filter' : 'error',
  };
}

/** The model-facing note carried by an automatic continuation (distinct for every attempt). */
export function continuationMessage(decision: Extract<ContinuationDecision, { kind: 'continue' }>, max: number, failureCode: string): string {
  const head = `[dida-todo] Automatic continuation ${decision.attempt}/${max}: the previous model request stopped (${failureCode}) before the work was finished.`;
  if (decision.variant === 'content_filter') {
    return `${head} The answer was cut by the content filter. Do not repeat the same wording: rephrase, leave out the part that triggered the filter, and carry on with the unfinished steps.`;
  }
  return `${head} Carry on from where you stopped; check the current steps with todo list before repeating anything.`;
}

/** The note sent when a turn interrupted by a crash or shutdown is resumed. */
export const RECOVERY_MESSAGE =
  '[dida-todo] The previous turn was interrupted (the harness stopped before it finished). Check the current steps with todo list and carry on with the unfinished work; do not redo completed steps.';

export interface RecoveryInput {
  /** When the interrupted turn opened (undefined: no turn was left open). */
  openSince: number | undefined;
  now: number;
  /** Whether the process that ran the turn is still alive (then it was not interrupted). */
  ownerAlive: boolean;
  attempts: number;
  maxAutoContinue: number;
  backoffSeconds: readonly number[];
  hasUnfinishedWork: boolean;
  /** The turn was waiting for a limit's reset until this time (ms): it resumes then, and its window runs from then. */
  waitUntil?: number;
}

export type RecoveryDecision =
  | { kind: 'resume'; delayMs: number; attempt: number }
  | { kind: 'skip'; reason: 'off' | 'not_interrupted' | 'owner_alive' | 'stale' | 'no_work' | 'exhausted' };

/**
 * Whether a session whose turn was left open is resumed: never when `maxAutoContinue` is 0, when no turn is open,
 * when its process still runs, when the turn opened more than 30 minutes ago (or in the future), when it has no
 * unfinished work, or when the stretch already used every attempt. A resume is an automatic attempt: it waits the
 * backoff for the attempts made so far and counts one more. A turn that was waiting for a limit's reset (`waitUntil`)
 * resumes at the reset (the attempt was counted when the wait began), and its 30 minutes run from the reset.
 */
export function decideRecovery(input: RecoveryInput): RecoveryDecision {
  if (input.maxAutoContinue <= 0) return { kind: 'skip', reason: 'off' };
  if (input.openSince === undefined) return { kind: 'skip', reason: 'not_interrupted' };
  if (input.ownerAlive) return { kind: 'skip', reason: 'owner_alive' };
  const waitUntil = input.waitUntil !== undefined && input.waitUntil >= input.openSince ? input.waitUntil : undefined;
  const since = waitUntil !== undefined ? Math.min(waitUntil, input.now) : input.openSince;
  const age = input.now - since;
  if (age < 0 || age > CRASH_RECOVERY_WINDOW_MS) return { kind: 'skip', reason: 'stale' };
  if (!input.hasUnfinishedWork) return { kind: 'skip', reason: 'no_work' };
  if (waitUntil !== undefined) return { kind: 'resume', delayMs: Math.max(0, waitUntil - input.now), attempt: Math.max(1, input.attempts) };
  if (input.attempts >= input.maxAutoContinue) return { kind: 'skip', reason: 'exhausted' };
  return { kind: 'resume', delayMs: backoffDelayMs(input.backoffSeconds, input.attempts), attempt: input.attempts + 1 };
}

/**
 * How a turn ended, by dsh's `turn/end` reason kind: `finished` (completed), `failed` (a model error), `stopped`
 * (aborted, blocked, out of tokens, interrupted by a crash), or `other` for a kind this bundle does not know (a newer
 * dsh's `forked`): neither a failure nor a finished turn.
 */
export type TurnEnding = 'finished' | 'failed' | 'stopped' | 'other';

export function turnEnding(kind: string): TurnEnding {
  switch (kind) {
    case 'completed':
      return 'finished';
    case 'error':
      return 'failed';
    case 'aborted':
    case 'blocked':
    case 'max-tokens':
    case 'interrupted':
      return 'stopped';
    default:
      return 'other';
  }
}

/** What happened in a session, as far as the continuation counter is concerned. */
export type StretchEvent =
  | { kind: 'human_message' }
  | { kind: 'turn_end'; reason: string }
  | { kind: 'step_changed' }
  /** The poller or a queue grant handed the session new work: a new stretch begins. */
  | { kind: 'new_work' }
  /** Every attempt was used and the Work now waits for a person. */
  | { kind: 'exhausted' }
  | { kind: 'continued' };

/**
 * Whether `event` ends the stretch of consecutive failures, so the next failure is attempt 1 again: a person's
 * message, a turn that completed normally, a step that changed, new work handed over, or an exhaustion that handed
 * the Work to a person. A failed, aborted or interrupted turn and an automatic continuation keep counting.
 */
export function resetsCounter(event: StretchEvent): boolean {
  switch (event.kind) {
    case 'human_message':
    case 'step_changed':
    case 'new_work':
    case 'exhausted':
      return true;
    case 'turn_end':
      return turnEnding(event.reason) === 'finished';
    case 'continued':
      return false;
  }
}

/** Goal phases that still want the session to work on their own (`paused`, `blocked` and `complete` do not). */
export function goalWantsWork(phase: string | undefined): boolean {
  return phase === 'active';
}

/**
 * Whether a Work the session touched is still to be done: open (not sent for review), not waiting for a person, and
 * either without a plan yet or with a step that is neither completed nor skipped.
 */
export function touchedWorkUnfinished(state: EngineState, sessionId: string): boolean {
  const touched = state.sessions[sessionId]?.touched ?? [];
  return touched.some((key) => workUnfinished(state.works[key]));
}

/**
 * Whether one Work is still to be done, the same on every path (continuation, crash recovery, a failure that needs the
 * person, exhaustion): open, not waiting for a person, and without a plan yet or with a step neither completed nor
 * skipped. A settled Work is finished: it goes to review, and no failure is flagged on it.
 */
export function workUnfinished(work: WorkRecord | undefined): boolean {
  if (!work || work.phase !== 'open' || work.waiting) return false;
  const steps = visibleSteps(work);
  return steps.length === 0 || steps.some((s) => !SETTLED.has(s.status));
}

/** What only the host knows about a session's own work, live or as the turn marker recorded it before a crash. */
export interface SessionWorkFacts {
  /** The model's own todo_write items not completed. */
  modelTodosOpen: number;
  /** The phase of the session's goal, if it has one. */
  goalPhase?: string;
}

/** Which kind of unfinished work keeps a session going: a Work it touched, its goal, or its open todo_write items. */
export type UnfinishedKind = 'work' | 'goal' | 'todos';

/**
 * The one notion of unfinished work, used by continuation after a model error, by crash recovery and at exhaustion: a
 * Work the session touched that is unfinished (see touchedWorkUnfinished), an active goal the person did not pause,
 * or open todo_write items. Undefined when the session has none.
 */
export function unfinishedWork(state: EngineState, sessionId: string, facts: SessionWorkFacts): UnfinishedKind | undefined {
  if (touchedWorkUnfinished(state, sessionId)) return 'work';
  if (goalWantsWork(facts.goalPhase)) return 'goal';
  if (facts.modelTodosOpen > 0) return 'todos';
  return undefined;
}

/** Waits `ms`, ending early (false) when any signal aborts; true when the full time passed. */
export function waitUnlessAborted(ms: number, signals: readonly (AbortSignal | undefined)[]): Promise<boolean> {
  return new Promise((resolve) => {
    const live = signals.filter((s): s is AbortSignal => !!s);
    if (live.some((s) => s.aborted)) return resolve(false);
    const done = (value: boolean) => {
      clearTimeout(timer);
      for (const s of live) s.removeEventListener('abort', onAbort);
      resolve(value);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    for (const s of live) s.addEventListener('abort', onAbort, { once: true });
  });
}
