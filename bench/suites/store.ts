// Suite `store`: one locked read-modify-write of a realistic state file, and 1/2/4 processes contending on one Work lock.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { ENGINE_STATE_VERSION, EngineStateSchema, emptyEngineState, type EngineState, type StepRecord, type WorkRecord } from '../../src/core/work/work-state';
import { withLock } from '../../src/store/file-lock';
import { StateStore } from '../../src/store/state-store';
import { bytes, int, log, ms, runSuite, type BenchTable } from '../lib/harness';
import { measure, percentile, summarize, type Summary } from '../lib/stats';

const WORKS = 1000;
const STEPS_PER_WORK = 5;
const WORK_LOCK_KEY = 'work-6571f2a0c8e94b1d2f3a4b5c';
/** A section that holds the lock about as long as one Dida call, for the held-section contention rows. */
const HELD_SECTION_MS = 20;

// ---- realistic state --------------------------------------------------------------------------------------------

const hex = (n: number) => randomBytes(Math.ceil(n / 2)).toString('hex').slice(0, n);
const STEP_TITLES = [
  'Reproduce the failure with a focused unit test',
  'Find where the retry budget is reset between attempts',
  'Fix the off-by-one in the backoff calculation and cover it',
  'Update the README section on retries and timeouts',
  'Run the whole suite and the e2e smoke test on Node 20',
];

function step(workIndex: number, s: number, now: number): StepRecord {
  const status: StepRecord['status'] = s < 3 ? 'completed' : s === 3 ? (workIndex % 2 ? 'in_progress' : 'skipped') : 'pending';
  const record: StepRecord = {
    id: `s${hex(6)}`,
    itemId: hex(24),
    title: STEP_TITLES[s % STEP_TITLES.length] as string,
    status,
    origin: s === 0 ? 'human' : 'agent',
    updatedAt: now - (STEPS_PER_WORK - s) * 60_000,
  };
  if (status === 'completed') record.resolution = `Changed src/dida/http-gateway.ts; verified with npm test (412 passed) and a manual run against the simulator.`;
  if (status === 'skipped') record.resolution = 'Not needed: the existing test already covers this path.';
  if (status === 'in_progress') record.startedNoted = true;
  return record;
}

/** `count` Works shaped like the engine's: mostly closed with acceptance data, some open, 5 steps each. */
export function realisticState(count: number, now = Date.now()): EngineState {
  const state = emptyEngineState();
  const projects = [hex(24), hex(24), hex(24)];
  for (let i = 0; i < count; i++) {
    const taskId = hex(24);
    const projectId = projects[i % projects.length] as string;
    const closed = i % 5 !== 0;
    const work: WorkRecord = {
      taskId,
      projectId,
      occurrence: i % 20 === 0 ? `2026-11-${String((i % 28) + 1).padStart(2, '0')}` : '',
      title: `Make the Dida gateway retry reads with jittered backoff (#${1000 + i})`,
      origin: i % 3 === 0 ? 'agent' : 'human',
      mode: i % 10 === 0 ? 'direct' : 'checklist',
      priority: [0, 1, 3, 5][i % 4] as number,
      phase: closed ? 'closed' : 'open',
      steps: Array.from({ length: STEPS_PER_WORK }, (_, s) => step(i, s, now)),
      nextStepNumber: STEPS_PER_WORK + 1,
      keepOpen: false,
      humanFingerprint: hex(32),
      body: 'Reads sometimes fail with 502 right after a deploy. Retry them a few times with backoff; never retry writes.',
      createdAt: now - 86_400_000,
      updatedAt: now - 3_600_000,
      rev: 7 + (i % 13),
    };
    if (closed) {
      work.finalize = { acceptanceTaskId: hex(24), anchorCommentId: hex(24), summaryPosted: true, itemsTicked: true, workCompleted: true, attempts: 1 };
      work.acceptance = { taskId: work.finalize.acceptanceTaskId as string, ownerUserId: '114433221100', anchorCommentId: hex(24), handledCommentIds: [hex(24)], closed: true };
      work.outcome = 'accepted';
      state.ownTasks[work.acceptance.taskId] = 'acceptance';
    }
    state.works[work.occurrence ? `${taskId}#${work.occurrence}` : taskId] = work;
  }
  for (const p of projects) state.owners[p] = '114433221100';
  for (let s = 0; s < 5; s++) state.sessions[`session-${s}`] = { touched: [], autoAttempts: 0, updatedAt: now };
  return state;
}

// ---- lock contention worker (this same bundle, started with BENCH_LOCK_WORKER=1) -------------------------------

interface WorkerReport {
  /** Absolute ms (performance.timeOrigin-based) of the first request and the last release. */
  startedAt: number;
  finishedAt: number;
  waits: number[];
  holds: number[];
  /** Absolute ms each acquisition was granted, to see who held the lock after whom. */
  grantedAt: number[];
  /** Absolute ms each section ended (just before `withLock` releases). */
  releasedAt: number[];
}

async function lockWorker(): Promise<void> {
  const [lockDir, counterFile, nText, holdText] = process.argv.slice(2);
  if (!lockDir || !counterFile || !nText) throw new Error('usage: <bundle> <lockDir> <counterFile> <n> [holdMs] (BENCH_LOCK_WORKER=1)');
  const n = Number(nText);
  const holdMs = Number(holdText ?? '0');
  const clock = () => performance.timeOrigin + performance.now();
  // Warm the code paths (module loads, mkdir) on a private key before the start signal.
  await withLock(lockDir, `warm-${process.pid}`, () => undefined);
  process.stdout.write('ready\n');
  await new Promise<void>((resolve) => createInterface({ input: process.stdin }).once('line', () => resolve()));
  const report: WorkerReport = { startedAt: clock(), finishedAt: 0, waits: [], holds: [], grantedAt: [], releasedAt: [] };
  for (let i = 0; i < n; i++) {
    const asked = clock();
    await withLock(lockDir, WORK_LOCK_KEY, async () => {
      const got = clock();
      // A short critical section that also proves exclusion: an unguarded read-increment-write would lose counts.
      const value = Number(await readFile(counterFile, 'utf8'));
      await writeFile(counterFile, String(value + 1));
      // Optionally stand in for a Dida call made while holding the Work lock.
      if (holdMs > 0) await new Promise((resolve) => setTimeout(resolve, holdMs));
      report.waits.push(got - asked);
      report.grantedAt.push(got);
      const released = clock();
      report.releasedAt.push(released);
      report.holds.push(released - got);
    });
  }
  report.finishedAt = clock();
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

interface ContentionFigures {
  processes: number;
  perProcess: number;
  /** Extra time spent inside each section (0 = just the counter update). */
  holdMs: number;
  /** Time inside sections / wall time: how busy the lock was kept. */
  busy: number;
  acquisitions: number;
  wallMs: number;
  perSecond: number;
  wait: Summary;
  waitP99: number;
  hold: Summary;
  /** Acquisitions by a different process than the previous one, and the waits of just those. */
  handoffs: number;
  handoffWait: Summary | undefined;
  handoffWaitP99: number | undefined;
  /** Of those hand-offs, the time the lock sat free: previous holder's section end → next grant. */
  handoffGap: Summary | undefined;
  handoffGapP99: number | undefined;
  /** Most acquisitions one process made in a row while others wanted the lock (1 = strict rotation). */
  longestStreak: number;
  /** For each hand-off, how many sections of other processes ran while it waited (FIFO: at most processes − 1). */
  sectionsAhead: Summary | undefined;
  sectionsAheadP99: number | undefined;
  counterOk: boolean;
}

async function contend(dir: string, processes: number, perProcess: number, holdMs: number): Promise<ContentionFigures> {
  const lockDir = path.join(dir, `locks-${processes}-${holdMs}`);
  const counterFile = path.join(dir, `counter-${processes}-${holdMs}`);
  await writeFile(counterFile, '0');
  const script = process.argv[1] as string;
  const children = Array.from({ length: processes }, () =>
    spawn(process.execPath, [script, lockDir, counterFile, String(perProcess), String(holdMs)], {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { ...process.env, BENCH_LOCK_WORKER: '1', BENCH_RESULT_FILE: '' },
    }),
  );
  const lines = children.map((child) => {
    const queue: string[] = [];
    const waiting: Array<(line: string) => void> = [];
    createInterface({ input: child.stdout }).on('line', (line) => {
      const next = waiting.shift();
      if (next) next(line);
      else queue.push(line);
    });
    const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`lock worker exited with code ${code}`))));
    exited.catch(() => undefined);
    return () => Promise.race([new Promise<string>((resolve) => (queue.length ? resolve(queue.shift() as string) : waiting.push(resolve))), exited]);
  });
  for (const next of lines) if ((await next()) !== 'ready') throw new Error('lock worker did not report ready');
  for (const child of children) child.stdin.write('go\n');
  const reports = (await Promise.all(lines.map((next) => next()))).map((line) => JSON.parse(line) as WorkerReport);
  const counter = Number(await readFile(counterFile, 'utf8'));
  const startedAt = Math.min(...reports.map((r) => r.startedAt));
  const finishedAt = Math.max(...reports.map((r) => r.finishedAt));
  const acquisitions = processes * perProcess;
  const wallMs = finishedAt - startedAt;
  const grants = reports
    .flatMap((r, worker) => r.grantedAt.map((at, i) => ({ at, worker, wait: r.waits[i] as number, releasedAt: r.releasedAt[i] as number })))
    .sort((x, y) => x.at - y.at);
  const handoffs = grants.flatMap((g, i) => {
    const previous = grants[i - 1];
    if (!previous || g.worker === previous.worker) return [];
    const asked = g.at - g.wait;
    const ahead = grants.filter((other) => other.at > asked && other.at < g.at).length;
    return [{ wait: g.wait, gap: g.at - previous.releasedAt, ahead }];
  });
  const sectionsAhead = handoffs.map((h) => h.ahead);
  const handoffWaits = handoffs.map((h) => h.wait);
  const handoffGaps = handoffs.map((h) => h.gap);
  // Streaks count only while another process was still working through its sections (so a process left alone at the
  // end does not count as unfair).
  const lastGrant = reports.map((r) => r.grantedAt[r.grantedAt.length - 1] as number);
  let longestStreak = 0;
  let streak = 0;
  grants.forEach((g, i) => {
    streak = i > 0 && (grants[i - 1] as { worker: number }).worker === g.worker ? streak + 1 : 1;
    if (lastGrant.some((at, worker) => worker !== g.worker && at > g.at)) longestStreak = Math.max(longestStreak, streak);
  });
  const holds = reports.flatMap((r) => r.holds);
  const waits = reports.flatMap((r) => r.waits);
  return {
    processes,
    perProcess,
    holdMs,
    busy: holds.reduce((sum, h) => sum + h, 0) / wallMs,
    acquisitions,
    wallMs,
    perSecond: (acquisitions / wallMs) * 1000,
    wait: summarize(waits),
    waitP99: percentile(waits, 99),
    hold: summarize(holds),
    handoffs: handoffWaits.length,
    handoffWait: handoffWaits.length ? summarize(handoffWaits) : undefined,
    handoffWaitP99: handoffWaits.length ? percentile(handoffWaits, 99) : undefined,
    handoffGap: handoffGaps.length ? summarize(handoffGaps) : undefined,
    handoffGapP99: handoffGaps.length ? percentile(handoffGaps, 99) : undefined,
    longestStreak: processes > 1 ? longestStreak : 0,
    sectionsAhead: sectionsAhead.length ? summarize(sectionsAhead) : undefined,
    sectionsAheadP99: sectionsAhead.length ? percentile(sectionsAhead, 99) : undefined,
    counterOk: counter === acquisitions,
  };
}

// ---- the suite ---------------------------------------------------------------------------------------------------

if (process.env.BENCH_LOCK_WORKER === '1') {
  lockWorker().catch((error: unknown) => {
    process.stderr.write(`lock worker: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
} else {
  runSuite('store', 'State and lock', async ({ quick }) => {
    const iterations = quick ? 20 : 200;
    const warmup = quick ? 3 : 10;
    const perProcess = quick ? 10 : 50;
    const dir = await mkdtemp(path.join(tmpdir(), 'dida-todo-bench-store-'));
    try {
      const store = new StateStore<EngineState>({
        file: path.join(dir, 'state.json'),
        lockDir: path.join(dir, 'locks'),
        schema: EngineStateSchema,
        version: ENGINE_STATE_VERSION,
        empty: emptyEngineState,
      });
      const seed = realisticState(WORKS);
      await store.update(() => seed);
      const size = (await stat(store.file)).size;
      const keys = Object.keys(seed.works);
      log(`state file: ${WORKS} Works × ${STEPS_PER_WORK} steps = ${bytes(size)}; ${warmup} warm-up + ${iterations} runs each`);

      const lockOnly = summarize(await measure(() => withLock(path.join(dir, 'locks'), WORK_LOCK_KEY, () => undefined), iterations, warmup));
      const read = summarize(await measure(() => store.read(), iterations, warmup));
      const noop = summarize(await measure(() => store.update((s) => s), iterations, warmup));
      const rmw = summarize(
        await measure(
          (i) =>
            store.update((s) => {
              // What saveWork does for one step change: one Work's step status, updatedAt and rev.
              const work = s.works[keys[i % keys.length] as string] as WorkRecord;
              const target = work.steps[3] as StepRecord;
              target.status = target.status === 'in_progress' ? 'completed' : 'in_progress';
              target.updatedAt = Date.now();
              work.updatedAt = Date.now();
              work.rev += 1;
              return s;
            }),
          iterations,
          warmup,
        ),
      );
      const finalSize = (await stat(store.file)).size;

      // Where the time of one update goes: the pure CPU parts on the same text, no I/O.
      const text = await readFile(store.file, 'utf8');
      const { version: _version, ...raw } = JSON.parse(text) as Record<string, unknown>;
      const parsed = EngineStateSchema.parse(raw);
      const parse = summarize(await measure(async () => JSON.parse(text), iterations, warmup));
      const validate = summarize(await measure(async () => EngineStateSchema.safeParse(raw, { reportInput: true }), iterations, warmup));
      const stringify = summarize(await measure(async () => JSON.stringify({ version: ENGINE_STATE_VERSION, ...parsed }, null, 2), iterations, warmup));
      const compactBytes = Buffer.byteLength(JSON.stringify({ version: ENGINE_STATE_VERSION, ...parsed }));

      const contention: ContentionFigures[] = [];
      const plans = [0, HELD_SECTION_MS].flatMap((holdMs) => [1, 2, 4].map((processes) => ({ processes, n: perProcess, holdMs })));
      for (const plan of plans) {
        log(`lock contention: ${plan.processes} process(es) × ${plan.n} sections (+${plan.holdMs} ms) on one Work lock`);
        contention.push(await contend(dir, plan.processes, plan.n, plan.holdMs));
      }

      const rmwTable: BenchTable = {
        title: `State file with ${int(WORKS)} Works × ${STEPS_PER_WORK} steps (${bytes(size)}), milliseconds`,
        columns: ['operation', 'what it includes', 'n', 'median', 'p95', 'mean'],
        rows: [
          ['withLock, empty section', 'local queue + lock dir: mkdir, ticket, link, unlink, rmdir', lockOnly, 'lock'],
          ['store.read()', 'read + JSON.parse + schema check, no lock', read, 'read'],
          ['store.update(), no change', 'lock + read + validate + 2× serialize, no write', noop, 'noop'],
          ['store.update(), one step', 'the above + atomic write (fsync, rename, dir fsync)', rmw, 'rmw'],
        ].map(([name, what, s]) => {
          const sum = s as Summary;
          return [name as string, what as string, String(sum.n), ms(sum.median), ms(sum.p95), ms(sum.mean)];
        }),
        notes: [
          `File size ${int(size)} bytes (${int(finalSize)} after the runs); ${(size / WORKS / 1024).toFixed(2)} KiB per Work; ${int(compactBytes)} bytes without the 2-space indentation.`,
        ],
      };
      const cpuTable: BenchTable = {
        title: 'CPU parts of one update on the same file, milliseconds',
        columns: ['step', 'times per update', 'n', 'median', 'p95', 'mean'],
        rows: [
          ['JSON.parse', '1', parse],
          ['EngineStateSchema.safeParse', '2 (read, then the new value)', validate],
          ['JSON.stringify (indent 2)', '2 (before, after)', stringify],
        ].map(([name, count, s]) => {
          const sum = s as Summary;
          return [name as string, count as string, String(sum.n), ms(sum.median), ms(sum.p95), ms(sum.mean)];
        }),
      };
      const opt = (value: number | undefined) => (value === undefined ? '–' : ms(value));
      const lockTable: BenchTable = {
        title: 'Processes contending on one Work lock, milliseconds',
        columns: ['processes', 'section', 'acquisitions', 'wall', 'acquisitions/s', 'lock busy', 'wait median', 'wait p99', 'wait max', 'hold median', 'hold max', 'hand-offs', 'longest streak'],
        rows: contention.map((c) => [
          String(c.processes),
          c.holdMs > 0 ? `counter + ${c.holdMs} ms` : 'counter only',
          `${c.processes}×${c.perProcess}`,
          `${ms(c.wallMs)} ms`,
          c.perSecond.toFixed(c.perSecond >= 100 ? 0 : 1),
          `${Math.round(c.busy * 100)} %`,
          ms(c.wait.median),
          ms(c.waitP99),
          ms(c.wait.max),
          ms(c.hold.median),
          ms(c.hold.max),
          String(c.handoffs),
          c.processes > 1 ? String(c.longestStreak) : '–',
        ]),
        notes: [
          'Wait = from calling withLock to entering the section. Hand-off = the lock went to a different process than the previous holder. Lock busy = time inside sections / wall time.',
          'Hold max: a section that overran (its process did not get the CPU in time) makes every process queued behind it wait that much longer.',
          'Longest streak = most sections one process ran in a row while another process still had sections to run (1 = the processes take turns).',
        ],
      };
      const handoffTable: BenchTable = {
        title: 'Hand-offs between processes on one Work lock, milliseconds',
        columns: ['processes', 'section', 'hand-offs', 'wait p50', 'wait p95', 'wait p99', 'wait max', 'sections ahead p99', 'sections ahead max', 'gap p50', 'gap p99', 'gap max', 'exclusion'],
        rows: contention
          .filter((c) => c.processes > 1)
          .map((c) => [
            String(c.processes),
            c.holdMs > 0 ? `counter + ${c.holdMs} ms` : 'counter only',
            String(c.handoffs),
            opt(c.handoffWait?.median),
            opt(c.handoffWait?.p95),
            opt(c.handoffWaitP99),
            opt(c.handoffWait?.max),
            c.sectionsAheadP99 === undefined ? '–' : String(c.sectionsAheadP99),
            c.sectionsAhead ? String(c.sectionsAhead.max) : '–',
            opt(c.handoffGap?.median),
            opt(c.handoffGapP99),
            opt(c.handoffGap?.max),
            c.counterOk ? 'ok' : 'LOST UPDATES',
          ]),
        notes: [
          'Wait = the waits of the acquisitions that were hand-offs (from calling withLock to entering the section, so it includes the sections of the processes served first). Sections ahead = sections of other processes that ran during that wait (served in arrival order: at most processes − 1). Gap = how long the lock sat free during a hand-off: from the previous holder leaving its section to the next grant.',
          'Exclusion: a counter incremented (read, +1, write) inside the section must end at processes × n.',
        ],
      };
      return {
        tables: [rmwTable, cpuTable, lockTable, handoffTable],
        data: { works: WORKS, stepsPerWork: STEPS_PER_WORK, fileBytes: size, fileBytesAfter: finalSize, fileBytesCompact: compactBytes, lockOnly, read, noopUpdate: noop, update: rmw, cpu: { parse, validate, stringify }, contention },
      };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
}
