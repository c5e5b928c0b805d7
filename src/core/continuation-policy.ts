// Decides whether a session that stopped on a model error is continued automatically, when, and with what words.

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

/** A crash-interrupted turn older than this is not resumed automatically. */
export const CRASH_RECOVERY_WINDOW_MS = 30 * 60_000;

export interface ContinuationInput {
  failureCode: string;
  /** Automatic continuations already made since the last human message. */
  attempts: number;
  maxAutoContinue: number;
  /** Delays in seconds; attempt n waits backoff[min(n, last)]. */
  backoffSeconds: readonly number[];
  /** A Work the session touched is unsettled, a goal is unfinished (not paused), or todo_write items are open. */
  hasUnfinishedWork: boolean;
}

export type ContinuationDecision =
  | { kind: 'continue'; delayMs: number; attempt: number; variant: 'content_filter' | 'error' }
  | { kind: 'stop'; reason: 'off' | 'not_continuable' | 'no_work' | 'exhausted' };

export function decideContinuation(input: ContinuationInput): ContinuationDecision {
  if (input.maxAutoContinue <= 0) return { kind: 'stop', reason: 'off' };
  if (!CONTINUABLE_CODES.has(input.failureCode)) return { kind: 'stop', reason: 'not_continuable' };
  if (!input.hasUnfinishedWork) return { kind: 'stop', reason: 'no_work' };
  if (input.attempts >= input.maxAutoContinue) return { kind: 'stop', reason: 'exhausted' };
  const schedule = input.backoffSeconds.length > 0 ? input.backoffSeconds : [30];
  const seconds = schedule[Math.min(input.attempts, schedule.length - 1)] as number;
  return {
    kind: 'continue',
    delayMs: Math.max(0, Math.round(seconds * 1000)),
    attempt: input.attempts + 1,
    variant: input.failureCode === 'CONTENT_FILTER' ? 'content_filter' : 'error',
  };
}

/** The model-facing note sent with an automatic continuation. */
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

/** Whether a turn left open by a crash at `openSince` should be resumed at `now`. */
export function shouldRecoverCrash(openSince: number | undefined, now: number): boolean {
  return openSince !== undefined && now - openSince >= 0 && now - openSince <= CRASH_RECOVERY_WINDOW_MS;
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
