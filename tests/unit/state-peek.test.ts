// The first-load layer's look at the state (peekSection) must agree with the store it peeks at: after any sequence of
// writes, compactions and a crash cut in the log, it either says it cannot tell or gives the sessions the store reads.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WorkRecordSchema, type EngineState } from '../../src/core/work/work-state';
import { engineStateStore } from '../../src/wiring/runtime';
import { peekSection } from '../../src/store/state-peek';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(process.env.DIDA_TODO_TEST_TMP ?? os.tmpdir(), 'peek-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function store(file: string, compactAtBytes: number) {
  return engineStateStore({ stateFile: file, lockDir: path.join(path.dirname(file), 'locks'), compactAtBytes });
}

type Op = { kind: 'open' | 'close' | 'drop'; session: number; at: number } | { kind: 'work'; key: number; title: string } | { kind: 'cut'; bytes: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constantFrom('open' as const, 'close' as const, 'drop' as const), session: fc.nat(3), at: fc.nat(1_000_000) }),
  // Work titles that spell the section's line, to fool a text search.
  fc.record({ kind: fc.constant('work' as const), key: fc.nat(4), title: fc.constantFrom('{"s":"sessions","v":{}}', '\n{"s":"sessions","v":', '"turnOpenSince":1', 'plain') }),
  fc.record({ kind: fc.constant('cut' as const), bytes: fc.integer({ min: 1, max: 40 }) }),
);

describe('peekSection', () => {
  it('says what the store reads for `sessions`, or that it cannot tell', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 25 }), fc.constantFrom(300, 2_000, 512 * 1024), async (ops, compactAtBytes) => {
        const file = path.join(dir, `r${run++}`, 'state.json');
        fs.mkdirSync(path.dirname(file), { recursive: true });
        for (const o of ops) {
          if (o.kind === 'cut') {
            // A crash in the middle of an append: a partial line at the end of the log.
            if (fs.existsSync(`${file}.log`)) fs.appendFileSync(`${file}.log`, JSON.stringify({ s: 'sessions', v: { cut: { turnOpenSince: 1 } } }).slice(0, o.bytes));
          } else {
            // A fresh store each time: another process writing (it must fold in what is on disk, cut line included).
            await store(file, compactAtBytes).update((state) => {
              if (o.kind === 'work') {
                state.works[`w${o.key}`] = WorkRecordSchema.parse({ taskId: `t${o.key}`, projectId: 'p', title: o.title, origin: 'human', mode: 'checklist', priority: 3, humanFingerprint: 'f', phase: 'open', steps: [], createdAt: 1, updatedAt: 1 });
              } else if (o.kind === 'drop') delete state.sessions[`s${o.session}`];
              else {
                const s = (state.sessions[`s${o.session}`] ??= { touched: [], autoAttempts: 0, updatedAt: 0 }) as Record<string, unknown>;
                if (o.kind === 'open') s.turnOpenSince = o.at;
                else delete s.turnOpenSince;
                s.updatedAt = o.at;
              }
            });
          }
          const peek = peekSection(file, 'sessions', '"turnOpenSince"');
          let truth: EngineState['sessions'] | undefined;
          try {
            truth = (await store(file, compactAtBytes).read()).sessions;
          } catch {
            truth = undefined;
          }
          if (!peek.known) continue;
          const marked = (v: unknown) =>
            Object.entries((v ?? {}) as Record<string, { turnOpenSince?: number }>)
              .filter(([, r]) => r.turnOpenSince !== undefined)
              .map(([id, r]) => [id, r.turnOpenSince])
              .sort();
          expect(truth, 'the peek claimed certainty about a state the store cannot read').toBeDefined();
          // The snapshot is only parsed when it holds a marker; otherwise "nothing marked" is the answer.
          expect(marked(peek.value)).toEqual(marked(truth));
        }
      }),
      { numRuns: 60 },
    );
  });
});
