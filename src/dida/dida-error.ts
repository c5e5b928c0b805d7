// The typed error every Dida gateway throws for infrastructure faults.

/** Closed set of Dida failure codes; switch on these, never on message text. */
export const DIDA_ERROR_CODES = [
  'auth',
  'forbidden',
  'not_found',
  'rate_limited',
  'server',
  'timeout',
  'network',
  'invalid_response',
] as const;
export type DidaErrorCode = (typeof DIDA_ERROR_CODES)[number];

/**
 * How a `not_found` was recognised, since live Dida signals a missing or deleted task in several ways: a 404
 * (`status`), an empty 2xx where data was expected (`empty_answer`), a task that reads back with `deleted` set
 * (`deleted_flag`), or a 5xx whose body names a missing object or a bad id (`error_body`).
 */
export type NotFoundSignal = 'status' | 'empty_answer' | 'deleted_flag' | 'error_body';

export interface DidaErrorInit {
  code: DidaErrorCode;
  message: string;
  /** HTTP status when the server answered. */
  status?: number;
  /** Route template such as `GET /project/{pid}/data`. */
  route?: string;
  /** First characters of the response body (never contains the token). */
  bodyExcerpt?: string;
  /** Milliseconds the server asked us to wait (Retry-After). */
  retryAfterMs?: number;
  /** For `not_found`: which signal said so. */
  notFoundSignal?: NotFoundSignal;
  /** For a redirect (a 3xx, reported as `invalid_response`): the Location it named, never followed. */
  location?: string;
  cause?: unknown;
}

const RETRYABLE: ReadonlySet<DidaErrorCode> = new Set(['rate_limited', 'server', 'timeout', 'network']);

export class DidaError extends Error {
  override readonly name = 'DidaError';
  readonly code: DidaErrorCode;
  readonly status: number | undefined;
  readonly route: string | undefined;
  readonly bodyExcerpt: string | undefined;
  readonly retryAfterMs: number | undefined;
  readonly notFoundSignal: NotFoundSignal | undefined;
  readonly location: string | undefined;

  constructor(init: DidaErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = init.code;
    this.status = init.status;
    this.route = init.route;
    this.bodyExcerpt = init.bodyExcerpt;
    this.retryAfterMs = init.retryAfterMs;
    this.notFoundSignal = init.notFoundSignal ?? (init.code === 'not_found' && init.status === 404 ? 'status' : undefined);
    this.location = init.location;
  }

  /** Whether trying the same request again later may succeed (never for auth, forbidden, not_found, invalid_response). */
  get retryable(): boolean {
    return RETRYABLE.has(this.code);
  }
}

export function isDidaError(value: unknown): value is DidaError {
  return value instanceof DidaError;
}

/**
 * Words in a Dida error body (`errorCode` or `errorMessage`) that say the id names nothing: a missing or deleted
 * task or list, or an id that is empty or malformed. Live Dida sends such answers with status 500.
 */
const MISSING_WORDS = /not[\s_-]?found|not[\s_-]?exist|no[\s_-]?such|deleted|invalid[\s_-]?(?:object[\s_-]?)?id\b|illegal[\s_-]?(?:object[\s_-]?)?id\b|bad[\s_-]?id\b|malformed|is empty|no handler/i;

/**
 * Whether an error body says "this id names nothing". Only the JSON fields `errorCode`, `errorMessage`, `error`
 * and `message` are read (never free text such as an HTML error page), so a transient 5xx is never mistaken for it.
 */
export function bodySaysMissing(text: string): boolean {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return false;
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return false;
  const record = json as Record<string, unknown>;
  return ['errorCode', 'errorMessage', 'error', 'message'].some((key) => typeof record[key] === 'string' && MISSING_WORDS.test(record[key]));
}

/** The code for an HTTP failure: by status, except that a 5xx whose body says the id names nothing is `not_found`. */
export function codeForAnswer(status: number, body: string): DidaErrorCode {
  if (status >= 500 && bodySaysMissing(body)) return 'not_found';
  return codeForStatus(status);
}

/** Maps an HTTP status to an error code. */
export function codeForStatus(status: number): DidaErrorCode {
  if (status === 401) return 'auth';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not_found';
  if (status === 429) return 'rate_limited';
  if (status === 408) return 'timeout';
  if (status >= 500) return 'server';
  return 'invalid_response';
}

/** The one-line advice shown to a person for each code. */
export function adviceFor(code: DidaErrorCode): string {
  switch (code) {
    case 'auth':
      return 'the Dida token was rejected; run `dida-todo login --token <token>` again';
    case 'forbidden':
      return 'this Dida account may not change that list; check the list is shared with write access';
    case 'not_found':
      return 'the list or task no longer exists in Dida; check the binding with `dida-todo status`';
    case 'rate_limited':
      return 'Dida asked us to slow down; it will be retried later';
    case 'server':
      return 'Dida had a server error; it will be retried later';
    case 'timeout':
      return 'Dida did not answer in time; check the network, it will be retried later';
    case 'network':
      return 'Dida could not be reached; check the network connection';
    case 'invalid_response':
      return 'Dida sent an answer this version cannot read; please report it';
    default: {
      const never: never = code;
      return never;
    }
  }
}
