// The HTTP control API under /__sim/ (loopback only, the simulator's own Bearer token, no foreign Origin or Host),
// for child processes and the CLI.
import type { IncomingHttpHeaders } from 'node:http';
import * as z from 'zod/mini';
import { describeIssues } from '../common/schema-issues';
import { parseFaultJson } from './sim-faults';
import type { SeedProjectInput, SeedTaskInput, Simulator } from './sim-types';
import { isObject, SimHttpError } from './sim-util';

export interface ControlAnswer {
  status: number;
  body: unknown;
}

const CommentSchema = z.object({
  projectId: z.string(),
  taskId: z.string(),
  text: z.string(),
  userId: z.optional(z.union([z.number(), z.string()])),
});
const SeedProjectSchema = z.looseObject({ name: z.string() });
const SeedTaskSchema = z.looseObject({ projectId: z.string(), title: z.string() });
const LatencySchema = z.object({ ms: z.number().check(z.gte(0)) });
const TokenSchema = z.object({ token: z.string().check(z.minLength(1)) });
const ProjectRefSchema = z.object({ projectId: z.string() });
const EditTaskSchema = z.object({ taskId: z.string(), patch: z.record(z.string(), z.unknown()) });

function parse<T>(schema: z.ZodMiniType<T>, body: unknown): T {
  const parsed = schema.safeParse(body, { reportInput: true });
  if (!parsed.success) throw new SimHttpError(400, { error: `invalid body: ${describeIssues(parsed.error.issues)}` });
  return parsed.data;
}

const done = { status: 200, body: { ok: true } };

/**
 * Who may use the control API: a request with the simulator's current token as `Authorization: Bearer …`, a Host
 * header naming this loopback server (no DNS rebinding), and no Origin other than the simulator's own (a web page's
 * request, even a "simple" text/plain POST, carries its Origin). Returns the refusal, or undefined when allowed.
 */
export function controlAccess(headers: IncomingHttpHeaders, expected: { token: string; port: number }): ControlAnswer | undefined {
  const own = [`127.0.0.1:${expected.port}`, `localhost:${expected.port}`, `[::1]:${expected.port}`];
  const host = (headers.host ?? '').toLowerCase();
  if (!own.includes(host)) return { status: 403, body: { error: 'the control API answers only requests addressed to this simulator (Host)' } };
  const origin = headers.origin;
  if (origin !== undefined && !own.some((h) => origin.toLowerCase() === `http://${h}`)) {
    return { status: 403, body: { error: 'the control API refuses requests from web pages (Origin)' } };
  }
  const bearer = /^Bearer\s+(.+)$/i.exec((headers.authorization ?? '').trim())?.[1];
  if (bearer !== expected.token) return { status: 401, body: { error: "the control API needs the simulator's token as Authorization: Bearer <token>" } };
  return undefined;
}

/**
 * Access is checked first by controlAccess. Routes (path relative to `/__sim`):
 *   GET /state · GET /counters (route key → count) · GET /total · POST /counters/reset
 *   GET /faults · POST /faults (SimFault JSON, `times: null` = Infinity) · DELETE /faults
 *   POST /comment {projectId, taskId, text, userId?} · POST /seed/project · POST /seed/task
 *   POST /expire-token · POST /token {token} · POST /latency {ms}
 *   POST /close-project {projectId} · POST /delete-project {projectId} · POST /edit-task {taskId, patch}
 * Library errors (unknown task, bad seed) answer 400/404 with `{error}`.
 */
export function handleControl(sim: Simulator, method: string, path: string, body: unknown): ControlAnswer {
  const route = `${method} ${path.replace(/\/+$/, '')}`;
  try {
    switch (route) {
      case 'GET /state':
        return { status: 200, body: sim.state() };
      case 'GET /counters':
        return { status: 200, body: sim.counters() };
      case 'GET /total':
        return { status: 200, body: { total: sim.totalRequests() } };
      case 'POST /counters/reset':
        sim.resetCounters();
        return done;
      case 'GET /faults':
        return { status: 200, body: sim.pendingFaults().map((f) => ({ ...f, times: f.times === Infinity ? null : f.times })) };
      case 'POST /faults':
        sim.injectFault(parseFaultJson(body));
        return done;
      case 'DELETE /faults':
        sim.clearFaults();
        return done;
      case 'POST /comment': {
        const input = parse(CommentSchema, body);
        const options = input.userId === undefined ? {} : { userId: input.userId };
        return { status: 200, body: sim.addComment(input.projectId, input.taskId, input.text, options) };
      }
      case 'POST /seed/project':
        return { status: 200, body: sim.seedProject(parse(SeedProjectSchema, body) as SeedProjectInput) };
      case 'POST /seed/task':
        return { status: 200, body: sim.seedTask(parse(SeedTaskSchema, body) as SeedTaskInput) };
      case 'POST /expire-token':
        sim.expireToken();
        return done;
      case 'POST /token':
        sim.setToken(parse(TokenSchema, body).token);
        return done;
      case 'POST /latency':
        sim.setLatency(parse(LatencySchema, body).ms);
        return done;
      case 'POST /close-project':
        sim.closeProject(parse(ProjectRefSchema, body).projectId);
        return done;
      case 'POST /delete-project':
        sim.deleteProject(parse(ProjectRefSchema, body).projectId);
        return done;
      case 'POST /edit-task': {
        const input = parse(EditTaskSchema, body);
        return { status: 200, body: sim.editTask(input.taskId, input.patch) };
      }
      default:
        return { status: 404, body: { error: `no control route ${route}` } };
    }
  } catch (error) {
    if (error instanceof SimHttpError) {
      const message = isObject(error.body) ? (error.body.error ?? error.body.errorMessage ?? error.message) : error.message;
      throw new SimHttpError(error.status, { error: message });
    }
    throw error;
  }
}
