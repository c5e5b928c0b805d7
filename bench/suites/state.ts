// Suite `state`: the cost of one step change as the number of Works grows — the whole-file store (before) against the
// snapshot plus change log the engine uses now (after).
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ENGINE_STATE_SECTIONS, ENGINE_STATE_VERSION, EngineStateSchema, WorkRecordSchema, emptyEngineState, type EngineState, type WorkRecord } from '../../src/core/work/work-state';
import { LoggedStateStore } from '../../src/store/logged-state-store';
import { StateStore } from '../../src/store/state-store';
import { bytes, int, log, ms, runSuite, type BenchTable } from '../lib/harness';
import { measure, summarize, type Summary } from '../lib/stats';
import { randomBytes } from 'node:crypto';

interface Figures {
  works: number;
  steps: number;
  store: 'whole file' | 'snapshot + log';
  fileBytes: number;
  read: Summary;
  update: Summary;
}

const hex = (n: number) => randomBytes(Math.ceil(n / 2)).toString('hex').slice(0, n);

/** `works` Works shaped like the engine's (4 in 5 closed after review), `steps` steps each. */
function stateWith(works: number, steps: number, now = Date.now()): EngineState {
  const state = emptyEngineState();
  for (let i = 0; i < works; i++) {
    const taskId = hex(24);
    const closed = i % 5 !== 0;
    const work: WorkRecord = {
      taskId,
      projectId: `p${i % 3}`,
      occurrence: '',
      title: `Make the Dida gateway retry reads with jittered backoff (#${1000 + i})`,
      origin: i % 3 === 0 ? 'agent' : 'human',
      mode: 'checklist',
      priority: 3,
      phase: closed ? 'closed' : 'open',
      steps: Array.from({ length: steps }, (_, s) => ({
        id: `s${hex(6)}`,
        itemId: hex(24),
        title: `Step ${s + 1}: fix the off-by-one in the backoff calculation and cover it`,
        status: s < steps - 2 ? ('completed' as const) : ('pending' as const),
        origin: 'agent' as const,
        ...(s < steps - 2 ? { resolution: 'Changed src/dida/http-gateway.ts; verified with npm test.' } : {}),
        seen: { title: `Step ${s + 1}: fix the off-by-one in the backoff calculation and cover it`, done: s < steps - 2 },
        updatedAt: now,
      })),
      nextStepNumber: steps + 1,
      keepOpen: false,
      humanFingerprint: hex(32),
      body: 'Reads sometimes fail with 502 right after a deploy. Retry them a few times with backoff; never retry writes.',
      createdAt: now - 86_400_000,
      updatedAt: now - 3_600_000,
      rev: 7,
    };
    if (closed) {
      work.acceptance = { taskId: hex(24), ownerUserId: '114433221100', anchorCommentId: hex(24), handledCommentIds: [], closed: true };
      work.outcome = 'accepted';
      state.ownTasks[work.acceptance.taskId] = 'acceptance';
    }
    state.works[taskId] = work;
  }
  return state;
}

/** What saveWork does for one step change: the Work is loaded, its step changed, and the record put back whole. */
function oneStepChange(keys: readonly string[], i: number) {
  return (s: EngineState) => {
    const key = keys[i % keys.length] as string;
    const work = structuredClone(s.works[key]) as WorkRecord;
    const target = work.steps[3] as WorkRecord['steps'][number];
    target.status = target.status === 'in_progress' ? 'completed' : 'in_progress';
    target.updatedAt = Date.now();
    work.updatedAt = Date.now();
    work.rev += 1;
    s.works[key] = work;
  };
}

async function measureStore(kind: Figures['store'], dir: string, seed: EngineState, iterations: number, warmup: number): Promise<Figures> {
  const file = path.join(dir, `${kind === 'whole file' ? 'whole' : 'logged'}.json`);
  const lockDir = path.join(dir, 'locks');
  const keys = Object.keys(seed.works);
  if (kind === 'whole file') {
    const store = new StateStore<EngineState>({ file, lockDir, schema: EngineStateSchema, version: ENGINE_STATE_VERSION, empty: emptyEngineState, migrate: (d) => d });
    await store.update(() => structuredClone(seed));
    const fileBytes = (await stat(file)).size;
    const read = summarize(await measure(() => store.read(), iterations, warmup));
    const update = summarize(
      await measure(
        (i) =>
          store.update((s) => {
            oneStepChange(keys, i)(s);
            return s;
          }),
        iterations,
        warmup,
      ),
    );
    return { works: keys.length, steps: seed.works[keys[0] as string]?.steps.length ?? 0, store: kind, fileBytes, read, update };
  }
  const store = new LoggedStateStore<EngineState>({
    file,
    lockDir,
    schema: EngineStateSchema,
    collections: { works: WorkRecordSchema },
    sections: ENGINE_STATE_SECTIONS,
    version: ENGINE_STATE_VERSION,
    empty: emptyEngineState,
  });
  await store.update(() => structuredClone(seed));
  const fileBytes = (await stat(file)).size;
  const read = summarize(await measure(() => store.read(), iterations, warmup));
  const update = summarize(await measure((i) => store.update(oneStepChange(keys, i)), iterations, warmup));
  return { works: keys.length, steps: seed.works[keys[0] as string]?.steps.length ?? 0, store: kind, fileBytes, read, update };
}

runSuite('state', 'State that scales with the work', async ({ quick }) => {
  const iterations = quick ? 10 : 100;
  const warmup = quick ? 2 : 10;
  const dir = await mkdtemp(path.join(tmpdir(), 'dida-todo-bench-state-'));
  const figures: Figures[] = [];
  try {
    for (const [works, steps] of [
      [100, 5],
      [1000, 5],
      [1000, 30],
    ] as const) {
      const seed = stateWith(works, steps);
      for (const kind of ['whole file', 'snapshot + log'] as const) {
        // The whole-file store takes seconds per change at the largest size: fewer runs there.
        const runs = kind === 'whole file' && works * steps > 10_000 ? Math.max(5, Math.round(iterations / 5)) : iterations;
        log(`${kind}: ${works} Works × ${steps} steps, ${warmup} warm-up + ${runs} runs`);
        figures.push(await measureStore(kind, dir, seed, runs, Math.min(warmup, runs)));
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const table: BenchTable = {
    title: 'One step change (lock, read, change one Work, write), milliseconds',
    columns: ['Works × steps', 'store', 'file', 'read median', 'read p95', 'step change median', 'step change p95'],
    rows: figures.map((f) => [`${int(f.works)} × ${f.steps}`, f.store, bytes(f.fileBytes), ms(f.read.median), ms(f.read.p95), ms(f.update.median), ms(f.update.p95)]),
    notes: [
      'Whole file: every change parses, validates and writes the whole state (temp file, fsync, rename). Snapshot + log: a read reuses what the process holds and folds in new log lines; a change validates and appends only the Work it touched (one fsync); the log is folded into a new snapshot every 512 KiB.',
    ],
  };
  return { tables: [table], data: { figures } };
});
