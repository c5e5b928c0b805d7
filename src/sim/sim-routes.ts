// The Open API route table of the simulator: route keys, path matching, and the handler of each route.
import type { SimState } from './sim-state';
import { badRequest, ID_SHAPE, isObject, serverError, SimEmptyAnswer, type JsonObject } from './sim-util';

/** Every route the simulator serves, as `"<METHOD> <template>"` keys relative to `/open/v1`. */
export const SIM_ROUTES = [
  'GET /project',
  'GET /project/{pid}',
  'POST /project',
  'POST /project/{pid}',
  'DELETE /project/{pid}',
  'GET /project/{pid}/data',
  'GET /project/{pid}/task/{tid}',
  'POST /task',
  'POST /task/{tid}',
  'POST /project/{pid}/task/{tid}/complete',
  'DELETE /project/{pid}/task/{tid}',
  'GET /project/{pid}/task/{tid}/comments',
  'POST /project/{pid}/task/{tid}/comment',
  'DELETE /project/{pid}/task/{tid}/comment/{cid}',
  'POST /preference',
  'GET /project/{pid}/members',
] as const;
export type SimRouteKey = (typeof SIM_ROUTES)[number];

export interface RouteRequest {
  params: Record<string, string>;
  query: URLSearchParams;
  /** Parsed JSON body; undefined when the body was empty. */
  body: unknown;
}

/** What a handler answers: a JSON body, or none (`body` undefined → empty 200). */
export interface RouteResult {
  status: number;
  body?: unknown;
}

export interface RouteContext {
  state: SimState;
  timeZone: string;
}

type Handler = (ctx: RouteContext, req: RouteRequest) => RouteResult;

interface Route {
  key: SimRouteKey;
  method: string;
  segments: string[];
  handler: Handler;
}

const ok = (body?: unknown): RouteResult => ({ status: 200, body });

function objectBody(req: RouteRequest): JsonObject {
  if (!isObject(req.body)) throw badRequest('the request body must be a JSON object');
  return req.body;
}

/** A project id as live Dida takes it in a path or body: 24 hex characters, `inbox` or `inbox<digits>`. */
const PROJECT_ID_SHAPE = /^(?:[0-9a-f]{24}|inbox\d*)$/i;

/**
 * Live Dida answers 500 (not 404) for an empty or malformed id; the body names the bad id. Checked before a
 * handler runs, for path parameters and for the `projectId` (and `id`) of task bodies.
 */
function checkId(name: string, value: unknown): void {
  if (typeof value !== 'string') return;
  const shape = name === 'projectId' ? PROJECT_ID_SHAPE : ID_SHAPE;
  if (value === '') throw serverError('invalid_id', `${name} is empty`);
  if (!shape.test(value)) throw serverError('invalid_id', `${name} ${JSON.stringify(value.slice(0, 40))} is not a valid id`);
}

const PARAM_NAMES: Record<string, string> = { pid: 'projectId', tid: 'taskId', cid: 'commentId' };

function intParam(query: URLSearchParams, name: string, fallback: number): number;
function intParam(query: URLSearchParams, name: string, fallback: undefined): number | undefined;
function intParam(query: URLSearchParams, name: string, fallback: number | undefined): number | undefined {
  const raw = query.get(name);
  if (raw === null || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw badRequest(`${name} must be a non-negative integer`);
  return value;
}

const HANDLERS: Record<SimRouteKey, Handler> = {
  // limit defaults to 200 and is capped at 200 (Dida's documented page size); no total is sent.
  'GET /project': ({ state }, { query }) => ok(state.listProjectsPage(intParam(query, 'offset', 0), intParam(query, 'limit', 200))),
  'GET /project/{pid}': ({ state }, { params }) => ok(state.getProject(params.pid!)),
  'POST /project': ({ state }, req) => ok(state.createProject(objectBody(req))),
  'POST /project/{pid}': ({ state }, req) => ok(state.updateProject(req.params.pid!, objectBody(req))),
  'DELETE /project/{pid}': ({ state }, { params }) => (state.deleteProject(params.pid!), ok()),
  'GET /project/{pid}/data': ({ state }, { params }) => ok(state.projectData(params.pid!)),
  'GET /project/{pid}/task/{tid}': ({ state }, { params }) => ok(state.getTask(params.pid!, params.tid!)),
  'POST /task': ({ state }, req) => ok(state.createTask(objectBody(req))),
  'POST /task/{tid}': ({ state }, req) => ok(state.updateTask(req.params.tid!, objectBody(req))),
  'POST /project/{pid}/task/{tid}/complete': ({ state }, { params }) => (state.completeTask(params.pid!, params.tid!), ok()),
  'DELETE /project/{pid}/task/{tid}': ({ state }, { params }) => (state.deleteTask(params.pid!, params.tid!), ok()),
  // Paged with ?offset=&limit= (limit capped at the commentPageSize quirk); without params: the first page.
  'GET /project/{pid}/task/{tid}/comments': ({ state }, { params, query }) =>
    ok(state.listComments(params.pid!, params.tid!, { offset: intParam(query, 'offset', undefined), limit: intParam(query, 'limit', undefined) })),
  'POST /project/{pid}/task/{tid}/comment': ({ state }, req) => ok(state.addApiComment(req.params.pid!, req.params.tid!, objectBody(req).title)),
  'DELETE /project/{pid}/task/{tid}/comment/{cid}': ({ state }, { params }) =>
    (state.deleteComment(params.pid!, params.tid!, params.cid!), ok()),
  'POST /preference': ({ timeZone }) => ok({ timeZone }),
  'GET /project/{pid}/members': ({ state }, { params }) => {
    state.getProject(params.pid!);
    return ok([{ username: 'owner@example.com', displayName: 'Owner', self: true }]);
  },
};

/** Runs a handler after the id checks; a SimEmptyAnswer from the model becomes a 200 without a body. */
function guarded(key: SimRouteKey, handler: Handler): Handler {
  const checksBody = key === 'POST /task' || key === 'POST /task/{tid}';
  return (ctx, req) => {
    for (const [param, value] of Object.entries(req.params)) checkId(PARAM_NAMES[param] ?? param, value);
    if (checksBody && isObject(req.body)) checkId('projectId', req.body.projectId);
    try {
      return handler(ctx, req);
    } catch (error) {
      if (error instanceof SimEmptyAnswer) return ok();
      throw error;
    }
  };
}

const ROUTES: Route[] = SIM_ROUTES.map((key) => {
  const [method, template] = key.split(' ') as [string, string];
  return { key, method, segments: template.split('/').filter(Boolean), handler: guarded(key, HANDLERS[key]) };
});

export type RouteMatch =
  | { kind: 'route'; key: SimRouteKey; params: Record<string, string>; handler: Handler }
  | { kind: 'method_not_allowed'; allow: string[] }
  | { kind: 'not_found' };

function matchSegments(template: string[], path: string[]): Record<string, string> | undefined {
  if (template.length !== path.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < template.length; i++) {
    const t = template[i]!;
    const p = path[i]!;
    // An empty parameter (`/project//data`) still matches: the handler answers 500 for the empty id, as live does.
    if (t.startsWith('{')) params[t.slice(1, -1)] = p;
    else if (t !== p) return undefined;
  }
  return params;
}

/**
 * Finds the route for a method and a path relative to `/open/v1` (e.g. `/project/abc/data`). Empty segments inside
 * the path are kept (an empty id); one trailing slash is ignored.
 */
export function matchRoute(method: string, path: string): RouteMatch {
  let segments: string[];
  try {
    segments = path.replace(/^\//, '').replace(/\/$/, '').split('/').map((s) => decodeURIComponent(s));
  } catch {
    return { kind: 'not_found' };
  }
  if (segments.length === 1 && segments[0] === '') return { kind: 'not_found' };
  const allow: string[] = [];
  for (const route of ROUTES) {
    const params = matchSegments(route.segments, segments);
    if (!params) continue;
    if (route.method === method) return { kind: 'route', key: route.key, params, handler: route.handler };
    allow.push(route.method);
  }
  return allow.length > 0 ? { kind: 'method_not_allowed', allow } : { kind: 'not_found' };
}
