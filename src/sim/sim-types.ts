// The simulator's public shape: how it is started and what a test or the CLI can do with it (no code).
import type { Project, Task } from '../dida/types';
import type { SimFault } from './sim-faults';
import type { PageLocale } from './sim-page';
import type { SimRouteKey } from './sim-routes';
import type { SimComment, SimStateData } from './sim-store';
import type { SimQuirks } from './sim-task-ops';

export interface SimulatorOptions {
  /** Default 0 (a random free port); the host is always 127.0.0.1. */
  port?: number;
  /** The accepted Bearer token; default `sim-` + 32 hex characters. */
  token?: string;
  /** Load state from this JSON file at start (when it exists) and save it after every mutation. */
  dataFile?: string;
  /** The owner's user id; default the data file's, else 114433221100. */
  userId?: number;
  /** Default `Asia/Shanghai`. */
  timeZone?: string;
  /**
   * Live-service behaviours to imitate, over the simulator defaults. When `DIDA_SIM_VARIANT` names a variant
   * (sim-variants.ts), that variant is the base these are laid over; an unknown name makes startSimulator throw.
   */
  quirks?: Partial<SimQuirks>;
  /** Clock, default Date.now. */
  now?: () => number;
  /** Delay added to every API request, in ms (default 0). */
  latencyMs?: number;
  /** Log one line per request to stderr (default off: the library is quiet). */
  log?: boolean;
  /** The language of the simulator's web page (the person's phone, at `/`); default `zh`. */
  pageLocale?: PageLocale;
}

/** What a request hook sees: the route, the 1-based request index since the last resetCounters(), and the body. */
export interface SimRequestInfo {
  route: SimRouteKey;
  method: string;
  path: string;
  index: number;
  body: unknown;
}
export type SimRequestHook = (info: SimRequestInfo) => void | Promise<void>;

export interface SeedProjectInput {
  name: string;
  closed?: boolean;
  kind?: 'TASK' | 'NOTE';
  id?: string;
  color?: string;
  viewMode?: 'list' | 'kanban' | 'timeline';
}

export interface SeedTaskInput {
  projectId: string;
  title: string;
  content?: string;
  desc?: string;
  items?: Array<{ title: string; status?: number; [key: string]: unknown }>;
  priority?: number;
  startDate?: string;
  dueDate?: string;
  timeZone?: string;
  isAllDay?: boolean;
  reminders?: string[];
  repeatFlag?: string;
  tags?: string[];
  /** 0 open (default), 2 completed (completedTime is set), -1 abandoned. */
  status?: number;
  [key: string]: unknown;
}

export interface Simulator {
  /** `http://127.0.0.1:<port>/open/v1` */
  readonly baseUrl: string;
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  readonly port: number;
  /** The token the simulator was started with (or last set); after expireToken() it is rejected. */
  readonly token: string;
  /** The address of its web page, the person's phone: `http://127.0.0.1:<port>/?token=<token>` (the current token). */
  readonly pageUrl: string;
  /** The owner's user id as a string. */
  readonly userId: string;
  /** The inbox project id (`inbox<userId>`); `inbox` in a path maps to it. */
  readonly inboxId: string;
  seedProject(input: SeedProjectInput): Project;
  seedTask(input: SeedTaskInput): Task;
  addComment(projectId: string, taskId: string, text: string, options?: { userId?: number | string }): SimComment;
  /** Any task that is not deleted (open or completed); undefined for deleted or unknown ones. */
  getTask(taskId: string): Task | undefined;
  /** A task deleted with `DELETE …` as the simulator keeps it (with `deleted: 1`); undefined otherwise. */
  getDeletedTask(taskId: string): Task | undefined;
  /** Tasks in Dida order (sortOrder ascending); open ones only unless includeCompleted. */
  listTasks(projectId?: string, options?: { includeCompleted?: boolean }): Task[];
  listProjects(): Project[];
  /** Every comment of a task (also of a deleted one) in creation order, not paged. */
  listComments(taskId: string): SimComment[];
  deleteProject(projectId: string): void;
  closeProject(projectId: string): void;
  /** A person editing in the Dida app: shallow merge, new etag and modifiedTime. */
  editTask(taskId: string, patch: Record<string, unknown>): Task;
  /** A person deleting a task in the Dida app (as `DELETE …/task/{tid}` does). */
  removeTask(taskId: string): void;
  /** The whole state (as saved to the data file). */
  state(): SimStateData;
  injectFault(fault: SimFault): void;
  clearFaults(): void;
  /** Faults not used up yet. */
  pendingFaults(): SimFault[];
  /** Route key → requests received (faulted ones included); routes never hit are absent. */
  counters(): Record<string, number>;
  /** Every request under /open/v1, including ones matching no route. */
  totalRequests(): number;
  /** Requests the rate limit (the rateLimit* quirks) answered with 429, since the start. */
  rateLimitRefusals(): number;
  resetCounters(): void;
  setLatency(ms: number): void;
  /**
   * Runs `hook` for every Open API request that matches a route: `before` the request is applied (after faults and
   * latency), or `after` it was applied and before the answer is sent. Hooks run in the order added and are awaited,
   * so a test can make "the person's edit" land at an exact point of an operation. Returns a function that removes it.
   */
  onRequest(hook: SimRequestHook, phase?: 'before' | 'after'): () => void;
  /** Changes quirks from now on (only the fields given); throws an Error naming a value that is not allowed. */
  setQuirks(quirks: Partial<SimQuirks>): void;
  /** The quirks in force. */
  quirks(): SimQuirks;
  expireToken(): void;
  setToken(token: string): void;
  close(): Promise<void>;
}
