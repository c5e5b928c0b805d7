// `dida-todo queue` (the built command) against the simulator: the order an agent takes the Works, why the others wait,
// that reading the queue writes nothing into Dida, the terminal-safe table and the exit codes.
import { appendFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claimText } from '../../src/core/queue/claims';
import { getLocale } from '../../src/core/text/locale';
import { calendarDate } from '../../src/core/time/schedule';
import { WorkEngine } from '../../src/core/engine/work-engine';
import { formatDidaDate } from '../../src/dida/dida-date';
import { createHttpGateway } from '../../src/dida/http-gateway';
import type { DidaGateway } from '../../src/dida/dida-gateway';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { openEngineStore } from '../../src/wiring/runtime';
import { makeCliHome, oneErrorLine, type CliHome } from '../helpers/cli-harness';

interface QueueJson {
  ok: boolean;
  exitCode: number;
  binding: { projectId: string; label: string | null; tag: string | null };
  executable: number;
  works: Array<{
    position: number | null;
    taskId: string;
    title: string;
    level: string;
    executable: boolean;
    why: string | null;
    day: string | null;
    gate: string | null;
    routedTo: string | null;
    holder: { host: string; session: string | null } | null;
    paused: boolean;
    steps: { settled: number; total: number };
  }>;
}

/** Routes that change the simulator's state (POST /preference only reads the account's time zone). */
const WRITES = /^(POST|DELETE) (?!\/preference$)/;

let sim: Simulator;
let h: CliHome;
let base: string[];
let list: { id: string };
let gateway: DidaGateway;

beforeEach(async () => {
  sim = await startSimulator();
  list = sim.seedProject({ name: '工作清单' });
  h = await makeCliHome();
  base = ['--base-url', sim.baseUrl];
  gateway = createHttpGateway({ token: sim.token, baseUrl: sim.baseUrl, retry: { retries: 0 } });
  expect((await h.run(['login', '--token', sim.token, ...base])).code).toBe(0);
});

afterEach(async () => {
  await gateway.close();
  await sim.close();
  await h.cleanup();
});

/** An agent's engine on this machine's state (as a dsh session would have it), on another machine label. */
function engineAs(hostLabel: string): WorkEngine {
  const { state, locks } = openEngineStore({ stateFile: h.stateFile, lockDir: path.join(h.stateDir, 'locks') });
  return new WorkEngine({ gateway, state, locks, now: () => Date.now(), locale: getLocale('zh'), timeZone: 'Asia/Shanghai', hostLabel });
}

function writesIn(counters: Record<string, number>): string[] {
  return Object.keys(counters).filter((route) => WRITES.test(route));
}

describe('queue', () => {
  it('lists the Works in the order an agent takes them, says why the others wait, and writes nothing into Dida', async () => {
    const day = 24 * 60 * 60_000;
    const later = sim.seedTask({ projectId: list.id, title: '下周的事', priority: 5, startDate: formatDidaDate(Date.now() + 2 * day), isAllDay: true });
    const medium = sim.seedTask({ projectId: list.id, title: 'Write the docs', priority: 3 });
    const draft = sim.seedTask({ projectId: list.id, title: 'An idea', priority: 0 });
    const high = sim.seedTask({ projectId: list.id, title: 'Fix login', priority: 5, items: [{ title: 'reproduce', status: 1 }, { title: 'fix' }] });
    const settled = sim.seedTask({ projectId: list.id, title: 'All ticked', priority: 3, items: [{ title: 'only', status: 1 }] });
    const routed = sim.seedTask({ projectId: list.id, title: 'API change', priority: 5, tags: ['api'] });
    const held = sim.seedTask({ projectId: list.id, title: 'Held here', priority: 5 });
    const elsewhere = sim.seedTask({ projectId: list.id, title: 'Held on a laptop', priority: 5 });
    const asked = sim.seedTask({ projectId: list.id, title: 'Needs a decision', priority: 3 });
    expect((await h.run(['bind', '工作清单', ...base])).code).toBe(0);
    expect((await h.run(['bind', '工作清单', '--tag', 'api', '--cwd', h.home, '--force', ...base])).code).toBe(0);
    await appendFile(h.configFile, 'hostLabel: desk\n');

    // Sessions of this machine (label "desk", the CLI's too) took two Works; a laptop's session holds a third, which "desk" lost.
    const desk = engineAs('desk');
    await desk.sync(list.id);
    await desk.switchTo('session-aaaa1111', list.id, held.id);
    await desk.switchTo('session-bbbb2222', list.id, asked.id);
    await desk.waitForHuman('session-bbbb2222', 'Which database?');
    sim.addComment(list.id, elsewhere.id, claimText({ ...desk.deps, hostLabel: 'laptop' }, '', 'session-cccc3333'));
    await expect(desk.switchTo('session-dddd4444', list.id, elsewhere.id)).rejects.toMatchObject({ code: 'claimed_elsewhere' });

    sim.resetCounters();
    const comments = sim.state().comments.length;
    const result = await h.run(['queue', ...base, '--json']);
    expect(result.code, result.err).toBe(0);
    const json = result.json<QueueJson>();
    const byId = new Map(json.works.map((w) => [w.taskId, w]));
    // Executable first, by priority then Dida order (newest seeded first); the rest in Dida order.
    expect(json.works.filter((w) => w.executable).map((w) => w.taskId)).toEqual([high.id, medium.id]);
    expect(json.works.slice(0, 2).map((w) => w.position)).toEqual([1, 2]);
    expect(json.executable).toBe(2);
    expect(byId.get(high.id)).toMatchObject({ level: 'high', why: null, steps: { settled: 1, total: 2 } });
    expect(byId.get(draft.id)).toMatchObject({ position: null, executable: false, why: 'draft' });
    expect(byId.get(later.id)).toMatchObject({ why: 'scheduled', gate: 'not_today', day: calendarDate(new Date(Date.now() + 2 * day), 'Asia/Shanghai') });
    expect(byId.get(settled.id)).toMatchObject({ why: 'settled', steps: { settled: 1, total: 1 } });
    expect(byId.get(routed.id)).toMatchObject({ why: 'routed', routedTo: 'api' });
    expect(byId.get(held.id)).toMatchObject({ why: 'held', holder: { host: 'desk', session: 'aaaa1111' } });
    expect(byId.get(elsewhere.id)).toMatchObject({ why: 'held', holder: { host: 'laptop', session: 'cccc3333' } });
    expect(byId.get(asked.id)).toMatchObject({ why: 'waiting', paused: false });
    expect(json.works).toHaveLength(9);

    // Reading the queue: the list, the time zone, the one holder looked up — and not one write.
    expect(writesIn(sim.counters())).toEqual([]);
    expect(sim.counters()['GET /project/{pid}/data']).toBe(1);
    expect(sim.counters()['GET /project/{pid}/task/{tid}/comments']).toBeGreaterThanOrEqual(1);
    expect(sim.state().comments.length).toBe(comments);

    // The top of the queue is the Work an agent of this machine takes next in that directory (whose list also feeds #api).
    const taken = await desk.claimNext('session-eeee5555', list.id, undefined, { others: ['api'] });
    expect(taken?.taskId).toBe(high.id);
    const after = (await h.run(['queue', ...base, '--json'])).json<QueueJson>();
    expect(after.works.filter((w) => w.executable).map((w) => w.taskId)).toEqual([medium.id]);
    expect(after.works.find((w) => w.taskId === high.id)).toMatchObject({ why: 'held', holder: { host: 'desk', session: 'eeee5555' } });
  });

  it('a paused Work says so; the table is aligned by display width and shows Dida text escaped', async () => {
    const evil = sim.seedTask({ projectId: list.id, title: '发布\u001b]0;owned\u0007 说明', priority: 3 });
    sim.seedTask({ projectId: list.id, title: 'x', priority: 0 });
    expect((await h.run(['bind', '工作清单', ...base])).code).toBe(0);
    const desk = engineAs('desk');
    await desk.sync(list.id);
    await desk.switchTo('session-aaaa1111', list.id, evil.id);
    // The person sets its priority to none; the agent's next step boundary pauses it.
    sim.editTask(evil.id, { priority: 0 });
    const { pauseWork } = await import('../../src/core/phone/phone-pause');
    await pauseWork(desk.deps, evil.id, { by: 'priority', previousPriority: 3 });
    // What it cost so far is shown per Work (and as numbers with --json).
    const { recordUsage } = await import('../../src/core/work/usage-records');
    const { answerUsage } = await import('../../src/core/usage/usage');
    await recordUsage(desk.deps, evil.id, { ...answerUsage({ inputTokens: 12_000, outputTokens: 345 }, false), ms: 60_000 });
    const result = await h.run(['queue', ...base], { env: { LANG: 'zh_CN.UTF-8' } });
    expect(result.code, result.err).toBe(0);
    expect(result.out).toContain('1.2万 token，1 次');
    const json = (await h.run(['queue', ...base, '--json'])).json<{ works: Array<{ taskId: string; usage: Record<string, number> | null }> }>();
    expect(json.works.find((w) => w.taskId === evil.id)!.usage).toMatchObject({ requests: 1, inputTokens: 12_000, outputTokens: 345, tokens: 12_345, ms: 60_000 });
    expect(json.works.find((w) => w.taskId !== evil.id)!.usage).toBeNull();
    expect(result.out).not.toContain('\u001b');
    expect(result.out).toContain('发布\\x1b]0;owned\\x07 说明');
    expect(result.out).toContain('已被你暂停');
    expect(result.out).toContain('草稿（优先级为无）');
    expect(result.out).toMatch(/2 个未完成的工作，其中 0 个可执行/);
    const rows = result.out.split('\n').filter((l) => l.startsWith('–'));
    expect(rows).toHaveLength(2);
    // The reason column starts at the same display column on every row.
    const { displayWidth } = await import('../../src/cli/terminal-text');
    const starts = rows.map((row) => displayWidth(row.slice(0, row.search(/已被你暂停|草稿/))));
    expect(new Set(starts).size).toBe(1);
  });

  it('an empty list, a directory that is not bound (exit 4), no token (exit 3)', async () => {
    expect((await h.run(['bind', '工作清单', ...base])).code).toBe(0);
    const empty = await h.run(['queue', ...base]);
    expect(empty.code).toBe(0);
    expect(empty.out).toContain('The list has no open Works.');

    const elsewhere = await h.run(['queue', '--cwd', h.home, ...base]);
    expect(elsewhere.code).toBe(4);
    expect(oneErrorLine(elsewhere)).toMatch(/is not bound to a Dida list/);

    sim.deleteProject(list.id);
    const gone = await h.run(['queue', ...base, '--json']);
    expect(gone.code).toBe(4);
    expect(gone.err).toMatch(/no longer exists/);

    expect((await h.run(['logout'])).code).toBe(0);
    const noToken = await h.run(['queue', ...base]);
    expect(noToken.code).toBe(3);
  });
});
