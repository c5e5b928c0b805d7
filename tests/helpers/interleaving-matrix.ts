// The person-edit interleaving matrix (run by tests/integration/engine-interleavings-{steps,lifecycle}.test.ts, one concern each): every
// engine operation × every request position (an edit landing just before
// or just after the request is applied) × every kind of edit a person makes in Dida. The person's edit is never lost
// and nothing is duplicated, except for an edit of the checklist that lands in the flight between the bundle's read
// of the task and its write (Dida has no conditional write and `items` replaces the checklist): the matrix proves the
// window is exactly that flight and counts how often it bites.
import { mkdtemp, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { startEngineHarness, type EngineHarness } from './engine-harness';
import { createdTask, editsOf, MATRIX_OPS } from './interleaving-ops';
import { applyEdit, COMMENT, duplicates, editKept, flightWindow, ITEM_EDITS, record, type EditKind, type MatrixOp, type Recorded, type World } from './interleaving-world';

/** Registers the matrix for the operations of one concern (the two test files run in parallel). */
export function runInterleavingMatrix(concern: MatrixOp['concern']): void {
  const OPS = MATRIX_OPS.filter((op) => op.concern === concern);
  let sim: Simulator;
  let root: string;
  const totals = { cells: 0, lostInWindow: 0, notApplicable: 0 };

  beforeAll(async () => {
    sim = await startSimulator();
    // State files on a memory file system when there is one: the matrix runs thousands of fsyncs.
    root = await mkdtemp(path.join(existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), 'dida-matrix-'));
  });
  afterAll(async () => {
    await sim.close();
    await rm(root, { recursive: true, force: true });
    process.stderr.write(
      `person-edit matrix: ${totals.cells} cells (${OPS.length} of ${MATRIX_OPS.length} operations × request positions × before/after × edits); ` +
        `${totals.lostInWindow} edits lost inside the read→write flight, none outside; ${totals.notApplicable} combinations not applicable\n`,
    );
  });

  let counter = 0;
  async function harness(): Promise<EngineHarness> {
    return startEngineHarness({ sim, dir: path.join(root, `c${++counter}`), timeoutMs: 2000 });
  }

  /** For rework: a comment the person wrote on the review todo reached a rework Work, or the review is still open for it. */
  async function feedbackKept(h: EngineHarness, world: World): Promise<boolean> {
    const state = await h.state();
    const review = Object.values(state.works).find((w) => w.acceptance?.taskId === world.taskId);
    if (review && !review.acceptance?.closed) return true;
    return Object.values(state.works).some((w) => w.reworkOf !== undefined && w.body.includes(COMMENT)) || h.sim.getTask(world.taskId) === undefined;
  }

  describe.each(OPS)('$name × person edits', (op: MatrixOp) => {
    let requests: Recorded[] = [];
    let windows: { items: Set<string>; title: Set<string> } = { items: new Set(), title: new Set() };

    it('runs without edits; records its requests', async () => {
      const h = await harness();
      try {
        const world = await op.setup(h);
        h.sim.resetCounters();
        const rec = record(h.sim);
        await op.run(h, world);
        rec.stop();
        requests = rec.requests;
        const target = op.targetLater ? createdTask(h, world) : world.workTaskId;
        windows = flightWindow(requests, target ?? '');
        await op.converge(h, world);
        expect(duplicates(h, { ...world, taskId: target ?? world.taskId })).toEqual([]);
      } finally {
        await h.close();
      }
      expect(requests.length).toBeGreaterThan(0);
    });

    it.each(editsOf(op).map((e) => [e]))('%s at every request position', async (kind: EditKind) => {
      expect(requests.length).toBeGreaterThan(0);
      for (let index = 1; index <= requests.length; index++) {
        for (const phase of ['before', 'after'] as const) {
          const where = `${op.name}: ${kind} ${phase} request ${index}/${requests.length} (${requests[index - 1]?.route})`;
          const h = await harness();
          try {
            const world = await op.setup(h);
            h.sim.resetCounters();
            let applied = false;
            const stop = h.sim.onRequest((info) => {
              if (applied || info.index !== index) return;
              if (op.targetLater) {
                const created = createdTask(h, world);
                if (!created) return;
                world.taskId = world.workTaskId = created;
              }
              applied = applyEdit(h.sim, world, kind);
            }, phase);
            await op.run(h, world);
            stop();
            if (!applied) {
              totals.notApplicable++;
              continue;
            }
            await op.converge(h, world);
            const kept = (await editKept(h, world, kind)) && (kind !== 'comment' || world.taskId === world.workTaskId || (await feedbackKept(h, world)));
            const key = `${index}:${phase}`;
            const inFlight = (ITEM_EDITS.has(kind) && windows.items.has(key)) || (kind === 'rename' && windows.title.has(key));
            if (!kept) expect(inFlight, `${where}: the person's edit was lost outside the read→write flight`).toBe(true);
            expect(duplicates(h, world), where).toEqual([]);
            totals.cells++;
            if (!kept) totals.lostInWindow++;
          } catch (error) {
            if (error instanceof Error && !error.message.startsWith(op.name)) error.message = `[${where}] ${error.message}`;
            throw error;
          } finally {
            await h.close();
          }
        }
      }
    }, 120_000);
  });
}
