// The default Dida gateway: the Open API's routes as direct HTTPS calls (the transport, http-transport.ts, keeps the
// connection, the timeouts, the read retries and the request budget).
import { commentAddedAs, projectCreatedAs, taskCreatedAs } from './empty-answer';
import type * as z from 'zod/mini';
import * as zm from 'zod/mini';
import { readAllCommentPages } from './comment-pages';
import { liveTask, present } from './missing-answer';
import { DidaError, adviceFor } from './dida-error';
import type { CallOptions, DidaGateway } from './dida-gateway';
import type { RequestGate } from './request-budget';
import { HttpTransport, type AttemptInfo, type Parsed, type RequestSpec, type RetryPolicy } from './http-transport';
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
  private readonly transport: HttpTransport;

  constructor(options: HttpGatewayOptions) {
    const token = typeof options.token === 'string' ? options.token.trim() : '';
    if (token === '' || /[\s\u0000-\u001f\u007f]/.test(token)) {
      throw new DidaError({ code: 'auth', message: `No usable Dida token: ${adviceFor('auth')}.` });
    }
    this.transport = new HttpTransport({
      token,
      baseUrl: resolveBaseUrl(options.region, options.baseUrl),
      timeoutMs: options.timeoutMs ?? 15_000,
      retry: options.retry,
      onAttempt: options.onAttempt,
      gate: options.gate,
    });
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

  private send<S extends z.ZodMiniType | undefined>(spec: RequestSpec<S>, options: CallOptions | undefined): Promise<Parsed<S>> {
    return this.transport.send(spec, options);
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
