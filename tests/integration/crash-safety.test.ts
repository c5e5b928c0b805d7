// Crash safety: a worker process is SIGKILLed at seeded random moments while it drives a Work through steps,
// finalization and acceptance; restarted workers finish with a valid state file, exactly one acceptance todo
// and no comment posted twice.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINE_STATE_VERSION, EngineStateSchema } from '../../src/core/work/work-state';
import { engineStateStore } from '../../src/wiring/runtime';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { buildScript } from '../helpers/build-script';
import { seededRandom } from '../helpers/seeded-random';

const ITERATIONS = Number(process.env.DIDA_TODO_CRASH_ITERATIONS ?? 6);
let sim: Simulator;
let script: string;
let root: string;

beforeAll(async () => {
  sim = await startSimulator();
  script = await buildScript(path.join(import.meta.dirname, '../helpers/crash-child.ts'));
  root = await mkdtemp(path.join(os.tmpdir(), 'dida-crash-'));
});
afterAll(async () => {
  await sim.close();
  await rm(root, { recursive: true, force: true });
});


/** Runs the worker; kills it with SIGKILL after `killAfterMs` (if still running). Resolves its exit code or signal. */
function runWorker(args: string[], killAfterMs: number | undefined): Promise<number | string> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (d) => (stderr += String(d)));
    const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    const guard = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('exit', (code, signal) => {
      if (timer) clearTimeout(timer);
      clearTimeout(guard);
      if (code !== null && code !== 0 && code !== 3) process.stderr.write(stderr);
      resolve(code ?? signal ?? 'unknown');
    });
  });
}

describe('crash safety', () => {
  it(`finishes every Work exactly once after ${ITERATIONS} seeded rounds of SIGKILLs`, async () => {
    let kills = 0;
    for (let i = 0; i < ITERATIONS; i++) {
      const random = seededRandom(1000 + i);
      const list = sim.seedProject({ name: `crash-${i}` });
      const task = sim.seedTask({ projectId: list.id, title: `崩溃测试 ${i}`, priority: 3, content: '人写的正文', items: [{ title: '一' }, { title: '二' }, { title: '三' }] });
      const dir = path.join(root, `i${i}`);
      const args = [dir, sim.baseUrl, sim.token, list.id, `session-${i}`];
      let finished = false;
      for (let attempt = 0; attempt < 60 && !finished; attempt++) {
        // Early attempts die at a random moment; later ones run to the end.
        const kill = attempt < 6 ? 60 + Math.floor(random() * 400) : undefined;
        const outcome = await runWorker(args, kill);
        if (outcome === 'SIGKILL') kills++;
        finished = outcome === 0;
      }
      expect(finished, `iteration ${i} finished`).toBe(true);

      // The snapshot parses and validates, and so does every line of its change log (a torn last line is ignored).
      const parsed = JSON.parse(await readFile(path.join(dir, 'state.json'), 'utf8'));
      const { version, logGen: _gen, ...data } = parsed;
      expect(version).toBe(ENGINE_STATE_VERSION);
      expect(EngineStateSchema.safeParse(data).success).toBe(true);
      const peeked = await engineStateStore({ stateFile: path.join(dir, 'state.json'), lockDir: path.join(dir, 'locks') }).peek();
      expect(peeked.problem).toBeUndefined();
      expect(EngineStateSchema.safeParse(JSON.parse(JSON.stringify(peeked.value))).success).toBe(true);

      const done = sim.getTask(task.id);
      expect(done?.status).toBe(2);
      expect(done?.items?.map((it) => it.status)).toEqual([1, 1, 1]);
      expect(`${done?.content ?? ''}|${done?.desc ?? ''}`.split('人写的正文').length - 1).toBe(1);
      const acceptances = sim.listTasks(list.id, { includeCompleted: true }).filter((t) => t.title.startsWith('🧑‍🔬'));
      expect(acceptances).toHaveLength(1);
      for (const id of [task.id, acceptances[0]!.id]) {
        const titles = sim.listComments(id).map((c) => c.title);
        expect(new Set(titles).size, `no comment twice on ${id}: ${titles.join(' | ')}`).toBe(titles.length);
      }
    }
    process.stderr.write(`[crash-safety] ${ITERATIONS} iterations, ${kills} SIGKILLs\n`);
  }, 600_000);
});
