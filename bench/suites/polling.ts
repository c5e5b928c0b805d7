// Suite `polling`: the machine's poller with its default pace. (1) Pickup latency: from a task written in the simulator
// to its claim comment, with 1, 2 and 4 idle live sessions in 1 and 2 real processes (each the real DshHost with its
// own runtime; the configurations run side by side, each with its own simulator and state folder), tasks written at
// random moments. (2) Dida requests of an idle machine with bound idle sessions, per list and hour, over simulated
// hours (the machine's clock is moved by hand, the requests are real): while the list changes, then in quiet.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseClaim } from '../../src/core/queue/claims';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { startPollWorld } from '../../tests/helpers/poll-world';
import type { ChildSpec } from '../../tests/helpers/poll-child';
import { int, log, ms, runSuite, type BenchTable } from '../lib/harness';
import { median, p95 } from '../lib/stats';

if (process.argv[2] === 'child') {
  await import('../../tests/helpers/poll-child');
} else {
  runSuite('polling', 'The machine poller: pickup latency and requests of an idle machine', async ({ quick }) => {
    const tables: BenchTable[] = [];
    const hours = await requestsPerHour(quick);
    tables.push(hours.table);
    const pickup = await pickupLatency(quick);
    tables.push(pickup.table);
    return { tables, data: { hours: hours.data, pickup: pickup.data } };
  });
}

// ---- pickup latency ----------------------------------------------------------------------------------------------

interface Config {
  label: string;
  processes: number;
  sessions: number;
}

const CONFIGS: Config[] = [
  { label: '1 session, 1 process', processes: 1, sessions: 1 },
  { label: '2 sessions, 1 process', processes: 1, sessions: 2 },
  { label: '2 sessions, 2 processes', processes: 2, sessions: 2 },
  { label: '4 sessions, 1 process', processes: 1, sessions: 4 },
  { label: '4 sessions, 2 processes', processes: 2, sessions: 4 },
];

interface Machine {
  sim: Simulator;
  home: string;
  children: ChildProcess[];
  listId: string;
}

async function startMachine(config: Config): Promise<Machine> {
  const sim = await startSimulator();
  const home = mkdtempSync(path.join(os.tmpdir(), 'dida-bench-poll-'));
  const list = sim.seedProject({ name: 'bench' });
  const cwd = path.join(home, 'app');
  mkdirSync(cwd, { recursive: true });
  mkdirSync(path.join(home, 'config', 'dida-todo'), { recursive: true });
  writeFileSync(path.join(home, 'config', 'dida-todo', 'config.yaml'), `baseUrl: ${sim.baseUrl}\nbindings:\n  - cwd: ${cwd}\n    projectId: ${list.id}\n`);
  const children: ChildProcess[] = [];
  for (let p = 0; p < config.processes; p++) {
    const sessions = Array.from({ length: config.sessions }, (_, i) => i)
      .filter((i) => i % config.processes === p)
      .map((i) => ({ id: `session-${String(p)}${String(i).padStart(3, '0')}${Math.random().toString(16).slice(2, 6)}`, cwd }));
    // Defaults: no poll pace given, so the row's defaults (20 s, slowing to 10 min in quiet) apply.
    const spec: ChildSpec = { sessions, mode: 'idle' };
    children.push(
      spawn(process.execPath, [process.argv[1] as string, 'child'], {
        env: { ...process.env, POLL_CHILD_SPEC: JSON.stringify(spec), HOME: home, XDG_CONFIG_HOME: path.join(home, 'config'), XDG_STATE_HOME: path.join(home, 'state'), DIDA_TODO_TOKEN: sim.token },
        stdio: ['ignore', 'ignore', 'ignore'],
      }),
    );
  }
  return { sim, home, children, listId: list.id };
}

async function stopMachine(m: Machine): Promise<void> {
  for (const child of m.children) child.kill('SIGKILL');
  await m.sim.close();
  rmSync(m.home, { recursive: true, force: true });
}

/** Writes `samples` tasks at random moments (21–29 s apart) and records, for each, when its claim comment came. */
async function measureMachine(m: Machine, samples: number): Promise<number[]> {
  const latencies: number[] = [];
  const written = new Map<string, number>();
  m.sim.onRequest((info) => {
    if (info.route !== 'POST /project/{pid}/task/{tid}/comment') return;
    const taskId = info.path.split('/')[4] as string;
    const at = written.get(taskId);
    const title = (info.body as { title?: string } | undefined)?.title ?? '';
    if (at !== undefined && parseClaim(title)) {
      latencies.push(Date.now() - at);
      written.delete(taskId);
    }
  }, 'after');
  // Let the processes start, attach their sessions and elect the poller.
  await sleep(8_000);
  for (let i = 0; i < samples; i++) {
    const task = m.sim.seedTask({ projectId: m.listId, title: `任务 ${i + 1}`, priority: 3 });
    written.set(task.id, Date.now());
    await sleep(21_000 + Math.random() * 8_000);
  }
  await sleep(5_000);
  return latencies;
}

async function pickupLatency(quick: boolean): Promise<{ table: BenchTable; data: unknown }> {
  const samples = quick ? 2 : 14;
  const configs = quick ? CONFIGS.slice(0, 3) : CONFIGS;
  log(`pickup latency: ${configs.length} machines side by side, ${samples} tasks each, ~${Math.round((samples * 25 + 15) / 60)} min`);
  const machines = await Promise.all(configs.map(startMachine));
  try {
    const results = await Promise.all(machines.map((m) => measureMachine(m, samples)));
    const rows = configs.map((c, i) => {
      const l = results[i] as number[];
      return [c.label, `${l.length}/${samples}`, l.length ? ms(median(l)) : 'n/a', l.length ? ms(p95(l)) : 'n/a', l.length ? ms(Math.max(...l)) : 'n/a'];
    });
    return {
      table: {
        title: 'Pickup latency with the default pace: a task written in Dida → its claim comment (milliseconds)',
        columns: ['machine', 'claimed', 'p50', 'p95', 'max'],
        rows,
        notes: ['Default settings (a poll every 20 s while a session is idle and the list changes); goal p95 ≤ 30 s.', 'p95 is nearest-rank over the samples; the configurations ran at the same time on the 2 cores.'],
      },
      data: configs.map((c, i) => ({ ...c, latencies: results[i] })),
    };
  } finally {
    await Promise.all(machines.map(stopMachine));
  }
}

// ---- requests per hour -------------------------------------------------------------------------------------------

async function requestsPerHour(quick: boolean): Promise<{ table: BenchTable; data: unknown }> {
  const w = await startPollWorld();
  try {
    w.config.value = { ...w.config.value, bindings: [{ cwd: '/code/app', projectId: w.list.id }] };
    const a = w.process(1001);
    const b = w.process(1002);
    await a.session('session-aaaa0001', '/code/app');
    await a.session('session-aaaa0002', '/code/app');
    await b.session('session-bbbb0003', '/code/app');
    const draft = w.sim.seedTask({ projectId: w.list.id, title: '草稿', priority: 0 });
    const minutes = quick ? 20 : 60;
    const rows: string[][] = [];
    const data: Array<{ phase: string; requests: number; reads: number; perHour: number }> = [];
    const phase = async (label: string, everyMinutes: number | undefined, handOver = false) => {
      w.sim.resetCounters();
      for (let second = 0; second < minutes * 60; second += 5) {
        if (everyMinutes && second % (everyMinutes * 60) === 0) {
          if (handOver) w.sim.seedTask({ projectId: w.list.id, title: `新任务 ${second}`, priority: 3 });
          else w.sim.editTask(draft.id, { content: `改了 ${second}` });
        }
        await w.rounds(1, 5_000);
      }
      const requests = w.sim.totalRequests();
      const reads = w.reads();
      const perHour = (requests * 60) / minutes;
      data.push({ phase: label, requests, reads, perHour });
      rows.push([label, `${minutes} min`, int(requests), int(reads), int(perHour)]);
      log(`${label}: ${requests} requests (${reads} list reads) in ${minutes} simulated minutes`);
    };
    await phase('the person edits a draft every 3 min', 3);
    await phase('quiet, first hour', undefined);
    await phase('quiet, second hour', undefined);
    await phase('a new task every 10 min (claimed and handed over)', 10, true);
    return {
      table: {
        title: 'Dida requests of a machine with 3 idle bound sessions in 2 processes, one list (simulated hours)',
        columns: ['phase', 'length', 'requests', 'list reads', 'per hour'],
        rows,
        notes: [
          'Default pace: a poll every 20 s while the list changes, doubling per 10 quiet minutes up to 10 min; goal ≤ 240 per list and hour while it changes.',
          'The last row adds the hand-overs: claim (list comments, post, list) per task, besides the polls.',
        ],
      },
      data,
    };
  } finally {
    await w.close();
  }
}

function sleep(msDelay: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, msDelay));
}
