// The machine-wide Dida request budget across real processes: one budget for every process of an account, a 429 seen by
// one process pauses the others, and a process killed while it held the budget's lock does not stop anyone.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { accountKey } from '../../src/dida/request-budget';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { budgetFile, readBudgetFile } from '../../src/store/budget-store';
import { buildScript } from '../helpers/build-script';

const here = path.dirname(fileURLToPath(import.meta.url));
let childScript: string;
let holdScript: string;
let dir: string;
let sim: Simulator;
const children = new Set<ChildProcess>();

beforeAll(async () => {
  [childScript, holdScript] = await Promise.all([buildScript(path.join(here, '../helpers/budget-child.ts')), buildScript(path.join(here, '../helpers/store-child.ts'))]);
});
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'dida-budget-mp-'));
  sim = await startSimulator();
});
afterEach(async () => {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
});

const env = () => ({ ...process.env, HOME: dir, XDG_CONFIG_HOME: path.join(dir, 'config'), XDG_STATE_HOME: path.join(dir, 'state'), DIDA_TODO_TOKEN: sim.token });
const stateDir = () => path.join(dir, 'state', 'dida-todo');

async function writeConfig(budget: { perMinute: number; perFiveMinutes: number }): Promise<void> {
  await mkdir(path.join(dir, 'config', 'dida-todo'), { recursive: true });
  await writeFile(path.join(dir, 'config', 'dida-todo', 'config.yaml'), `baseUrl: ${sim.baseUrl}\nbudget:\n  perMinute: ${budget.perMinute}\n  perFiveMinutes: ${budget.perFiveMinutes}\n`);
}

interface ChildReport {
  sent: number;
  refused: Array<{ message: string; retryAfterMs?: number }>;
  other: string;
}

function run(count: number, priority: string): Promise<ChildReport> {
  const child = spawn(process.execPath, [childScript, String(count), priority], { env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => {
      children.delete(child);
      if (code !== 0) reject(new Error(`budget child exited ${code}: ${err}`));
      else resolve(JSON.parse(out.trim()) as ChildReport);
    });
  });
}

describe('one request budget for every process of the machine', () => {
  it('three processes racing for it send exactly the budget between them; the rest of their tool calls are told when to try again', async () => {
    await writeConfig({ perMinute: 12, perFiveMinutes: 100 });
    const reports = await Promise.all([run(10, 'foreground'), run(10, 'foreground'), run(10, 'foreground')]);
    expect(reports.map((r) => r.other)).toEqual(['', '', '']);
    expect(reports.reduce((n, r) => n + r.sent, 0)).toBe(12);
    expect(sim.counters()['GET /project']).toBe(12);
    const refused = reports.flatMap((r) => r.refused);
    expect(refused).toHaveLength(18);
    for (const r of refused) {
      expect(r.message).toMatch(/request budget is used up for now; GET \/project was not sent\. Try again in \d+ s\./);
      expect(r.retryAfterMs).toBeGreaterThan(20_000);
      expect(r.retryAfterMs).toBeLessThanOrEqual(60_000 + 50);
    }
    // The file counts what went out, across the processes.
    expect(readBudgetFile(budgetFile(stateDir(), accountKey(sim.baseUrl, sim.token))).stamps).toHaveLength(12);
  });

  it('background work of the processes stops at its share, leaving the rest for tool calls', async () => {
    await writeConfig({ perMinute: 10, perFiveMinutes: 100 });
    // Background waits (up to a minute) instead of failing: start two, let them take their share, then a tool call.
    const background = [run(6, 'background'), run(6, 'background')];
    const deadline = Date.now() + 15_000;
    while ((sim.counters()['GET /project'] ?? 0) < 8 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(sim.counters()['GET /project']).toBe(8);
    const tool = await run(3, 'foreground');
    expect(tool.sent).toBe(2);
    expect(tool.refused).toHaveLength(1);
    expect(sim.counters()['GET /project']).toBe(10);
    for (const child of children) child.kill('SIGKILL');
    await Promise.allSettled(background);
  });

  it("a 429 seen by one process pauses the others: a tool call elsewhere is refused without reaching Dida, with the server's wait", async () => {
    await writeConfig({ perMinute: 60, perFiveMinutes: 240 });
    sim.injectFault({ route: 'GET /project', kind: 'status', status: 429, retryAfter: 30 });
    const first = await run(1, 'foreground');
    expect(first.sent).toBe(0);
    expect(first.refused[0]?.message).toMatch(/asked this machine to slow down \(429\).*Try again in (29|30) s/);
    expect(sim.counters()['GET /project']).toBe(1);
    const second = await run(1, 'foreground');
    expect(second.sent).toBe(0);
    expect(second.refused[0]?.message).toMatch(/429/);
    // Nothing more reached the simulator: the pause was honoured by the other process.
    expect(sim.counters()['GET /project']).toBe(1);
  });

  it('the same 429 without a pause (control): the second process reaches Dida', async () => {
    await writeConfig({ perMinute: 60, perFiveMinutes: 240 });
    sim.injectFault({ route: 'GET /project', kind: 'status', status: 500 });
    await run(1, 'foreground');
    const second = await run(1, 'foreground');
    expect(second.sent).toBe(1);
  });

  it('a process killed while it held the budget lock does not hold anyone up: the next request is counted at once', async () => {
    await writeConfig({ perMinute: 60, perFiveMinutes: 240 });
    const key = accountKey(sim.baseUrl, sim.token);
    const holder = spawn(process.execPath, [holdScript, 'hold', path.join(stateDir(), 'locks'), `budget-${key}`, '60000'], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(holder);
    await new Promise<void>((resolve, reject) => {
      let out = '';
      holder.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('locked\n')) resolve();
      });
      holder.on('exit', (code) => reject(new Error(`holder exited ${code}`)));
    });
    holder.kill('SIGKILL');
    await new Promise((resolve) => holder.once('exit', resolve));
    const report = await run(1, 'foreground');
    expect(report.sent).toBe(1);
    // Counted in the shared file: the lock was taken over, not skipped after its timeout.
    expect(readBudgetFile(budgetFile(stateDir(), key)).stamps).toHaveLength(1);
  });
});
