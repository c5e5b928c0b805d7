// Suite `budget`: what the machine-wide request budget costs per Dida request — the gate alone (its lock, read and
// write of the shared file), one HTTP request with and without it (interleaved A/B against the simulator), and
// processes contending for it. The windows are shortened so the budget never makes anyone wait here: what is measured
// is the cost (the file then holds the stamps of the last five short "minutes"; at most 240 with the default budget).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHttpGateway } from '../../src/dida/http-gateway';
import { createRequestBudget, DEFAULT_BUDGET, withRequestPriority } from '../../src/dida/request-budget';
import { startSimulator } from '../../src/sim/simulator';
import { budgetStore, budgetFile, readBudgetFile } from '../../src/store/budget-store';
import { int, log, ms, runSuite, type BenchTable } from '../lib/harness';
import { interleavedAB, measure, summarize } from '../lib/stats';

/** A "minute" this short lets thousands of requests a second through. */
const MINUTE_MS = 20;
const KEY = 'bbbbbbbbbbbbbbbb';

function gateIn(dir: string) {
  return createRequestBudget({ store: budgetStore(dir, path.join(dir, 'locks'), KEY), limits: () => DEFAULT_BUDGET, minuteMs: MINUTE_MS });
}

/** Worker mode: `budget.mjs worker <dir> <count>` takes `count` stamps as fast as it can and prints the waits. */
async function worker(dir: string, count: number): Promise<void> {
  const gate = gateIn(dir);
  const waits = await measure(() => withRequestPriority('foreground', () => gate.acquire('GET /x')), count);
  process.stdout.write(`${JSON.stringify(waits)}\n`);
  process.exit(0);
}

function runWorker(dir: string, count: number): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [process.argv[1] as string, 'worker', dir, String(count)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as number[]) : reject(new Error(`budget worker exited ${code}`))));
  });
}

if (process.argv[2] === 'worker') {
  await worker(process.argv[3] as string, Number(process.argv[4]));
} else {
  runSuite('budget', 'Machine-wide request budget', async ({ quick }) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'dida-bench-budget-'));
    const tables: BenchTable[] = [];
    try {
      // The gate alone: acquire (lock, read, decide, write) + observe of a success.
      const gate = gateIn(dir);
      const alone = summarize(await measure(() => withRequestPriority('foreground', () => gate.acquire('GET /x')), quick ? 200 : 2_000, 100));
      const stamps = readBudgetFile(budgetFile(dir, KEY)).stamps.length;
      log(`gate alone: median ${ms(alone.median)} ms with ${stamps} stamps in the file`);

      // One HTTP request through the gateway, with and without the gate (interleaved).
      const sim = await startSimulator();
      const project = sim.seedProject({ name: 'bench' });
      const task = sim.seedTask({ projectId: project.id, title: 'bench task', priority: 3 });
      const plain = createHttpGateway({ token: sim.token, baseUrl: sim.baseUrl, retry: { retries: 0 } });
      const gated = createHttpGateway({ token: sim.token, baseUrl: sim.baseUrl, retry: { retries: 0 }, gate });
      const ab = await interleavedAB({
        warmup: 50,
        iterations: quick ? 100 : 1_000,
        a: () => withRequestPriority('foreground', () => gated.getTask(project.id, task.id)),
        b: () => plain.getTask(project.id, task.id),
      });
      await sim.close();
      const withGate = summarize(ab.a);
      const without = summarize(ab.b);

      // Processes contending: each takes its stamps as fast as it can.
      const contention: Array<{ processes: number; each: number; waits: ReturnType<typeof summarize>; perSecond: number }> = [];
      for (const processes of [2, 4]) {
        const each = quick ? 100 : 500;
        const started = performance.now();
        const runs = await Promise.all(Array.from({ length: processes }, () => runWorker(dir, each)));
        const seconds = (performance.now() - started) / 1000;
        contention.push({ processes, each, waits: summarize(runs.flat()), perSecond: (processes * each) / seconds });
        log(`${processes} processes: ${int((processes * each) / seconds)} stamps/s`);
      }

      tables.push({
        title: 'Cost of the machine-wide request budget per Dida request (milliseconds)',
        columns: ['what', 'detail', 'samples', 'median', 'p95', 'max'],
        rows: [
          ['gate alone', `acquire + stamp, ${stamps} stamps in the file`, int(alone.n), ms(alone.median), ms(alone.p95), ms(alone.max)],
          ['GET task, no gate', 'HTTP to the simulator (0 ms latency)', int(without.n), ms(without.median), ms(without.p95), ms(without.max)],
          ['GET task, through the gate', 'same, interleaved with the row above', int(withGate.n), ms(withGate.median), ms(withGate.p95), ms(withGate.max)],
          ...contention.map((c) => [`${c.processes} processes at once`, `${c.each} stamps each, ${int(c.perSecond)} stamps/s in all`, int(c.waits.n), ms(c.waits.median), ms(c.waits.p95), ms(c.waits.max)]),
        ],
        notes: [
          `Added per request: ${ms(withGate.median - without.median)} ms at the median (${ms(withGate.p95 - without.p95)} ms at p95); a live Dida round trip is 30–300 ms.`,
          `Windows shortened to a ${MINUTE_MS} ms "minute" so nobody waits. Contended rows: every acquisition is a hand-off of the lock between processes (a live machine makes about one request a second).`,
        ],
      });
      return { tables, data: { alone, withGate, without, contention, stamps } };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
