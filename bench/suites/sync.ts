// Suite `sync`: one sync of lists of 10, 100 and 1,000 open tasks (the first = adoption) and no-change re-syncs:
// requests, wall time, CPU time and RSS high-water. The simulator runs in this process; the engine runs in a worker
// process (this bundle again, BENCH_SYNC_WORKER=1), one per list, so CPU and memory figures are the engine's alone.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { startEngineHarness } from '../../tests/helpers/engine-harness';
import { bytes, int, log, ms, runSuite, type BenchTable } from '../lib/harness';
import { median } from '../lib/stats';

type Counts = Record<string, number>;

interface SyncSample {
  wallMs: number;
  /** user + system CPU of the worker during the sync. */
  cpuMs: number;
  /** RSS high-water mark of the worker after the sync (process.resourceUsage().maxRSS). */
  maxRssBytes: number;
  adopted: number;
  updated: number;
}

interface WorkerHello {
  /** RSS high-water after imports and engine start, before any sync. */
  baselineMaxRssBytes: number;
}

interface CaseFigures {
  tasks: number;
  items: number;
  baselineMaxRssBytes: number;
  first: SyncSample & { requests: Counts };
  resyncs: Array<SyncSample & { requests: Counts }>;
  /** Non-GET requests summed over every re-sync; must be 0. */
  resyncWrites: number;
  stateFileBytes: number;
}

// ---- worker ------------------------------------------------------------------------------------------------------

async function syncWorker(): Promise<void> {
  const [baseUrl, token, projectId, warmProjectId] = process.argv.slice(2);
  if (!baseUrl || !token || !projectId || !warmProjectId) throw new Error('usage: <bundle> <baseUrl> <token> <projectId> <emptyProjectId> (BENCH_SYNC_WORKER=1)');
  // Only baseUrl and token of the simulator are used by the harness when it is given one.
  const h = await startEngineHarness({ sim: { baseUrl, token } as Simulator, timeoutMs: 60_000 });
  const lines = createInterface({ input: process.stdin });
  const waiting: Array<(line: string) => void> = [];
  const queued: string[] = [];
  lines.on('line', (line) => {
    const next = waiting.shift();
    if (next) next(line);
    else queued.push(line);
  });
  const nextLine = () => new Promise<string>((resolve) => (queued.length ? resolve(queued.shift() as string) : waiting.push(resolve)));
  const send = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);

  // Warm-up on an empty list: loads undici, opens the keep-alive socket, creates the state file, JITs the sync path.
  await h.engine.sync(warmProjectId);
  send({ baselineMaxRssBytes: process.resourceUsage().maxRSS * 1024 } satisfies WorkerHello);
  for (;;) {
    const command = await nextLine();
    if (command === 'exit') break;
    if (command === 'state') {
      const { stat } = await import('node:fs/promises');
      send({ stateFileBytes: (await stat(`${h.dir}/state.json`)).size });
      continue;
    }
    const cpu = process.cpuUsage();
    const started = performance.now();
    const report = await h.engine.sync(projectId);
    const wallMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    send({
      wallMs,
      cpuMs: (used.user + used.system) / 1000,
      maxRssBytes: process.resourceUsage().maxRSS * 1024,
      adopted: report.adopted.length,
      updated: report.updated.length,
    } satisfies SyncSample);
  }
  await h.close();
}

// ---- parent ------------------------------------------------------------------------------------------------------

function seedList(sim: Simulator, tasks: number, items: number): string {
  const project = sim.seedProject({ name: `Sync ${tasks}×${items}` });
  for (let t = 0; t < tasks; t++) {
    sim.seedTask({
      projectId: project.id,
      title: `Request ${t + 1}: make the gateway retry reads with backoff`,
      content: 'Reads sometimes fail with 502 right after a deploy; retry them a few times.',
      priority: [1, 3, 5][t % 3] as number,
      items: Array.from({ length: items }, (_, i) => ({ title: `Check ${i + 1} of request ${t + 1}` })),
    });
  }
  return project.id;
}

async function measureCase(sim: Simulator, tasks: number, items: number, resyncs: number): Promise<CaseFigures> {
  const projectId = seedList(sim, tasks, items);
  const warmProjectId = sim.seedProject({ name: 'Sync warm-up (empty)' }).id;
  const child = spawn(process.execPath, [process.argv[1] as string, sim.baseUrl, sim.token, projectId, warmProjectId], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, BENCH_SYNC_WORKER: '1', BENCH_RESULT_FILE: '' },
  });
  const queued: string[] = [];
  const waiting: Array<(line: string) => void> = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    const next = waiting.shift();
    if (next) next(line);
    else queued.push(line);
  });
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`sync worker exited with code ${code}`))));
  exited.catch(() => undefined);
  const read = async <T>(): Promise<T> => JSON.parse(await Promise.race([new Promise<string>((r) => (queued.length ? r(queued.shift() as string) : waiting.push(r))), exited])) as T;
  const timer = setTimeout(() => child.kill('SIGKILL'), 5 * 60_000);
  try {
    const hello = await read<WorkerHello>();
    const syncOnce = async () => {
      sim.resetCounters();
      child.stdin.write('sync\n');
      const sample = await read<SyncSample>();
      return { ...sample, requests: sim.counters() };
    };
    const first = await syncOnce();
    if (first.adopted !== tasks) throw new Error(`first sync adopted ${first.adopted} of ${tasks} tasks`);
    const again: CaseFigures['resyncs'] = [];
    for (let i = 0; i < resyncs; i++) again.push(await syncOnce());
    child.stdin.write('state\n');
    const { stateFileBytes } = await read<{ stateFileBytes: number }>();
    child.stdin.write('exit\n');
    let resyncWrites = 0;
    for (const r of again) {
      if (r.adopted !== 0 || r.updated !== 0) throw new Error(`a no-change re-sync adopted ${r.adopted} and updated ${r.updated}`);
      for (const [route, n] of Object.entries(r.requests)) if (!route.startsWith('GET ')) resyncWrites += n;
    }
    if (resyncWrites !== 0) throw new Error(`no-change re-syncs wrote to Dida: ${JSON.stringify(again.map((r) => r.requests))}`);
    return { tasks, items, baselineMaxRssBytes: hello.baselineMaxRssBytes, first, resyncs: again, resyncWrites, stateFileBytes };
  } finally {
    clearTimeout(timer);
    if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
  }
}

function requestsText(counts: Counts): string {
  const entries = Object.entries(counts).sort();
  if (entries.length === 0) return 'none';
  return entries.map(([route, n]) => `${n}× ${route.replace('/project/{pid}/task/{tid}', '…/task/{tid}')}`).join(', ');
}

if (process.env.BENCH_SYNC_WORKER === '1') {
  syncWorker().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`sync worker failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
} else {
  runSuite('sync', 'Sync scaling', async ({ quick }) => {
    const cases = quick
      ? [
          { tasks: 10, items: 3 },
          { tasks: 100, items: 3 },
        ]
      : [
          { tasks: 10, items: 3 },
          { tasks: 100, items: 3 },
          { tasks: 1000, items: 3 },
          { tasks: 1000, items: 30 },
        ];
    const resyncs = quick ? 3 : 7;
    const sim = await startSimulator();
    const figures: CaseFigures[] = [];
    try {
      for (const c of cases) {
        log(`${c.tasks} open tasks × ${c.items} items: first sync + ${resyncs} no-change re-syncs`);
        // Each list in its own project; earlier lists stay in the simulator but are never read by later workers.
        figures.push(await measureCase(sim, c.tasks, c.items, resyncs));
      }
    } finally {
      await sim.close();
    }

    const rows: string[][] = [];
    for (const f of figures) {
      const label = `${int(f.tasks)} × ${f.items}`;
      rows.push([
        label,
        'first (adopts all)',
        '1',
        String(Object.values(f.first.requests).reduce((a, b) => a + b, 0)),
        requestsText(f.first.requests),
        ms(f.first.wallMs),
        ms(f.first.cpuMs),
        bytes(f.first.maxRssBytes),
        bytes(f.first.maxRssBytes - f.baselineMaxRssBytes),
      ]);
      const last = f.resyncs[f.resyncs.length - 1] as CaseFigures['resyncs'][number];
      rows.push([
        label,
        'no-change re-sync',
        String(f.resyncs.length),
        String(Object.values(last.requests).reduce((a, b) => a + b, 0)),
        `${requestsText(last.requests)}; writes ${f.resyncWrites}`,
        ms(median(f.resyncs.map((r) => r.wallMs))),
        ms(median(f.resyncs.map((r) => r.cpuMs))),
        bytes(last.maxRssBytes),
        bytes(last.maxRssBytes - f.baselineMaxRssBytes),
      ]);
    }
    const table: BenchTable = {
      title: 'One sync of a list (engine in its own worker process; simulator at 0 ms latency)',
      columns: ['open tasks × items', 'sync', 'n', 'requests', 'by route', 'wall ms', 'CPU ms', 'RSS high-water', 'above baseline'],
      rows,
      notes: [
        `Re-sync figures are medians of ${resyncs}; requests and writes are per re-sync (every re-sync made the same requests). Non-GET requests over all no-change re-syncs: ${figures.map((f) => f.resyncWrites).join(', ')} (asserted 0).`,
        `RSS high-water = process.resourceUsage().maxRSS of the worker after the sync (for re-syncs: after the last one, so it includes heap growth the GC had not yet returned); baseline = after imports, engine start and one warm-up sync of an empty list (${figures.map((f) => bytes(f.baselineMaxRssBytes)).join(', ')}).`,
        `State file after the syncs: ${figures.map((f) => `${int(f.tasks)}×${f.items}: ${bytes(f.stateFileBytes)}`).join(', ')}.`,
        'Each request costs its network latency on top (one request per sync here: 30 ms latency adds ~30 ms).',
      ],
    };
    return { tables: [table], data: { resyncs, cases: figures } };
  });
}
