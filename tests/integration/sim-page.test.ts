// The simulator's page (the person's phone) over HTTP: who may open it, and that each edit changes the store the way
// the Open API then shows it — as a person's edit in the Dida app.
import http from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import zhPage from '../../locale/sim.zh.json';
import enPage from '../../locale/sim.en.json';
import { keyDifferences } from '../../src/core/text/locale';
import { createHttpGateway } from '../../src/dida/http-gateway';
import type { DidaGateway } from '../../src/dida/dida-gateway';
import { pageCookieName } from '../../src/sim/sim-page';
import { startSimulator, type Simulator } from '../../src/sim/simulator';

let sim: Simulator;
let api: DidaGateway;
let list: { id: string };

beforeEach(async () => {
  sim = await startSimulator({ token: 'sim-page-token-0001' });
  api = createHttpGateway({ token: sim.token, baseUrl: sim.baseUrl, retry: { retries: 0 } });
  list = sim.seedProject({ name: '工作清单' });
});
afterEach(async () => {
  await api.close();
  await sim.close();
});

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json(): any;
}

/** A raw request, so Host, Origin and Cookie are exactly what a browser (or a hostile page) would send. */
function send(path: string, options: { method?: string; headers?: Record<string, string>; body?: unknown } = {}): Promise<Answer> {
  const body = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: sim.port, path, method: options.method ?? (body === undefined ? 'GET' : 'POST'), headers: { Host: `127.0.0.1:${sim.port}`, ...options.headers }, timeout: 5_000 },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const cookie = () => ({ Cookie: `${pageCookieName(sim.port)}=${encodeURIComponent(sim.token)}` });
const edit = (body: unknown, headers: Record<string, string> = {}) => send('/page/edit', { body, headers: { ...cookie(), 'Content-Type': 'application/json', Origin: `http://127.0.0.1:${sim.port}`, ...headers } });

describe('who may open the simulator page', () => {
  it('the page address with the token sets an HttpOnly, SameSite=Strict cookie for this simulator and leaves the token out of the address', async () => {
    const opened = await send(new URL(sim.pageUrl).pathname + new URL(sim.pageUrl).search);
    expect(opened.status).toBe(303);
    expect(opened.headers.location).toBe('/');
    const set = String(opened.headers['set-cookie']);
    expect(set).toContain(`${pageCookieName(sim.port)}=${sim.token}`);
    expect(set).toMatch(/HttpOnly/);
    expect(set).toMatch(/SameSite=Strict/);
    const page = await send('/', { headers: cookie() });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toMatch(/default-src 'none'; script-src 'nonce-[^']+'/);
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.text).toContain('<html lang="zh-CN">');
    expect(page.text).toContain('滴答模拟器');
    expect(page.text).not.toContain(sim.token);
    // The language follows the address.
    const english = await send('/?lang=en', { headers: cookie() });
    expect(english.text).toContain('<html lang="en">');
    expect(english.text).toContain('Dida simulator');
  });

  it('without the token, with a wrong or old one, from a foreign Host or a foreign Origin: a plain 403 saying what to open', async () => {
    const bare = await send('/');
    expect(bare.status).toBe(403);
    expect(bare.headers['content-type']).toMatch(/^text\/html/);
    expect(bare.text).toContain('需要模拟器的口令');
    expect(bare.text).toContain(`http://127.0.0.1:${sim.port}/?token=`);
    expect(bare.text).not.toContain('<script');
    const wrong = await send('/?token=nope');
    expect(wrong.status).toBe(403);
    expect(wrong.headers['set-cookie']).toBeUndefined();
    expect(wrong.text).toContain('口令不对');
    expect((await send('/page/data')).status).toBe(403);
    expect((await send('/page/data', { headers: { Cookie: `${pageCookieName(sim.port)}=nope` } })).status).toBe(403);
    // Another simulator's cookie (cookies ignore ports) is not this one's.
    expect((await send('/page/data', { headers: { Cookie: `${pageCookieName(sim.port + 1)}=${sim.token}` } })).status).toBe(403);
    // DNS rebinding: the right cookie, a foreign Host.
    expect((await send('/page/data', { headers: { ...cookie(), Host: `attacker.example:${sim.port}` } })).status).toBe(403);
    expect((await send('/', { headers: { ...cookie(), Host: `attacker.example:${sim.port}` } })).status).toBe(403);
    // Another web page posting an edit (even a "simple" text/plain one) is refused and changes nothing.
    const before = sim.listTasks(list.id).length;
    const cross = await edit({ op: 'addTask', projectId: list.id, title: 'from evil', priority: 5 }, { Origin: 'https://evil.example' });
    expect(cross.status).toBe(403);
    const plain = await edit({ op: 'addTask', projectId: list.id, title: 'from evil', priority: 5 }, { 'Content-Type': 'text/plain' });
    expect(plain.status).toBe(415);
    expect(sim.listTasks(list.id)).toHaveLength(before);
    // After the token changes, the old cookie no longer opens anything.
    sim.setToken('sim-page-token-0002');
    expect((await send('/page/data', { headers: { Cookie: `${pageCookieName(sim.port)}=sim-page-token-0001` } })).status).toBe(403);
  });

  it('answers the control token as a Bearer header too, and counts nothing as Open API traffic', async () => {
    const data = await send('/page/data', { headers: { Authorization: `Bearer ${sim.token}` } });
    expect(data.status).toBe(200);
    expect(data.json().lists).toEqual([{ id: list.id, name: '工作清单', closed: false }]);
    expect(sim.totalRequests()).toBe(0);
  });

  it('has one catalog per language with the same keys and placeholders', () => {
    expect(keyDifferences(zhPage, enPage)).toEqual({ missingInEn: [], missingInZh: [] });
    const marks = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
    for (const key of Object.keys(zhPage) as Array<keyof typeof zhPage>) expect(marks(enPage[key]), key).toEqual(marks(zhPage[key]));
  });
});

describe('the page edits Dida as a person does in the app', () => {
  it('adds a task with a description, priority, checklist and tags, seen by the Open API as a checklist task', async () => {
    const added = await edit({ op: 'addTask', projectId: list.id, title: '  修复登录  ', description: '手机上白屏', priority: 5, items: ['复现', ' ', '修复'], tags: ['#Web', 'bug', 'web'] });
    expect(added.status, added.text).toBe(200);
    const id = added.json().task.id as string;
    const [task] = (await api.getProjectData(list.id)).tasks;
    expect(task).toMatchObject({ id, title: '修复登录', desc: '手机上白屏', priority: 5, kind: 'CHECKLIST', status: 0, tags: ['web', 'bug'] });
    expect(task?.items?.map((i) => [i.title, i.status])).toEqual([['复现', 0], ['修复', 0]]);
    expect(task?.content ?? '').toBe('');

    const plain = (await edit({ op: 'addTask', projectId: list.id, title: '想法', description: '以后再说', priority: 0 })).json().task.id as string;
    expect(await api.getTask(list.id, plain)).toMatchObject({ title: '想法', content: '以后再说', priority: 0, kind: 'TEXT' });

    const refused = await edit({ op: 'addTask', projectId: list.id, title: '   ', priority: 3 });
    expect(refused.status).toBe(400);
    expect(refused.json().error).toMatch(/title is empty/);
    expect((await edit({ op: 'addTask', projectId: list.id, title: 'x', priority: 2 })).status).toBe(400);
    expect((await edit({ op: 'addTask', projectId: 'ffffffffffffffffffffffff', title: 'x', priority: 1 })).status).toBe(404);
    expect((await edit({ op: 'nope' })).status).toBe(400);
  });

  it('ticks and unticks an item, adds one, edits title and description, sets the priority: each a new version of the task', async () => {
    const seeded = sim.seedTask({ projectId: list.id, title: '写文档', desc: '旧的说明', priority: 3, items: [{ title: 'A' }, { title: 'B' }] });
    const versions = [seeded.etag];
    const version = async () => {
      const task = await api.getTask(list.id, seeded.id);
      expect(versions).not.toContain(task.etag);
      versions.push(task.etag);
      return task;
    };
    const [a] = seeded.items ?? [];
    expect((await edit({ op: 'setItem', taskId: seeded.id, itemId: a?.id, done: true })).status).toBe(200);
    let task = await version();
    expect(task.items?.map((i) => i.status)).toEqual([1, 0]);
    expect(task.items?.[0]?.completedTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0000$/);
    expect(task.items?.[0]?.id).toBe(a?.id);
    expect((await edit({ op: 'setItem', taskId: seeded.id, itemId: a?.id, done: false })).status).toBe(200);
    task = await version();
    expect(task.items?.map((i) => [i.status, i.completedTime ?? null])).toEqual([[0, null], [0, null]]);
    expect((await edit({ op: 'setItem', taskId: seeded.id, itemId: 'gone', done: true })).status).toBe(404);

    expect((await edit({ op: 'addItem', taskId: seeded.id, title: 'C' })).status).toBe(200);
    task = await version();
    expect(task.items?.map((i) => i.title)).toEqual(['A', 'B', 'C']);

    expect((await edit({ op: 'editTask', taskId: seeded.id, title: '写用户文档', description: '新的说明' })).status).toBe(200);
    task = await version();
    expect(task).toMatchObject({ title: '写用户文档', desc: '新的说明' });

    expect((await edit({ op: 'setPriority', taskId: seeded.id, priority: 0 })).status).toBe(200);
    task = await version();
    expect(task.priority).toBe(0);
  });

  it('completes a task (it leaves the list), reopens it, and comments as the account owner', async () => {
    const seeded = sim.seedTask({ projectId: list.id, title: '发布', priority: 3 });
    expect((await edit({ op: 'comment', taskId: seeded.id, text: '先别发，等我确认' })).status).toBe(200);
    const comments = await api.listComments(list.id, seeded.id);
    expect(comments.map((c) => [c.title, c.userId])).toEqual([['先别发，等我确认', sim.userId]]);
    expect((await edit({ op: 'comment', taskId: seeded.id, text: ' ' })).status).toBe(400);

    expect((await edit({ op: 'complete', taskId: seeded.id })).status).toBe(200);
    expect((await api.getProjectData(list.id)).tasks).toEqual([]);
    expect(await api.getTask(list.id, seeded.id)).toMatchObject({ status: 2 });
    const data = (await send('/page/data', { headers: cookie() })).json();
    expect(data.tasks).toEqual([expect.objectContaining({ id: seeded.id, done: true, commentCount: 1 })]);

    expect((await edit({ op: 'reopen', taskId: seeded.id })).status).toBe(200);
    const reopened = await api.getTask(list.id, seeded.id);
    expect(reopened.status).toBe(0);
    expect(reopened.completedTime ?? null).toBeNull();
    expect((await api.getProjectData(list.id)).tasks.map((t) => t.id)).toEqual([seeded.id]);
  });

  it('a repeating task completed on the page moves to its next occurrence, as in the app', async () => {
    const seeded = sim.seedTask({ projectId: list.id, title: '周报', priority: 1, startDate: '2026-12-04T01:00:00+0000', repeatFlag: 'RRULE:FREQ=WEEKLY;INTERVAL=1' });
    expect((await edit({ op: 'complete', taskId: seeded.id })).status).toBe(200);
    expect(await api.getTask(list.id, seeded.id)).toMatchObject({ status: 0, startDate: '2026-12-11T01:00:00+0000' });
    const data = (await send('/page/data', { headers: cookie() })).json();
    expect(data.tasks.map((t: { title: string; done: boolean; repeat: boolean }) => [t.title, t.done, t.repeat])).toEqual([['周报', false, true], ['周报', true, true]]);
  });

  it('shows the store as it is: open tasks in Dida order, dates as instants, comments marked mine or not', async () => {
    const first = sim.seedTask({ projectId: list.id, title: '<img src=x onerror=alert(1)>', priority: 5, dueDate: '2026-12-02T16:00:00+0000', isAllDay: true, timeZone: 'Asia/Shanghai', tags: ['web'] });
    sim.addComment(list.id, first.id, '🤖 desk 开始处理（会话 abcd1234）');
    sim.addComment(list.id, first.id, 'a collaborator', { userId: 42 });
    const data = (await send('/page/data', { headers: cookie() })).json();
    expect(data.tasks[0]).toMatchObject({ title: '<img src=x onerror=alert(1)>', due: '2026-12-02T16:00:00.000Z', allDay: true, timeZone: 'Asia/Shanghai', tags: ['web'] });
    expect(data.tasks[0].comments.map((c: { mine: boolean; userId: number }) => [c.mine, c.userId])).toEqual([[true, Number(sim.userId)], [false, 42]]);
    // The page itself carries no task text: everything from the store arrives as JSON and is set as text.
    const page = await send('/', { headers: cookie() });
    expect(page.text).not.toContain('onerror=alert');
  });
});
