// The live-service variants of the simulator, checked over real HTTP: every value of every quirk.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseFaultJson } from '../../src/sim/sim-faults';
import { DEFAULT_QUIRKS, type SimQuirks } from '../../src/sim/sim-task-ops';
import { SIM_VARIANT_NAMES, SIM_VARIANTS, simVariantFromEnv, simVariantQuirks } from '../../src/sim/sim-variants';
import { startSimulator, type Simulator } from '../../src/sim/simulator';

interface Answer {
  status: number;
  text: string;
  json: any;
  headers: Headers;
}

async function call(target: Simulator, method: string, route: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${target.baseUrl}${route}`, {
    method,
    headers: { Authorization: `Bearer ${target.token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    redirect: 'manual',
    signal: AbortSignal.timeout(5000),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json, headers: res.headers };
}

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterEach(() => {
  sim.setQuirks(DEFAULT_QUIRKS);
  sim.clearFaults();
});
afterAll(async () => {
  await sim.close();
});

describe('variant profiles', () => {
  it('kind is the default simulator and the live profiles together cover every value of every quirk', () => {
    expect(simVariantQuirks('kind')).toEqual(DEFAULT_QUIRKS);
    const live = (['live-a', 'live-b', 'live-c'] as const).map((name) => simVariantQuirks(name));
    const values = (key: keyof SimQuirks) => new Set(live.map((q) => q[key]));
    expect(values('statusOnUpdate')).toEqual(new Set(['honour']));
    expect([...values('deletedTaskRead')].sort()).toEqual(['500', 'empty200', 'readable']);
    expect(values('updateWithoutTitle')).toEqual(new Set(['ignore', 'apply']));
    expect(values('commentOrder')).toEqual(new Set(['oldest-first', 'newest-first']));
    expect(live.some((q) => q.commentPageSize < 200)).toBe(true);
    // together with kind, every value of every enumerated quirk occurs
    const all = [DEFAULT_QUIRKS, ...live];
    expect(new Set(all.map((q) => q.statusOnUpdate))).toEqual(new Set(['ignore', 'honour']));
    expect(new Set(all.map((q) => q.deletedTaskRead))).toEqual(new Set(['404', 'readable', 'empty200', '500']));
  });

  it('reads DIDA_SIM_VARIANT: default kind, a named profile, and a clear error for an unknown name', () => {
    expect(simVariantFromEnv({})).toEqual({ name: 'kind', quirks: SIM_VARIANTS.kind });
    expect(simVariantFromEnv({ DIDA_SIM_VARIANT: 'live-b' })).toEqual({ name: 'live-b', quirks: SIM_VARIANTS['live-b'] });
    expect(() => simVariantFromEnv({ DIDA_SIM_VARIANT: 'live-z' })).toThrow(/DIDA_SIM_VARIANT="live-z".*kind, live-a, live-b, live-c, live-d/);
    expect(simVariantFromEnv({ DIDA_SIM_VARIANT: 'live-d' }).quirks.sortOrderOnCreate).toBe('assign');
    expect(SIM_VARIANT_NAMES).toEqual(['kind', 'live-a', 'live-b', 'live-c', 'live-d']);
    // Only live-d drops the sortOrder of a create; the profiles npm test runs the engine suites under keep it.
    expect(SIM_VARIANT_NAMES.filter((name) => simVariantQuirks(name).sortOrderOnCreate === 'assign')).toEqual(['live-d']);
  });

  it('refuses quirk values that do not exist, naming the quirk', async () => {
    expect(() => sim.setQuirks({ deletedTaskRead: '410' as never })).toThrow(/deletedTaskRead must be one of 404, readable, empty200, 500/);
    expect(() => sim.setQuirks({ commentPageSize: 0 })).toThrow(/commentPageSize must be a positive integer/);
    expect(() => sim.setQuirks({ sortOrderOnCreate: 'drop' as never })).toThrow(/sortOrderOnCreate must be one of keep, assign/);
    await expect(startSimulator({ quirks: { commentOrder: 'random' as never } })).rejects.toThrow(/commentOrder/);
    expect(sim.quirks()).toEqual(DEFAULT_QUIRKS);
  });
});

describe('statusOnUpdate', () => {
  it('ignore: status in an update changes nothing', async () => {
    const project = sim.seedProject({ name: 'status-ignore' });
    const task = sim.seedTask({ projectId: project.id, title: 'done', status: 2 });
    const answer = await call(sim, 'POST', `/task/${task.id}`, { id: task.id, projectId: project.id, title: 'done', status: 0 });
    expect(answer.json.status).toBe(2);
    expect(sim.getTask(task.id)?.status).toBe(2);
  });

  it('honour: 0 re-opens a completed task keeping completedTime, 2 completes an open one', async () => {
    sim.setQuirks({ statusOnUpdate: 'honour' });
    const project = sim.seedProject({ name: 'status-honour' });
    const task = sim.seedTask({ projectId: project.id, title: 'done', status: 2 });
    const completedTime = sim.getTask(task.id)?.completedTime;
    expect(completedTime).toBeTruthy();
    const reopened = await call(sim, 'POST', `/task/${task.id}`, { id: task.id, projectId: project.id, title: 'done', status: 0 });
    expect(reopened.json).toMatchObject({ status: 0, completedTime });
    expect((await call(sim, 'GET', `/project/${project.id}/data`)).json.tasks.map((t: { id: string }) => t.id)).toEqual([task.id]);

    const closed = await call(sim, 'POST', `/task/${task.id}`, { id: task.id, projectId: project.id, title: 'done', status: 2 });
    expect(closed.json.status).toBe(2);
    expect(closed.json.completedTime).toBeTruthy();
    expect((await call(sim, 'GET', `/project/${project.id}/data`)).json.tasks).toEqual([]);
    // a value that is no task status is ignored
    const odd = await call(sim, 'POST', `/task/${task.id}`, { id: task.id, projectId: project.id, title: 'done', status: 7 });
    expect(odd.json.status).toBe(2);
  });
});

describe('updateWithoutTitle', () => {
  it('apply: an update without title changes the fields it carries', async () => {
    const project = sim.seedProject({ name: 'title-apply' });
    const task = sim.seedTask({ projectId: project.id, title: 't', priority: 0 });
    const answer = await call(sim, 'POST', `/task/${task.id}`, { id: task.id, projectId: project.id, priority: 3 });
    expect(answer.json.priority).toBe(3);
  });

  it('ignore: an update without title changes nothing and answers the task as it is; with title it applies', async () => {
    sim.setQuirks({ updateWithoutTitle: 'ignore' });
    const project = sim.seedProject({ name: 'title-ignore' });
    const task = sim.seedTask({ projectId: project.id, title: 't', priority: 0, items: [{ title: 'a' }] });
    const before = sim.getTask(task.id);
    const answer = await call(sim, 'POST', `/task/${task.id}`, { id: task.id, projectId: project.id, priority: 3, items: [] });
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual(before);
    expect(sim.getTask(task.id)).toEqual(before);
    const withTitle = await call(sim, 'POST', `/task/${task.id}`, { id: task.id, projectId: project.id, title: 't', priority: 3 });
    expect(withTitle.json.priority).toBe(3);
    expect(withTitle.json.items.map((i: { title: string }) => i.title)).toEqual(['a']);
  });
});

describe('sortOrderOnCreate', () => {
  const marker = -(1_777_000_000_000 * 1024 + 77);

  it('keep: a create carries the sortOrder it sends, in its answer, a read and the list data', async () => {
    const project = sim.seedProject({ name: 'sort-keep' });
    const answer = await call(sim, 'POST', '/task', { projectId: project.id, title: 't', sortOrder: marker });
    expect(answer.json.sortOrder).toBe(marker);
    expect((await call(sim, 'GET', `/project/${project.id}/task/${answer.json.id}`)).json.sortOrder).toBe(marker);
    expect((await call(sim, 'GET', `/project/${project.id}/data`)).json.tasks[0].sortOrder).toBe(marker);
  });

  it('assign: the sortOrder sent is ignored and the task gets the place a create without one gets; seeding keeps it', async () => {
    sim.setQuirks({ sortOrderOnCreate: 'assign' });
    const project = sim.seedProject({ name: 'sort-assign' });
    const plain = await call(sim, 'POST', '/task', { projectId: project.id, title: 'plain' });
    const sent = await call(sim, 'POST', '/task', { projectId: project.id, title: 'sent', sortOrder: marker });
    expect(sent.json.sortOrder).not.toBe(marker);
    expect(sent.json.sortOrder).toBe(plain.json.sortOrder - 2 ** 40);
    expect((await call(sim, 'GET', `/project/${project.id}/task/${sent.json.id}`)).json.sortOrder).toBe(sent.json.sortOrder);
    expect(sim.seedTask({ projectId: project.id, title: 'seeded', sortOrder: marker }).sortOrder).toBe(marker);
  });
});

describe('deletedTaskRead', () => {
  async function deletedTask(name: string) {
    const project = sim.seedProject({ name });
    const task = sim.seedTask({ projectId: project.id, title: 'to delete', items: [{ title: 'a' }] });
    sim.addComment(project.id, task.id, 'before deletion');
    expect((await call(sim, 'DELETE', `/project/${project.id}/task/${task.id}`)).status).toBe(200);
    const base = `/project/${project.id}/task/${task.id}`;
    return { project, task, base };
  }

  async function expectGone(project: { id: string }, taskId: string) {
    expect((await call(sim, 'GET', `/project/${project.id}/data`)).json.tasks).toEqual([]);
    expect(sim.getTask(taskId)).toBeUndefined();
    expect(sim.listTasks(project.id, { includeCompleted: true })).toEqual([]);
  }

  it('404: every call on the deleted task answers 404 with a Dida error body', async () => {
    const { project, task, base } = await deletedTask('del-404');
    for (const [method, route, body] of [
      ['GET', base, undefined],
      ['GET', `${base}/comments`, undefined],
      ['POST', `${base}/comment`, { title: 'x' }],
      ['POST', `/task/${task.id}`, { id: task.id, projectId: project.id, title: 'x' }],
      ['POST', `${base}/complete`, undefined],
      ['DELETE', base, undefined],
    ] as const) {
      const answer = await call(sim, method, route, body);
      expect(answer.status, `${method} ${route}`).toBe(404);
      expect(answer.json).toMatchObject({ errorCode: 'task_not_found', errorId: expect.any(String) });
    }
    await expectGone(project, task.id);
    expect(sim.getDeletedTask(task.id)).toMatchObject({ title: 'to delete', deleted: 1 });
  });

  it('readable: the task reads back as it was with deleted: 1, stays out of /data, and writes land on it', async () => {
    sim.setQuirks({ deletedTaskRead: 'readable' });
    const { project, task, base } = await deletedTask('del-readable');
    const read = await call(sim, 'GET', base);
    expect(read.status).toBe(200);
    expect(read.json).toMatchObject({ id: task.id, title: 'to delete', deleted: 1, status: 0 });
    expect(read.json.items.map((i: { title: string }) => i.title)).toEqual(['a']);
    expect((await call(sim, 'GET', `${base}/comments`)).json.map((c: { title: string }) => c.title)).toEqual(['before deletion']);
    expect((await call(sim, 'POST', `${base}/comment`, { title: 'after' })).status).toBe(200);
    const updated = await call(sim, 'POST', `/task/${task.id}`, { id: task.id, projectId: project.id, title: 'renamed', deleted: 0 });
    expect(updated.json).toMatchObject({ title: 'renamed', deleted: 1 });
    expect((await call(sim, 'POST', `${base}/complete`)).status).toBe(200);
    expect((await call(sim, 'GET', base)).json).toMatchObject({ status: 2, deleted: 1 });
    expect((await call(sim, 'DELETE', base)).status).toBe(200);
    await expectGone(project, task.id);
    expect(sim.listComments(task.id).map((c) => c.title)).toEqual(['before deletion', 'after']);
  });

  it('empty200: every call answers 200 without a body and changes nothing', async () => {
    sim.setQuirks({ deletedTaskRead: 'empty200' });
    const { project, task, base } = await deletedTask('del-empty');
    const kept = sim.getDeletedTask(task.id);
    for (const [method, route, body] of [
      ['GET', base, undefined],
      ['GET', `${base}/comments`, undefined],
      ['POST', `${base}/comment`, { title: 'x' }],
      ['POST', `/task/${task.id}`, { id: task.id, projectId: project.id, title: 'x' }],
      ['POST', `${base}/complete`, undefined],
      ['DELETE', base, undefined],
    ] as const) {
      const answer = await call(sim, method, route, body);
      expect(answer.status, `${method} ${route}`).toBe(200);
      expect(answer.text, `${method} ${route}`).toBe('');
    }
    expect(sim.getDeletedTask(task.id)).toEqual(kept);
    expect(sim.listComments(task.id).map((c) => c.title)).toEqual(['before deletion']);
    await expectGone(project, task.id);
  });

  it('500: every call answers 500 with a body naming the missing task', async () => {
    sim.setQuirks({ deletedTaskRead: '500' });
    const { project, task, base } = await deletedTask('del-500');
    for (const [method, route, body] of [
      ['GET', base, undefined],
      ['GET', `${base}/comments`, undefined],
      ['POST', `/task/${task.id}`, { id: task.id, projectId: project.id, title: 'x' }],
      ['POST', `${base}/complete`, undefined],
    ] as const) {
      const answer = await call(sim, method, route, body);
      expect(answer.status, `${method} ${route}`).toBe(500);
      expect(answer.json).toEqual({ errorId: expect.any(String), errorCode: 'task_not_found', errorMessage: expect.stringContaining(task.id) });
    }
    await expectGone(project, task.id);
  });

  it('a task that never existed still answers 404 under every variant', async () => {
    const project = sim.seedProject({ name: 'never' });
    for (const name of SIM_VARIANT_NAMES) {
      sim.setQuirks(simVariantQuirks(name));
      expect((await call(sim, 'GET', `/project/${project.id}/task/0123456789abcdef01234567`)).status, name).toBe(404);
    }
  });

  it('deleting the list removes its deleted tasks too, and deleted tasks survive a restart from the data file', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'sim-variants-'));
    const dataFile = path.join(dir, 'state.json');
    try {
      const first = await startSimulator({ dataFile, quirks: { deletedTaskRead: 'readable' } });
      const project = first.seedProject({ name: 'persist' });
      const task = first.seedTask({ projectId: project.id, title: 'gone' });
      first.addComment(project.id, task.id, 'note');
      expect((await call(first, 'DELETE', `/project/${project.id}/task/${task.id}`)).status).toBe(200);
      await first.close();
      const second = await startSimulator({ dataFile, token: first.token, quirks: { deletedTaskRead: 'readable' } });
      try {
        expect((await call(second, 'GET', `/project/${project.id}/task/${task.id}`)).json).toMatchObject({ title: 'gone', deleted: 1 });
        expect(second.state().comments).toEqual([]);
        expect(second.state().deletedComments.map((c) => c.title)).toEqual(['note']);
        second.deleteProject(project.id);
        expect(second.getDeletedTask(task.id)).toBeUndefined();
        expect(second.listComments(task.id)).toEqual([]);
      } finally {
        await second.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('comment order and paging', () => {
  async function taskWithComments(count: number) {
    const project = sim.seedProject({ name: 'paging' });
    const task = sim.seedTask({ projectId: project.id, title: 'talk' });
    for (let i = 0; i < count; i++) sim.addComment(project.id, task.id, `c${i}`);
    return `/project/${project.id}/task/${task.id}/comments`;
  }
  const titles = (answer: Answer) => answer.json.map((c: { title: string }) => c.title);
  const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `c${from + i}`);

  it('oldest-first: without params the first page of 200, then ?offset=&limit=', async () => {
    const route = await taskWithComments(205);
    expect(titles(await call(sim, 'GET', route))).toEqual(range(0, 200));
    expect(titles(await call(sim, 'GET', `${route}?offset=200&limit=200`))).toEqual(range(200, 205));
    expect(titles(await call(sim, 'GET', `${route}?offset=3&limit=2`))).toEqual(['c3', 'c4']);
    expect(titles(await call(sim, 'GET', `${route}?limit=1000`))).toHaveLength(200);
  });

  it('newest-first with a page size of 50: the limit is capped and pages walk back in time', async () => {
    sim.setQuirks({ commentOrder: 'newest-first', commentPageSize: 50 });
    const route = await taskWithComments(120);
    const first = titles(await call(sim, 'GET', route));
    expect(first).toEqual(range(70, 120).reverse());
    expect(titles(await call(sim, 'GET', `${route}?offset=50&limit=200`))).toEqual(range(20, 70).reverse());
    expect(titles(await call(sim, 'GET', `${route}?offset=100&limit=200`))).toEqual(range(0, 20).reverse());
    expect(titles(await call(sim, 'GET', `${route}?offset=120`))).toEqual([]);
    expect((await call(sim, 'GET', `${route}?limit=-1`)).status).toBe(400);
  });

  it('comment ids grow with creation order, so createdTime ties can be broken by id', async () => {
    const project = sim.seedProject({ name: 'ids' });
    const task = sim.seedTask({ projectId: project.id, title: 'ids' });
    const ids = Array.from({ length: 30 }, (_, i) => sim.addComment(project.id, task.id, `c${i}`).id);
    expect([...ids].sort()).toEqual(ids);
  });
});

describe('always-on live behaviour', () => {
  it('drops a repeat rule on a task with neither start nor due date, on create and on update', async () => {
    const project = sim.seedProject({ name: 'repeat' });
    const undated = await call(sim, 'POST', '/task', { projectId: project.id, title: 'r', repeatFlag: 'RRULE:FREQ=DAILY;INTERVAL=1' });
    expect(undated.json.repeatFlag).toBeUndefined();
    const dated = await call(sim, 'POST', '/task', { projectId: project.id, title: 'd', dueDate: '2026-12-01T09:00:00+0000', repeatFlag: 'RRULE:FREQ=DAILY;INTERVAL=1' });
    expect(dated.json.repeatFlag).toBe('RRULE:FREQ=DAILY;INTERVAL=1');
    const later = await call(sim, 'POST', `/task/${undated.json.id}`, { id: undated.json.id, projectId: project.id, title: 'r', repeatFlag: 'RRULE:FREQ=WEEKLY' });
    expect(later.json.repeatFlag).toBeUndefined();
    const undatedNow = await call(sim, 'POST', `/task/${dated.json.id}`, { id: dated.json.id, projectId: project.id, title: 'd', dueDate: '' });
    expect(undatedNow.json.repeatFlag).toBeUndefined();
  });

  it('refuses the inbox read as a project (404) but serves its data', async () => {
    for (const pid of ['inbox', sim.inboxId]) {
      expect((await call(sim, 'GET', `/project/${pid}`)).status, pid).toBe(404);
      expect((await call(sim, 'GET', `/project/${pid}/members`)).status, pid).toBe(404);
      expect((await call(sim, 'GET', `/project/${pid}/data`)).status, pid).toBe(200);
    }
  });

  it('answers 500 naming the bad id for empty and malformed ids', async () => {
    const project = sim.seedProject({ name: 'ids' });
    const task = sim.seedTask({ projectId: project.id, title: 't' });
    for (const [method, route, body] of [
      ['GET', '/project//data', undefined],
      ['GET', '/project/not-an-id', undefined],
      ['GET', `/project/${project.id}/task/xyz`, undefined],
      ['GET', `/project//task/${task.id}`, undefined],
      ['POST', '/task', { projectId: '', title: 'x' }],
      ['POST', '/task', { projectId: 'p1', title: 'x' }],
      ['POST', `/task/${task.id}`, { id: task.id, projectId: '', title: 'x' }],
      ['DELETE', `/project/${project.id}/task/${task.id}/comment/1`, undefined],
    ] as const) {
      const answer = await call(sim, method, route, body);
      expect(answer.status, `${method} ${route}`).toBe(500);
      expect(answer.json, `${method} ${route}`).toMatchObject({ errorId: expect.any(String), errorCode: 'invalid_id' });
    }
    expect(sim.listTasks(project.id).map((t) => t.title)).toEqual(['t']);
  });

  it('puts an errorId into every Dida error body (400, 404, 500 and injected faults) but keeps the OAuth shape for 401', async () => {
    const project = sim.seedProject({ name: 'errors' });
    const answers = [
      await call(sim, 'POST', '/task', { projectId: project.id }),
      await call(sim, 'GET', '/project/0123456789abcdef01234567'),
      await call(sim, 'GET', '/unknown/route'),
    ];
    for (const status of [403, 404, 429, 500, 503]) {
      sim.injectFault({ route: 'GET /project', kind: 'status', status });
      answers.push(await call(sim, 'GET', '/project'));
    }
    for (const answer of answers) expect(answer.json, answer.text).toMatchObject({ errorId: expect.stringMatching(/^[0-9a-f]{16}$/), errorCode: expect.any(String) });
    expect(new Set(answers.map((a) => a.json.errorId)).size).toBe(answers.length);
    const noAuth = await fetch(`${sim.baseUrl}/project`);
    expect(await noAuth.json()).toEqual({ error: 'invalid_token', error_description: expect.any(String) });
  });
});

describe('redirect fault', () => {
  it('answers the status with a Location and does not apply the request', async () => {
    const project = sim.seedProject({ name: 'redirect' });
    const task = sim.seedTask({ projectId: project.id, title: 'keep' });
    const target = `${sim.baseUrl}/project/${project.id}/task/${task.id}`;
    sim.injectFault({ route: 'POST /task/{tid}', kind: 'redirect', status: 301, location: target });
    const moved = await call(sim, 'POST', `/task/${task.id}`, { id: task.id, projectId: project.id, title: 'changed' });
    expect(moved.status).toBe(301);
    expect(moved.headers.get('location')).toBe(target);
    expect(sim.getTask(task.id)?.title).toBe('keep');
    sim.injectFault({ route: 'GET /project', kind: 'redirect' });
    const defaulted = await call(sim, 'GET', '/project?limit=5');
    expect(defaulted.status).toBe(302);
    expect(defaulted.headers.get('location')).toBe('/open/v1/project?limit=5');
    expect(() => sim.injectFault({ kind: 'redirect', status: 200 })).toThrow(/redirect fault answers/);
    expect(parseFaultJson({ kind: 'redirect', status: 308, location: '/x' })).toEqual({ kind: 'redirect', status: 308, location: '/x' });
  });
});
