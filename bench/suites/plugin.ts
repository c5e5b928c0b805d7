// Suite `plugin`: what the bundle adds to dsh — bundle bytes, import + apply of dsh-plugin/index.mjs in a fresh Node
// process, and `dsh --profile headless "say hi"` one-shots with and without the bundle installed (interleaved),
// wall time and peak memory (`/usr/bin/time -v`, else VmRSS sampling of the process tree every 20 ms).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { dshEnv, ensureDsh, installBundle, makeDshHome, removeDshHome, repoRoot, type DshInstall } from '../../tests/e2e/harness/dsh-run';
import { startFakeModel, type FakeModel } from '../../tests/e2e/harness/fake-model';
import { bytes, log, ms, runSuite, type BenchTable } from '../lib/harness';
import { median, ratio, summarize, type Summary } from '../lib/stats';
import { bundleSize } from '../lib/bundle-size';

const PLUGIN_DIR = path.join(repoRoot, 'dsh-plugin');
const ENTRY = path.join(PLUGIN_DIR, 'index.mjs');
const TIME_BIN = '/usr/bin/time';
const RUN_TIMEOUT_MS = 90_000;

/** Runs in `node --input-type=module -e`; prints one JSON line. */
const IMPORT_PROBE = `
const t0 = performance.now();
const mod = await import(process.env.PROBE_ENTRY);
const t1 = performance.now();
const registered = [];
const listeners = [];
const effects = [];
const ctx = {
  on: (event, fn) => { listeners.push(event); return () => {}; },
  effect: (fn) => { effects.push(fn); },
  get: () => undefined,
  tools: { register: (def) => { registered.push(def.name); return () => {}; } },
  agents: { get: () => undefined, roots: () => [] },
};
const checked = await mod.Config['~standard'].validate({ configPath: process.env.PROBE_CONFIG, stateDir: process.env.PROBE_STATE });
if (checked.issues) throw new Error('config: ' + JSON.stringify(checked.issues));
const t2 = performance.now();
mod.apply(ctx, checked.value);
const t3 = performance.now();
for (const fn of effects) { const dispose = fn(); if (typeof dispose === 'function') await dispose(); }
process.stdout.write(JSON.stringify({ bootMs: t0, importMs: t1 - t0, configMs: t2 - t1, applyMs: t3 - t2, tools: registered.length, listeners: listeners.length, maxRssBytes: process.resourceUsage().maxRSS * 1024 }) + '\\n');
process.exit(0);
`;

interface ProbeSample {
  bootMs: number;
  importMs: number;
  configMs: number;
  applyMs: number;
  tools: number;
  listeners: number;
  maxRssBytes: number;
  /** Spawn to exit, seen from the parent. */
  processMs: number;
}

function runNode(nodeBin: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ stdout: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(nodeBin, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) reject(new Error(`${path.basename(nodeBin)} ${args.slice(0, 2).join(' ')}… exited ${code}: ${stderr.slice(-2000)}`));
      else resolve({ stdout, ms: performance.now() - started });
    });
  });
}

async function probeImport(nodeBin: string, scratch: string): Promise<ProbeSample> {
  const env: NodeJS.ProcessEnv = { ...process.env, PROBE_ENTRY: ENTRY, PROBE_CONFIG: path.join(scratch, 'absent-config.yaml'), PROBE_STATE: path.join(scratch, 'state') };
  delete env.NODE_OPTIONS;
  const { stdout, ms: processMs } = await runNode(nodeBin, ['--input-type=module', '-e', IMPORT_PROBE], env);
  return { ...(JSON.parse(stdout.trim().split('\n').pop() as string) as Omit<ProbeSample, 'processMs'>), processMs };
}

async function probeEmpty(nodeBin: string): Promise<number> {
  return (await runNode(nodeBin, ['--input-type=module', '-e', 'process.exit(0)'], { ...process.env, NODE_OPTIONS: '' })).ms;
}

// ---- dsh one-shots -----------------------------------------------------------------------------------------------

interface Variant {
  name: string;
  home: string;
  cwd: string;
  env?: Record<string, string>;
  /** The one-shot's message (default `say hi`). */
  prompt?: string;
}

interface OneShot {
  wallMs: number;
  maxRssBytes: number;
  /** User + system CPU time of the dsh process (NaN without /usr/bin/time). */
  cpuMs: number;
  /** Dida requests the run made, by route. */
  requests: Record<string, number>;
}

/** Peak RSS of a process tree by sampling /proc every 20 ms (fallback when /usr/bin/time is absent). */
function treeRssBytes(root: number): number {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      /* gone */
    }
  }
  let total = 0;
  const todo = [root];
  while (todo.length) {
    const pid = todo.pop() as number;
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) total += Number(m[1]) * 1024;
    } catch {
      /* gone */
    }
    todo.push(...(children.get(pid) ?? []));
  }
  return total;
}

async function oneShotCounted(install: DshInstall, model: FakeModel, sim: Simulator, variant: Variant, scratch: string, useTime: boolean): Promise<OneShot> {
  sim.resetCounters();
  const shot = await oneShot(install, model, variant, scratch, useTime);
  return { ...shot, requests: sim.counters() as Record<string, number> };
}

function oneShot(install: DshInstall, model: FakeModel, variant: Variant, scratch: string, useTime: boolean): Promise<OneShot> {
  const dshArgs = ['--profile', 'headless', '--patch', install.hmrPatch, variant.prompt ?? 'say hi'];
  const timeFile = path.join(scratch, `time-${process.hrtime.bigint()}.txt`);
  const [cmd, args] = useTime ? [TIME_BIN, ['-v', '-o', timeFile, install.dshBin, ...dshArgs]] : [install.dshBin, dshArgs];
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(cmd, args, {
      cwd: variant.cwd,
      env: dshEnv(install, { home: variant.home, baseUrl: model.baseUrl, ...(variant.env ? { env: variant.env } : {}) }),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d.slice(0, 100_000)));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d.slice(0, 100_000)));
    let sampledPeak = 0;
    const sampler = useTime ? undefined : setInterval(() => (sampledPeak = Math.max(sampledPeak, child.pid ? treeRssBytes(child.pid) : 0)), 20);
    const killGroup = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    };
    const timer = setTimeout(killGroup, RUN_TIMEOUT_MS);
    child.once('error', reject);
    child.once('close', (code) => {
      const wallMs = performance.now() - started;
      clearTimeout(timer);
      if (sampler) clearInterval(sampler);
      killGroup();
      if (code !== 0 || !stdout.includes('FAKE_ANSWER')) {
        reject(new Error(`dsh one-shot (${variant.name}) exited ${code} without the fake answer:\n${stdout.slice(-1500)}\n${stderr.slice(-2500)}`));
        return;
      }
      let maxRssBytes = sampledPeak;
      let cpuMs = Number.NaN;
      if (useTime) {
        const text = readFileSync(timeFile, 'utf8');
        const m = /Maximum resident set size \(kbytes\): (\d+)/.exec(text);
        maxRssBytes = m ? Number(m[1]) * 1024 : Number.NaN;
        const user = /User time \(seconds\): ([\d.]+)/.exec(text);
        const system = /System time \(seconds\): ([\d.]+)/.exec(text);
        if (user && system) cpuMs = (Number(user[1]) + Number(system[1])) * 1000;
        rmSync(timeFile, { force: true });
      }
      resolve({ wallMs, maxRssBytes, cpuMs, requests: {} });
    });
  });
}

/**
 * A bundle that inserts one row whose plugin registers nothing: what dsh itself pays to resolve, load and apply one
 * more package, so the bundle's own share of the cold start can be told apart from it.
 */
function emptyPackage(scratch: string): string {
  const dir = path.join(scratch, 'empty-bundle');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: 'dida-bench-empty', version: '1.0.0', type: 'module', main: './index.mjs', dsh: { bundle: { patch: './cordis.patch.yml' } } }, null, 2),
  );
  writeFileSync(path.join(dir, 'index.mjs'), "export const name = 'dida-bench-empty';\nexport function apply() {}\n");
  writeFileSync(path.join(dir, 'cordis.patch.yml'), '- insert:\n    - id: dida-bench-empty\n      name: dida-bench-empty\n');
  return dir;
}

/** A ratio near 1 with two decimals: `1.34×`. */
function ratioText(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(2)}×` : 'n/a';
}

// ---- suite -------------------------------------------------------------------------------------------------------

runSuite('plugin', 'Plugin overhead in dsh', async ({ quick }) => {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'dida-bench-plugin-'));
  const tables: BenchTable[] = [];
  try {
    if (!existsSync(ENTRY)) throw new Error('dsh-plugin/index.mjs is missing; run `npm run build` first.');
    const size = bundleSize();
    log(`bundle: entry ${bytes(size.entryBytes)}, static ${bytes(size.staticBytes)}, reachable ${bytes(size.reachableBytes)}`);

    log('dsh: ensureDsh() (installs dsh 0.1.0-rc.8 and Node 24 into ~/.cache/dida-todo-e2e on first use; cached afterwards)');
    const install = await ensureDsh();

    // Import + apply, in Node 20 (this process's) and in the Node dsh runs under.
    const probes = quick ? 5 : 15;
    const runtimes = [{ label: `Node ${process.versions.node} (bench)`, bin: process.execPath }];
    if (install.nodeBin !== process.execPath) runtimes.push({ label: 'Node of dsh (cache)', bin: install.nodeBin });
    const importRows: string[][] = [];
    const importData: Array<{ runtime: string; samples: ProbeSample[]; emptyProcess: Summary }> = [];
    for (const rt of runtimes) {
      log(`import + apply in ${rt.label}: ${probes} fresh processes (+1 warm-up)`);
      await probeImport(rt.bin, scratch);
      const samples: ProbeSample[] = [];
      const empty: number[] = [];
      for (let i = 0; i < probes; i++) {
        samples.push(await probeImport(rt.bin, scratch));
        empty.push(await probeEmpty(rt.bin));
      }
      const m = (pick: (s: ProbeSample) => number) => median(samples.map(pick));
      const version = (await runNode(rt.bin, ['-p', 'process.version'], process.env)).stdout.trim();
      const emptyProcess = summarize(empty);
      importData.push({ runtime: version, samples, emptyProcess });
      importRows.push([
        `Node ${version}`,
        String(probes),
        ms(m((s) => s.importMs)),
        ms(m((s) => s.configMs)),
        ms(m((s) => s.applyMs)),
        ms(m((s) => s.importMs + s.configMs + s.applyMs)),
        ms(m((s) => s.processMs)),
        ms(emptyProcess.median),
        bytes(m((s) => s.maxRssBytes)),
        `${samples[0]?.tools} tools, ${samples[0]?.listeners} hooks`,
      ]);
    }
    tables.push({
      title: 'dsh-plugin/index.mjs: bundle size, and import + apply in a fresh Node process (medians, ms)',
      columns: ['runtime', 'n', 'import', 'config check', 'apply', 'import+config+apply', 'whole process', 'empty process', 'RSS high-water', 'registered'],
      rows: importRows,
      notes: [
        `Bundle: entry index.mjs ${bytes(size.entryBytes)}; entry + statically imported chunks (${size.staticFiles.length} files) ${bytes(size.staticBytes)} (${bytes(size.staticGzipBytes)} gzipped); with lazy chunks reachable from the entry (${size.reachableFiles.length} files) ${bytes(size.reachableBytes)}; all of dsh-plugin/*.mjs incl. the CLI ${bytes(size.allBytes)}.`,
        'Fake ctx: on, effect, get (→ undefined), tools.register, agents; config.yaml absent (the plugin stays passive); the effect disposer is run before exit.',
        '"empty process" = `node --input-type=module -e "process.exit(0)"`, the floor under "whole process".',
      ],
    });

    // One-shots: without the bundle, with it (cwd not bound), with it (cwd bound to a simulator list of 10 tasks).
    const model = await startFakeModel();
    const sim: Simulator = await startSimulator();
    const homes: string[] = [];
    try {
      const without = makeDshHome();
      const withEmpty = makeDshHome();
      const withBundle = makeDshHome();
      homes.push(without, withEmpty, withBundle);
      for (const home of homes) mkdirSync(path.join(home, 'work'), { recursive: true });
      log('installing the bundle into the "with" home (dsh plugin add <repo>; pnpm links the checkout)');
      const installStarted = performance.now();
      await installBundle(withBundle, 'headless', repoRoot);
      const installMs = performance.now() - installStarted;
      // The floor: dsh's own cost of one more bundle — a package whose plugin registers nothing.
      await installBundle(withEmpty, 'headless', emptyPackage(scratch));
      // The bound cwd: a list with 10 open tasks (3 items each); "say hi" is no queue trigger, so the turn only syncs.
      const list = sim.seedProject({ name: 'Bench list' });
      for (let t = 0; t < 10; t++) sim.seedTask({ projectId: list.id, title: `Request ${t + 1}`, priority: 3, items: [{ title: 'a' }, { title: 'b' }, { title: 'c' }] });
      const boundCwd = realpathSync(mkdtempSync(path.join(withBundle, 'bound-')));
      const configDir = path.join(withBundle, '.test-xdg', 'config', 'dida-todo');
      mkdirSync(configDir, { recursive: true });
      writeFileSync(path.join(configDir, 'config.yaml'), `baseUrl: ${sim.baseUrl}\nbindings:\n  - cwd: ${boundCwd}\n    projectId: ${list.id}\n    label: Bench list\n`);
      const variants: Variant[] = [
        { name: 'without bundle', home: without, cwd: realpathSync(path.join(without, 'work')) },
        { name: 'with an empty bundle (floor)', home: withEmpty, cwd: realpathSync(path.join(withEmpty, 'work')) },
        { name: 'with bundle, cwd not bound', home: withBundle, cwd: realpathSync(path.join(withBundle, 'work')), env: { DIDA_TODO_TOKEN: sim.token } },
        { name: 'with bundle, cwd bound (10 tasks)', home: withBundle, cwd: boundCwd, env: { DIDA_TODO_TOKEN: sim.token } },
        // The same bound directory, with a message that asks for the queue: the engine loads and reads the list.
        { name: 'bound, the queue phrase (reads Dida)', home: withBundle, cwd: boundCwd, env: { DIDA_TODO_TOKEN: sim.token }, prompt: '检查todo' },
      ];
      const useTime = existsSync(TIME_BIN);
      const rounds = quick ? 2 : Number(process.env.BENCH_PLUGIN_ROUNDS ?? 12);
      const samples = new Map<string, OneShot[]>(variants.map((v) => [v.name, []]));
      log(`one-shots: 1 warm-up round + ${rounds} rounds × ${variants.length} variants, order rotated each round; peak memory by ${useTime ? '/usr/bin/time -v' : 'VmRSS sampling every 20 ms'}`);
      for (const v of variants) await oneShot(install, model, v, scratch, useTime);
      for (let round = 0; round < rounds; round++) {
        const order = variants.map((_, i) => variants[(i + round) % variants.length] as Variant);
        for (const v of order) (samples.get(v.name) as OneShot[]).push(await oneShotCounted(install, model, sim, v, scratch, useTime));
      }
      const requestsOf = (s: OneShot[]) => {
        const total: Record<string, number> = {};
        for (const shot of s) for (const [route, n] of Object.entries(shot.requests)) total[route] = (total[route] ?? 0) + n;
        return total;
      };
      const boundRequests = Object.fromEntries(variants.map((v) => [v.name, requestsOf(samples.get(v.name) as OneShot[])]));
      const base = samples.get(variants[0]!.name) as OneShot[];
      const baseWall = median(base.map((s) => s.wallMs));
      const baseRss = median(base.map((s) => s.maxRssBytes));
      const baseCpu = median(base.map((s) => s.cpuMs));
      const rows = variants.map((v) => {
        const s = samples.get(v.name) as OneShot[];
        const wall = summarize(s.map((x) => x.wallMs));
        const rss = median(s.map((x) => x.maxRssBytes));
        const cpu = median(s.map((x) => x.cpuMs));
        const requests = Object.values(requestsOf(s)).reduce((n, k) => n + k, 0) / s.length;
        return [v.name, String(s.length), ms(wall.median), ms(wall.min), ms(wall.max), ratioText(ratio(wall.median, baseWall)), `${wall.median - baseWall >= 0 ? '+' : ''}${ms(wall.median - baseWall)}`, ratioText(ratio(cpu, baseCpu)), String(requests), bytes(rss), ratioText(ratio(rss, baseRss)), `${rss - baseRss >= 0 ? '+' : '−'}${bytes(Math.abs(rss - baseRss))}`];
      });
      tables.push({
        title: '`dsh --profile headless "say hi"` one-shots (the last variant says the queue phrase), fake model answering text (interleaved rounds; medians)',
        columns: ['variant', 'n', 'wall ms', 'min', 'max', 'wall ratio', 'wall Δ ms', 'CPU ratio', 'Dida requests / run', 'peak RSS', 'RSS ratio', 'RSS Δ'],
        rows,
        notes: [
          `Peak RSS: ${useTime ? '`/usr/bin/time -v` "Maximum resident set size" (the dsh shim execs node, so this is the dsh process; the largest single process of the tree)' : 'VmRSS of the whole process tree sampled every 20 ms'}.`,
          `Dida requests by variant, all rounds together: ${JSON.stringify(boundRequests)}. A bound one-shot loads the engine at its first Dida need (a tool call, the queue phrase, a failed model request, or a state that asks for attention); "say hi" has none.`,
          'CPU ratio: user + system time of the dsh process (all its threads), median, against the run without the bundle.',
          `Installing the bundle (dsh plugin add <checkout>) took ${ms(installMs)} ms, once.`,
        ],
      });
      return { tables, data: { bundle: size, import: importData, oneShots: Object.fromEntries(samples), boundRequests, installMs, peakBy: useTime ? 'time -v' : 'sampling' } };
    } finally {
      await model.close();
      await sim.close();
      for (const home of homes) removeDshHome(home);
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
});
