// Suite `critical`: the Dida requests each tool call of a headless one-shot waits for, in the real dsh. A scripted
// model creates a Work with two steps and runs it through; for every tool call the window is from the model's answer
// carrying the call to its next request (which carries the result): the call, its after-call hooks and the next
// step's pre-step hooks — what the model waits for. The same run is made with a Dida round trip of 0 and of 200 ms;
// the requests on the critical path are the window's growth ÷ 200 ms (requests in parallel, or left to the background,
// add nothing). Also shown: the requests that ran in the window. Per round a first run of a new state folder (nothing
// known yet), then a later run (what a person meets every day).
import { mkdirSync, realpathSync, writeFileSync, mkdtempSync } from 'node:fs';
import path from 'node:path';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { ensureDsh, installBundle, makeDshHome, removeDshHome, repoRoot, runHeadless } from '../../tests/e2e/harness/dsh-run';
import { startFakeModel, text, toolCall, type FakeModel } from '../../tests/e2e/harness/fake-model';
import { classifyRequests, REQUEST_PHASES, seen, type RequestPhase } from '../../tests/helpers/request-phases';
import { int, log, ms, runSuite, type BenchTable } from '../lib/harness';
import { median } from '../lib/stats';

const LATENCY_MS = 500;
/**
 * The fake model "thinks" this long before each answer; the window of a tool call starts when the answer is sent, so
 * work a call left to the background (posted in well under this time) is not counted in the next call's window.
 */
const THINK_MS = 1_200;
/** The bundle under test: the repository (built), or another copy (DIDA_TODO_BENCH_BUNDLE) to compare with. */
const BUNDLE = process.env.DIDA_TODO_BENCH_BUNDLE || repoRoot;

interface Span {
  route: string;
  start: number;
  end: number;
}

interface CallFigures {
  call: string;
  windowMs: number;
  /** Requests that ran (at least partly) inside the window. */
  requests: number;
  routes: string[];
}

const CALLS = ['todo create (new Work, 2 steps)', 'todo update → completed', 'todo update → in_progress', 'todo update → completed (last)'];

function script() {
  return [
    toolCall('todo', { action: 'create', work_title: '写发布说明', steps: [{ title: '收集变更', status: 'in_progress' }, { title: '写草稿' }] }, { delayMs: THINK_MS }),
    toolCall('todo', { action: 'update', updates: [{ step: '收集变更', status: 'completed', resolution: '整理出 12 条变更，逐条核对过。' }] }, { delayMs: THINK_MS }),
    toolCall('todo', { action: 'update', updates: [{ step: '写草稿', status: 'in_progress' }] }, { delayMs: THINK_MS }),
    toolCall('todo', { action: 'update', updates: [{ step: '写草稿', status: 'completed', resolution: '草稿写好并通读了一遍。' }] }, { delayMs: THINK_MS }),
    text('FAKE_ANSWER done', { delayMs: THINK_MS }),
  ];
}

/** Every request of one run, by the phase it served (tests/helpers/request-phases.ts) and route. */
type Whole = Partial<Record<RequestPhase, Record<string, number>>>;

/** The calls of the last oneRun's run, and its whole run by phase. */
const lastWhole: { value: Whole } = { value: {} };

async function oneRun(model: FakeModel, sim: Simulator, home: string, project: string, listId: string, latencyMs: number): Promise<CallFigures[]> {
  sim.setLatency(latencyMs);
  const spans: Span[] = [];
  const open = new Map<number, Span>();
  const all: ReturnType<typeof seen>[] = [];
  const offBefore = sim.onRequest((info) => {
    all.push(seen(info));
    // The hook runs after the simulated latency: the request arrived that long before.
    open.set(info.index, { route: info.route, start: Date.now() - latencyMs, end: Number.NaN });
  }, 'before');
  const offAfter = sim.onRequest((info) => {
    const span = open.get(info.index);
    if (span) spans.push({ ...span, end: Date.now() });
  }, 'after');
  model.setScript(script());
  model.requests.length = 0;
  const run = await runHeadless({ home, cwd: project, prompt: '写一份发布说明', baseUrl: model.baseUrl, env: { DIDA_TODO_TOKEN: sim.token }, timeoutMs: 120_000 });
  offBefore();
  offAfter();
  if (run.code !== 0 || !run.stdout.includes('FAKE_ANSWER')) throw new Error(`the one-shot failed (${run.code}):\n${run.stdout.slice(-1000)}\n${run.stderr.slice(-2000)}`);
  if (!sim.listTasks(listId).some((t) => t.title === '写发布说明') && !sim.listTasks(listId, { includeCompleted: true }).some((t) => t.title === '写发布说明')) {
    throw new Error('the Work was not created in the simulator');
  }
  const whole: Whole = {};
  for (const { phase, route } of classifyRequests(all, (id) => sim.getTask(id)?.title)) {
    const counts = (whole[phase] ??= {});
    counts[route] = (counts[route] ?? 0) + 1;
  }
  lastWhole.value = whole;
  const chats = model.chatRequests();
  const figures: CallFigures[] = [];
  for (let i = 0; i < CALLS.length; i++) {
    const asked = chats[i]?.time;
    const to = chats[i + 1]?.time;
    const from = asked === undefined ? undefined : asked + THINK_MS;
    if (from === undefined || to === undefined) throw new Error(`tool call ${i + 1} has no window (${chats.length} model requests)`);
    const inside = spans.filter((s) => s.end > from && s.start < to);
    figures.push({ call: CALLS[i] as string, windowMs: to - from, requests: inside.length, routes: inside.map((s) => s.route) });
  }
  return figures;
}

interface RoundFigures {
  /** First run of a new state folder, and a later run, each at 0 ms and LATENCY_MS. */
  first: { fast: CallFigures[]; slow: CallFigures[] };
  later: { fast: CallFigures[]; slow: CallFigures[] };
  /** The whole runs' requests by phase (first and later run, at 0 ms and at LATENCY_MS). */
  whole: { first: { fast: Whole; slow: Whole }; later: { fast: Whole; slow: Whole } };
}

/** One home: its first run and a later run, at the given latency. */
async function oneHome(model: FakeModel, latencyMs: number): Promise<{ first: CallFigures[]; later: CallFigures[]; whole: { first: Whole; later: Whole } }> {
  const sim = await startSimulator();
  const home = makeDshHome();
  try {
    await installBundle(home, 'headless', BUNDLE);
    const project = realpathSync(mkdtempSync(path.join(home, 'project-')));
    const list = sim.seedProject({ name: '智能体工作' });
    for (let i = 0; i < 5; i++) sim.seedTask({ projectId: list.id, title: `已有任务 ${i + 1}`, priority: 0 });
    const configDir = path.join(home, '.test-xdg', 'config', 'dida-todo');
    mkdirSync(configDir, { recursive: true });
    writeFileSync(path.join(configDir, 'config.yaml'), `baseUrl: ${sim.baseUrl}\nbindings:\n  - cwd: ${project}\n    projectId: ${list.id}\n`);
    const first = await oneRun(model, sim, home, project, list.id, latencyMs);
    const firstWhole = lastWhole.value;
    const later = await oneRun(model, sim, home, project, list.id, latencyMs);
    return { first, later, whole: { first: firstWhole, later: lastWhole.value } };
  } finally {
    await sim.close();
    removeDshHome(home);
  }
}

runSuite('critical', 'Requests on the critical path of each tool call in a one-shot', async ({ quick }) => {
  log('dsh: ensureDsh() (installs dsh into ~/.cache/dida-todo-e2e on first use)');
  await ensureDsh();
  const model = await startFakeModel();
  const rounds = quick ? 1 : 4;
  const all: RoundFigures[] = [];
  try {
    for (let round = 0; round < rounds; round++) {
      log(`round ${round + 1}/${rounds}: Dida round trip 0 ms, then ${LATENCY_MS} ms (each: a first run, then a later run)`);
      const fast = await oneHome(model, 0);
      const slow = await oneHome(model, LATENCY_MS);
      all.push({
        first: { fast: fast.first, slow: slow.first },
        later: { fast: fast.later, slow: slow.later },
        whole: { first: { fast: fast.whole.first, slow: slow.whole.first }, later: { fast: fast.whole.later, slow: slow.whole.later } },
      });
    }
  } finally {
    await model.close();
  }
  const row = (label: string, pick: (r: RoundFigures) => { fast: CallFigures[]; slow: CallFigures[] }, i: number): string[] => {
    const fast = all.map((r) => pick(r).fast[i] as CallFigures);
    const slow = all.map((r) => pick(r).slow[i] as CallFigures);
    const growth = median(slow.map((f) => f.windowMs)) - median(fast.map((f) => f.windowMs));
    return [label, CALLS[i] as string, ms(median(fast.map((f) => f.windowMs))), ms(median(slow.map((f) => f.windowMs))), (growth / LATENCY_MS).toFixed(1), int(median(slow.map((f) => f.requests))), (slow[0] as CallFigures).routes.join(', ')];
  };
  const critical = (pick: (r: RoundFigures) => { fast: CallFigures[]; slow: CallFigures[] }) =>
    CALLS.map((_, i) => (median(all.map((r) => (pick(r).slow[i] as CallFigures).windowMs)) - median(all.map((r) => (pick(r).fast[i] as CallFigures).windowMs))) / LATENCY_MS);
  // The whole run (first tool call to the filed review and the run's end), by phase: the median of the rounds.
  const wholeRuns = (pick: (r: RoundFigures) => Whole) => all.map(pick);
  const variants: Array<[string, (r: RoundFigures) => Whole]> = [
    ['first, 0 ms', (r) => r.whole.first.fast],
    [`first, ${LATENCY_MS} ms`, (r) => r.whole.first.slow],
    ['later, 0 ms', (r) => r.whole.later.fast],
    [`later, ${LATENCY_MS} ms`, (r) => r.whole.later.slow],
  ];
  const wholeRows: string[][] = [];
  const total = (w: Whole, phase?: RequestPhase) => Object.entries(w).filter(([p]) => !phase || p === phase).reduce((n, [, routes]) => n + Object.values(routes ?? {}).reduce((a, b) => a + b, 0), 0);
  for (const phase of REQUEST_PHASES) {
    const routes = new Set<string>();
    for (const [, pick] of variants) for (const w of wholeRuns(pick)) for (const r of Object.keys(w[phase] ?? {})) routes.add(r);
    if (routes.size === 0) continue;
    for (const route of [...routes].sort()) wholeRows.push([phase, route, ...variants.map(([, pick]) => String(median(wholeRuns(pick).map((w) => w[phase]?.[route] ?? 0))))]);
    wholeRows.push([phase, '= phase total', ...variants.map(([, pick]) => String(median(wholeRuns(pick).map((w) => total(w, phase)))))]);
  }
  wholeRows.push(['whole run', '= total', ...variants.map(([, pick]) => `${median(wholeRuns(pick).map((w) => total(w)))} (${Math.min(...wholeRuns(pick).map((w) => total(w)))}–${Math.max(...wholeRuns(pick).map((w) => total(w)))})`)]);
  const tables: BenchTable[] = [
    {
      title: `Dida requests of the whole one-shot (a 2-step Work from the first tool call to the filed review), by phase (median of ${rounds} rounds)`,
      columns: ['phase', 'route', ...variants.map(([name]) => name)],
      rows: wholeRows,
      notes: ["first: the first run of a new state folder (the account's time zone is read once); later: a later run in the same home. The total shows the range over the rounds."],
    },
    {
      title: `Dida requests each tool call of a headless one-shot waits for (real dsh, median of ${rounds} rounds)`,
      columns: ['run', 'tool call', 'window at 0 ms', `window at ${LATENCY_MS} ms`, 'critical path (round trips)', 'requests in window', 'routes (first round)'],
      rows: [...CALLS.map((_, i) => row('first of a new state', (r) => r.first, i)), ...CALLS.map((_, i) => row('later run', (r) => r.later, i))],
      notes: [
        `window: from the model answer carrying the call (sent after ${THINK_MS} ms of "thinking") to the next model request: the call, its after-call hooks and the next step's pre-step hooks.`,
        `critical path: how much longer the window is with a ${LATENCY_MS} ms Dida round trip than with none, in round trips; requests in parallel or in the background add nothing.`,
      ],
    },
  ];
  return { tables, data: { latencyMs: LATENCY_MS, thinkMs: THINK_MS, rounds, critical: { first: critical((r) => r.first), later: critical((r) => r.later) }, runs: all } };
});
