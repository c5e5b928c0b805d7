// The simulator's Open API over real HTTP: auth, every endpoint's happy path, and request errors.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { SIM_ROUTES } from '../../src/sim/sim-routes';

let sim: Simulator;

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

async function call(method: string, path: string, body?: unknown, token: string | null = sim.token): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(`${sim.baseUrl}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(5000),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text ? JSON.parse(text) : undefined };
}

beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(async () => {
  await sim.close();
});
beforeEach(() => {
  sim.clearFaults();
});

describe('simulator basics', () => {
  it('listens on 127.0.0.1 under /open/v1 with a sim- token and a numeric owner id', () => {
    expect(sim.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/open\/v1$/);
    expect(sim.baseUrl.startsWith(sim.origin)).toBe(true);
    expect(sim.token).toMatch(/^sim-[0-9a-f]{32}$/);
    expect(sim.userId).toMatch(/^\d+$/);
    expect(SIM_ROUTES).toHaveLength(16);
    expect(SIM_ROUTES).toContain('DELETE /project/{pid}/task/{tid}/comment/{cid}');
  });
});

describe('auth', () => {
  it('answers 401 with WWW-Authenticate and an invalid_token body for a missing or unknown token', async () => {
    for (const token of [null, 'sim-wrong']) {
      const res = await call('GET', '/project', undefined, token);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="oauth"');
      expect(res.json.error).toBe('invalid_token');
      expect(typeof res.json.error_description).toBe('string');
    }
  });

  it('rejects the token after expireToken() and accepts a new one after setToken()', async () => {
    const local = await startSimulator({ token: 'sim-fixed-token-1234567890' });
    try {
      const get = (token: string) => fetch(`${local.baseUrl}/project`, { headers: { Authorization: `Bearer ${token}` } });
      expect((await get('sim-fixed-token-1234567890')).status).toBe(200);
      local.expireToken();
      const expired = await get('sim-fixed-token-1234567890');
      expect(expired.status).toBe(401);
      expect(expired.headers.get('www-authenticate')).toContain('Bearer');
      local.setToken('sim-second');
      expect(local.token).toBe('sim-second');
      expect((await get('sim-second')).status).toBe(200);
      expect((await get('sim-fixed-token-1234567890')).status).toBe(401);
    } finally {
      await local.close();
    }
  });
});

describe('projects', () => {
  it('creates, reads, updates, lists and deletes a project', async () => {
    const created = await call('POST', '/project', { name: '工作清单', color: '#F18181' });
    expect(created.status).toBe(200);
    expect(created.json).toMatchObject({ name: '工作清单', color: '#F18181', kind: 'TASK', viewMode: 'list', closed: false });
    expect(created.json.id).toMatch(/^[0-9a-f]{24}$/);
    const pid = created.json.id as string;

    const got = await call('GET', `/project/${pid}`);
    expect(got.json).toMatchObject({ id: pid, name: '工作清单' });

    const updated = await call('POST', `/project/${pid}`, { name: 'renamed', viewMode: 'kanban', kind: 'note' });
    expect(updated.json).toMatchObject({ id: pid, name: 'renamed', viewMode: 'kanban', kind: 'NOTE' });

    const list = await call('GET', '/project');
    expect(Array.isArray(list.json)).toBe(true);
    expect(list.json.find((p: { id: string }) => p.id === pid)).toMatchObject({ name: 'renamed', permission: 'write' });
    expect(list.json.some((p: { id: string }) => p.id.startsWith('inbox'))).toBe(false);

    const task = sim.seedTask({ projectId: pid, title: 'goes with the project' });
    const deleted = await call('DELETE', `/project/${pid}`);
    expect(deleted.status).toBe(200);
    expect(deleted.text).toBe('');
    expect((await call('GET', `/project/${pid}`)).status).toBe(404);
    expect((await call('GET', `/project/${pid}/data`)).status).toBe(404);
    expect(sim.getTask(task.id)).toBeUndefined();
  });

  it('rejects a project without a name and answers 404 for unknown projects', async () => {
    expect((await call('POST', '/project', { color: '#fff' })).status).toBe(400);
    expect((await call('GET', '/project/000000000000000000000000')).status).toBe(404);
    expect((await call('POST', '/project/000000000000000000000000', { name: 'x' })).status).toBe(404);
    expect((await call('DELETE', '/project/000000000000000000000000')).status).toBe(404);
  });

  it('serves /data with open tasks in Dida order and empty columns, also for a closed project', async () => {
    const project = sim.seedProject({ name: 'data' });
    const first = sim.seedTask({ projectId: project.id, title: 'first' });
    const second = sim.seedTask({ projectId: project.id, title: 'second' });
    sim.seedTask({ projectId: project.id, title: 'done', status: 2 });
    const data = await call('GET', `/project/${project.id}/data`);
    expect(data.status).toBe(200);
    expect(data.json.project.id).toBe(project.id);
    expect(data.json.columns).toEqual([]);
    // newest first: new tasks get a smaller (more negative) sortOrder
    expect(data.json.tasks.map((t: { id: string }) => t.id)).toEqual([second.id, first.id]);
    expect(second.sortOrder! < first.sortOrder!).toBe(true);
    expect(Number.isInteger(first.sortOrder! / 2 ** 40)).toBe(true);
    expect(first.sortOrder!).toBeLessThan(0);

    sim.closeProject(project.id);
    const closed = await call('GET', `/project/${project.id}/data`);
    expect(closed.status).toBe(200);
    expect(closed.json.project.closed).toBe(true);
  });

  it('maps the literal inbox to the per-user inbox project', async () => {
    const created = await call('POST', '/task', { projectId: 'inbox', title: 'in the inbox' });
    expect(created.status).toBe(200);
    expect(created.json.projectId).toBe(`inbox${sim.userId}`);
    const data = await call('GET', '/project/inbox/data');
    expect(data.json.tasks.map((t: { id: string }) => t.id)).toContain(created.json.id);
  });

  it('answers members and the preference time zone', async () => {
    const project = sim.seedProject({ name: 'members' });
    const members = await call('GET', `/project/${project.id}/members`);
    expect(members.json).toEqual([{ username: 'owner@example.com', displayName: 'Owner', self: true }]);
    expect((await call('GET', '/project/000000000000000000000000/members')).status).toBe(404);
    const pref = await call('POST', '/preference');
    expect(pref.json).toEqual({ timeZone: 'Asia/Shanghai' });
  });
});

describe('tasks', () => {
  it('creates a task echoing every field, with server-set id, kind, status, etag and times', async () => {
    const project = sim.seedProject({ name: 'create' });
    const body = {
      projectId: project.id,
      title: '整理发布说明',
      content: 'body',
      desc: 'notes',
      isAllDay: true,
      startDate: '2026-03-05T00:00:00+0000',
      dueDate: '2026-03-05T00:00:00+0000',
      timeZone: 'Europe/Berlin',
      reminders: ['TRIGGER:PT0S'],
      repeatFlag: 'RRULE:FREQ=DAILY;INTERVAL=1',
      priority: 3,
      tags: ['work'],
      items: [{ title: 'one' }, { title: 'two', status: 1 }],
      status: 2,
      customField: { nested: true },
    };
    const res = await call('POST', '/task', body);
    expect(res.status).toBe(200);
    const task = res.json;
    expect(task).toMatchObject({ ...body, items: expect.any(Array), status: 0, kind: 'CHECKLIST' });
    expect(task.id).toMatch(/^[0-9a-f]{24}$/);
    expect(task.etag).toMatch(/^[a-z0-9]{8}$/);
    expect(task.items).toHaveLength(2);
    expect(task.items[0]).toMatchObject({ title: 'one', status: 0, isAllDay: false });
    expect(task.items[1]).toMatchObject({ title: 'two', status: 1 });
    expect(task.items[0].id).toMatch(/^[0-9a-f]{24}$/);
    expect(task.items[0].sortOrder).toBeLessThan(task.items[1].sortOrder);
    expect(sim.getTask(task.id)?.customField).toEqual({ nested: true });

    const plain = await call('POST', '/task', { projectId: project.id, title: 'plain' });
    expect(plain.json).toMatchObject({ kind: 'TEXT', priority: 0, status: 0 });
  });

  it('validates create bodies: 400 for missing title/projectId, bad priority, >200 items; 404 unknown or closed project', async () => {
    const project = sim.seedProject({ name: 'validate' });
    expect((await call('POST', '/task', { projectId: project.id })).status).toBe(400);
    expect((await call('POST', '/task', { title: 'x' })).status).toBe(400);
    expect((await call('POST', '/task', { projectId: project.id, title: 'x', priority: 2 })).status).toBe(400);
    const many = Array.from({ length: 201 }, (_, i) => ({ title: `i${i}` }));
    const tooMany = await call('POST', '/task', { projectId: project.id, title: 'x', items: many });
    expect(tooMany.status).toBe(400);
    expect(tooMany.json.errorCode).toBe('exceed_quota');
    expect((await call('POST', '/task', { projectId: project.id, title: 'x', items: many.slice(0, 200) })).status).toBe(200);
    expect((await call('POST', '/task', { projectId: '000000000000000000000000', title: 'x' })).status).toBe(404);
    const closed = sim.seedProject({ name: 'closed', closed: true });
    expect((await call('POST', '/task', { projectId: closed.id, title: 'x' })).status).toBe(404);
    const badJson = await call('POST', '/task', '{"title": ');
    expect(badJson.status).toBe(400);
    expect(badJson.json.errorCode).toBe('invalid_json');
  });

  it('reads, updates (shallow merge, unknown fields round-trip), completes and deletes a task', async () => {
    const project = sim.seedProject({ name: 'lifecycle' });
    const seeded = sim.seedTask({ projectId: project.id, title: 'orig', content: 'c', tags: ['a'], priority: 1 });
    const got = await call('GET', `/project/${project.id}/task/${seeded.id}`);
    expect(got.json).toMatchObject({ id: seeded.id, title: 'orig', content: 'c', tags: ['a'] });

    const updated = await call('POST', `/task/${seeded.id}`, { id: seeded.id, projectId: project.id, title: 'new', extra: [1, 2], status: 2 });
    expect(updated.status).toBe(200);
    expect(updated.json).toMatchObject({ title: 'new', content: 'c', tags: ['a'], priority: 1, extra: [1, 2], status: 0 });
    expect(updated.json.etag).not.toBe(seeded.etag);
    expect(sim.getTask(seeded.id)?.extra).toEqual([1, 2]);

    const complete = await call('POST', `/project/${project.id}/task/${seeded.id}/complete`);
    expect(complete.status).toBe(200);
    expect(complete.text).toBe('');
    const again = await call('POST', `/project/${project.id}/task/${seeded.id}/complete`);
    expect(again.status).toBe(200);

    const afterEdit = await call('POST', `/task/${seeded.id}`, { id: seeded.id, projectId: project.id, title: 'edited while done' });
    expect(afterEdit.json).toMatchObject({ title: 'edited while done', status: 2 });

    const del = await call('DELETE', `/project/${project.id}/task/${seeded.id}`);
    expect(del.status).toBe(200);
    expect(del.text).toBe('');
    expect((await call('GET', `/project/${project.id}/task/${seeded.id}`)).status).toBe(404);
    expect((await call('DELETE', `/project/${project.id}/task/${seeded.id}`)).status).toBe(404);
    expect(sim.getTask(seeded.id)).toBeUndefined();
  });

  it('answers update errors: 400 for a mismatched body id, 404 for unknown task or wrong project', async () => {
    const project = sim.seedProject({ name: 'upd-errors' });
    const other = sim.seedProject({ name: 'other' });
    const task = sim.seedTask({ projectId: project.id, title: 't' });
    expect((await call('POST', `/task/${task.id}`, { id: 'nope', projectId: project.id })).status).toBe(400);
    expect((await call('POST', '/task/000000000000000000000000', { id: '000000000000000000000000', projectId: project.id })).status).toBe(404);
    expect((await call('POST', `/task/${task.id}`, { id: task.id, projectId: other.id, title: 'moved?' })).status).toBe(404);
    expect((await call('POST', `/task/${task.id}`, { id: task.id, projectId: project.id, priority: 4 })).status).toBe(400);
    expect((await call('GET', `/project/${other.id}/task/${task.id}`)).status).toBe(404);
    expect(sim.getTask(task.id)?.title).toBe('t');
  });

  it('adds, lists and deletes comments', async () => {
    const project = sim.seedProject({ name: 'comments' });
    const task = sim.seedTask({ projectId: project.id, title: 'c' });
    const added = await call('POST', `/project/${project.id}/task/${task.id}/comment`, { title: 'hello' });
    expect(added.status).toBe(200);
    expect(added.json).toMatchObject({ title: 'hello', userId: Number(sim.userId) });
    expect(typeof added.json.userId).toBe('number');
    expect(added.text).toContain(`"userId":${sim.userId}`);
    await call('POST', `/project/${project.id}/task/${task.id}/comment`, { title: 'second' });
    const list = await call('GET', `/project/${project.id}/task/${task.id}/comments`);
    expect(list.json.map((c: { title: string }) => c.title)).toEqual(['hello', 'second']);
    expect((await call('POST', `/project/${project.id}/task/${task.id}/comment`, { title: '' })).status).toBe(400);
    expect((await call('POST', `/project/${project.id}/task/000000000000000000000000/comment`, { title: 'x' })).status).toBe(404);
    expect((await call('GET', `/project/${project.id}/task/000000000000000000000000/comments`)).status).toBe(404);
    const del = await call('DELETE', `/project/${project.id}/task/${task.id}/comment/${added.json.id}`);
    expect(del.status).toBe(200);
    expect((await call('DELETE', `/project/${project.id}/task/${task.id}/comment/${added.json.id}`)).status).toBe(404);
    expect(sim.listComments(task.id).map((c) => c.title)).toEqual(['second']);
  });

  it('answers 500 with a Dida error body for unknown routes and wrong methods, as live does', async () => {
    const unknown = await call('GET', '/nope/here');
    expect(unknown.status).toBe(500);
    expect(unknown.json).toMatchObject({ errorCode: 'unknown_exception', errorId: expect.any(String) });
    const wrong = await call('PUT', '/task');
    expect(wrong.status).toBe(500);
    expect(wrong.headers.get('allow')).toContain('POST');
    expect((await call('GET', '/preference')).status).toBe(500);
    const outside = await fetch(`${sim.origin}/v2/project`);
    expect(outside.status).toBe(404);
  });
});
