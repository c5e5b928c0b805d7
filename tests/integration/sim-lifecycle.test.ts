// Simulator lifecycle: JSON-file persistence, the /__sim control API, the library API, and prompt close().
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/simulator';

let dir: string;
const opened: Simulator[] = [];

async function start(options: Parameters<typeof startSimulator>[0] = {}): Promise<Simulator> {
  const sim = await startSimulator(options);
  opened.push(sim);
  return sim;
}

async function api(sim: Simulator, method: string, p: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${sim.baseUrl}${p}`, {
    method,
    headers: { Authorization: `Bearer ${sim.token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(5000),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

async function control(sim: Simulator, method: string, p: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${sim.origin}/__sim${p}`, {
    method,
    headers: { Authorization: `Bearer ${sim.token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(5000),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dida-sim-'));
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('JSON-file persistence', () => {
  it('saves after every mutation and restores everything after a restart', async () => {
    const file = path.join(dir, 'nested', 'sim.json');
    const first = await start({ dataFile: file, token: 'sim-persist-token', userId: 777 });
    const project = (await api(first, 'POST', '/project', { name: 'kept' })).json;
    const task = (await api(first, 'POST', '/task', { projectId: project.id, title: 't', items: [{ title: 'i' }], odd: 'field' })).json;
    await api(first, 'POST', `/project/${project.id}/task/${task.id}/comment`, { title: 'note' });
    const done = first.seedTask({ projectId: project.id, title: 'done', status: 2 });
    const saved = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(saved.version).toBe(1);
    expect(saved.projects.map((p: { id: string }) => p.id)).toEqual([project.id]);
    expect(saved.tasks).toHaveLength(2);
    expect(saved.comments).toHaveLength(1);
    expect(fs.readdirSync(path.dirname(file))).toEqual(['sim.json']);
    await first.close();

    const second = await start({ dataFile: file, token: 'sim-persist-token' });
    expect(second.userId).toBe('777');
    const got = (await api(second, 'GET', `/project/${project.id}/task/${task.id}`)).json;
    expect(got).toMatchObject({ title: 't', odd: 'field', etag: task.etag });
    expect(got.items[0].id).toBe(task.items[0].id);
    expect((await api(second, 'GET', `/project/${project.id}/task/${task.id}/comments`)).json.map((c: { title: string }) => c.title)).toEqual(['note']);
    expect(second.getTask(done.id)?.status).toBe(2);
    await api(second, 'DELETE', `/project/${project.id}/task/${task.id}`);
    expect(JSON.parse(fs.readFileSync(file, 'utf8')).tasks.map((t: { id: string }) => t.id)).toEqual([done.id]);
  });

  it('refuses a corrupt data file with an error naming it, and leaves it untouched', async () => {
    const file = path.join(dir, 'broken.json');
    fs.writeFileSync(file, '{"version":1, "projects": [');
    await expect(startSimulator({ dataFile: file })).rejects.toThrow(file);
    expect(fs.readFileSync(file, 'utf8')).toBe('{"version":1, "projects": [');
    fs.writeFileSync(file, '{"version":2}');
    await expect(startSimulator({ dataFile: file })).rejects.toThrow(/broken\.json.*not a simulator state file/);
  });
});

describe('HTTP control API', () => {
  it('seeds, comments, inspects state, manages faults and counters, expires the token — without counting', async () => {
    const sim = await start();
    const project = (await control(sim, 'POST', '/seed/project', { name: 'ctl' })).json;
    expect(project.id).toMatch(/^[0-9a-f]{24}$/);
    const task = (await control(sim, 'POST', '/seed/task', { projectId: project.id, title: 'seeded', items: [{ title: 'a' }] })).json;
    expect(task.kind).toBe('CHECKLIST');
    const comment = (await control(sim, 'POST', '/comment', { projectId: project.id, taskId: task.id, text: 'from bob', userId: 555 })).json;
    expect(comment.userId).toBe(555);
    expect((await control(sim, 'POST', '/comment', { projectId: project.id, taskId: 'nope', text: 'x' })).status).toBe(404);
    expect((await control(sim, 'POST', '/seed/task', { title: 'no project' })).status).toBe(400);

    const state = (await control(sim, 'GET', '/state')).json;
    expect(state).toMatchObject({ version: 1, userId: Number(sim.userId) });
    expect(state.tasks.map((t: { id: string }) => t.id)).toEqual([task.id]);
    expect(state.comments[0]).toMatchObject({ title: 'from bob', taskId: task.id });

    expect((await control(sim, 'POST', '/faults', { route: 'GET /project', kind: 'status', status: 503, times: null })).status).toBe(200);
    expect((await control(sim, 'POST', '/faults', { kind: 'nonsense' })).status).toBe(400);
    expect((await control(sim, 'GET', '/faults')).json).toEqual([{ route: 'GET /project', kind: 'status', status: 503, skip: 0, times: null }]);
    for (let i = 0; i < 3; i++) expect((await api(sim, 'GET', '/project')).status).toBe(503);
    expect((await control(sim, 'DELETE', '/faults')).status).toBe(200);
    expect((await api(sim, 'GET', '/project')).status).toBe(200);
    expect((await control(sim, 'GET', '/counters')).json).toEqual({ 'GET /project': 4 });
    expect((await control(sim, 'POST', '/counters/reset')).status).toBe(200);
    expect((await control(sim, 'GET', '/counters')).json).toEqual({});
    expect(sim.totalRequests()).toBe(0);

    expect((await control(sim, 'POST', '/expire-token')).status).toBe(200);
    expect((await api(sim, 'GET', '/project')).status).toBe(401);
    expect((await control(sim, 'GET', '/unknown')).status).toBe(404);
  });
});

describe('library API', () => {
  it('seeds, inspects and edits like a person in the app', async () => {
    const sim = await start({ userId: 42, timeZone: 'Europe/Berlin' });
    expect(sim.userId).toBe('42');
    const project = sim.seedProject({ name: 'lib', id: 'aaaaaaaaaaaaaaaaaaaaaaaa', kind: 'NOTE' });
    expect(project).toMatchObject({ id: 'aaaaaaaaaaaaaaaaaaaaaaaa', kind: 'NOTE', closed: false });
    const a = sim.seedTask({ projectId: project.id, title: 'a', items: [{ title: 'x', status: 1 }] });
    const b = sim.seedTask({ projectId: project.id, title: 'b', status: 2 });
    expect(a.timeZone).toBe('Europe/Berlin');
    expect(b.completedTime).toMatch(/\+0000$/);
    expect(sim.listTasks(project.id).map((t) => t.id)).toEqual([a.id]);
    expect(sim.listTasks(undefined, { includeCompleted: true }).map((t) => t.id)).toEqual([b.id, a.id]);
    expect(() => sim.seedTask({ projectId: 'nope', title: 'x' })).toThrow();
    expect(() => sim.addComment(project.id, 'nope', 'x')).toThrow();

    const edited = sim.editTask(a.id, { title: 'a2', items: [...a.items!, { title: 'y' }] });
    expect(edited.title).toBe('a2');
    expect(edited.items?.[0]?.id).toBe(a.items?.[0]?.id);
    expect(edited.items?.[1]?.id).toMatch(/^[0-9a-f]{24}$/);
    expect((await api(sim, 'POST', '/preference')).json).toEqual({ timeZone: 'Europe/Berlin' });

    // seeded tasks in a closed project still work; API creation there does not
    sim.closeProject(project.id);
    expect(sim.listProjects()[0]?.closed).toBe(true);
    sim.seedTask({ projectId: project.id, title: 'late seed' });
    expect((await api(sim, 'POST', '/task', { projectId: project.id, title: 'late api' })).status).toBe(404);
    sim.deleteProject(project.id);
    expect(sim.listProjects()).toEqual([]);
    expect(sim.getTask(a.id)).toBeUndefined();
    expect(sim.listComments(a.id)).toEqual([]);
  });

  it('returns copies: mutating a returned task does not change the simulator', async () => {
    const sim = await start();
    const project = sim.seedProject({ name: 'copies' });
    const task = sim.seedTask({ projectId: project.id, title: 'orig' });
    task.title = 'mutated';
    sim.getTask(task.id)!.title = 'mutated too';
    expect(sim.getTask(task.id)?.title).toBe('orig');
  });
});

describe('close()', () => {
  it('finishes promptly with an idle keep-alive connection open', async () => {
    const sim = await start();
    const agent = new http.Agent({ keepAlive: true });
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const req = http.get(`${sim.baseUrl}/project`, { agent, headers: { Authorization: `Bearer ${sim.token}` }, timeout: 5000 }, (res) => {
          expect(res.headers.connection).not.toBe('close');
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
      });
      expect(status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(Object.values(agent.freeSockets).flat().length).toBe(1);
      const started = Date.now();
      await sim.close();
      expect(Date.now() - started).toBeLessThan(1000);
      await sim.close();
    } finally {
      agent.destroy();
    }
  });

  it('starts on a requested port and frees it on close', async () => {
    const probe = await startSimulator();
    const port = Number(new URL(probe.origin).port);
    await probe.close();
    const sim = await start({ port });
    expect(sim.origin).toBe(`http://127.0.0.1:${port}`);
    await sim.close();
    const again = await start({ port });
    expect(again.port).toBe(port);
  });
});
