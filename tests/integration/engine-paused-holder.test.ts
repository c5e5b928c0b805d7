// A process frozen while it holds a Work's lock (Ctrl-Z, laptop sleep) loses the lock; when it resumes it must not
// write what it read before: another process's step completion survives in Dida and in the state file.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EngineDeps } from '../../src/core/work/engine-context';
import { getLocale } from '../../src/core/text/locale';
import { WorkEngine } from '../../src/core/engine/work-engine';
import { openEngineStore } from '../../src/wiring/runtime';
import { buildScript } from '../helpers/build-script';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';

const here = path.dirname(fileURLToPath(import.meta.url));
const STALE_MS = 2000;
let script: string;
let h: EngineHarness | undefined;
let child: ChildProcess | undefined;

beforeAll(async () => {
  script = await buildScript(path.join(here, '../helpers/engine-child.ts'));
});
afterEach(async () => {
  if (child?.pid && child.exitCode === null) {
    process.kill(child.pid, 'SIGCONT');
    child.kill('SIGKILL');
  }
  child = undefined;
  await h?.close();
  h = undefined;
});

describe('a paused lock holder', () => {
  it('gives its operation up and redoes it instead of erasing the step another process completed meanwhile', async () => {
    h = await startEngineHarness();
    const harness = h;
    const list = harness.sim.seedProject({ name: '清单' });
    const work = await harness.engine.createWork('parent', list.id, { title: '两步', steps: ['甲', '乙'] });
    const [a, b] = work.steps;
    // A second engine in this process over the same state and locks (another dsh process on the machine).
    const { state, locks } = openEngineStore({ stateFile: path.join(harness.dir, 'state.json'), lockDir: path.join(harness.dir, 'locks'), lockOptions: { staleMs: STALE_MS, timeoutMs: 30_000 } });
    const deps: EngineDeps = { ...harness.deps, state, locks, now: Date.now, locale: getLocale('zh') };
    const other = new WorkEngine(deps);

    let paused = false;
    let otherDone: Promise<unknown> | undefined;
    harness.sim.onRequest(async (info) => {
      // The child's read of the task has been answered by the simulator (a snapshot) but not sent yet: freeze the child.
      if (paused || info.route !== 'GET /project/{pid}/task/{tid}' || !child?.pid) return;
      paused = true;
      process.kill(child.pid, 'SIGSTOP');
      otherDone = other.changeSteps('parent', [{ op: 'update', step: b!.id, status: 'completed', resolution: '乙由另一个进程完成' }], work.taskId);
      await otherDone;
      process.kill(child.pid, 'SIGCONT');
    }, 'after');

    child = spawn(process.execPath, [script, 'complete', work.taskId, a!.id], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, DIDA_BASE_URL: harness.sim.baseUrl, DIDA_TOKEN: harness.sim.token, ENGINE_DIR: harness.dir, ENGINE_LOCK_STALE_MS: String(60_000) },
    });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child!.on('exit', resolve));
    expect(paused).toBe(true);
    await otherDone;
    expect(code, stderr).toBe(0);

    expect(harness.sim.getTask(work.taskId)?.items?.map((i) => [i.title, i.status])).toEqual([
      ['甲', 1],
      ['乙', 1],
    ]);
    const saved = (await harness.state()).works[work.taskId]!;
    expect(saved.steps.map((s) => [s.title, s.status, s.resolution])).toEqual([
      ['甲', 'completed', `完成 ${a!.id}`],
      ['乙', 'completed', '乙由另一个进程完成'],
    ]);
  }, 60_000);
});
