// The Open API route table of the simulator: route keys, path matching, and the handler of each route.
import type { SimState } from './sim-state';
import { badRequest, isObject, type JsonObject } from './sim-util';

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

function intParam(query: URLSearchParams, name: string, fallback: number): number {
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
  'GET /project/{pid}/task/{tid}/comments': ({ state }, { params }) => ok(state.listComments(params.pid!, params.tid!)),
  'POST /project/{pid}/task/{tid}/comment': ({ state }, req) =>
    ok(state.addComment(req.params.pid!, req.params.tid!, objectBody(req).title)),
  'DELETE /project/{pid}/task/{tid}/comment/{cid}': ({ state }, { params }) =>
    (state.deleteComment(params.pid!, params.tid!, params.cid!), ok()),
  'POST /preference': ({ timeZone }) => ok({ timeZone }),
  'GET /project/{pid}/members': ({ state }, { params }) => {
    state.getProject(params.pid!);
    return ok([{ username: 'owner@example.com', displayName: 'Owner', self: true }]);
  },
};

const ROUTES: Route[] = SIM_ROUTES.map((key) => {
  const [method, template] = key.split(' ') as [string, string];
  return { key, method, segments: template.split('/').filter(Boolean), handler: HANDLERS[key] };
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
    if (t.startsWith('{')) {
      if (p === '') return undefined;
      params[t.slice(1, -1)] = p;
    } else if (t !== p) return undefined;
  }
  return params;
}

/** Finds the route for a method and a path relative to `/open/v1` (e.g. `/project/abc/data`). */
export function matchRoute(method: string, path: string): RouteMatch {
  let segments: string[];
  try {
    segments = path.split('/').filter(Boolean).map((s) => decodeURIComponent(s));
  } catch {
    return { kind: 'not_found' };
  }
  const allow: string[] = [];
  for (const route of ROUTES) {
    const params = matchSegments(route.segments, segments);
    if (!params) continue;
    if (route.method === method) return { kind: 'route', key: route.key, params, handler: route.handler };
    allow.push(route.method);
  }
  return allow.length > 0 ? { kind: 'method_not_allowed', allow } : { kind: 'not_found' };
}
