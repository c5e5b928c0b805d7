// The HTTP client against the simulator's injected faults: codes, retries of reads only, timeouts, aborts.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DidaError } from '../../src/dida/dida-error';
import { BACKOFF_MAX_MS } from '../../src/dida/request-budget';
import { createHttpGateway, resolveBaseUrl } from '../../src/dida/http-gateway';
import { parseRetryAfter, type AttemptInfo } from '../../src/dida/http-transport';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import type { DidaGateway } from '../../src/dida/dida-gateway';

let sim: Simulator;
let gateway: DidaGateway;
let attempts: AttemptInfo[];
let projectId: string;

async function failure(promise: Promise<unknown>): Promise<DidaError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DidaError);
  return error as DidaError;
}

beforeAll(async () => {
  sim = await startSimulator();
  gateway = createHttpGateway({
    token: sim.token,
    baseUrl: sim.baseUrl,
    timeoutMs: 400,
    retry: { retries: 2, baseDelayMs: 5, maxDelayMs: 20 },
    onAttempt: (info) => attempts.push(info),
  });
  projectId = sim.seedProject({ name: 'faults' }).id;
});
afterAll(async () => {
  await sim.close();
});
beforeEach(() => {
  sim.clearFaults();
  sim.resetCounters();
  attempts = [];
});

describe('error classification', () => {
  const cases: Array<[number, DidaError['code']]> = [
    [401, 'auth'],
    [403, 'forbidden'],
    [404, 'not_found'],
  ];
  for (const [status, code] of cases) {
    it(`maps ${status} to ${code} and never retries it`, async () => {
      sim.injectFault({ route: 'GET /project/{pid}/data', kind: 'status', status, times: Infinity });
      const error = await failure(gateway.getProjectData(projectId));
      expect(error.code).toBe(code);
      expect(error.status).toBe(status);
      expect(error.route).toBe('GET /project/{pid}/data');
      expect(error.retryable).toBe(false);
      expect(sim.counters()['GET /project/{pid}/data']).toBe(1);
      expect(error.message).not.toContain(sim.token);
      expect(error.bodyExcerpt ?? '').not.toContain(sim.token);
    });
  }

  it('rejects a missing or expired token with auth', async () => {
    const bare = createHttpGateway({ token: 'not-the-right-token', baseUrl: sim.baseUrl });
    const error = await failure(bare.listProjects());
    expect(error.code).toBe('auth');
    expect(error.message).toMatch(/login/);
    expect(error.message).not.toContain('not-the-right-token');
    expect(() => createHttpGateway({ token: '  ', baseUrl: sim.baseUrl })).toThrow(DidaError);
  });

  it('reports an unexpected shape as invalid_response naming the field', async () => {
    const other = sim.seedProject({ name: 'broken shapes' }).id;
    const task = sim.seedTask({ projectId: other, title: 'shape' });
    sim.editTask(task.id, { title: 12345 as unknown as string });
    const error = await failure(gateway.getTask(other, task.id));
    expect(error.code).toBe('invalid_response');
    expect(error.message).toContain('at title: expected string, got number');
  });
});

describe('retries', () => {
  it('retries a read after 429 with Retry-After and then succeeds', async () => {
    sim.injectFault({ route: 'GET /project', kind: 'status', status: 429, retryAfter: 0.05, times: 1 });
    const projects = await gateway.listProjects();
    expect(projects.some((p) => p.id === projectId)).toBe(true);
    expect(sim.counters()['GET /project']).toBe(2);
    expect(attempts.map((a) => a.status)).toEqual([429, 200]);
  });

  it('retries a read on 5xx and dropped connections', async () => {
    sim.injectFault({ route: 'GET /project/{pid}/data', kind: 'status', status: 503, times: 1 });
    sim.injectFault({ route: 'GET /project/{pid}/data', kind: 'drop', times: 1 });
    const data = await gateway.getProjectData(projectId);
    expect(data.project?.id).toBe(projectId);
    expect(sim.counters()['GET /project/{pid}/data']).toBe(3);
  });

  it('gives up after the retry budget with the last error', async () => {
    sim.injectFault({ route: 'GET /project', kind: 'status', status: 500, times: Infinity });
    const error = await failure(gateway.listProjects());
    expect(error.code).toBe('server');
    expect(error.retryable).toBe(true);
    expect(sim.counters()['GET /project']).toBe(3);
  });

  it('does not wait for a Retry-After longer than the cap; one beyond the ceiling of a pause is taken as the ceiling', async () => {
    sim.injectFault({ route: 'GET /project', kind: 'status', status: 429, retryAfter: 3600, times: Infinity });
    const error = await failure(gateway.listProjects());
    expect(error.code).toBe('rate_limited');
    expect(error.retryAfterMs).toBe(BACKOFF_MAX_MS);
    expect(sim.counters()['GET /project']).toBe(1);
    // A far HTTP date, the same; control: one under the ceiling is kept as sent.
    sim.clearFaults();
    sim.injectFault({ route: 'GET /project', kind: 'status', status: 429, retryAfter: 'Wed, 01 Jan 2100 00:00:00 GMT', times: 1 });
    expect((await failure(gateway.listProjects())).retryAfterMs).toBe(BACKOFF_MAX_MS);
    sim.injectFault({ route: 'GET /project', kind: 'status', status: 429, retryAfter: 120, times: 1 });
    expect((await failure(gateway.listProjects())).retryAfterMs).toBe(120_000);
  });

  it('never retries a write, even on a retryable fault', async () => {
    sim.injectFault({ route: 'POST /task', kind: 'status', status: 429, retryAfter: 0, times: 1 });
    const error = await failure(gateway.createTask({ projectId, title: 'write once' }));
    expect(error.code).toBe('rate_limited');
    expect(sim.counters()['POST /task']).toBe(1);
    sim.injectFault({ route: 'POST /project/{pid}/task/{tid}/comment', kind: 'status', status: 503, times: 1 });
    const task = sim.seedTask({ projectId, title: 'comment target' });
    await failure(gateway.addComment(projectId, task.id, 'once'));
    expect(sim.counters()['POST /project/{pid}/task/{tid}/comment']).toBe(1);
    expect(sim.listComments(task.id)).toEqual([]);
  });
});

describe('timeouts, aborts and broken bodies', () => {
  it('times out a request that never answers', async () => {
    sim.injectFault({ route: 'POST /task', kind: 'timeout', times: 1 });
    const error = await failure(gateway.createTask({ projectId, title: 'slow' }));
    expect(error.code).toBe('timeout');
    expect(error.message).toContain('400 ms');
  });

  it('rejects with the caller abort reason, not a DidaError', async () => {
    sim.injectFault({ route: 'GET /project', kind: 'latency', delayMs: 300, times: 1 });
    const controller = new AbortController();
    const pending = gateway.listProjects({ signal: controller.signal });
    setTimeout(() => controller.abort(new Error('stop now')), 20);
    await expect(pending).rejects.toThrow('stop now');
    const pre = new AbortController();
    pre.abort(new Error('already'));
    await expect(gateway.listProjects({ signal: pre.signal })).rejects.toThrow('already');
  });

  it('reports a dropped connection on a write as network, with no retry', async () => {
    sim.injectFault({ route: 'POST /task', kind: 'drop', times: 1 });
    const error = await failure(gateway.createTask({ projectId, title: 'dropped' }));
    expect(error.code).toBe('network');
    expect(sim.counters()['POST /task']).toBe(1);
  });

  it('reports truncated JSON as invalid_response', async () => {
    const task = sim.seedTask({ projectId, title: 'truncate me' });
    sim.injectFault({ route: 'POST /task/{tid}', kind: 'truncate', times: 1 });
    const current = await gateway.getTask(projectId, task.id);
    const error = await failure(gateway.updateTask({ ...current, title: 'truncated write' }));
    expect(['invalid_response', 'network']).toContain(error.code);
    // The write itself happened on the server; a later read shows it.
    expect((await gateway.getTask(projectId, task.id)).title).toBe('truncated write');
  });

  it('tolerates empty bodies on create and update by reading back', async () => {
    sim.injectFault({ route: 'POST /task', kind: 'empty', status: 201, times: 1 });
    const created = await gateway.createTask({ projectId, title: 'empty-body create', items: [{ title: 'x' }] });
    expect(created.id).toBe(sim.listTasks(projectId).find((t) => t.title === 'empty-body create')?.id);
    sim.injectFault({ route: 'POST /task/{tid}', kind: 'empty', status: 200, times: 1 });
    const updated = await gateway.updateTask({ ...created, title: 'empty-body update' });
    expect(updated.title).toBe('empty-body update');
    sim.injectFault({ route: 'POST /project/{pid}/task/{tid}/comment', kind: 'empty', status: 201, times: 1 });
    const comment = await gateway.addComment(projectId, created.id, 'empty-body comment');
    expect(comment.title).toBe('empty-body comment');
  });
});

describe('live semantics', () => {
  it('never retries a 5xx that names a missing task or a bad id, and reports it as not_found', async () => {
    sim.setQuirks({ deletedTaskRead: '500' });
    try {
      const task = sim.seedTask({ projectId, title: 'deleted then read' });
      await gateway.deleteTask(projectId, task.id);
      sim.resetCounters();
      const error = await failure(gateway.getTask(projectId, task.id));
      expect(error).toMatchObject({ code: 'not_found', status: 500, notFoundSignal: 'error_body' });
      expect(sim.counters()['GET /project/{pid}/task/{tid}']).toBe(1);
      const bad = await failure(gateway.getProjectData('not-an-id'));
      expect(bad).toMatchObject({ code: 'not_found', status: 500 });
      expect(sim.counters()['GET /project/{pid}/data']).toBe(1);
    } finally {
      sim.setQuirks({ deletedTaskRead: '404' });
    }
  });

  it('reads an empty answer to a task or list read as not_found, once', async () => {
    const task = sim.seedTask({ projectId, title: 'empty read' });
    sim.injectFault({ route: 'GET /project/{pid}/task/{tid}', kind: 'empty', status: 200 });
    expect(await failure(gateway.getTask(projectId, task.id))).toMatchObject({ code: 'not_found', notFoundSignal: 'empty_answer' });
    sim.injectFault({ route: 'GET /project/{pid}', kind: 'empty', status: 200 });
    expect(await failure(gateway.getProject(projectId))).toMatchObject({ code: 'not_found', notFoundSignal: 'empty_answer' });
    expect(attempts.map((a) => a.route)).toEqual(['GET /project/{pid}/task/{tid}', 'GET /project/{pid}']);
  });

  it('an empty comment list answer is checked against the task: an existing task has no comments', async () => {
    const task = sim.seedTask({ projectId, title: 'empty comments' });
    sim.injectFault({ route: 'GET /project/{pid}/task/{tid}/comments', kind: 'empty', status: 200 });
    expect(await gateway.listComments(projectId, task.id)).toEqual([]);
    expect(sim.counters()['GET /project/{pid}/task/{tid}']).toBe(1);
  });

  it('does not follow a redirect of a write: no GET is sent and nothing is taken as written', async () => {
    const task = sim.seedTask({ projectId, title: 'not redirected' });
    const location = `${sim.baseUrl}/project/${projectId}/task/${task.id}`;
    sim.injectFault({ route: 'POST /task/{tid}', kind: 'redirect', status: 302, location });
    const error = await failure(gateway.updateTask({ id: task.id, projectId, title: 'written?' }));
    expect(error).toMatchObject({ code: 'invalid_response', status: 302, location, retryable: false });
    expect(sim.counters()['GET /project/{pid}/task/{tid}']).toBeUndefined();
    expect(sim.getTask(task.id)?.title).toBe('not redirected');
    // a redirected read is not retried either
    sim.injectFault({ route: 'GET /project', kind: 'redirect', status: 301, times: Infinity });
    expect((await failure(gateway.listProjects())).status).toBe(301);
    expect(sim.counters()['GET /project']).toBe(1);
  });

  it('reads comment pages until a short page', async () => {
    sim.setQuirks({ commentPageSize: 50, commentOrder: 'newest-first' });
    try {
      const many = sim.seedTask({ projectId, title: 'many comments' });
      for (let i = 0; i < 120; i++) sim.addComment(projectId, many.id, `m${i}`);
      const few = sim.seedTask({ projectId, title: 'few comments' });
      for (let i = 0; i < 5; i++) sim.addComment(projectId, few.id, `f${i}`);
      expect((await gateway.listComments(projectId, many.id)).map((c) => c.title)).toEqual(Array.from({ length: 120 }, (_, i) => `m${i}`));
      expect(sim.counters()['GET /project/{pid}/task/{tid}/comments']).toBe(3);
      sim.resetCounters();
      expect((await gateway.listComments(projectId, few.id)).map((c) => c.title)).toEqual(['f0', 'f1', 'f2', 'f3', 'f4']);
      expect(sim.counters()['GET /project/{pid}/task/{tid}/comments']).toBe(1);
    } finally {
      sim.setQuirks({ commentPageSize: 200, commentOrder: 'oldest-first' });
    }
  });
});

describe('configuration', () => {
  it('resolves regions and validates explicit base URLs', () => {
    expect(resolveBaseUrl(undefined, undefined)).toBe('https://api.dida365.com/open/v1');
    expect(resolveBaseUrl('ticktick', undefined)).toBe('https://api.ticktick.com/open/v1');
    expect(resolveBaseUrl('ticktick', 'http://127.0.0.1:9/open/v1/')).toBe('http://127.0.0.1:9/open/v1');
    expect(() => resolveBaseUrl(undefined, 'not a url')).toThrow(/not a valid URL/);
    expect(() => resolveBaseUrl(undefined, 'ftp://x/open/v1')).toThrow(/http/);
  });

  it('parses Retry-After seconds and dates', () => {
    expect(parseRetryAfter('2')).toBe(2000);
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter('soon')).toBeUndefined();
    const inFuture = new Date(Date.now() + 5000).toUTCString();
    expect(parseRetryAfter(inFuture)).toBeGreaterThan(3000);
  });
});
