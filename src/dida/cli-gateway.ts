// The Dida gateway that drives an installed `dida` command (@suibiji/dida-cli) and validates what it prints.
import { commentAddedAs, projectCreatedAs, taskCreatedAs } from './empty-answer';
import { sleep } from '../common/abortable-sleep';
import * as z from 'zod/mini';
import { CliProcessRunner, PERMANENT_FAILURES } from './cli-process';
import { sortComments } from './comment-pages';
import { DidaError, isDidaError } from './dida-error';
import { commandLabel, id, taskFlags, text } from './cli-args';
import { interpret, type CommandSpec, type Parsed, type Schema } from './cli-output';
import type { CallOptions, DidaGateway } from './dida-gateway';
import { liveTask, present } from './missing-answer';
import type { RequestGate } from './request-budget';
import {
  CommentSchema,
  ProjectDataSchema,
  ProjectSchema,
  TaskSchema,
  type Comment,
  type Member,
  type NewProject,
  type NewTask,
  type Preference,
  type Project,
  type ProjectData,
  type Task,
  type TaskUpdate,
  isDeletedTask,
} from './types';

export interface CliGatewayOptions {
  /** The executable to run: a name looked up on PATH, or a full path (default `dida`). Never run through a shell. */
  command?: string;
  /** The child's whole environment (default `process.env`). The CLI reads its token from `$HOME/.config/dida-cli/config.json`. */
  env?: NodeJS.ProcessEnv;
  /** Deadline for one command in milliseconds (default 20 s); the child is killed when it passes. */
  timeoutMs?: number;
  /** Combined stdout + stderr bytes allowed per command (default 8 MiB); above it the child is killed. */
  maxOutputBytes?: number;
  cwd?: string;
  /** Time between SIGTERM and SIGKILL when a child must be stopped (default 2 s). */
  killGraceMs?: number;
  /** Extra attempts for idempotent reads after a `server`, `rate_limited` or CLI-reported `network` error (default 1). */
  readRetries?: number;
  /** Pause before a read is retried (default 300 ms). */
  retryDelayMs?: number;
  /** The IANA zone `getPreference` reports (default: this process's zone, see getPreference). */
  timeZone?: string;
  /** Asked before every `dida` command and told how it ended (the machine-wide request budget, request-budget.ts). */
  gate?: RequestGate;
}

const DEFAULT_TIMEOUT_MS = 20_000;
const DEFAULT_MAX_OUTPUT_BYTES = 8 * 1024 * 1024;

/**
 * Creates the CLI gateway. Every method runs one `dida … --json` command with `child_process.spawn` (argv only, so
 * titles and texts reach Dida verbatim) and validates the printed JSON with the wire schemas.
 *
 * Retries: only idempotent reads are retried, at most `readRetries` times (default once), and only after `server`,
 * `rate_limited` or a network failure the CLI itself reported; a missing command, auth, 4xx, timeouts and all writes
 * are never retried (a timed-out write may already have reached Dida).
 *
 * CLI limits, inherent to `@suibiji/dida-cli`: it cannot send `isAllDay:false`, `status`, or empty `reminders`/`tags`
 * (an omitted flag keeps the field), tags and reminders containing a comma cannot be sent, and unknown task fields
 * other than checklist items are not sent back (items travel as JSON, so their ids and unknown fields are kept).
 * `task comment list` takes no paging options, so only the first page Dida answers is seen (then sorted by
 * createdTime like the HTTP gateway), and the CLI's own fetch follows redirects, which this gateway cannot stop.
 */

export function createCliGateway(options: CliGatewayOptions = {}): DidaGateway {
  return new CliGateway(options);
}

class CliGateway implements DidaGateway {
  readonly kind = 'cli' as const;
  private readonly command: string;
  private readonly env: NodeJS.ProcessEnv;
  private readonly cwd: string | undefined;
  private readonly timeoutMs: number;
  private readonly maxOutputBytes: number;
  private readonly killGraceMs: number;
  private readonly readRetries: number;
  private readonly retryDelayMs: number;
  private readonly timeZone: string | undefined;
  private readonly gate: RequestGate | undefined;
  private readonly runner = new CliProcessRunner();

  constructor(options: CliGatewayOptions) {
    this.command = options.command?.trim() || 'dida';
    this.env = options.env ?? process.env;
    this.cwd = options.cwd;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxOutputBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    this.killGraceMs = options.killGraceMs ?? 2_000;
    this.readRetries = Math.max(0, options.readRetries ?? 1);
    this.retryDelayMs = options.retryDelayMs ?? 300;
    this.timeZone = options.timeZone;
    this.gate = options.gate;
  }

  async listProjects(options?: CallOptions): Promise<Project[]> {
    const projects = await this.run(
      { args: ['project', 'list', '--json'], route: 'GET /project', schema: z.array(ProjectSchema), idempotent: true },
      options,
    );
    return projects ?? [];
  }

  async getProject(projectId: string, options?: CallOptions): Promise<Project> {
    const project = await this.run(
      { args: ['project', 'get', id(projectId, 'projectId'), '--json'], route: 'GET /project/{pid}', schema: ProjectSchema, idempotent: true },
      options,
    );
    return present(project, 'GET /project/{pid}', projectId);
  }

  async deleteProject(projectId: string, options?: CallOptions): Promise<void> {
    await this.run({ args: ['project', 'delete', id(projectId, 'projectId')], route: 'DELETE /project/{pid}', schema: undefined, idempotent: false }, options);
  }

  async createProject(input: NewProject, options?: CallOptions): Promise<Project> {
    const args = ['project', 'create', '--name', text(input.name, 'name')];
    if (input.color) args.push('--color', input.color);
    args.push('--view-mode', input.viewMode ?? 'list', '--kind', input.kind ?? 'TASK', '--json');
    const project = await this.run({ args, route: 'POST /project', schema: ProjectSchema, idempotent: false }, options);
    return project ?? projectCreatedAs(this, input, options);
  }

  async getProjectData(projectId: string, options?: CallOptions): Promise<ProjectData> {
    const data = await this.run(
      { args: ['project', 'data', id(projectId, 'projectId'), '--json'], route: 'GET /project/{pid}/data', schema: ProjectDataSchema, idempotent: true },
      options,
    );
    if (!data) return { project: undefined, tasks: [], columns: [] };
    return { project: data.project, tasks: (data.tasks ?? []).filter((t) => !isDeletedTask(t)), columns: data.columns ?? [] };
  }

  async getTask(projectId: string, taskId: string, options?: CallOptions): Promise<Task> {
    const task = await this.run(
      {
        args: ['task', 'get', id(projectId, 'projectId'), id(taskId, 'taskId'), '--json'],
        route: 'GET /project/{pid}/task/{tid}',
        schema: TaskSchema,
        idempotent: true,
      },
      options,
    );
    return liveTask(task, 'GET /project/{pid}/task/{tid}', taskId);
  }

  async createTask(input: NewTask, options?: CallOptions): Promise<Task> {
    const args = ['task', 'create', '--title', text(input.title, 'title'), '--project', id(input.projectId, 'projectId')];
    args.push(...taskFlags(input, 'create'), '--json');
    const task = await this.run({ args, route: 'POST /task', schema: TaskSchema, idempotent: false }, options);
    // Empty answer: the task exists but we were not told its id.
    return task ?? taskCreatedAs(this, input, options);
  }

  async updateTask(task: TaskUpdate, options?: CallOptions): Promise<Task> {
    const taskId = id(task.id, 'task.id');
    const projectId = id(task.projectId, 'task.projectId');
    const args = ['task', 'update', taskId, '--id', taskId, '--project', projectId];
    if (typeof task.title === 'string') args.push('--title', text(task.title, 'title'));
    args.push(...taskFlags(task, 'update'), '--json');
    const updated = await this.run({ args, route: 'POST /task/{tid}', schema: TaskSchema, idempotent: false }, options);
    return updated ? liveTask(updated, 'POST /task/{tid}', taskId) : this.getTask(projectId, taskId, options);
  }

  async completeTask(projectId: string, taskId: string, options?: CallOptions): Promise<void> {
    await this.run(
      {
        args: ['task', 'complete', id(projectId, 'projectId'), id(taskId, 'taskId')],
        route: 'POST /project/{pid}/task/{tid}/complete',
        schema: undefined,
        idempotent: false,
      },
      options,
    );
  }

  async deleteTask(projectId: string, taskId: string, options?: CallOptions): Promise<void> {
    await this.run(
      {
        args: ['task', 'delete', id(projectId, 'projectId'), id(taskId, 'taskId')],
        route: 'DELETE /project/{pid}/task/{tid}',
        schema: undefined,
        idempotent: false,
      },
      options,
    );
  }

  /** The first page Dida answers (the CLI cannot page), ordered by createdTime then id. */
  async listComments(projectId: string, taskId: string, options?: CallOptions): Promise<Comment[]> {
    const comments = await this.run(
      {
        args: ['task', 'comment', 'list', id(projectId, 'projectId'), id(taskId, 'taskId'), '--json'],
        route: 'GET /project/{pid}/task/{tid}/comments',
        schema: z.array(CommentSchema),
        idempotent: true,
      },
      options,
    );
    if (comments) return sortComments(comments);
    // An empty answer (not `[]`) may mean the task is gone: getTask throws not_found then.
    await this.getTask(projectId, taskId, options);
    return [];
  }

  /** The comment list as the CLI printed it; `page` cannot be passed to the CLI and is ignored. */
  async readRawComments(projectId: string, taskId: string, _page?: { offset: number; limit: number }, options?: CallOptions): Promise<unknown> {
    return this.run(
      {
        args: ['task', 'comment', 'list', id(projectId, 'projectId'), id(taskId, 'taskId'), '--json'],
        route: 'GET /project/{pid}/task/{tid}/comments',
        schema: z.unknown(),
        idempotent: true,
      },
      options,
    );
  }

  async addComment(projectId: string, taskId: string, body: string, options?: CallOptions): Promise<Comment> {
    const comment = await this.run(
      {
        args: ['task', 'comment', 'add', id(projectId, 'projectId'), id(taskId, 'taskId'), '--title', text(body, 'comment text'), '--json'],
        route: 'POST /project/{pid}/task/{tid}/comment',
        schema: CommentSchema,
        idempotent: false,
      },
      options,
    );
    return comment ?? commentAddedAs(this, projectId, taskId, body, options);
  }

  /**
   * The CLI has no preference command, so this reports the `timeZone` option or, by default, the zone of this Node
   * process (`Intl.DateTimeFormat().resolvedOptions().timeZone`, which follows `TZ`), not the Dida account setting.
   */
  async getPreference(options?: CallOptions): Promise<Preference> {
    options?.signal?.throwIfAborted();
    return { timeZone: this.timeZone ?? (Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC') };
  }

  /** The CLI cannot list project members, so this is always empty; identify the account by comment `userId` instead. */
  async listMembers(projectId: string, options?: CallOptions): Promise<Member[]> {
    options?.signal?.throwIfAborted();
    id(projectId, 'projectId');
    return [];
  }

  async close(): Promise<void> {
    this.runner.killAll(new DidaError({ code: 'network', message: 'The Dida CLI gateway was closed while a `dida` command was running.' }));
  }

  private async run<S extends Schema | undefined>(spec: CommandSpec<S>, options: CallOptions | undefined): Promise<Parsed<S>> {
    const attempts = spec.idempotent ? 1 + this.readRetries : 1;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.attempt(spec, options?.signal);
      } catch (error) {
        if (attempt >= attempts || !isRetryable(error)) throw error;
        await sleep(this.retryDelayMs, options?.signal);
      }
    }
  }

  private async attempt<S extends Schema | undefined>(spec: CommandSpec<S>, signal: AbortSignal | undefined): Promise<Parsed<S>> {
    if (!this.gate) return this.execute(spec, signal);
    try {
      await this.gate.acquire(spec.route, signal);
    } catch (error) {
      // The budget already waited as long as this command may: the error goes to the caller, not to a retry.
      if (isDidaError(error)) PERMANENT_FAILURES.add(error);
      throw error;
    }
    try {
      const parsed = await this.execute(spec, signal);
      await this.gate.observe(spec.route, { status: 200 });
      return parsed;
    } catch (error) {
      await this.gate.observe(spec.route, isDidaError(error) && error.status !== undefined ? { status: error.status } : {});
      throw error;
    }
  }

  /** Runs one `dida` command and interprets what it printed. */
  private async execute<S extends Schema | undefined>(spec: CommandSpec<S>, signal: AbortSignal | undefined): Promise<Parsed<S>> {
    const label = commandLabel(this.command, spec.args);
    const result = await this.runner.run({
      command: this.command,
      args: spec.args,
      env: this.env,
      cwd: this.cwd,
      timeoutMs: this.timeoutMs,
      maxOutputBytes: this.maxOutputBytes,
      killGraceMs: this.killGraceMs,
      route: spec.route,
      label,
      signal,
    });
    return interpret(spec, label, result);
  }
}

function isRetryable(error: unknown): boolean {
  if (!isDidaError(error) || PERMANENT_FAILURES.has(error)) return false;
  return error.code === 'server' || error.code === 'rate_limited' || error.code === 'network';
}
