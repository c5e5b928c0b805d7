// The default Dida gateway: direct HTTPS calls to the Open API with keep-alive, timeouts and read retries.
import { commentAddedAs, projectCreatedAs, taskCreatedAs } from './empty-answer';
import { sleep } from '../common/abortable-sleep';
import type * as z from 'zod/mini';
import * as zm from 'zod/mini';
import { describeIssues } from '../common/schema-issues';
import { readAllCommentPages } from './comment-pages';
import { liveTask, present } from './missing-answer';
import { DidaError, adviceFor, codeForAnswer, isDidaError } from './dida-error';
import type { CallOptions, DidaGateway } from './dida-gateway';
import type { RequestGate } from './request-budget';
import {
  CommentSchema,
  MemberSchema,
  PreferenceSchema,
  ProjectDataSchema,
  ProjectSchema,
  TaskSchema,
  type Comment,
  type NewProject,
  type NewTask,
  type Project,
  type ProjectData,
  type Task,
  type TaskUpdate,
  isDeletedTask,
} from './types';

export type DidaRegion = 'dida365' | 'ticktick';

export const REGION_BASE_URLS: Record<DidaRegion, string> = {
  dida365: 'https://api.dida365.com/open/v1',
  ticktick: 'https://api.ticktick.com/open/v1',
};

export interface RetryPolicy {
  /** Extra attempts for idempotent reads (0 = never retry). */
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited for: the error is thrown instead. */
  maxRetryAfterMs: number;
}

export interface HttpGatewayOptions {
  token: string;
  region?: DidaRegion;
  /** Explicit Open API base URL (e.g. the simulator's); wins over `region`. */
  baseUrl?: string;
  /** Per-request timeout in milliseconds (default 15 s). */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Observes every HTTP attempt (route template, status or error code, milliseconds). */
  onAttempt?: (info: AttemptInfo) => void;
  /** Asked before every HTTP attempt and told how it ended (the machine-wide request budget, request-budget.ts). */
  gate?: RequestGate;
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

interface RequestSpec<S extends z.ZodMiniType | undefined> {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  route: string;
  body?: unknown;
  schema: S;
  /** Reads may be retried; writes never are. */
  idempotent: boolean;
}

type Parsed<S> = S extends z.ZodMiniType ? z.output<S> | undefined : undefined;

/** Creates the HTTP gateway. Throws DidaError `auth` right away when the token is empty or malformed. */
export function createHttpGateway(options: HttpGatewayOptions): DidaGateway {
  return new HttpGateway(options);
}

export function resolveBaseUrl(region: DidaRegion | undefined, baseUrl: string | undefined): string {
  if (baseUrl !== undefined && baseUrl.trim() !== '') {
    let url: URL;
    try {
      url = new URL(baseUrl);
    } catch {
      throw new DidaError({ code: 'network', message: `The Dida base URL "${baseUrl}" is not a valid URL; use e.g. http://127.0.0.1:8080/open/v1.` });
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new DidaError({ code: 'network', message: `The Dida base URL "${baseUrl}" must start with http:// or https://.` });
    }
    return url.toString().replace(/\/+$/, '');
  }
  return REGION_BASE_URLS[region ?? 'dida365'];
}

class HttpGateway implements DidaGateway {
  readonly kind = 'http' as const;
  private readonly baseUrl: string;
  private readonly token: string;
  private readonly timeoutMs: number;
  private readonly retry: RetryPolicy;
  private readonly onAttempt: ((info: AttemptInfo) => void) | undefined;
  private readonly gate: RequestGate | undefined;

  constructor(options: HttpGatewayOptions) {
    const token = typeof options.token === 'string' ? options.token.trim() : '';
    if (token === '' || /[\s\u0000-\u001f\u007f]/.test(token)) {
      throw new DidaError({ code: 'auth', message: `No usable Dida token: ${adviceFor('auth')}.` });
    }
    this.token = token;
    this.baseUrl = resolveBaseUrl(options.region, options.baseUrl);
    this.timeoutMs = options.timeoutMs ?? 15_000;
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.onAttempt = options.onAttempt;
    this.gate = options.gate;
  }

  async listProjects(options?: CallOptions): Promise<Project[]> {
    const projects = await this.send({ method: 'GET', path: '/project', route: 'GET /project', schema: zm.array(ProjectSchema), idempotent: true }, options);
    return projects ?? [];
  }

  async getProject(projectId: string, options?: CallOptions): Promise<Project> {
    const project = await this.send(
      { method: 'GET', path: `/project/${seg(projectId, 'projectId')}`, route: 'GET /project/{pid}', schema: ProjectSchema, idempotent: true },
      options,
    );
    return present(project, 'GET /project/{pid}', projectId);
  }

  async createProject(input: NewProject, options?: CallOptions): Promise<Project> {
    const body = { kind: 'TASK', viewMode: 'list', ...input };
    const project = await this.send({ method: 'POST', path: '/project', route: 'POST /project', body, schema: ProjectSchema, idempotent: false }, options);
    return project ?? projectCreatedAs(this, input, options);
  }

  async deleteProject(projectId: string, options?: CallOptions): Promise<void> {
    await this.send(
      { method: 'DELETE', path: `/project/${seg(projectId, 'projectId')}`, route: 'DELETE /project/{pid}', schema: undefined, idempotent: false },
      options,
    );
  }

  async getProjectData(projectId: string, options?: CallOptions): Promise<ProjectData> {
    const data = await this.send(
      { method: 'GET', path: `/project/${seg(projectId, 'projectId')}/data`, route: 'GET /project/{pid}/data', schema: ProjectDataSchema, idempotent: true },
      options,
    );
    // An empty answer stays an empty list: the caller confirms a missing list with listProjects.
    if (!data) return { project: undefined, tasks: [], columns: [] };
    return { project: data.project, tasks: (data.tasks ?? []).filter((t) => !isDeletedTask(t)), columns: data.columns ?? [] };
  }

  async getTask(projectId: string, taskId: string, options?: CallOptions): Promise<Task> {
    const task = await this.send(
      {
        method: 'GET',
        path: `/project/${seg(projectId, 'projectId')}/task/${seg(taskId, 'taskId')}`,
        route: 'GET /project/{pid}/task/{tid}',
        schema: TaskSchema,
        idempotent: true,
      },
      options,
    );
    return liveTask(task, 'GET /project/{pid}/task/{tid}', taskId);
  }

  async createTask(input: NewTask, options?: CallOptions): Promise<Task> {
    const task = await this.send({ method: 'POST', path: '/task', route: 'POST /task', body: input, schema: TaskSchema, idempotent: false }, options);
    // Empty answer: the task exists but we were not told its id.
    return task ?? taskCreatedAs(this, input, options);
  }

  async updateTask(task: TaskUpdate, options?: CallOptions): Promise<Task> {
    const updated = await this.send(
      { method: 'POST', path: `/task/${seg(task.id, 'task.id')}`, route: 'POST /task/{tid}', body: task, schema: TaskSchema, idempotent: false },
      options,
    );
    return updated ? liveTask(updated, 'POST /task/{tid}', task.id) : this.getTask(task.projectId, task.id, options);
  }

  async completeTask(projectId: string, taskId: string, options?: CallOptions): Promise<void> {
    await this.send(
      {
        method: 'POST',
        path: `/project/${seg(projectId, 'projectId')}/task/${seg(taskId, 'taskId')}/complete`,
        route: 'POST /project/{pid}/task/{tid}/complete',
        schema: undefined,
        idempotent: false,
      },
      options,
    );
  }

  async deleteTask(projectId: string, taskId: string, options?: CallOptions): Promise<void> {
    await this.send(
      {
        method: 'DELETE',
        path: `/project/${seg(projectId, 'projectId')}/task/${seg(taskId, 'taskId')}`,
        route: 'DELETE /project/{pid}/task/{tid}',
        schema: undefined,
        idempotent: false,
      },
      options,
    );
  }

  async listComments(projectId: string, taskId: string, options?: CallOptions): Promise<Comment[]> {
    const path = `/project/${seg(projectId, 'projectId')}/task/${seg(taskId, 'taskId')}/comments`;
    return readAllCommentPages(async (offset, limit) => {
      const page = await this.send(
        { method: 'GET', path: `${path}?offset=${offset}&limit=${limit}`, route: 'GET /project/{pid}/task/{tid}/comments', schema: zm.array(CommentSchema), idempotent: true },
        options,
      );
      if (page) return page;
      // An empty body (not `[]`) may mean the task is gone: getTask throws not_found then.
      await this.getTask(projectId, taskId, options);
      return [];
    });
  }

  async readRawComments(projectId: string, taskId: string, page?: { offset: number; limit: number }, options?: CallOptions): Promise<unknown> {
    const query = page ? `?offset=${page.offset}&limit=${page.limit}` : '';
    return this.send(
      {
        method: 'GET',
        path: `/project/${seg(projectId, 'projectId')}/task/${seg(taskId, 'taskId')}/comments${query}`,
        route: 'GET /project/{pid}/task/{tid}/comments',
        schema: zm.unknown(),
        idempotent: true,
      },
      options,
    );
  }

  async addComment(projectId: string, taskId: string, text: string, options?: CallOptions): Promise<Comment> {
    const comment = await this.send(
      {
        method: 'POST',
        path: `/project/${seg(projectId, 'projectId')}/task/${seg(taskId, 'taskId')}/comment`,
        route: 'POST /project/{pid}/task/{tid}/comment',
        body: { title: text },
        schema: CommentSchema,
        idempotent: false,
      },
      options,
    );
    return comment ?? commentAddedAs(this, projectId, taskId, text, options);
  }

  async deleteComment(projectId: string, taskId: string, commentId: string, options?: CallOptions): Promise<void> {
    await this.send(
      {
        method: 'DELETE',
        path: `/project/${seg(projectId, 'projectId')}/task/${seg(taskId, 'taskId')}/comment/${seg(commentId, 'commentId')}`,
        route: 'DELETE /project/{pid}/task/{tid}/comment/{cid}',
        schema: undefined,
        idempotent: false,
      },
      options,
    );
  }

  async getPreference(options?: CallOptions) {
    // POST but read-only: Dida documents this read as a POST, so it is safe to retry.
    const pref = await this.send({ method: 'POST', path: '/preference', route: 'POST /preference', schema: PreferenceSchema, idempotent: true }, options);
    return required(pref, 'POST /preference');
  }

  async listMembers(projectId: string, options?: CallOptions) {
    const members = await this.send(
      { method: 'GET', path: `/project/${seg(projectId, 'projectId')}/members`, route: 'GET /project/{pid}/members', schema: zm.array(MemberSchema), idempotent: true },
      options,
    );
    return members ?? [];
  }

  async close(): Promise<void> {
    // Sockets belong to Node's shared fetch pool and close themselves when idle.
  }

  private async send<S extends z.ZodMiniType | undefined>(spec: RequestSpec<S>, options: CallOptions | undefined): Promise<Parsed<S>> {
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
    const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
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

function seg(value: string, name: string): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new DidaError({ code: 'not_found', message: `The ${name} is empty; pass the Dida id of an existing list or task.` });
  }
  return encodeURIComponent(value);
}

function required<T>(value: T | undefined, route: string): T {
  if (value === undefined) {
    throw new DidaError({ code: 'invalid_response', route, message: `Dida sent an empty answer to ${route} where data was expected.` });
  }
  return value;
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

