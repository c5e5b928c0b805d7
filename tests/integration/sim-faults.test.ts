// Fault injection and request counters of the simulator, over real HTTP.
import http from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/simulator';

let sim: Simulator;

function request(method: string, path: string, body?: unknown, timeoutMs = 5000): Promise<Response> {
  return fetch(`${sim.baseUrl}${path}`, {
    method,
    headers: { Authorization: `Bearer ${sim.token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
}

beforeEach(async () => {
  sim = await startSimulator();
});
afterEach(async () => {
  await sim.close();
});

describe('status faults', () => {
  it('answers 500 with a Dida error body, without side effect, once by default', async () => {
    const project = sim.seedProject({ name: 'p' });
    sim.injectFault({ route: 'POST /task', kind: 'status', status: 500 });
    const failed = await request('POST', '/task', { projectId: project.id, title: 'x' });
    expect(failed.status).toBe(500);
    const body = (await failed.json()) as Record<string, unknown>;
    expect(typeof body.errorCode).toBe('string');
    expect(typeof body.errorMessage).toBe('string');
    expect(sim.listTasks(project.id)).toHaveLength(0);
    const ok = await request('POST', '/task', { projectId: project.id, title: 'x' });
    expect(ok.status).toBe(200);
    expect(sim.listTasks(project.id)).toHaveLength(1);
  });

  it('answers 401 like the OAuth layer, even for a valid token', async () => {
    sim.injectFault({ route: 'GET /project', kind: 'status', status: 401 });
    const res = await request('GET', '/project');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="oauth"');
    expect(((await res.json()) as { error: string }).error).toBe('invalid_token');
  });

  it('sends Retry-After only when asked, for 429 and 503', async () => {
    sim.injectFault({ route: 'GET /project', kind: 'status', status: 429, retryAfter: 7 });
    sim.injectFault({ route: 'GET /project', kind: 'status', status: 429 });
    sim.injectFault({ route: 'GET /project', kind: 'status', status: 503, retryAfter: 2 });
    const first = await request('GET', '/project');
    expect(first.status).toBe(429);
    expect(first.headers.get('retry-after')).toBe('7');
    const second = await request('GET', '/project');
    expect(second.status).toBe(429);
    expect(second.headers.get('retry-after')).toBeNull();
    const third = await request('GET', '/project');
    expect(third.status).toBe(503);
    expect(third.headers.get('retry-after')).toBe('2');
    expect((await request('GET', '/project')).status).toBe(200);
  });

  it('does not complete, delete or comment when the request is faulted (403/404)', async () => {
    const project = sim.seedProject({ name: 'p' });
    const task = sim.seedTask({ projectId: project.id, title: 't' });
    sim.injectFault({ route: 'POST /project/{pid}/task/{tid}/complete', kind: 'status', status: 403 });
    sim.injectFault({ route: 'DELETE /project/{pid}/task/{tid}', kind: 'status', status: 404 });
    sim.injectFault({ route: 'POST /project/{pid}/task/{tid}/comment', kind: 'status', status: 500 });
    expect((await request('POST', `/project/${project.id}/task/${task.id}/complete`)).status).toBe(403);
    expect((await request('DELETE', `/project/${project.id}/task/${task.id}`)).status).toBe(404);
    expect((await request('POST', `/project/${project.id}/task/${task.id}/comment`, { title: 'c' })).status).toBe(500);
    expect(sim.getTask(task.id)?.status).toBe(0);
    expect(sim.listComments(task.id)).toHaveLength(0);
  });

  it('honours skip and times, and applies a route-less fault to any route', async () => {
    sim.injectFault({ route: 'GET /project', kind: 'status', status: 503, skip: 2, times: 2 });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await request('GET', '/project')).status);
    expect(statuses).toEqual([200, 200, 503, 503, 200]);

    sim.injectFault({ kind: 'status', status: 500, times: Infinity });
    expect((await request('POST', '/preference')).status).toBe(500);
    expect((await request('GET', '/project')).status).toBe(500);
    expect(sim.pendingFaults()).toHaveLength(1);
    sim.clearFaults();
    expect((await request('GET', '/project')).status).toBe(200);
  });

  it('rejects an unknown route key', () => {
    expect(() => sim.injectFault({ route: 'GET /projects', kind: 'drop' })).toThrow(/unknown route key/);
  });
});

describe('connection faults', () => {
  it('drop: destroys the socket without answering and without side effect', async () => {
    const project = sim.seedProject({ name: 'p' });
    sim.injectFault({ route: 'POST /task', kind: 'drop' });
    await expect(request('POST', '/task', { projectId: project.id, title: 'x' })).rejects.toThrow();
    expect(sim.listTasks(project.id)).toHaveLength(0);
    expect((await request('POST', '/task', { projectId: project.id, title: 'x' })).status).toBe(200);
  });

  it('timeout: never answers until the client gives up, without side effect, and close() still finishes', async () => {
    const project = sim.seedProject({ name: 'p' });
    sim.injectFault({ route: 'POST /task', kind: 'timeout' });
    const started = Date.now();
    await expect(request('POST', '/task', { projectId: project.id, title: 'x' }, 300)).rejects.toThrow();
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(sim.listTasks(project.id)).toHaveLength(0);
    sim.injectFault({ route: 'GET /project', kind: 'timeout' });
    const pending = request('GET', '/project', undefined, 10_000).catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const closeStarted = Date.now();
    await sim.close();
    expect(Date.now() - closeStarted).toBeLessThan(1000);
    expect(await pending).toBeInstanceOf(Error);
  });

  it('truncate: performs the write, then cuts the JSON body mid-way', async () => {
    const project = sim.seedProject({ name: 'p' });
    sim.injectFault({ route: 'POST /task', kind: 'truncate' });
    const res = await request('POST', '/task', { projectId: project.id, title: 'committed' });
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
    expect(sim.listTasks(project.id).map((t) => t.title)).toEqual(['committed']);
  });

  it('truncate on an empty-bodied answer loses the answer but the task is completed', async () => {
    const project = sim.seedProject({ name: 'p' });
    const task = sim.seedTask({ projectId: project.id, title: 't' });
    sim.injectFault({ route: 'POST /project/{pid}/task/{tid}/complete', kind: 'truncate' });
    await expect(request('POST', `/project/${project.id}/task/${task.id}/complete`)).rejects.toThrow();
    expect(sim.getTask(task.id)?.status).toBe(2);
  });

  it('truncated bytes are a prefix of the real JSON (raw socket view)', async () => {
    sim.seedProject({ name: 'raw' });
    sim.injectFault({ route: 'GET /project', kind: 'truncate' });
    const { status, length, body } = await new Promise<{ status: number; length: number; body: string }>((resolve, reject) => {
      const req = http.get(`${sim.baseUrl}/project`, { headers: { Authorization: `Bearer ${sim.token}` }, timeout: 5000 }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        const finish = () => resolve({ status: res.statusCode ?? 0, length: Number(res.headers['content-length']), body });
        res.on('aborted', finish);
        res.on('error', finish);
        res.on('close', finish);
      });
      req.on('error', reject);
    });
    expect(status).toBe(200);
    expect(body.length).toBeGreaterThan(0);
    expect(body.length).toBeLessThan(length);
    expect(() => JSON.parse(body)).toThrow();
    expect(body.startsWith('[{"id":"')).toBe(true);
  });

  it('empty: performs the write and answers an empty body with 201 (or the given status)', async () => {
    const project = sim.seedProject({ name: 'p' });
    sim.injectFault({ route: 'POST /task', kind: 'empty' });
    const res = await request('POST', '/task', { projectId: project.id, title: 'a' });
    expect(res.status).toBe(201);
    expect(await res.text()).toBe('');
    expect(res.headers.get('content-type')).toBeNull();
    const task = sim.listTasks(project.id)[0]!;
    expect(task.title).toBe('a');
    sim.injectFault({ route: 'POST /task/{tid}', kind: 'empty', status: 200 });
    const upd = await request('POST', `/task/${task.id}`, { id: task.id, projectId: project.id, title: 'b' });
    expect(upd.status).toBe(200);
    expect(await upd.text()).toBe('');
    expect(sim.getTask(task.id)?.title).toBe('b');
  });

  it('latency: delays the normal answer; setLatency delays every request', async () => {
    sim.injectFault({ route: 'GET /project', kind: 'latency', delayMs: 200 });
    let started = Date.now();
    const slow = await request('GET', '/project');
    expect(slow.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(180);
    started = Date.now();
    await request('GET', '/project');
    expect(Date.now() - started).toBeLessThan(180);
    sim.setLatency(120);
    started = Date.now();
    await request('POST', '/preference');
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
    sim.setLatency(0);
  });
});

describe('counters', () => {
  it('counts requests per route key, faulted ones included; totalRequests also counts unknown routes', async () => {
    const project = sim.seedProject({ name: 'p' });
    sim.injectFault({ route: 'GET /project/{pid}/data', kind: 'status', status: 500 });
    await request('GET', `/project/${project.id}/data`);
    await request('GET', `/project/${project.id}/data`);
    await request('POST', '/task', { projectId: project.id, title: 'x' });
    await request('GET', '/nothing/here');
    expect(sim.counters()).toEqual({ 'GET /project/{pid}/data': 2, 'POST /task': 1 });
    expect(sim.totalRequests()).toBe(4);
    sim.resetCounters();
    expect(sim.counters()).toEqual({});
    expect(sim.totalRequests()).toBe(0);
  });
});
