// Suite `lifecycle`: one whole Work over the real HTTP gateway and the simulator — claim, plan, every step
// in_progress → completed (one changeSteps call per transition, left to the background writer as the todo tool does),
// settle, acceptance — with Dida requests per route; and the requests per step at a model's pace (the progress window).
import type { Simulator } from '../../src/sim/simulator';
import { startEngineHarness, type EngineHarness } from '../../tests/helpers/engine-harness';
import { classifyRequests, REQUEST_PHASES, seen, type RequestPhase, type SeenRequest } from '../../tests/helpers/request-phases';
import { int, log, ms, runSuite, type BenchTable } from '../lib/harness';
import { median } from '../lib/stats';

const SESSION = 'bench-session';
const PHASES = ['claim', 'plan', 'steps', 'settle', 'acceptance'] as const;
type Phase = (typeof PHASES)[number];

/** Route key → requests, e.g. `GET /project/{pid}/task/{tid}` → 3. */
type Counts = Record<string, number>;

interface RunFigures {
  latencyMs: number;
  items: number;
  /** Steps executed: the N human items + 1 agent step. */
  steps: number;
  phases: Record<Phase, PhaseFigures>;
  total: number;
  wallMs: number;
  /** The Work's requests by the phase they served (tests/helpers/request-phases.ts) and route. */
  byPhase: Partial<Record<RequestPhase, Counts>>;
}

function add(into: Counts, from: Counts): void {
  for (const [route, n] of Object.entries(from)) into[route] = (into[route] ?? 0) + n;
}

function sum(counts: Counts): number {
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

interface PhaseFigures {
  requests: Counts;
  total: number;
  wallMs: number;
  /** Local state-file passes: reads (parse + validate) and updates (lock + read + validate + write when changed). */
  stateReads: number;
  stateUpdates: number;
}

/** Counts the engine's state-port calls (the engine holds this very deps object, so wrapping its methods is enough). */
function countStatePort(h: EngineHarness): { reads: number; updates: number } {
  const counts = { reads: 0, updates: 0 };
  const port = h.deps.state;
  const read = port.read.bind(port);
  const update = port.update.bind(port);
  port.read = () => {
    counts.reads += 1;
    return read();
  };
  port.update = (fn) => {
    counts.updates += 1;
    return update(fn);
  };
  return counts;
}

/** Runs `fn` with fresh counters and returns what it asked Dida for, the state passes, and how long it took. */
async function phase(sim: Simulator, state: { reads: number; updates: number }, fn: () => Promise<unknown>): Promise<PhaseFigures> {
  sim.resetCounters();
  state.reads = 0;
  state.updates = 0;
  const started = performance.now();
  await fn();
  const wallMs = performance.now() - started;
  const requests = sim.counters();
  return { requests, total: sum(requests), wallMs, stateReads: state.reads, stateUpdates: state.updates };
}

/**
 * One Work. `paceMs`: how long the model takes per step (0: at once); after each call the clock moves on by half of it
 * and the due progress is flushed, as the host's timer does (the background writer's window is the progress window).
 */
async function oneWork(h: EngineHarness, items: number, latencyMs: number, paceMs = 0): Promise<RunFigures> {
  const { sim, engine } = h;
  const state = countStatePort(h);
  sim.setLatency(0);
  const list = sim.seedProject({ name: `Lifecycle ${items}` });
  const human = sim.seedTask({
    projectId: list.id,
    title: `Release notes with ${items} checks`,
    content: 'Group the changes by module.',
    priority: 3,
    items: Array.from({ length: items }, (_, i) => ({ title: `Check ${i + 1}` })),
  });
  sim.setLatency(latencyMs);
  const seenRequests: SeenRequest[] = [];
  const stopSeeing = sim.onRequest((info) => void seenRequests.push(seen(info)));

  const claim = await phase(sim, state, async () => {
    const work = await engine.claimNext(SESSION, list.id);
    if (work?.taskId !== human.id) throw new Error(`claimNext took ${work?.taskId ?? 'nothing'}, not the seeded task`);
  });
  // As the todo tool calls it: the changes are on disk at once, the background writer sends them.
  const tool = async (changes: Parameters<typeof engine.changeSteps>[1]) => {
    await engine.changeSteps(SESSION, changes, undefined, { background: true });
    if (paceMs === 0) return;
    h.clock.now += paceMs / 2;
    await engine.flushComments({ onlyDue: true });
  };
  const plan = await phase(sim, state, () => tool([{ op: 'add', title: 'Verify the links' }]));
  const titles = [...Array.from({ length: items }, (_, i) => `Check ${i + 1}`), 'Verify the links'];
  const steps = await phase(sim, state, async () => {
    for (const title of titles) {
      await tool([{ op: 'update', step: title, status: 'in_progress' }]);
      await tool([{ op: 'update', step: title, status: 'completed', resolution: `Checked ${title}; verified by reading it.` }]);
    }
  });
  const settle = await phase(sim, state, async () => {
    const outcomes = await engine.settle(SESSION);
    if (!outcomes.some((o) => o.outcome.status === 'finalized')) throw new Error(`settle did not finalize: ${JSON.stringify(outcomes)}`);
  });
  // The person completes the acceptance todo in the app (not a request of ours), then the next sync notices it.
  const acceptanceTask = sim.listTasks(list.id).find((t) => t.title.includes(human.title) && t.id !== human.id);
  if (!acceptanceTask) throw new Error('no acceptance todo was filed');
  sim.editTask(acceptanceTask.id, { status: 2 });
  const acceptance = await phase(sim, state, async () => {
    const report = await engine.sync(list.id);
    if (report.accepted.length !== 1) throw new Error(`sync did not accept the Work: ${JSON.stringify(report.accepted)}`);
  });
  if (sim.getTask(human.id)?.status !== 2) throw new Error('the Work task is not completed in Dida');
  stopSeeing();
  const byPhase: Partial<Record<RequestPhase, Counts>> = {};
  for (const { phase: p, route } of classifyRequests(seenRequests, (id) => sim.getTask(id)?.title)) {
    const counts = (byPhase[p] ??= {});
    counts[route] = (counts[route] ?? 0) + 1;
  }

  const phases = { claim, plan, steps, settle, acceptance };
  return {
    latencyMs,
    items,
    steps: titles.length,
    phases,
    total: PHASES.reduce((n, p) => n + phases[p].total, 0),
    wallMs: PHASES.reduce((n, p) => n + phases[p].wallMs, 0),
    byPhase,
  };
}

/** Fresh harness (own simulator, own state) per Work, so no run sees another's tasks or state. */
async function measuredWork(items: number, latencyMs: number, paceMs = 0): Promise<RunFigures> {
  const h = await startEngineHarness({ timeoutMs: 10_000 });
  try {
    return await oneWork(h, items, latencyMs, paceMs);
  } finally {
    await h.close();
  }
}

function routeLabel(route: string): string {
  return route.replace('/project/{pid}/task/{tid}', '…/task/{tid}');
}

runSuite('lifecycle', 'Whole Work lifecycle', async ({ quick }) => {
  const sizes = quick ? [3, 10] : [3, 10, 30];
  const latencies = [0, 30];
  const reps = quick ? 1 : 3;
  const runs: RunFigures[] = [];
  // Warm-up: JIT, sockets, the state store.
  await measuredWork(3, 0);
  for (const latencyMs of latencies) {
    for (const items of sizes) {
      for (let r = 0; r < reps; r++) {
        log(`latency ${latencyMs} ms · ${items} items · run ${r + 1}/${reps}`);
        runs.push(await measuredWork(items, latencyMs));
      }
    }
  }

  // Requests per step at a model's pace: the slope between N=10 and N=30 (the constant part cancels out).
  const paces = quick ? [0, 60_000] : [0, 10_000, 30_000, 60_000, 120_000];
  const paceRows: string[][] = [];
  const paceData: Array<{ paceMs: number; perStep: number; perWork: number; steps: number }> = [];
  for (const paceMs of paces) {
    log(`pace ${paceMs / 1000} s a step`);
    const small = await measuredWork(10, 0, paceMs);
    const large = await measuredWork(30, 0, paceMs);
    const perStep = (large.total - small.total) / (large.steps - small.steps);
    const perWork = small.total - perStep * small.steps;
    paceData.push({ paceMs, perStep, perWork, steps: large.phases.steps.total });
    paceRows.push([paceMs === 0 ? 'at once' : `${paceMs / 1000} s`, String(small.total), String(large.total), perStep.toFixed(2), perWork.toFixed(1)]);
  }

  // Requests do not depend on latency or repetition: check that, then use the first run of each size.
  const bySize = new Map<number, RunFigures>();
  for (const run of runs) {
    const first = bySize.get(run.items);
    if (!first) bySize.set(run.items, run);
    else if (first.total !== run.total) throw new Error(`request count is not deterministic for N=${run.items}: ${first.total} vs ${run.total}`);
  }
  const reference = sizes.map((n) => bySize.get(n) as RunFigures);

  // Routes table: per phase and route, requests for each N.
  const routeRows: string[][] = [];
  for (const p of PHASES) {
    const routes = new Set<string>();
    for (const run of reference) for (const r of Object.keys(run.phases[p].requests)) routes.add(r);
    for (const route of [...routes].sort()) {
      routeRows.push([p, routeLabel(route), ...reference.map((run) => String(run.phases[p].requests[route] ?? 0))]);
    }
    routeRows.push([p, '= phase total', ...reference.map((run) => String(run.phases[p].total))]);
  }
  const totals: Counts[] = reference.map((run) => {
    const all: Counts = {};
    for (const p of PHASES) add(all, run.phases[p].requests);
    return all;
  });
  routeRows.push(['whole Work', '= total', ...reference.map((run) => String(run.total))]);

  // The same requests by the phase they served (claim, plan, steps, comments, settle, review, comment looks, polls).
  const servedRows: string[][] = [];
  for (const p of REQUEST_PHASES) {
    const routes = new Set<string>();
    for (const run of reference) for (const r of Object.keys(run.byPhase[p] ?? {})) routes.add(r);
    if (routes.size === 0) continue;
    for (const route of [...routes].sort()) servedRows.push([p, routeLabel(route), ...reference.map((run) => String(run.byPhase[p]?.[route] ?? 0))]);
    servedRows.push([p, '= phase total', ...reference.map((run) => String(sum(run.byPhase[p] ?? {})))]);
  }
  servedRows.push(['whole Work', '= total', ...reference.map((run) => String(run.total))]);

  // Linear fit total = perWork + perStep × steps, from the smallest and largest N; the middle one is the check.
  const lo = reference[0] as RunFigures;
  const hi = reference[reference.length - 1] as RunFigures;
  const perStep = (hi.total - lo.total) / (hi.steps - lo.steps);
  const perWork = lo.total - perStep * lo.steps;
  const stepPhasePerStep = reference.map((run) => run.phases.steps.total / run.steps);
  const fitExact = reference.every((run) => Math.abs(perWork + perStep * run.steps - run.total) < 1e-9);

  const timeRows: string[][] = [];
  for (const latencyMs of latencies) {
    for (const items of sizes) {
      const same = runs.filter((r) => r.latencyMs === latencyMs && r.items === items);
      const cell = (pick: (r: RunFigures) => number) => ms(median(same.map(pick)));
      const steps = (same[0] as RunFigures).steps;
      timeRows.push([
        `${latencyMs} ms`,
        `N=${items} (${steps} steps)`,
        String(same.length),
        String((same[0] as RunFigures).total),
        cell((r) => r.phases.claim.wallMs),
        cell((r) => r.phases.plan.wallMs),
        cell((r) => r.phases.steps.wallMs),
        cell((r) => r.phases.steps.wallMs / (2 * r.steps)),
        cell((r) => r.phases.settle.wallMs),
        cell((r) => r.phases.acceptance.wallMs),
        cell((r) => r.wallMs),
      ]);
    }
  }

  const stateRows: string[][] = PHASES.map((p) => [
    p,
    reference.map((run) => `${run.phases[p].stateReads} / ${run.phases[p].stateUpdates}`).join('  ·  '),
    ...reference.map((run) => String(run.phases[p].stateReads + run.phases[p].stateUpdates)),
  ]);
  const stateSteps = reference.map((run) => (run.phases.steps.stateReads + run.phases.steps.stateUpdates) / (2 * run.steps));

  const tables: BenchTable[] = [
    {
      title: 'Dida requests of one Work, per phase and route (N = human checklist items; +1 agent step)',
      columns: ['phase', 'route', ...sizes.map((n) => `N=${n}`)],
      rows: routeRows,
      notes: [
        `Requests per step (in_progress + completed, two changeSteps calls): ${stepPhasePerStep.map((v) => v.toFixed(2)).join(' / ')} for N=${sizes.join(' / ')}.`,
        `Linear fit over the whole Work: total = ${perWork.toFixed(1)} + ${perStep.toFixed(2)} × steps (${fitExact ? 'exact for every N' : 'not exact; see the rows'}).`,
        'Identical at 0 ms and 30 ms latency and across repetitions (checked).',
      ],
    },
    {
      title: 'The same requests by the phase they served (N = human checklist items)',
      columns: ['phase', 'route', ...sizes.map((n) => `N=${n}`)],
      rows: servedRows,
      notes: [
        'polls: list reads (the queue read of the claim, the sync that notices the accepted review); comments: progress notes and the completion summary; comment looks: comment lists of the review todo.',
      ],
    },
    {
      title: 'Requests per step at the model’s pace (progress window 60 s: the background writer sends a window’s ticks and notes together)',
      columns: ['time a step takes', 'whole Work N=10', 'whole Work N=30', 'requests per step', 'per Work'],
      rows: paceRows,
      notes: ['A step is two tool calls (in_progress, completed); after each the clock moves on by half the pace and the due progress is flushed, as the host’s timer does.'],
    },
    {
      title: 'Wall time of one Work, milliseconds (median of the runs)',
      columns: ['latency', 'size', 'runs', 'requests', 'claim', 'plan', 'all steps', 'per transition', 'settle', 'acceptance', 'whole Work'],
      rows: timeRows,
      notes: ['claim includes the first sync (adoption); acceptance is the sync that notices the completed acceptance todo.'],
    },
    {
      title: 'Local state-file passes of one Work (engine StatePort calls; not Dida requests)',
      columns: ['phase', `reads / updates for N=${sizes.join(' · ')}`, ...sizes.map((n) => `passes N=${n}`)],
      rows: stateRows,
      notes: [
        `Per step transition: ${stateSteps.map((v) => v.toFixed(1)).join(' / ')} state passes (reads + updates) for N=${sizes.join(' / ')}.`,
        'Each pass parses and validates the whole state file (see the store suite for its cost with many Works).',
      ],
    },
  ];
  log(`fit: ${int(perWork)} + ${perStep} × steps`);
  return { tables, data: { sizes, latencies, reps, perWork, perStep, fitExact, stepPhasePerStep, statePassesPerTransition: stateSteps, totals, runs, paces: paceData } };
});
