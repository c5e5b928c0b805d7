// The gateway contract: every way of reaching Dida (HTTP client, dida CLI) implements this interface.
import type {
  Comment,
  Member,
  NewProject,
  NewTask,
  Preference,
  Project,
  ProjectData,
  Task,
  TaskUpdate,
} from './types';

export interface CallOptions {
  /** Aborts the call; the gateway then throws DidaError `timeout` (for its own timeout) or rethrows the abort reason. */
  signal?: AbortSignal;
}

/**
 * One Dida account. Every method either resolves with validated data or throws a `DidaError`
 * (or the caller's abort reason). Reads may be retried internally; writes are sent exactly once. No request
 * follows a redirect: a 3xx is DidaError `invalid_response` naming the status and the Location.
 */
export interface DidaGateway {
  /** Which implementation this is, for status output: `http` or `cli`. */
  readonly kind: 'http' | 'cli';
  listProjects(options?: CallOptions): Promise<Project[]>;
  getProject(projectId: string, options?: CallOptions): Promise<Project>;
  createProject(input: NewProject, options?: CallOptions): Promise<Project>;
  /** Deletes a list with its tasks (used by the live self-test for its own scratch list only). */
  deleteProject(projectId: string, options?: CallOptions): Promise<void>;
  /** The project with its open (undone) tasks. */
  getProjectData(projectId: string, options?: CallOptions): Promise<ProjectData>;
  /**
   * One task, also when it is completed. A deleted task is DidaError `not_found` whichever way Dida says so: 404,
   * an empty 2xx, a 5xx naming the missing task or a bad id, or the task read back with `deleted` set
   * (`notFoundSignal` tells which).
   */
  getTask(projectId: string, taskId: string, options?: CallOptions): Promise<Task>;
  createTask(input: NewTask, options?: CallOptions): Promise<Task>;
  /** Sends the fields given (Dida merges them); the answer carries the new item ids. A deleted task is `not_found`. */
  updateTask(task: TaskUpdate, options?: CallOptions): Promise<Task>;
  completeTask(projectId: string, taskId: string, options?: CallOptions): Promise<void>;
  deleteTask(projectId: string, taskId: string, options?: CallOptions): Promise<void>;
  /** Every comment of the task (all pages), ordered by `createdTime` then id, never by list position. */
  listComments(projectId: string, taskId: string, options?: CallOptions): Promise<Comment[]>;
  /**
   * Diagnostics for the live self-test: one comment list exactly as Dida sent it (no paging, sorting or
   * conversion); `page` is passed as `?offset=&limit=` where the gateway can.
   */
  readRawComments?(projectId: string, taskId: string, page?: { offset: number; limit: number }, options?: CallOptions): Promise<unknown>;
  addComment(projectId: string, taskId: string, text: string, options?: CallOptions): Promise<Comment>;
  /** Deletes one of the account's comments (optional: a gateway that cannot leaves it). */
  deleteComment?(projectId: string, taskId: string, commentId: string, options?: CallOptions): Promise<void>;
  getPreference(options?: CallOptions): Promise<Preference>;
  listMembers(projectId: string, options?: CallOptions): Promise<Member[]>;
  /** Releases sockets or child processes; safe to call twice. */
  close(): Promise<void>;
}
