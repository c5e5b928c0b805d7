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
 * (or the caller's abort reason). Reads may be retried internally; writes are sent exactly once.
 */
export interface DidaGateway {
  /** Which implementation this is, for status output: `http` or `cli`. */
  readonly kind: 'http' | 'cli';
  listProjects(options?: CallOptions): Promise<Project[]>;
  getProject(projectId: string, options?: CallOptions): Promise<Project>;
  createProject(input: NewProject, options?: CallOptions): Promise<Project>;
  /** The project with its open (undone) tasks. */
  getProjectData(projectId: string, options?: CallOptions): Promise<ProjectData>;
  /** One task, also when it is completed. */
  getTask(projectId: string, taskId: string, options?: CallOptions): Promise<Task>;
  createTask(input: NewTask, options?: CallOptions): Promise<Task>;
  /** Sends the whole task; the answer carries the new item ids. */
  updateTask(task: TaskUpdate, options?: CallOptions): Promise<Task>;
  completeTask(projectId: string, taskId: string, options?: CallOptions): Promise<void>;
  deleteTask(projectId: string, taskId: string, options?: CallOptions): Promise<void>;
  listComments(projectId: string, taskId: string, options?: CallOptions): Promise<Comment[]>;
  addComment(projectId: string, taskId: string, text: string, options?: CallOptions): Promise<Comment>;
  /** Deletes one of the account's comments (optional: a gateway that cannot leaves it). */
  deleteComment?(projectId: string, taskId: string, commentId: string, options?: CallOptions): Promise<void>;
  getPreference(options?: CallOptions): Promise<Preference>;
  listMembers(projectId: string, options?: CallOptions): Promise<Member[]>;
  /** Releases sockets or child processes; safe to call twice. */
  close(): Promise<void>;
}
