// How a failed model request ended, classified once for continuation and for what the bundle writes into Dida:
// continue with backoff, wait until a limit's known reset, or hand the Work to the person at once.
import { CONTINUABLE_CODES } from './continuation-policy';

/** Why a Work needs the person after a model failure (each has its own words in the 🙋 reminder). */
export const NEEDS_PERSON_CAUSES = ['auth', 'quota', 'invalid_request', 'limit', 'unknown'] as const;
export type NeedsPersonCause = (typeof NEEDS_PERSON_CAUSES)[number];

/** Default longest wait for a limit's reset before the Work goes to the person instead (5 hours). */
export const DEFAULT_MAX_WAIT_MS = 5 * 60 * 60_000;

/**
 * A reset further out than this (a month) is no sensible date: a proxy that read a millisecond epoch as seconds, a
 * number out of any range. It is taken as an unknown reset (the backoff goes on), never as a time to tell the person.
 */
export const MAX_RESET_MS = 31 * 24 * 60 * 60_000;

export type StopVerdict =
  /** A continuable failure: backoff and count (see decideContinuation). */
  | { kind: 'continue' }
  /** A limit whose reset is known and lies beyond the backoff: wait until `until` (ms), then continue. */
  | { kind: 'wait_until'; until: number }
  /** Nothing automatic can fix it: the Work waits for the person now. */
  | { kind: 'needs_person'; cause: NeedsPersonCause; /** For `limit`: when the limit resets (ms). */ until?: number };

const AUTH_CODES: ReadonlySet<string> = new Set(['AUTH', 'INVALID_CREDENTIAL', 'MISSING_CREDENTIAL']);
const INVALID_REQUEST_CODES: ReadonlySet<string> = new Set(['INVALID_REQUEST', 'CONTEXT_WINDOW_EXCEEDED', 'HTTP_400', 'HTTP_404', 'HTTP_413', 'HTTP_422']);

export interface StopInput {
  /** dsh's failure code (`RATE_LIMIT`, `QUOTA`, `AUTH`, …); anything it does not know is `unknown`. */
  code: string;
  /** How long the model service asked to wait (its Retry-After), when it said. */
  retryAfterMs?: number;
  now: number;
  /** The backoff the next automatic attempt would wait. */
  nextBackoffMs: number;
  /** Longest wait for a reset (default DEFAULT_MAX_WAIT_MS). */
  maxWaitMs?: number;
}

/**
 * The verdict for a failed request. A continuable code whose known reset lies beyond the next backoff waits until it
 * (no later than `maxWaitMs`; a reset further out needs the person, who is told when it resets; one beyond MAX_RESET_MS
 * is no date at all and continues as an unknown reset); other continuable codes continue. `AUTH` (and malformed or missing credentials), `QUOTA` and `INVALID_REQUEST` (a context too long, a
 * request the service refuses) need the person, and so does every code not known to be continuable.
 */
export function classifyFailure(input: StopInput): StopVerdict {
  const { code } = input;
  if (AUTH_CODES.has(code)) return { kind: 'needs_person', cause: 'auth' };
  if (code === 'QUOTA') return { kind: 'needs_person', cause: 'quota' };
  if (INVALID_REQUEST_CODES.has(code)) return { kind: 'needs_person', cause: 'invalid_request' };
  if (!CONTINUABLE_CODES.has(code)) return { kind: 'needs_person', cause: 'unknown' };
  const wait = input.retryAfterMs;
  if (wait === undefined || !Number.isFinite(wait) || wait <= input.nextBackoffMs || wait > MAX_RESET_MS) return { kind: 'continue' };
  const until = input.now + Math.ceil(wait);
  if (wait > (input.maxWaitMs ?? DEFAULT_MAX_WAIT_MS)) return { kind: 'needs_person', cause: 'limit', until };
  return { kind: 'wait_until', until };
}

/** The locale key of the 🙋 reminder's words for a cause (what stopped it and what the person can do). */
export function causeKey(cause: NeedsPersonCause): `dida.waiting.cause.${NeedsPersonCause}` {
  switch (cause) {
    case 'auth':
    case 'quota':
    case 'invalid_request':
    case 'limit':
    case 'unknown':
      return `dida.waiting.cause.${cause}`;
    default: {
      const never: never = cause;
      throw new Error(`no words for ${String(never)}`);
    }
  }
}
