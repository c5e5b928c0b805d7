// Soak of several machines on one Dida account (npm run soak:machines, ~8 minutes; not part of npm test): 3 machines
// (3 homes: their own config.yaml, state, locks and request budget; one token, one list), each a real process with two
// sessions, the simulator's rate-limit variant with the live limits (100 requests a minute, 300 in five, per account),
// and 30 tasks written in the first half minute, more than the account's limit can carry at once. Afterwards: every
// task was done exactly once, nothing was lost, Dida answered 429 only in the first minutes (counted), and after them
// the three machines together stayed within the account's limits in every minute and every five minutes.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { hasPendingWrite } from '../../src/core/work/task-writer';
import { shareNow } from '../../src/dida/request-budget';
import { SIM_VARIANTS } from '../../src/sim/sim-variants';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { readBudgets } from '../../src/store/budget-store';
import { openEngineStore } from '../../src/wiring/runtime';
import { buildScript } from '../helpers/build-script';
import type { ChildSpec } from '../helpers/poll-child';
import { readJsonLines } from '../helpers/json-lines';
import { classifyRequests, phaseRows, seen, type SeenRequest } from '../helpers/request-phases';

const here = path.dirname(fileURLToPath(import.meta.url));
const MACHINES = Number(process.env.DIDA_TODO_SOAK_MACHINES ?? 3);
const TASKS = Number(process.env.DIDA_TODO_SOAK_TASKS ?? 30);
/** Tasks are written over this long at the start. */
const SPREAD_MS = Number(process.env.DIDA_TODO_SOAK_SPREAD_MS ?? 30_000);
/** How long everything may take. */
const FINISH_MS = Number(process.env.DIDA_TODO_SOAK_FINISH_MS ?? 12 * 60_000);
/** Dida's 429s must all fall within this long of the first task ("the first minutes"). */
const SETTLING_MS = Number(process.env.DIDA_TODO_SOAK_SETTLING_MS ?? 5 * 60_000);
const LIVE = SIM_VARIANTS['rate-limit'];
const PER_MINUTE = LIVE.rateLimitPerMinute as number;
const PER_FIVE = LIVE.rateLimitPerFiveMinutes as number;
const STEP = '完成这项工作';

const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The most of `counts` (requests per second, in order) in any `seconds` seconds from index `from` on. */
function busiestFrom(counts: readonly number[], seconds: number, from: number): number {
  let most = 0;
  for (let start = from; start < counts.length; start++) {
    let sum = 0;
    for (let i = start; i < Math.min(counts.length, start + seconds); i++) sum += counts[i] as number;
    most = Math.max(most, sum);
  }
  return most;
}

describe(`soak: ${MACHINES} machines on one account under its live rate limit`, () => {
  it(`${TASKS} tasks: each done once, nothing lost, 429s only in the first minutes, then within the account's limits`, async () => {
    const script = await buildScript(path.join(here, '../helpers/poll-child.ts'));
    const root = await mkdtemp(path.join(os.tmpdir(), 'dida-soak-machines-'));
    const sim: Simulator = await startSimulator({ quirks: LIVE });
    const requests: SeenRequest[] = [];
    sim.onRequest((info) => void requests.push(seen(info)));
    try {
      const list = sim.seedProject({ name: '共享清单' });
      const homes: Array<{ dir: string; stateDir: string; env: NodeJS.ProcessEnv }> = [];
      const events: Array<Record<string, any>> = [];
      for (let m = 0; m < MACHINES; m++) {
        const dir = path.join(root, `machine-${m + 1}`);
        const work = path.join(dir, 'project');
        await mkdir(work, { recursive: true });
        await mkdir(path.join(dir, 'config', 'dida-todo'), { recursive: true });
        await writeFile(path.join(dir, 'config', 'dida-todo', 'config.yaml'), `baseUrl: ${sim.baseUrl}\nhostLabel: machine-${m + 1}\nbindings:\n  - cwd: ${work}\n    projectId: ${list.id}\n`);
        const env = { ...process.env, HOME: dir, XDG_CONFIG_HOME: path.join(dir, 'config'), XDG_STATE_HOME: path.join(dir, 'state'), DIDA_TODO_TOKEN: sim.token };
        homes.push({ dir, stateDir: path.join(dir, 'state', 'dida-todo'), env });
        const spec: ChildSpec = {
          sessions: [
            { id: `session-m${m}a0000${m}`, cwd: work },
            { id: `session-m${m}b0000${m}`, cwd: work },
          ],
          mode: 'work',
          thinkMs: 300,
          workMs: 2_000,
          lists: [list.id],
          progressWindowSeconds: 60,
        };
        const child = spawn(process.execPath, [script, JSON.stringify(spec)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
        children.push(child);
        readJsonLines(child.stdout, (event) => events.push({ machine: m + 1, ...event }));
        child.stderr?.on('data', () => undefined);
      }

      // Arrivals (429s included) and refusals per second, sampled from the simulator's counters.
      const began = Date.now();
      const arrivals: number[] = [];
      const refusals: number[] = [];
      let lastTotal = sim.totalRequests();
      let lastRefused = sim.rateLimitRefusals();
      const sampler = setInterval(() => {
        const total = sim.totalRequests();
        const refused = sim.rateLimitRefusals();
        arrivals.push(total - lastTotal);
        refusals.push(refused - lastRefused);
        lastTotal = total;
        lastRefused = refused;
      }, 1_000);

      const tasks: string[] = [];
      for (let i = 0; i < TASKS; i++) {
        tasks.push(sim.seedTask({ projectId: list.id, title: `共享任务 ${i + 1}`, priority: 3 }).id);
        await sleep(SPREAD_MS / TASKS);
      }
      const reviewed = (id: string) => sim.listTasks(list.id).some((x) => x.title === `🧑‍🔬 待验收：${sim.getTask(id)?.title}`);
      const deadline = began + FINISH_MS;
      while (Date.now() < deadline && !tasks.every(reviewed)) await sleep(2_000);
      const doneAt = Date.now();
      // What is still owed to Dida (progress waiting for a budget cut short) must go out too.
      const stores = homes.map((h) => openEngineStore({ stateFile: path.join(h.stateDir, 'state.json'), lockDir: path.join(h.stateDir, 'locks') }));
      const owed = async () => {
        let n = 0;
        for (const store of stores) {
          const state = await store.state.read();
          n += state.outbox.length + Object.values(state.works).filter((w) => w.phase === 'open' && hasPendingWrite(w)).length;
        }
        return n;
      };
      while (Date.now() < deadline + 2 * 60_000 && (await owed()) > 0) await sleep(2_000);
      await sleep(5_000);
      clearInterval(sampler);
      const seconds = Math.round((Date.now() - began) / 1000);

      // Each machine's share of its budget at the end (its budget file).
      const shares = homes.map((h) => {
        const record = readBudgets(h.stateDir)[0]?.record ?? { stamps: [] };
        return { share: shareNow(record, Date.now()), cutFrom: record.cutFrom ?? null };
      });
      const claims = events.filter((e) => e.type === 'done');
      const perMachine = Array.from({ length: MACHINES }, (_, m) => claims.filter((e) => e.machine === m + 1 && e.work).length);
      const lastRefusal = refusals.reduce((last, n, i) => (n > 0 ? i : last), -1);
      const settled = Math.ceil(SETTLING_MS / 1000);
      const classified = classifyRequests(requests, (id) => sim.getTask(id)?.title);
      const fives: number[] = [];
      for (let start = 0; start + 300 <= arrivals.length || start === 0; start += 60) fives.push(arrivals.slice(start, start + 300).reduce((a, b) => a + b, 0));
      process.stderr.write(
        [
          `[soak] ${MACHINES} machines, ${TASKS} tasks: all reviewed after ${Math.round((doneAt - began) / 1000)} s; ${seconds} s in all; ${sim.totalRequests()} requests`,
          `[soak] Dida answered 429 ${sim.rateLimitRefusals()} times, the last at ${lastRefusal} s; per minute: ${JSON.stringify(Array.from({ length: Math.ceil(refusals.length / 60) }, (_, i) => refusals.slice(i * 60, i * 60 + 60).reduce((a, b) => a + b, 0)))}`,
          `[soak] requests per minute (all machines): ${JSON.stringify(Array.from({ length: Math.ceil(arrivals.length / 60) }, (_, i) => arrivals.slice(i * 60, i * 60 + 60).reduce((a, b) => a + b, 0)))}`,
          `[soak] requests per 5 minutes, from each minute on: ${JSON.stringify(fives)}`,
          `[soak] busiest minute / 5 minutes after ${settled} s: ${busiestFrom(arrivals, 60, settled)} / ${busiestFrom(arrivals, 300, settled)} (limits ${PER_MINUTE} / ${PER_FIVE})`,
          `[soak] Works done per machine: ${JSON.stringify(perMachine)}; shares at the end: ${JSON.stringify(shares.map((s) => `${Math.round(s.share * 100)} %${s.cutFrom !== null ? ` (cut from ${Math.round(s.cutFrom * 100)} %)` : ''}`))}`,
          `[soak] requests per Work by phase and route:`,
          ...phaseRows(classified, TASKS).map((r) => `  ${r.join(' | ')}`),
        ].join('\n') + '\n',
      );

      // Every task done exactly once: one review todo, its one step completed once, one completion note.
      const stuck: string[] = [];
      for (const id of tasks) {
        const title = sim.getTask(id)?.title as string;
        const reviews = sim.listTasks(list.id, { includeCompleted: true }).filter((x) => x.title === `🧑‍🔬 待验收：${title}`);
        const notes = sim
          .listComments(id)
          .flatMap((c) => c.title.split('\n\n'))
          .filter((c) => c.startsWith(`已完成：${STEP}`));
        const steps = (sim.getTask(id)?.items ?? []).filter((i) => i.title === STEP).length;
        if (reviews.length !== 1 || notes.length !== 1 || steps !== 1) stuck.push(`${title}: ${reviews.length} review(s), ${notes.length} note(s), ${steps} step(s)`);
      }
      if (stuck.length) {
        const records = await Promise.all(stores.map((store) => store.state.read()));
        const report = stuck.map((line) => {
          const id = tasks.find((t) => line.startsWith(`${sim.getTask(t)?.title}:`)) as string;
          const seenBy = records.map((r, m) => `machine-${m + 1}: ${JSON.stringify(((w) => w && { phase: w.phase, claim: w.claim, steps: w.steps.map((x) => x.status), waiting: !!w.waiting })(r.works[id]))}`);
          return `${line}\n  comments ${JSON.stringify(sim.listComments(id).map((c) => c.title))}\n  ${seenBy.join('\n  ')}`;
        });
        process.stderr.write(`${report.join('\n')}\n`);
      }
      expect(stuck).toEqual([]);
      // Nothing lost: nothing waits in any home, no tool call failed.
      expect(await owed()).toBe(0);
      expect(events.filter((e) => e.type === 'failed')).toEqual([]);
      expect(events.filter((e) => e.type === 'tool' && e.code !== 'ok' && e.code !== 'dida_unavailable')).toEqual([]);
      // 429s only in the first minutes; after them the machines together within the account's limits.
      expect(lastRefusal).toBeLessThan(settled);
      expect(busiestFrom(arrivals, 60, settled)).toBeLessThanOrEqual(PER_MINUTE);
      expect(busiestFrom(arrivals, 300, settled)).toBeLessThanOrEqual(PER_FIVE);
    } finally {
      for (const child of children) child.kill('SIGKILL');
      await sim.close();
      await rm(root, { recursive: true, force: true });
    }
  });
});
