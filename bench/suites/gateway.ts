// Suite `gateway`: per-operation cost of the HTTP gateway vs the CLI adapter, on one simulator, interleaved A/B.
import { spawn } from 'node:child_process';
import { createCliGateway } from '../../src/dida/cli-gateway';
import type { DidaGateway } from '../../src/dida/dida-gateway';
import { createHttpGateway } from '../../src/dida/http-gateway';
import type { Task } from '../../src/dida/types';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { installFakeDida } from '../../tests/helpers/fake-dida-install';
import { ms, log, runSuite, times, type BenchTable } from '../lib/harness';
import { interleavedAB, measure, ratio, summarize, type Summary } from '../lib/stats';

const ITEMS = 10;

interface Side {
  gateway: DidaGateway;
  projectId: string;
  taskId: string;
  /** Last task state this side saw, the base of its next update (as the engine sends the whole task back). */
  task: Task;
  revision: number;
}

type OpName = 'get task' | `update task (${typeof ITEMS} items)` | 'add comment';
type Op = { name: OpName; run: (side: Side) => Promise<unknown> };

const OPS: Op[] = [
  { name: 'get task', run: (s) => s.gateway.getTask(s.projectId, s.taskId) },
  {
    name: `update task (${ITEMS} items)`,
    run: async (s) => {
      s.revision += 1;
      const items = (s.task.items ?? []).map((item, i) => ({ ...item, title: `Step ${i + 1} · rev ${s.revision}`, status: (i + s.revision) % 3 === 0 ? 1 : 0 }));
      s.task = await s.gateway.updateTask({ ...s.task, items });
      if ((s.task.items ?? []).length !== ITEMS) throw new Error(`update lost items: ${(s.task.items ?? []).length} ≠ ${ITEMS}`);
    },
  },
  {
    name: 'add comment',
    run: (s) => s.gateway.addComment(s.projectId, s.taskId, `Progress: step ${s.revision} done; verified by the unit tests (bench).`),
  },
];

interface OpFigures {
  latencyMs: number;
  op: OpName;
  iterations: number;
  http: Summary;
  cli: Summary;
  /** CLI median / HTTP median, and the same for p95. */
  ratioMedian: number;
  ratioP95: number;
  /** Simulator requests one call makes (HTTP, CLI). */
  requests: { http: number; cli: number };
}

async function seedSide(sim: Simulator, gateway: DidaGateway, label: string): Promise<Side> {
  const project = sim.seedProject({ name: `Bench ${label}` });
  const items = Array.from({ length: ITEMS }, (_, i) => ({ title: `Step ${i + 1}`, status: 0 }));
  const seeded = sim.seedTask({ projectId: project.id, title: `Bench task (${label})`, content: 'What the person asked for.', items });
  const task = await gateway.getTask(project.id, seeded.id);
  return { gateway, projectId: project.id, taskId: seeded.id, task, revision: 0 };
}

async function requestsPerCall(sim: Simulator, op: Op, side: Side): Promise<number> {
  sim.resetCounters();
  await op.run(side);
  return sim.totalRequests();
}

/** The floors under every CLI call: starting a Node process that does nothing, or that makes one fetch. */
function spawnNode(script: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`node -e ${script.slice(0, 40)}… exited ${code}`))));
  });
}

function oneFetchScript(sim: Simulator, side: Side): string {
  const url = `${sim.baseUrl}/project/${side.projectId}/task/${side.taskId}`;
  return `fetch(${JSON.stringify(url)},{headers:{authorization:${JSON.stringify(`Bearer ${sim.token}`)}}}).then(r=>r.json()).then(()=>process.exit(0),()=>process.exit(1))`;
}

runSuite('gateway', 'Per-operation cost, HTTP gateway vs CLI adapter', async ({ quick }) => {
  const plans = quick
    ? [
        { latencyMs: 0, warmup: 2, iterations: 6 },
        { latencyMs: 30, warmup: 1, iterations: 3 },
      ]
    : [
        { latencyMs: 0, warmup: 5, iterations: 40 },
        { latencyMs: 30, warmup: 3, iterations: 20 },
      ];

  const sim = await startSimulator();
  const fake = await installFakeDida({ baseUrl: sim.baseUrl, token: sim.token });
  const http = createHttpGateway({ token: sim.token, baseUrl: sim.baseUrl, retry: { retries: 0 } });
  const cli = createCliGateway({ command: fake.command, env: fake.env, readRetries: 0 });
  const figures: OpFigures[] = [];
  let floor: Summary;
  let fetchFloor: Summary;
  try {
    const a = await seedSide(sim, http, 'http');
    const b = await seedSide(sim, cli, 'cli');
    for (const plan of plans) {
      sim.setLatency(plan.latencyMs);
      for (const op of OPS) {
        log(`latency ${plan.latencyMs} ms · ${op.name}: ${plan.warmup} warm-up + ${plan.iterations} A/B rounds`);
        const result = await interleavedAB({ warmup: plan.warmup, iterations: plan.iterations, a: () => op.run(a), b: () => op.run(b) });
        const requests = { http: await requestsPerCall(sim, op, a), cli: await requestsPerCall(sim, op, b) };
        const httpS = summarize(result.a);
        const cliS = summarize(result.b);
        figures.push({
          latencyMs: plan.latencyMs,
          op: op.name,
          iterations: plan.iterations,
          http: httpS,
          cli: cliS,
          ratioMedian: ratio(cliS.median, httpS.median),
          ratioP95: ratio(cliS.p95, httpS.p95),
          requests,
        });
      }
    }
    sim.setLatency(0);
    log('process start floors: node -e 0, node -e "one fetch"');
    floor = summarize(await measure(() => spawnNode('0'), quick ? 5 : 20, 2));
    const fetchScript = oneFetchScript(sim, b);
    fetchFloor = summarize(await measure(() => spawnNode(fetchScript), quick ? 5 : 20, 2));
  } finally {
    await cli.close();
    await http.close();
    await fake.cleanup();
    await sim.close();
  }

  const table: BenchTable = {
    title: 'Per operation, milliseconds (interleaved A/B on one simulator)',
    columns: ['latency', 'operation', 'n', 'HTTP median', 'HTTP p95', 'CLI median', 'CLI p95', 'CLI/HTTP median', 'CLI/HTTP p95', 'requests HTTP/CLI'],
    rows: figures.map((f) => [
      `${f.latencyMs} ms`,
      f.op,
      String(f.iterations),
      ms(f.http.median),
      ms(f.http.p95),
      ms(f.cli.median),
      ms(f.cli.p95),
      times(f.ratioMedian),
      times(f.ratioP95),
      `${f.requests.http}/${f.requests.cli}`,
    ]),
    notes: [
      `Floor of every CLI call — spawning \`node -e 0\`: median ${ms(floor.median)} ms, p95 ${ms(floor.p95)} ms (n=${floor.n}); a Node process that makes one fetch (get task) and exits: median ${ms(fetchFloor.median)} ms, p95 ${ms(fetchFloor.p95)} ms.`,
      'The CLI is the fake `dida` (a real Node process doing the same HTTP calls); the real @suibiji/dida-cli loads more code, so it is at least this slow.',
    ],
  };
  return { tables: [table], data: { items: ITEMS, ops: figures, nodeSpawnFloor: floor, nodeOneFetchFloor: fetchFloor } };
});
