// `dida-todo bind`, `unbind` and `lists` against the simulator.
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { closedPort, failureLine, makeCliHome, modeOf, oneErrorLine, type CliHome } from '../helpers/cli-harness';

let sim: Simulator;
let h: CliHome;
let base: string[];
let work: { id: string };
let old: { id: string };

beforeEach(async () => {
  sim = await startSimulator();
  work = sim.seedProject({ name: 'Work' });
  old = sim.seedProject({ name: 'Old', closed: true });
  h = await makeCliHome();
  base = ['--base-url', sim.baseUrl];
  expect((await h.run(['login', '--token', sim.token, ...base])).code).toBe(0);
});

afterEach(async () => {
  await sim.close();
  await h.cleanup();
});

describe('bind', () => {
  it('binds the current directory to the open list with that name', async () => {
    const result = await h.run(['bind', 'Work', ...base]);
    expect(result.code).toBe(0);
    expect(result.out).toContain(`Bound ${h.project} → "Work" (${work.id})`);
    expect(await readFile(h.configFile, 'utf8')).toContain(`projectId: ${work.id}`);
    expect(await modeOf(h.configFile)).toBe(0o600);
    expect(result.out + result.err).not.toContain(sim.token);
  });

  it('creates the list when no open list has the name (an archived one does not count), JSON output', async () => {
    const result = await h.run(['bind', 'Old', '--cwd', h.project, ...base, '--json']);
    expect(result.code).toBe(0);
    const json = result.json<{ ok: boolean; cwd: string; projectId: string; name: string; created: boolean }>();
    expect(json).toMatchObject({ ok: true, cwd: h.project, name: 'Old', created: true });
    expect(json.projectId).not.toBe(old.id);
    expect(sim.listProjects().filter((p) => p.name === 'Old')).toHaveLength(2);
  });

  it('resolves --cwd relative to the current directory and rebinding replaces the binding', async () => {
    const sub = path.join(h.project, 'sub');
    await mkdir(sub);
    expect((await h.run(['bind', 'Work', '--cwd', 'sub', ...base])).code).toBe(0);
    const again = await h.run(['bind', 'Other list', '--cwd', 'sub', ...base, '--json']);
    expect(again.code).toBe(0);
    const text = await readFile(h.configFile, 'utf8');
    expect(text.match(/cwd:/g)).toHaveLength(1);
    expect(text).toContain(sub);
    expect(text).toContain('label: Other list');
  });

  it('binds with a route tag, keeps it when bound again, removes it with --no-tag, and status shows it', async () => {
    const tagged = await h.run(['bind', 'Work', '--tag', '#Web', ...base]);
    expect(tagged.code).toBe(0);
    expect(tagged.out).toContain('Route tag #web');
    expect(await readFile(h.configFile, 'utf8')).toContain('tag: web');
    const status = await h.run(['status', ...base]);
    expect(status.out).toContain(`"Work" (${work.id}) #web`);
    const again = await h.run(['bind', 'Work', ...base, '--json']);
    expect(again.json<{ tag: string | null }>().tag).toBe('web');
    const removed = await h.run(['bind', 'Work', '--no-tag', ...base, '--json']);
    expect(removed.json<{ tag: string | null }>().tag).toBeNull();
    expect(await readFile(h.configFile, 'utf8')).not.toContain('tag:');
  });

  it('refuses a route tag with spaces, or --tag with --no-tag, and writes nothing', async () => {
    const bad = await h.run(['bind', 'Work', '--tag', 'two words', ...base]);
    expect(bad.code).toBe(2);
    expect(oneErrorLine(bad)).toContain('"two words" is not a route tag');
    const both = await h.run(['bind', 'Work', '--tag', 'web', '--no-tag', ...base]);
    expect(both.code).toBe(2);
    expect(await readFile(h.configFile, 'utf8')).not.toContain('bindings:\n  -');
  });

  it('refuses an ambiguous name, listing the ids, and writes nothing', async () => {
    const twin = sim.seedProject({ name: 'Work' });
    const result = await h.run(['bind', 'Work', ...base]);
    expect(result.code).toBe(2);
    const line = oneErrorLine(result);
    expect(line).toContain(work.id);
    expect(line).toContain(twin.id);
    expect(line).toMatch(/bind one by id/);
    expect(await readFile(h.configFile, 'utf8')).not.toContain('bindings:\n  -');
  });

  it('binds by --id, and refuses an archived or unknown id', async () => {
    const ok = await h.run(['bind', '--id', work.id, ...base, '--json']);
    expect(ok.code).toBe(0);
    expect(ok.json()).toMatchObject({ projectId: work.id, name: 'Work', created: false });

    const before = await readFile(h.configFile, 'utf8');
    const archived = await h.run(['bind', '--id', old.id, '--cwd', h.root, ...base]);
    expect(archived.code).toBe(2);
    expect(oneErrorLine(archived)).toMatch(/"Old" is archived/);
    const unknown = await h.run(['bind', '--id', 'no-such-list', '--cwd', h.root, ...base, '--json']);
    expect(unknown.code).toBe(2);
    expect(unknown.json()).toMatchObject({ ok: false, exitCode: 2, error: { code: 'list_missing' } });
    expect(await readFile(h.configFile, 'utf8')).toBe(before);
  });

  it.each([
    [['bind'], /Pass the name of the Dida list/],
    [['bind', 'A', 'B'], /Pass one list name; quote names with spaces/],
    [['bind', 'A', '--id', 'x'], /either a list name or --id/],
    [['bind', 'A', '--cwd', '/definitely/not/here'], /is not an existing directory/],
    [['bind', 'x'.repeat(201)], /has 201 characters.*at most 200.*nothing was changed/],
  ])('usage error %j exits 2', async (argv, pattern) => {
    const before = await readFile(h.configFile, 'utf8');
    sim.resetCounters();
    const result = await h.run([...argv, ...base]);
    expect(result.code).toBe(2);
    expect(oneErrorLine(result)).toMatch(pattern);
    expect(await readFile(h.configFile, 'utf8')).toBe(before);
    expect(sim.totalRequests()).toBe(0);
  });

  it('without a token exits 3; with a rejected token exits 3 naming the source; unreachable exits 1', async () => {
    await h.run(['logout']);
    const none = await h.run(['bind', 'Work', ...base]);
    expect(none.code).toBe(3);
    expect(oneErrorLine(none)).toMatch(/No Dida token is configured.*dida-todo login/);

    const rejected = await h.run(['bind', 'Work', ...base], { env: { DIDA_TODO_TOKEN: 'stale-token-0123456789' } });
    expect(rejected.code).toBe(3);
    expect(oneErrorLine(rejected)).toMatch(/Dida rejected the token from the DIDA_TODO_TOKEN environment variable \(401 from http:\/\/127\.0\.0\.1:\d+\/open\/v1\); set DIDA_TODO_TOKEN/);
    expect(rejected.err).not.toContain('stale-token-0123456789');

    const before = await readFile(h.configFile, 'utf8');
    const port = await closedPort();
    const down = await h.run(['bind', 'Work', '--base-url', `http://127.0.0.1:${port}/open/v1`], { env: { DIDA_TODO_TOKEN: sim.token } });
    expect(down.code).toBe(1);
    // A loopback address is a simulator: it is named as one that is not running, not as a network problem.
    expect(failureLine(down)).toContain(`The simulator at http://127.0.0.1:${port}/open/v1 is not running (start it with`);
    expect(await readFile(h.configFile, 'utf8')).toBe(before);
  });
});

describe('bind: a name close to an open list, the home folder and /', () => {
  const lists = () => sim.listProjects().map((p) => p.name).sort();

  it('refuses a typo of an open list with "did you mean", creates nothing and writes nothing; --create creates it', async () => {
    const office = sim.seedProject({ name: '工作清单' });
    const before = await readFile(h.configFile, 'utf8');
    const typo = await h.run(['bind', '工作清丹', ...base]);
    expect(typo.code).toBe(2);
    expect(failureLine(typo)).toBe('dida-todo: No open Dida list is named 「工作清丹」; did you mean 「工作清单」? (add --create to make a new list) Nothing was changed.');
    expect(lists()).toEqual(['Old', 'Work', '工作清单']);
    expect(await readFile(h.configFile, 'utf8')).toBe(before);
    const zh = await h.run(['bind', '工作清丹', ...base, '--json'], { env: { LANG: 'zh_CN.UTF-8' } });
    expect(zh.json()).toMatchObject({ ok: false, exitCode: 2, error: { code: 'list_near_miss', message: expect.stringContaining('你是想绑定 「工作清单」 吗？（要新建列表请加 --create）') } });

    const created = await h.run(['bind', '工作清丹', '--create', ...base, '--json']);
    expect(created.code).toBe(0);
    expect(created.json()).toMatchObject({ name: '工作清丹', created: true });
    expect(lists()).toEqual(['Old', 'Work', '工作清丹', '工作清单']);

    const exact = await h.run(['bind', '工作清单', ...base, '--json']);
    expect(exact.json()).toMatchObject({ projectId: office.id, created: false });
  });

  it('takes the same name but for case, width, spaces or punctuation for a typo too', async () => {
    for (const name of ['work', 'Ｗｏｒｋ', ' W o r k ', 'Work!', 'Wrok']) {
      const result = await h.run(['bind', name, ...base]);
      expect(result.code, name).toBe(2);
      expect(failureLine(result), name).toContain('did you mean 「Work」?');
    }
    expect(lists()).toEqual(['Old', 'Work']);
  });

  it('a name far from every open list creates a new list, as before; an archived list\'s near name does not count', async () => {
    const far = await h.run(['bind', 'Personal notes', ...base, '--json']);
    expect(far.json()).toMatchObject({ name: 'Personal notes', created: true });
    const nearArchived = await h.run(['bind', 'Olf', ...base, '--json']);
    expect(nearArchived.json()).toMatchObject({ name: 'Olf', created: true });
  });

  it('one read of the lists serves the check and the binding', async () => {
    sim.resetCounters();
    expect((await h.run(['bind', 'Work', ...base])).code).toBe(0);
    expect(sim.counters()).toEqual({ 'GET /project': 1 });
  });

  it('refuses the home folder and / (every subdirectory would be bound) before asking Dida; --force binds it', async () => {
    const before = await readFile(h.configFile, 'utf8');
    sim.resetCounters();
    for (const [dir, what] of [
      [h.home, 'is your home folder: binding it binds every directory below it'],
      ['/', 'is the root folder: binding it binds every directory on this machine'],
    ] as const) {
      const result = await h.run(['bind', 'Work', '--cwd', dir, ...base]);
      expect(result.code, dir).toBe(2);
      const line = failureLine(result);
      expect(line).toContain(`${dir} ${what}`);
      expect(line).toContain('`cd` into a project directory');
      expect(line).toContain('--force');
    }
    const fromHome = await h.run(['bind', 'Work', ...base], { cwd: h.home });
    expect(fromHome.code).toBe(2);
    expect(sim.totalRequests()).toBe(0);
    expect(await readFile(h.configFile, 'utf8')).toBe(before);
    const forced = await h.run(['bind', 'Work', '--cwd', h.home, '--force', ...base, '--json']);
    expect(forced.code).toBe(0);
    expect(forced.json()).toMatchObject({ cwd: h.home, projectId: work.id });
    // A project inside the home folder is fine.
    expect((await h.run(['bind', 'Work', ...base])).code).toBe(0);
  });
});

describe('unbind', () => {
  it('removes the binding of the directory', async () => {
    await h.run(['bind', 'Work', ...base]);
    const result = await h.run(['unbind', '--json']);
    expect(result.code).toBe(0);
    expect(result.json()).toEqual({ ok: true, cwd: h.project, projectId: work.id, label: 'Work' });
    expect(await readFile(h.configFile, 'utf8')).not.toContain(work.id);
    expect(sim.listProjects().some((p) => p.id === work.id)).toBe(true);
  });

  it('exits 4 when the directory is not bound, and names the ancestor binding it inherits', async () => {
    const none = await h.run(['unbind']);
    expect(none.code).toBe(4);
    expect(oneErrorLine(none)).toMatch(/is not bound to a Dida list/);

    await h.run(['bind', 'Work', '--cwd', h.root, ...base]);
    const before = await readFile(h.configFile, 'utf8');
    const inherited = await h.run(['unbind', '--cwd', h.project]);
    expect(inherited.code).toBe(4);
    expect(oneErrorLine(inherited)).toContain(`unbind --cwd ${h.root}`);
    expect(await readFile(h.configFile, 'utf8')).toBe(before);
  });
});

describe('lists', () => {
  it('shows every list with id, archived flag and bound directories', async () => {
    await h.run(['bind', 'Work', ...base]);
    const result = await h.run(['lists', ...base, '--json']);
    expect(result.code).toBe(0);
    expect(result.json()).toEqual({
      ok: true,
      baseUrl: sim.baseUrl,
      lists: [
        { id: work.id, name: 'Work', archived: false, boundDirs: [h.project] },
        { id: old.id, name: 'Old', archived: true, boundDirs: [] },
      ],
      missingLists: [],
    });
    const human = await h.run(['lists', ...base]);
    expect(human.out).toMatch(new RegExp(`Work\\s+${work.id}\\s+← ${h.project}`));
    expect(human.out).toMatch(/Old\s+\S+ \[archived\]/);
    expect(human.out).not.toMatch(/\u001b\[/);
  });

  it('reports bindings whose list was deleted', async () => {
    await h.run(['bind', 'Work', ...base]);
    sim.deleteProject(work.id);
    const result = await h.run(['lists', ...base, '--json']);
    expect(result.json()).toMatchObject({ missingLists: [{ cwd: h.project, projectId: work.id, label: 'Work' }] });
  });

  it('uses colours only on a terminal without NO_COLOR', async () => {
    const tty = await h.run(['lists', ...base], { tty: true });
    expect(tty.out).toMatch(/\u001b\[/);
    const noColor = await h.run(['lists', ...base], { tty: true, env: { NO_COLOR: '1' } });
    expect(noColor.out).not.toMatch(/\u001b\[/);
    const json = await h.run(['lists', ...base, '--json'], { tty: true });
    expect(json.out).not.toMatch(/\u001b\[/);
  });

  it('tells stderr what it is waiting for when Dida is slower than a second', async () => {
    sim.setLatency(1_300);
    const result = await h.run(['lists', ...base, '--json']);
    sim.setLatency(0);
    expect(result.code).toBe(0);
    expect(result.err).toBe('Reading your Dida lists…\n');
    expect(result.json<{ lists: unknown[] }>().lists).toHaveLength(2);
  });

  it('a 401 exits 3 and a takes-no-arguments mistake exits 2', async () => {
    sim.injectFault({ route: 'GET /project', kind: 'status', status: 401, times: 1 });
    const rejected = await h.run(['lists', ...base]);
    expect(rejected.code).toBe(3);
    expect(oneErrorLine(rejected)).toMatch(/Dida rejected the token from .*credentials\.json/);
    const usage = await h.run(['lists', 'Work']);
    expect(usage.code).toBe(2);
    oneErrorLine(usage);
  });
});
