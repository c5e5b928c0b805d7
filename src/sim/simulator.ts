// The Dida simulator: a real node:http server speaking the Open API under /open/v1, with seeding, faults and counters.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Project, Task } from '../dida/types';
import { controlAccess, handleControl } from './sim-control';
import { FaultQueue, SIM_FAULT_KINDS, type SimFault } from './sim-faults';
import { SimRateLimiter } from './sim-rate-limit';
import { faultError, parseJsonBody, readBody, sendError, sendJson, sendRedirect, sendTruncated } from './sim-http';
import { handlePageRequest, isPagePath, type PageLocale } from './sim-page';
import { matchRoute, SIM_ROUTES } from './sim-routes';
import { SimState } from './sim-state';
import type { SimComment, SimStateData } from './sim-store';
import { DEFAULT_QUIRKS, mergeQuirks, type SimQuirks } from './sim-task-ops';
import { simVariantFromEnv } from './sim-variants';
import { errorBody, newToken, SimHttpError, unauthorized, type JsonObject } from './sim-util';

export const SIM_API_PREFIX = '/open/v1';

// The simulator's door: what a test needs to start one and read what it saw.
export type { Simulator, SimRequestInfo, SimulatorOptions } from './sim-types';
export type { SimFault } from './sim-faults';
import type { Simulator, SimRequestHook, SimRequestInfo, SimulatorOptions, SeedProjectInput, SeedTaskInput } from './sim-types';

class SimulatorImpl implements Simulator {
  private readonly model: SimState;
  private readonly server: http.Server;
  private readonly faults = new FaultQueue();
  private readonly limiter = new SimRateLimiter();
  private counts = new Map<string, number>();
  private total = 0;
  private latencyMs: number;
  private currentToken: string;
  private validToken: string | null;
  private readonly timers = new Set<NodeJS.Timeout>();
  private closing: Promise<void> | undefined;
  private readonly log: boolean;
  private readonly pageLocale: PageLocale;
  private readonly hooks = { before: [] as SimRequestHook[], after: [] as SimRequestHook[] };
  port = 0;

  constructor(options: SimulatorOptions) {
    this.currentToken = options.token ?? newToken();
    this.validToken = this.currentToken;
    this.latencyMs = options.latencyMs ?? 0;
    this.log = options.log ?? false;
    this.pageLocale = options.pageLocale ?? 'zh';
    this.model = new SimState({
      userId: options.userId,
      timeZone: options.timeZone ?? 'Asia/Shanghai',
      quirks: mergeQuirks(mergeQuirks(DEFAULT_QUIRKS, simVariantFromEnv().quirks), options.quirks),
      now: options.now ?? Date.now,
      dataFile: options.dataFile,
    });
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        process.stderr.write(`dida simulator: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
        sendJson(res, 500, errorBody('internal_error', 'simulator internal error'));
      });
    });
  }

  async listen(port: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.port = (this.server.address() as AddressInfo).port;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }
  get baseUrl(): string {
    return `${this.origin}${SIM_API_PREFIX}`;
  }
  get token(): string {
    return this.currentToken;
  }
  get pageUrl(): string {
    return `${this.origin}/?token=${encodeURIComponent(this.currentToken)}`;
  }
  get userId(): string {
    return String(this.model.userId);
  }
  get inboxId(): string {
    return this.model.inboxId;
  }

  // ---- HTTP -----------------------------------------------------------------------------------------------

  private delay(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve();
      }, ms);
      this.timers.add(timer);
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = Date.now();
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = req.method ?? 'GET';
    if (this.log) res.on('finish', () => process.stderr.write(`sim: ${method} ${url.pathname} ${res.statusCode} ${Date.now() - started}ms\n`));
    if (url.pathname.startsWith('/__sim/')) return this.handleControlRequest(req, res, method, url.pathname);
    if (isPagePath(url.pathname)) {
      return handlePageRequest(req, res, url, { state: this.model, token: () => this.currentToken, port: () => this.port, locale: this.pageLocale });
    }
    if (url.pathname !== SIM_API_PREFIX && !url.pathname.startsWith(`${SIM_API_PREFIX}/`)) {
      return sendJson(res, 404, errorBody('not_found', `no route ${url.pathname}`));
    }
    this.total++;
    const match = matchRoute(method, url.pathname.slice(SIM_API_PREFIX.length));
    let fault: SimFault | undefined;
    if (match.kind === 'route') {
      this.counts.set(match.key, (this.counts.get(match.key) ?? 0) + 1);
      fault = this.faults.take(match.key);
    }
    await this.delay(this.latencyMs);
    if (fault?.kind === 'drop') return void req.socket.destroy();
    if (fault?.kind === 'timeout') return; // never answered; close() destroys the socket
    let text: string;
    try {
      text = await readBody(req);
    } catch (error) {
      if (error instanceof SimHttpError) return sendError(res, error);
      return void req.socket.destroy();
    }
    if (fault?.kind === 'status') return sendError(res, faultError(fault.status ?? 500, fault.retryAfter));
    if (fault?.kind === 'redirect') return sendRedirect(res, fault.status ?? 302, fault.location ?? url.pathname + url.search);
    if (fault?.kind === 'latency') await this.delay(fault.delayMs ?? 0);
    if (res.destroyed) return;
    const auth = req.headers.authorization ?? '';
    const bearer = /^Bearer\s+(.+)$/i.exec(auth.trim())?.[1];
    if (!bearer) return sendError(res, unauthorized('Full authentication is required to access this resource'));
    if (this.validToken === null || bearer !== this.validToken) return sendError(res, unauthorized('Invalid access token'));
    // The rate limit counts a token's requests in real time (the simulated clock may stand still).
    const limited = this.limiter.check(bearer, Date.now(), this.model.quirks);
    if (limited) return sendError(res, limited);
    // Live Dida answers 500 for a route it does not serve, whatever the method.
    if (match.kind === 'not_found') return sendJson(res, 500, errorBody('unknown_exception', `No handler for ${method} ${url.pathname}`));
    if (match.kind === 'method_not_allowed') {
      return sendJson(res, 500, errorBody('unknown_exception', `Request method ${method} not supported for ${url.pathname}`), { Allow: match.allow.join(', ') });
    }
    let result;
    let body: unknown;
    try {
      body = parseJsonBody(text);
    } catch (error) {
      if (error instanceof SimHttpError) return sendError(res, error);
      throw error;
    }
    const info: SimRequestInfo = { route: match.key, method, path: url.pathname.slice(SIM_API_PREFIX.length), index: this.total, body };
    for (const hook of [...this.hooks.before]) await hook(info);
    try {
      result = match.handler({ state: this.model, timeZone: this.model.timeZone }, { params: match.params, query: url.searchParams, body });
    } catch (error) {
      if (error instanceof SimHttpError) return sendError(res, error);
      throw error;
    }
    for (const hook of [...this.hooks.after]) await hook(info);
    if (fault?.kind === 'truncate') return sendTruncated(res, result.status, result.body);
    if (fault?.kind === 'empty') return sendJson(res, fault.status ?? 201);
    sendJson(res, result.status, result.body, fault?.retryAfter !== undefined ? { 'Retry-After': String(fault.retryAfter) } : {});
  }

  private async handleControlRequest(req: IncomingMessage, res: ServerResponse, method: string, path: string): Promise<void> {
    const remote = req.socket.remoteAddress ?? '';
    if (!['127.0.0.1', '::1', '::ffff:127.0.0.1'].includes(remote)) return sendJson(res, 403, { error: 'loopback only' });
    const refused = controlAccess(req.headers, { token: this.currentToken, port: this.port });
    if (refused) return sendJson(res, refused.status, refused.body);
    try {
      const body = parseJsonBody(await readBody(req));
      const answer = handleControl(this, method, path.slice('/__sim'.length), body);
      sendJson(res, answer.status, answer.body);
    } catch (error) {
      if (error instanceof SimHttpError) return sendError(res, error);
      sendJson(res, 400, { error: error instanceof Error ? error.message : String(error) });
    }
  }

  // ---- library API ----------------------------------------------------------------------------------------

  seedProject(input: SeedProjectInput): Project {
    const { id, closed, ...body } = input;
    return this.model.createProject(body as JsonObject, { id, closed });
  }

  seedTask(input: SeedTaskInput): Task {
    const { status, ...body } = input;
    return this.model.createTask(body as JsonObject, { status: status ?? 0 });
  }

  addComment(projectId: string, taskId: string, text: string, options: { userId?: number | string } = {}): SimComment {
    const userId = options.userId === undefined ? this.model.userId : Number(options.userId);
    if (!Number.isSafeInteger(userId)) throw new Error(`userId must be an integer, got ${String(options.userId)}`);
    return this.model.addComment(projectId, taskId, text, userId);
  }

  getTask(taskId: string): Task | undefined {
    return this.model.peekTask(taskId);
  }

  getDeletedTask(taskId: string): Task | undefined {
    return this.model.peekDeletedTask(taskId);
  }

  listTasks(projectId?: string, options: { includeCompleted?: boolean } = {}): Task[] {
    return this.model.listTasks(projectId, options.includeCompleted ?? false);
  }

  listProjects(): Project[] {
    return this.model.snapshot().projects;
  }

  listComments(taskId: string): SimComment[] {
    return this.model.allComments(taskId);
  }

  deleteProject(projectId: string): void {
    this.model.deleteProject(projectId);
  }

  closeProject(projectId: string): void {
    this.model.closeProject(projectId);
  }

  editTask(taskId: string, patch: Record<string, unknown>): Task {
    return this.model.editTask(taskId, patch);
  }

  removeTask(taskId: string): void {
    const task = this.model.peekTask(taskId);
    if (!task) throw new Error(`task ${taskId} not found`);
    this.model.deleteTask(task.projectId, taskId);
  }

  state(): SimStateData {
    return this.model.snapshot();
  }

  injectFault(fault: SimFault): void {
    if (fault.route !== undefined && !(SIM_ROUTES as readonly string[]).includes(fault.route)) {
      throw new Error(`unknown route key ${JSON.stringify(fault.route)}; expected one of SIM_ROUTES`);
    }
    if (!SIM_FAULT_KINDS.includes(fault.kind)) throw new Error(`unknown fault kind ${JSON.stringify(fault.kind)}`);
    this.faults.add(fault);
  }

  clearFaults(): void {
    this.faults.clear();
  }

  pendingFaults(): SimFault[] {
    return this.faults.pending();
  }

  counters(): Record<string, number> {
    return Object.fromEntries(this.counts);
  }

  totalRequests(): number {
    return this.total;
  }

  rateLimitRefusals(): number {
    return this.limiter.refused;
  }

  resetCounters(): void {
    this.counts = new Map();
    this.total = 0;
  }

  setLatency(ms: number): void {
    this.latencyMs = Math.max(0, ms);
  }

  onRequest(hook: SimRequestHook, phase: 'before' | 'after' = 'before'): () => void {
    const list = this.hooks[phase];
    list.push(hook);
    return () => {
      const i = list.indexOf(hook);
      if (i >= 0) list.splice(i, 1);
    };
  }

  setQuirks(quirks: Partial<SimQuirks>): void {
    Object.assign(this.model.quirks, mergeQuirks(this.model.quirks, quirks));
  }

  quirks(): SimQuirks {
    return { ...this.model.quirks };
  }

  expireToken(): void {
    this.validToken = null;
  }

  setToken(token: string): void {
    this.currentToken = token;
    this.validToken = token;
  }

  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      for (const timer of this.timers) clearTimeout(timer);
      this.timers.clear();
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    return this.closing;
  }
}

/** Starts a simulator on 127.0.0.1 and resolves once it listens. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const sim = new SimulatorImpl(options);
  await sim.listen(options.port ?? 0);
  return sim;
}
