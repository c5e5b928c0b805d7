// One HTTP exchange with the Open API and its rules: the bearer token, a timeout per request, no redirects followed,
// the answer parsed against its schema, errors classified (DidaError codes), reads retried with backoff or Retry-After,
// and the machine-wide request budget asked before and told after every attempt.
import { sleep } from '../common/abortable-sleep';
import { describeIssues } from '../common/schema-issues';
import type * as z from 'zod/mini';
import { DidaError, adviceFor, codeForAnswer, isDidaError } from './dida-error';
import type { CallOptions } from './dida-gateway';
import { boundedRetryAfter, type RequestGate } from './request-budget';

export interface RetryPolicy {
  /** Extra attempts for idempotent reads (0 = never retry). */
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited for: the error is thrown instead. */
  maxRetryAfterMs: number;
}

export interface AttemptInfo {
  route: string;
  attempt: number;
  status?: number;
  code?: string;
  ms: number;
}

/** Errors of the request gate (a budget that would wait too long): never retried by the gateway itself. */
const UNRETRIED = new WeakSet<object>();

const DEFAULT_RETRY: RetryPolicy = { retries: 3, baseDelayMs: 250, maxDelayMs: 4_000, maxRetryAfterMs: 30_000 };
const EXCERPT_CHARS = 300;

export interface RequestSpec<S extends z.ZodMiniType | undefined> {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  route: string;
  body?: unknown;
  schema: S;
  /** Reads may be retried; writes never are. */
  idempotent: boolean;
}

export type Parsed<S> = S extends z.ZodMiniType ? z.output<S> | undefined : undefined;

export interface TransportOptions {
  token: string;
  baseUrl: string;
  timeoutMs: number;
  retry?: Partial<RetryPolicy> | undefined;
  onAttempt?: ((info: AttemptInfo) => void) | undefined;
  gate?: RequestGate | undefined;
}

export class HttpTransport {
  private readonly baseUrl: string;
  private readonly token: string;
  private readonly timeoutMs: number;
  private readonly retry: RetryPolicy;
  private readonly onAttempt: ((info: AttemptInfo) => void) | undefined;
  private readonly gate: RequestGate | undefined;

  constructor(options: TransportOptions) {
    this.token = options.token;
    this.baseUrl = options.baseUrl;
    this.timeoutMs = options.timeoutMs;
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.onAttempt = options.onAttempt;
    this.gate = options.gate;
  }

  /** Sends the request (reads retried per the policy); resolves with the parsed answer, or throws a DidaError. */
  async send<S extends z.ZodMiniType | undefined>(spec: RequestSpec<S>, options: CallOptions | undefined): Promise<Parsed<S>> {
    const maxAttempts = spec.idempotent ? 1 + Math.max(0, this.retry.retries) : 1;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.attempt(spec, attempt, options?.signal);
      } catch (error) {
        if (!isDidaError(error) || !error.retryable || attempt >= maxAttempts || UNRETRIED.has(error)) throw error;
        // With a gate, the pause after a 429 is the gate's (shared by the machine, bounded by the request's priority).
        const wait = this.gate && error.code === 'rate_limited' ? 0 : this.retryDelay(error, attempt);
        if (wait === undefined) throw error;
        await sleep(wait, options?.signal);
      }
    }
  }

  private retryDelay(error: DidaError, attempt: number): number | undefined {
    if (error.retryAfterMs !== undefined) {
      return error.retryAfterMs > this.retry.maxRetryAfterMs ? undefined : error.retryAfterMs;
    }
    const exp = Math.min(this.retry.maxDelayMs, this.retry.baseDelayMs * 2 ** (attempt - 1));
    return Math.round(exp * (0.5 + Math.random()));
  }

  private async attempt<S extends z.ZodMiniType | undefined>(spec: RequestSpec<S>, attempt: number, callerSignal: AbortSignal | undefined): Promise<Parsed<S>> {
    callerSignal?.throwIfAborted();
    if (!this.gate) return this.exchange(spec, attempt, callerSignal);
    try {
      await this.gate.acquire(spec.route, callerSignal);
    } catch (error) {
      // The budget already waited as long as this request may: the error goes to the caller, not to a retry.
      if (error instanceof Object) UNRETRIED.add(error);
      throw error;
    }
    try {
      const parsed = await this.exchange(spec, attempt, callerSignal);
      await this.gate.observe(spec.route, { status: 200 });
      return parsed;
    } catch (error) {
      await this.gate.observe(spec.route, isDidaError(error) ? { ...(error.status !== undefined ? { status: error.status } : {}), ...(error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {}) } : {});
      throw error;
    }
  }

  /** One HTTP request and its answer (timeout, parse, classification). */
  private async exchange<S extends z.ZodMiniType | undefined>(spec: RequestSpec<S>, attempt: number, callerSignal: AbortSignal | undefined): Promise<Parsed<S>> {
    const started = performance.now();
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), this.timeoutMs);
    const signal = callerSignal ? AbortSignal.any([callerSignal, timeout.signal]) : timeout.signal;
    const report = (status: number | undefined, code: string | undefined) =>
      this.onAttempt?.({ route: spec.route, attempt, status, code, ms: performance.now() - started });
    let status: number | undefined;
    try {
      const headers: Record<string, string> = { authorization: `Bearer ${this.token}`, accept: 'application/json' };
      if (spec.body !== undefined) headers['content-type'] = 'application/json';
      const response = await fetch(this.baseUrl + spec.path, {
        method: spec.method,
        headers,
        body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
        signal,
        // Never follow: a 301/302 would turn a write into a GET whose answer looks like a successful write.
        redirect: 'manual',
      });
      status = response.status;
      const text = await response.text();
      if (status >= 300 && status < 400) throw this.redirectError(spec.route, response);
      if (!response.ok) throw this.httpError(spec.route, response, text);
      const parsed = this.parse(spec, text);
      report(status, undefined);
      return parsed;
    } catch (error) {
      const failure = this.classify(error, spec.route, status, callerSignal, timeout.signal);
      report(status, isDidaError(failure) ? failure.code : 'aborted');
      throw failure;
    } finally {
      clearTimeout(timer);
    }
  }

  private parse<S extends z.ZodMiniType | undefined>(spec: RequestSpec<S>, text: string): Parsed<S> {
    if (spec.schema === undefined || text.trim() === '') return undefined as Parsed<S>;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new DidaError({
        code: 'invalid_response',
        route: spec.route,
        message: `Dida sent a body that is not JSON for ${spec.route} (${text.length} characters; the answer may have been cut off).`,
        bodyExcerpt: this.excerpt(text),
      });
    }
    const result = spec.schema.safeParse(json, { reportInput: true });
    if (!result.success) {
      throw new DidaError({
        code: 'invalid_response',
        route: spec.route,
        message: `Dida's answer to ${spec.route} has an unexpected shape ${describeIssues(result.error.issues)}.`,
        bodyExcerpt: this.excerpt(text),
      });
    }
    return result.data as Parsed<S>;
  }

  private redirectError(route: string, response: Response): DidaError {
    const location = this.excerpt(response.headers.get('location') ?? '') ?? '(no Location header)';
    return new DidaError({
      code: 'invalid_response',
      status: response.status,
      route,
      location,
      message:
        `Dida answered ${response.status} to ${route} with a redirect to ${location}; requests are never sent on to another address, ` +
        'so nothing was changed. Check the Dida region or base URL in the config (it must be the Open API address itself).',
    });
  }

  private httpError(route: string, response: Response, text: string): DidaError {
    const code = codeForAnswer(response.status, text);
    // A wait asked for beyond the ceiling of a pause (hours, a far date) is taken as the ceiling everywhere it is used.
    const asked = parseRetryAfter(response.headers.get('retry-after'));
    const retryAfterMs = asked === undefined ? undefined : boundedRetryAfter(asked);
    const excerpt = this.excerpt(text);
    return new DidaError({
      code,
      status: response.status,
      route,
      retryAfterMs,
      ...(code === 'not_found' ? { notFoundSignal: response.status === 404 ? 'status' : 'error_body' } : {}),
      bodyExcerpt: excerpt,
      message: `Dida answered ${response.status} to ${route}: ${adviceFor(code)}.${excerpt ? ` Server said: ${excerpt}` : ''}`,
    });
  }

  private classify(error: unknown, route: string, status: number | undefined, callerSignal: AbortSignal | undefined, timeoutSignal: AbortSignal): unknown {
    if (isDidaError(error)) return error;
    if (callerSignal?.aborted) return callerSignal.reason;
    if (timeoutSignal.aborted) {
      return new DidaError({ code: 'timeout', route, status, message: `Dida did not answer ${route} within ${this.timeoutMs} ms: ${adviceFor('timeout')}.`, cause: error });
    }
    const detail = describeNetworkError(error);
    return new DidaError({
      code: 'network',
      route,
      status,
      message: `Could not reach Dida for ${route} (${detail}): ${adviceFor('network')}.`,
      cause: error,
    });
  }

  private excerpt(text: string): string | undefined {
    const trimmed = text.trim();
    if (trimmed === '') return undefined;
    const redacted = trimmed.split(this.token).join('<token>');
    return redacted.length > EXCERPT_CHARS ? `${redacted.slice(0, EXCERPT_CHARS)}…` : redacted;
  }
}

/** Retry-After in seconds or as an HTTP date; returns milliseconds. */
export function parseRetryAfter(header: string | null): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } } | undefined)?.cause;
  if (cause?.code) return cause.code;
  if (error instanceof Error) return error.message;
  return 'unknown error';
}

