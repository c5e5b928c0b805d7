// The live-service quirks the simulator imitates, checked over real HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDidaDate } from '../../src/dida/dida-date';
import { startSimulator, type Simulator } from '../../src/sim/simulator';

let sim: Simulator;

async function call(target: Simulator, method: string, path: string, body?: unknown): Promise<{ status: number; text: string; json: any }> {
  const res = await fetch(`${target.baseUrl}${path}`, {
    method,
    headers: { Authorization: `Bearer ${target.token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(5000),
  });
  const text = await res.text();
  return { status: res.status, text, json: text ? JSON.parse(text) : undefined };
}

const MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+0000$/;
const NO_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+0000$/;

beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(async () => {
  await sim.close();
});

describe('checklist quirks', () => {
  it('gives every item a fresh id on every update while keeping the merged fields', async () => {
    const project = sim.seedProject({ name: 'items' });
    const created = (await call(sim, 'POST', '/task', { projectId: project.id, title: 'c', items: [{ title: 'a', x: 1 }, { title: 'b' }] })).json;
    const firstIds = created.items.map((i: { id: string }) => i.id);
    const sent = [{ ...created.items[0], status: 1 }, created.items[1], { title: 'new' }];
    const updated = (await call(sim, 'POST', `/task/${created.id}`, { ...created, items: sent })).json;
    expect(updated.items.map((i: { title: string }) => i.title)).toEqual(['a', 'b', 'new']);
    expect(updated.items[0]).toMatchObject({ status: 1, x: 1 });
    const secondIds = updated.items.map((i: { id: string }) => i.id);
    for (const id of secondIds) expect(firstIds).not.toContain(id);
    expect(new Set(secondIds).size).toBe(3);
    // unchanged items sent back: ids still change
    const again = (await call(sim, 'POST', `/task/${created.id}`, { ...updated })).json;
    for (const item of again.items) expect(secondIds).not.toContain(item.id);
    expect(sim.getTask(created.id)?.items?.map((i) => i.id)).toEqual(again.items.map((i: { id: string }) => i.id));
  });

  it('keeps item ids stable when the rewriteItemIds quirk is off; omitted items are removed', async () => {
    const tame = await startSimulator({ quirks: { rewriteItemIds: false } });
    try {
      const project = tame.seedProject({ name: 'tame' });
      const task = tame.seedTask({ projectId: project.id, title: 't', items: [{ title: 'a' }, { title: 'b' }] });
      const updated = (await call(tame, 'POST', `/task/${task.id}`, { id: task.id, projectId: project.id, items: [task.items![1]] })).json;
      expect(updated.items.map((i: { id: string }) => i.id)).toEqual([task.items![1]!.id]);
    } finally {
      await tame.close();
    }
  });

  it('clears content when a TEXT task becomes a CHECKLIST via update, unless the quirk is off', async () => {
    const project = sim.seedProject({ name: 'content' });
    const task = sim.seedTask({ projectId: project.id, title: 'text', content: 'my notes', desc: 'kept' });
    expect(task.kind).toBe('TEXT');
    const updated = (await call(sim, 'POST', `/task/${task.id}`, { id: task.id, projectId: project.id, content: 'my notes', items: [{ title: 'x' }] })).json;
    expect(updated.kind).toBe('CHECKLIST');
    expect(updated.content).toBe('');
    expect(updated.desc).toBe('kept');
    const back = (await call(sim, 'POST', `/task/${task.id}`, { id: task.id, projectId: project.id, items: [] })).json;
    expect(back.kind).toBe('TEXT');

    const tame = await startSimulator({ quirks: { clearContentOnChecklist: false } });
    try {
      const p2 = tame.seedProject({ name: 'tame' });
      const t2 = tame.seedTask({ projectId: p2.id, title: 'text', content: 'my notes' });
      const u2 = (await call(tame, 'POST', `/task/${t2.id}`, { id: t2.id, projectId: p2.id, items: [{ title: 'x' }] })).json;
      expect(u2).toMatchObject({ kind: 'CHECKLIST', content: 'my notes' });
    } finally {
      await tame.close();
    }
  });
});

describe('completion', () => {
  it('removes completed tasks from /data but keeps them readable, completedTime never cleared', async () => {
    const project = sim.seedProject({ name: 'complete' });
    const task = sim.seedTask({ projectId: project.id, title: 'finish me' });
    expect((await call(sim, 'POST', `/project/${project.id}/task/${task.id}/complete`)).status).toBe(200);
    const data = (await call(sim, 'GET', `/project/${project.id}/data`)).json;
    expect(data.tasks.map((t: { id: string }) => t.id)).not.toContain(task.id);
    const got = (await call(sim, 'GET', `/project/${project.id}/task/${task.id}`)).json;
    expect(got.status).toBe(2);
    expect(got.completedTime).toMatch(NO_MILLIS);
    // status in an update body is ignored: the task stays completed
    const upd = (await call(sim, 'POST', `/task/${task.id}`, { id: task.id, projectId: project.id, status: 0 })).json;
    expect(upd.status).toBe(2);
    expect(upd.completedTime).toBe(got.completedTime);
    expect(sim.listTasks(project.id)).toHaveLength(0);
    expect(sim.listTasks(project.id, { includeCompleted: true }).map((t) => t.id)).toEqual([task.id]);
  });

  it('advances a repeating task to its next occurrence and records a completed copy', async () => {
    const project = sim.seedProject({ name: 'repeat' });
    const daily = sim.seedTask({
      projectId: project.id,
      title: 'standup',
      startDate: '2026-03-05T01:00:00+0000',
      dueDate: '2026-03-05T01:30:00+0000',
      repeatFlag: 'RRULE:FREQ=WEEKLY;INTERVAL=2',
      items: [{ title: 'a', status: 1 }],
    });
    await call(sim, 'POST', `/project/${project.id}/task/${daily.id}/complete`);
    const open = sim.getTask(daily.id)!;
    expect(open.status).toBe(0);
    expect(open.startDate).toBe('2026-03-19T01:00:00+0000');
    expect(open.dueDate).toBe('2026-03-19T01:30:00+0000');
    expect(open.items?.[0]?.status).toBe(0);
    const all = sim.listTasks(project.id, { includeCompleted: true });
    const copy = all.find((t) => t.id !== daily.id)!;
    expect(copy).toMatchObject({ title: 'standup', status: 2, startDate: '2026-03-05T01:00:00+0000' });
    const data = (await call(sim, 'GET', `/project/${project.id}/data`)).json;
    expect(data.tasks.map((t: { id: string }) => t.id)).toEqual([daily.id]);

    const monthly = sim.seedTask({ projectId: project.id, title: 'rent', dueDate: '2026-01-31T00:00:00.000+0000', repeatFlag: 'RRULE:FREQ=MONTHLY' });
    await call(sim, 'POST', `/project/${project.id}/task/${monthly.id}/complete`);
    expect(sim.getTask(monthly.id)?.dueDate).toBe('2026-02-28T00:00:00.000+0000');
  });
});

describe('dates, ids and comments', () => {
  it('emits both date forms (with and without milliseconds), all parseable', async () => {
    const project = sim.seedProject({ name: 'dates' });
    const created = (await call(sim, 'POST', '/task', { projectId: project.id, title: 'd' })).json;
    expect(created.createdTime).toMatch(MILLIS);
    expect(created.modifiedTime).toMatch(MILLIS);
    await call(sim, 'POST', `/project/${project.id}/task/${created.id}/complete`);
    const done = (await call(sim, 'GET', `/project/${project.id}/task/${created.id}`)).json;
    expect(done.completedTime).toMatch(NO_MILLIS);
    const comment = (await call(sim, 'POST', `/project/${project.id}/task/${created.id}/comment`, { title: 'hi' })).json;
    expect(comment.createdTime).toMatch(MILLIS);
    for (const value of [created.createdTime, done.completedTime, comment.createdTime]) expect(parseDidaDate(value)).toBeInstanceOf(Date);
  });

  it('uses the injected clock for timestamps and changes the etag on every write', async () => {
    let clock = Date.UTC(2026, 2, 5, 8, 0, 0, 250);
    const timed = await startSimulator({ now: () => clock });
    try {
      const project = timed.seedProject({ name: 'clock' });
      const created = (await call(timed, 'POST', '/task', { projectId: project.id, title: 'x' })).json;
      expect(created.createdTime).toBe('2026-03-05T08:00:00.250+0000');
      clock += 60_000;
      const updated = (await call(timed, 'POST', `/task/${created.id}`, { id: created.id, projectId: project.id, title: 'y' })).json;
      expect(updated.modifiedTime).toBe('2026-03-05T08:01:00.250+0000');
      expect(updated.createdTime).toBe(created.createdTime);
      expect(updated.etag).toMatch(/^[a-z0-9]{8}$/);
      expect(updated.etag).not.toBe(created.etag);
      const edited = timed.editTask(created.id, { title: 'by hand' });
      expect(edited.etag).not.toBe(updated.etag);
      expect((await call(timed, 'GET', `/project/${project.id}/task/${created.id}`)).json.title).toBe('by hand');
    } finally {
      await timed.close();
    }
  });

  it('sends comment userId as a JSON number and can add comments from another user', async () => {
    const project = sim.seedProject({ name: 'identity' });
    const task = sim.seedTask({ projectId: project.id, title: 't' });
    await call(sim, 'POST', `/project/${project.id}/task/${task.id}/comment`, { title: 'mine' });
    sim.addComment(project.id, task.id, '请返工', { userId: '987654321' });
    const list = await call(sim, 'GET', `/project/${project.id}/task/${task.id}/comments`);
    expect(list.text).toContain(`"userId":${sim.userId}`);
    expect(list.text).toContain('"userId":987654321');
    expect(list.json.map((c: { userId: unknown }) => c.userId)).toEqual([Number(sim.userId), 987654321]);
  });

  it('caps comment lists at the first 200 in creation order', async () => {
    const project = sim.seedProject({ name: 'many comments' });
    const task = sim.seedTask({ projectId: project.id, title: 't' });
    for (let i = 0; i < 205; i++) sim.addComment(project.id, task.id, `c${i}`);
    const list = (await call(sim, 'GET', `/project/${project.id}/task/${task.id}/comments`)).json;
    expect(list).toHaveLength(200);
    expect(list[0].title).toBe('c0');
    expect(list[199].title).toBe('c199');
    expect(sim.listComments(task.id)).toHaveLength(205);
  });

  it('pages GET /project with offset/limit, limit defaulting to and capped at 200', async () => {
    const many = await startSimulator();
    try {
      for (let i = 0; i < 250; i++) many.seedProject({ name: `p${i}` });
      const all = (await call(many, 'GET', '/project')).json;
      expect(all).toHaveLength(200);
      expect(all[0].name).toBe('p0');
      const second = (await call(many, 'GET', '/project?offset=200')).json;
      expect(second.map((p: { name: string }) => p.name)).toEqual(Array.from({ length: 50 }, (_, i) => `p${i + 200}`));
      expect((await call(many, 'GET', '/project?offset=10&limit=5')).json.map((p: { name: string }) => p.name)).toEqual(['p10', 'p11', 'p12', 'p13', 'p14']);
      expect((await call(many, 'GET', '/project?limit=500')).json).toHaveLength(200);
      expect((await call(many, 'GET', '/project?offset=-1')).status).toBe(400);
      for (const p of all) expect(p.id).toMatch(/^[0-9a-f]{24}$/);
    } finally {
      await many.close();
    }
  });
});
