// Soak of the machine's polling (npm run soak:poll, ~30 minutes; not part of npm test): 8 sessions in 4 real processes
// over 2 lists, polling on, 50 tasks written at random moments, the simulator's rate-limit variant (100 a minute, 300 in
// five, per token), and the process polling the first list SIGKILLed twice (restarted each time, as dsh would be).
// Afterwards: every task was done exactly once, no 60 seconds (nor five minutes) carried more requests than the
// machine's budget, Dida never had to answer 429, and no progress comment or write was left behind (what waits for the
// budget when the last task is sent for review must be sent within DIDA_TODO_SOAK_DRAIN_MS, 5 minutes).
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { hasPendingWrite } from '../../src/core/work/task-writer';
import { DEFAULT_BUDGET } from '../../src/dida/request-budget';
import { SIM_VARIANTS } from '../../src/sim/sim-variants';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { openEngineStore } from '../../src/wiring/runtime';
import { buildScript } from '../helpers/build-script';
import type { ChildSpec } from '../helpers/poll-child';
import { readJsonLines } from '../helpers/json-lines';
import { classifyRequests, phaseRows, seen, type SeenRequest } from '../helpers/request-phases';

const here = path.dirname(fileURLToPath(import.meta.url));
const TASKS = Number(process.env.DIDA_TODO_SOAK_TASKS ?? 50);
/** Tasks are written at random moments over this long. */
const SPREAD_MS = Number(process.env.DIDA_TODO_SOAK_SPREAD_MS ?? 12 * 60_000);
/** After the last task, how long everything may take to be done. */
const FINISH_MS = Number(process.env.DIDA_TODO_SOAK_FINISH_MS ?? 20 * 60_000);
/** After every task was sent for review, how long the comments and writes still waiting for the budget may take. */
const DRAIN_MS = Number(process.env.DIDA_TODO_SOAK_DRAIN_MS ?? 5 * 60_000);

const children = new Map<ChildProcess, { slot: number; events: Array<Record<string, any>>; stderr: string; exited: boolean }>();
afterAll(() => {
  for (const child of children.keys()) child.kill('SIGKILL');
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The most requests in any window of `windowMs` among sorted arrival times. */
function busiest(times: readonly number[], windowMs: number): number {
  let most = 0;
  let start = 0;
  for (let end = 0; end < times.length; end++) {
    while ((times[end] as number) - (times[start] as number) >= windowMs) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
}

describe('soak: the machine poller under the rate limit, with its leader killed twice', () => {
  it(`${TASKS} tasks over 2 lists, 8 sessions in 4 processes: each done exactly once, within the budget, nothing lost`, async () => {
    const script = await buildScript(path.join(here, '../helpers/poll-child.ts'));
    const dir = await mkdtemp(path.join(os.tmpdir(), 'dida-soak-poll-'));
    const sim: Simulator = await startSimulator({ quirks: SIM_VARIANTS['rate-limit'] });
    const arrivals: number[] = [];
    const routes: Array<{ at: number; route: string }> = [];
    const requests: SeenRequest[] = [];
    sim.onRequest((info) => {
      arrivals.push(Date.now());
      routes.push({ at: Date.now(), route: `${info.method} ${info.route}` });
      requests.push(seen(info));
    });
    const logDir = process.env.DIDA_TODO_SOAK_LOG_DIR;
    if (logDir) await mkdir(logDir, { recursive: true });
    try {
      const lists = [sim.seedProject({ name: '前端' }), sim.seedProject({ name: '后端' })];
      const dirs = [path.join(dir, 'web'), path.join(dir, 'api')];
      for (const d of dirs) await mkdir(d, { recursive: true });
      await mkdir(path.join(dir, 'config', 'dida-todo'), { recursive: true });
      await writeFile(
        path.join(dir, 'config', 'dida-todo', 'config.yaml'),
        `baseUrl: ${sim.baseUrl}\nbindings:\n  - cwd: ${dirs[0]}\n    projectId: ${lists[0]!.id}\n  - cwd: ${dirs[1]}\n    projectId: ${lists[1]!.id}\n`,
      );
      const env = { ...process.env, HOME: dir, XDG_CONFIG_HOME: path.join(dir, 'config'), XDG_STATE_HOME: path.join(dir, 'state'), DIDA_TODO_TOKEN: sim.token };
      const start = (slot: number): ChildProcess => {
        const spec: ChildSpec = {
          sessions: [
            { id: `session-w${slot}00000${slot}`, cwd: dirs[0] as string },
            { id: `session-a${slot}00000${slot}`, cwd: dirs[1] as string },
          ],
          mode: 'work',
          thinkMs: 300,
          workMs: 2_000,
          recover: true,
          lists: lists.map((l) => l.id),
          // The product's default: a burst of step changes and its comments go out together, at the latest at settle.
          progressWindowSeconds: 60,
        };
        const child = spawn(process.execPath, [script, JSON.stringify(spec)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
        const record = { slot, events: [] as Array<Record<string, any>>, stderr: '', exited: false };
        children.set(child, record);
        child.once('exit', () => (record.exited = true));
        readJsonLines(child.stdout, (event) => {
          record.events.push(event);
          if (logDir) void appendFile(path.join(logDir, `slot-${slot}-${child.pid}.events`), `${JSON.stringify(event)}\n`);
        });
        child.stderr?.on('data', (chunk: Buffer) => {
          record.stderr = (record.stderr + chunk.toString()).slice(-20_000);
          if (logDir) void appendFile(path.join(logDir, `slot-${slot}-${child.pid}.log`), chunk);
        });
        return child;
      };
      for (let slot = 0; slot < 4; slot++) start(slot);
      const all = () => [...children.values()].flatMap((c) => c.events);
      const leaderOf = (listId: string): ChildProcess | undefined =>
        [...children.entries()].find(([, c]) => !c.exited && [...c.events].reverse().find((e) => e.type === 'lead' && e.list === listId)?.leads === true)?.[0];

      // Tasks at random moments; the first list's poller is killed at a third and at two thirds of the spread.
      const moments = Array.from({ length: TASKS }, () => Math.random() * SPREAD_MS).sort((a, b) => a - b);
      const kills = [SPREAD_MS / 3, (2 * SPREAD_MS) / 3];
      const began = Date.now();
      const tasks: Array<{ id: string; listId: string }> = [];
      let next = 0;
      while (next < moments.length || kills.length > 0) {
        const now = Date.now() - began;
        if (kills.length > 0 && now >= (kills[0] as number)) {
          kills.shift();
          const leader = leaderOf(lists[0]!.id);
          if (leader) {
            const slot = children.get(leader)!.slot;
            leader.kill('SIGKILL');
            await new Promise((resolve) => leader.once('exit', resolve));
            process.stderr.write(`[soak] killed the poller of the first list (slot ${slot}) at ${Math.round(now / 1000)} s; restarting it\n`);
            await sleep(2_000);
            start(slot);
          }
        }
        while (next < moments.length && now >= (moments[next] as number)) {
          const listId = lists[next % 2]!.id;
          tasks.push({ id: sim.seedTask({ projectId: listId, title: `浸泡任务 ${next + 1}`, priority: 3 }).id, listId });
          next++;
        }
        await sleep(250);
      }
      // Everything done: each task's Work sent for review.
      const deadline = Date.now() + FINISH_MS;
      while (Date.now() < deadline) {
        if (tasks.every((t) => sim.getTask(t.id)?.status === 2 || sim.listTasks(t.listId).some((x) => x.title === `🧑‍🔬 待验收：${sim.getTask(t.id)?.title}`))) break;
        await sleep(2_000);
      }
      // Then everything still owed to Dida (progress comments waiting in the outbox behind the budget, a pending write)
      // must go out: nothing lost means sent, within a bounded time once the tasks stop coming.
      const reviewedAt = Date.now();
      const store = openEngineStore({ stateFile: path.join(dir, 'state', 'dida-todo', 'state.json'), lockDir: path.join(dir, 'state', 'dida-todo', 'locks') });
      const owed = async () => {
        const now = await store.state.read();
        return now.outbox.length + Object.values(now.works).filter((w) => hasPendingWrite(w)).length;
      };
      const drainBy = Date.now() + DRAIN_MS;
      while (Date.now() < drainBy && (await owed()) > 0) await sleep(2_000);
      await sleep(10_000);
      process.stderr.write(`[soak] owed to Dida after the last review: drained in ${Math.round((Date.now() - reviewedAt) / 1000)} s (10 s of it a fixed wait)\n`);
      // What the requests were spent on: per route, and per minute since the first task could be written.
      const perRoute = new Map<string, number>();
      for (const r of routes) perRoute.set(r.route, (perRoute.get(r.route) ?? 0) + 1);
      const perMinute: number[] = [];
      for (const r of routes) perMinute[Math.max(0, Math.floor((r.at - began) / 60_000))] = (perMinute[Math.max(0, Math.floor((r.at - began) / 60_000))] ?? 0) + 1;
      process.stderr.write(`[soak] requests per route: ${JSON.stringify(Object.fromEntries([...perRoute].sort((a, b) => b[1] - a[1])))}\n[soak] requests per minute: ${JSON.stringify([...perMinute].map((n) => n ?? 0))}\n`);
      if (logDir) await writeFile(path.join(logDir, 'requests.json'), JSON.stringify(routes.map((r) => ({ ...r, at: r.at - began }))));
      const classified = classifyRequests(requests, (id) => sim.getTask(id)?.title);
      process.stderr.write(`[soak] requests per Work (${tasks.length} Works), by phase and route:\n${phaseRows(classified, tasks.length).map((r) => `  ${r.join(' | ')}`).join('\n')}\n`);

      // Every task done exactly once: one review todo, its one step completed once, one "completed" note.
      const stuck: string[] = [];
      for (const t of tasks) {
        const title = sim.getTask(t.id)?.title as string;
        const reviews = sim.listTasks(t.listId, { includeCompleted: true }).filter((x) => x.title === `🧑‍🔬 待验收：${title}`);
        const comments = sim.listComments(t.id).map((c) => c.title);
        const finished = comments.flatMap((c) => c.split('\n\n')).filter((c) => c.startsWith('已完成：完成这项工作'));
        const steps = (sim.getTask(t.id)?.items ?? []).filter((i) => i.title === '完成这项工作').length;
        if (reviews.length !== 1 || finished.length !== 1 || steps !== 1) stuck.push(`${title} (${t.id}): ${reviews.length} review(s), ${finished.length} completion note(s), ${steps} step(s); comments ${JSON.stringify(comments)}`);
      }
      if (stuck.length) {
        const { state } = openEngineStore({ stateFile: path.join(dir, 'state', 'dida-todo', 'state.json'), lockDir: path.join(dir, 'state', 'dida-todo', 'locks') });
        const snapshot = await state.read();
        const report = [
          ...stuck,
          `sessions: ${JSON.stringify(snapshot.sessions)}`,
          `works: ${JSON.stringify(Object.fromEntries(Object.entries(snapshot.works).map(([k, w]) => [k, { phase: w.phase, claim: w.claim, steps: w.steps.map((x) => x.status), waiting: !!w.waiting }])))}`,
          ...[...children.values()].map((c) => `slot ${c.slot}: ${JSON.stringify(c.events.filter((e) => e.type !== 'lead').slice(-30))}\n${c.stderr.slice(-3000)}`),
        ].join('\n');
        process.stderr.write(`${report}\n`);
        expect(stuck, report.slice(0, 4000)).toEqual([]);
      }
      // Within the budget the whole time, and Dida never had to refuse.
      const times = [...arrivals].sort((a, b) => a - b);
      expect(busiest(times, 60_000)).toBeLessThanOrEqual(DEFAULT_BUDGET.perMinute);
      expect(busiest(times, 5 * 60_000)).toBeLessThanOrEqual(DEFAULT_BUDGET.perFiveMinutes);
      expect(sim.rateLimitRefusals()).toBe(0);
      // Nothing lost: no progress comment waits, no write is pending, no tool call failed.
      const final = await store.state.read();
      expect(final.outbox).toEqual([]);
      expect(Object.values(final.works).filter((w) => hasPendingWrite(w)).map((w) => w.title)).toEqual([]);
      expect(all().filter((e) => e.type === 'failed')).toEqual([]);
      // A tool call told the budget is used up ("call it again in N seconds") is called again, as a model does; what
      // counts is that every call ended well, and that no call failed any other way.
      expect(all().filter((e) => e.type === 'tool' && e.code !== 'ok' && e.code !== 'dida_unavailable')).toEqual([]);
      expect(all().filter((e) => e.type === 'done' && (e.results as string[]).some((code) => code !== 'ok'))).toEqual([]);
      process.stderr.write(`[soak] tool calls told to call again later: ${all().filter((e) => e.type === 'tool' && e.code === 'dida_unavailable').length}\n`);
      process.stderr.write(`[soak] ${tasks.length} tasks, ${arrivals.length} requests, busiest minute ${busiest(times, 60_000)}, busiest 5 minutes ${busiest(times, 5 * 60_000)}\n`);
    } finally {
      for (const child of children.keys()) child.kill('SIGKILL');
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
