// Real Node child processes sharing one state file and lock dir, against the parent's simulator: no lost updates, one acceptance.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildScript } from '../helpers/build-script';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';

const here = path.dirname(fileURLToPath(import.meta.url));
const S = 'parent';
let script: string;
let h: EngineHarness;
const children = new Set<ChildProcess>();

beforeAll(async () => {
  script = await buildScript(path.join(here, '../helpers/engine-child.ts'));
});
beforeEach(async () => {
  h = await startEngineHarness();
});
afterEach(async () => {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
  await h.close();
});

function run(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [script, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DIDA_BASE_URL: h.sim.baseUrl, DIDA_TOKEN: h.sim.token, ENGINE_DIR: h.dir },
  });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      children.delete(child);
      resolve({ code, stdout, stderr });
    }),
  );
}

describe('engine across processes', () => {
  it('8 processes completing 50 steps of one Work concurrently lose no update', async () => {
    const list = h.sim.seedProject({ name: 'l' });
    const titles = Array.from({ length: 50 }, (_, i) => `步骤 ${String(i + 1).padStart(2, '0')}`);
    const work = await h.engine.createWork(S, list.id, { title: '大批量', steps: titles });
    const ids = work.steps.map((s) => s.id);
    const shares = Array.from({ length: 8 }, (_, p) => ids.filter((_, i) => i % 8 === p));
    const results = await Promise.all(shares.map((share) => run('complete', work.taskId, share.join(','))));
    for (const result of results) expect(result).toMatchObject({ code: 0, stdout: 'done\n', stderr: '' });

    const task = h.sim.getTask(work.taskId)!;
    expect(task.items?.map((i) => [i.title, i.status])).toEqual(titles.map((t) => [t, 1]));
    const local = (await h.state()).works[work.taskId]!;
    expect(local.steps.map((s) => [s.title, s.status, s.origin])).toEqual(titles.map((t) => [t, 'completed', 'agent']));
    expect(local.steps.every((s) => s.resolution === `完成 ${s.id}`)).toBe(true);
    // Every step's completion was reported once (a process's completions are coalesced into few comments).
    const done = h.sim.listComments(work.taskId).flatMap((c) => c.title.split('\n\n')).filter((c) => c.startsWith('已完成：'));
    expect(done.sort()).toEqual(titles.map((t) => `已完成：${t}\n结果：完成 ${ids[titles.indexOf(t)]}`).sort());
    expect(h.sim.listComments(work.taskId).length).toBeLessThanOrEqual(8 + 1);
    // The parent sees a settled Work and finalizes it once.
    expect((await h.engine.settle(S)).map((r) => r.outcome.status)).toEqual(['finalized']);
  }, 60_000);

  it('two processes settling the same settled Work at once file exactly one acceptance', async () => {
    const list = h.sim.seedProject({ name: 'l' });
    for (let round = 0; round < 3; round++) {
      const title = `并发验收 ${round}`;
      const work = await h.engine.createWork(S, list.id, { title, steps: ['唯一的一步'] });
      await h.engine.changeSteps(S, [{ op: 'update', step: '唯一的一步', status: 'completed', resolution: '完成' }]);
      const results = await Promise.all([run('settle', work.taskId), run('settle', work.taskId)]);
      for (const result of results) expect(result).toMatchObject({ code: 0, stderr: '' });
      const outcomes = results.map((r) => (JSON.parse(r.stdout) as Array<{ outcome: { status: string } }>).map((o) => o.outcome.status)).flat().sort();
      // The loser either waited for the lock and found it done, or started after and had nothing to settle.
      expect(outcomes.filter((o) => o === 'finalized')).toHaveLength(1);
      expect(outcomes.every((o) => o === 'finalized' || o === 'already')).toBe(true);
      const acceptances = h.sim.listTasks(list.id, { includeCompleted: true }).filter((t) => t.title === `🧑‍🔬 待验收：${title}`);
      expect(acceptances).toHaveLength(1);
      // The owner is known from the claim's answer: no anchor, and never one of each process.
      expect(h.sim.listComments(acceptances[0]!.id)).toEqual([]);
      expect(h.sim.listComments(work.taskId).filter((c) => c.title.includes('全部步骤都已处理'))).toHaveLength(1);
      expect(h.sim.getTask(work.taskId)?.status).toBe(2);
      expect((await h.state()).works[work.taskId]).toMatchObject({ phase: 'accepting', acceptance: { taskId: acceptances[0]!.id } });
    }
  }, 60_000);
});
