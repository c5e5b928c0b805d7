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

  constructor(init: DidaErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = init.code;
    this.status = init.status;
    this.route = init.route;
    this.bodyExcerpt = init.bodyExcerpt;
    this.retryAfterMs = init.retryAfterMs;
  }

  /** Whether trying the same request again later may succeed (never for auth, forbidden, not_found, invalid_response). */
  get retryable(): boolean {
    return RETRYABLE.has(this.code);
  }
}

export function isDidaError(value: unknown): value is DidaError {
  return value instanceof DidaError;
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
