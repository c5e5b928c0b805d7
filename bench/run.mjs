#!/usr/bin/env node
// Benchmark runner: bundles each suite in bench/suites/<name>.ts with esbuild, runs it in its own Node process
// (one after another, so suites never compete for the 2 cores), collects their JSON into bench/results.json
// and prints the tables.
//
//   node bench/run.mjs                   every suite
//   node bench/run.mjs --only store      one suite (repeat --only or use commas for several)
//   node bench/run.mjs --quick           few iterations: a smoke check, not figures to quote
//   node bench/run.mjs --markdown        also print the tables as Markdown (for docs/performance.md)
//   node bench/run.mjs --list            the suite names
//
// Adding a suite = one file bench/suites/<name>.ts calling runSuite() (bench/lib/harness.ts) + one line in SUITES.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

/** name → what it measures. Order = run order. */
const SUITES = [
  { name: 'gateway', title: 'Per-operation cost, HTTP gateway vs CLI adapter' },
  { name: 'store', title: 'State and lock' },
  { name: 'state', title: 'State that scales with the work' },
  { name: 'lifecycle', title: 'Whole Work lifecycle' },
  { name: 'sync', title: 'Sync scaling' },
  { name: 'plugin', title: 'Plugin overhead in dsh' },
  { name: 'usage', title: 'Usage per Work' },
  { name: 'critical', title: 'Requests on the critical path of each tool call in a one-shot' },
  { name: 'budget', title: 'Machine-wide request budget' },
  { name: 'polling', title: 'The machine poller: pickup latency and requests of an idle machine' },
];

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.dirname(BENCH_DIR);
const RESULTS_FILE = path.join(BENCH_DIR, 'results.json');
/** Inside the repo so bare imports (zod, esbuild, proper-lockfile) resolve from node_modules. */
const BUILD_DIR = path.join(ROOT, 'node_modules', '.cache', 'dida-todo-bench');
/** A suite that runs longer than this is killed and reported as failed. */
const SUITE_TIMEOUT_MS = 10 * 60_000;

function parseArgs(argv) {
  const args = { only: [], quick: false, markdown: false, list: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--quick') args.quick = true;
    else if (arg === '--markdown' || arg === '--md') args.markdown = true;
    else if (arg === '--list') args.list = true;
    else if (arg === '--only' || arg.startsWith('--only=')) {
      const value = arg.startsWith('--only=') ? arg.slice('--only='.length) : argv[++i];
      if (!value) fail('--only needs a suite name, e.g. --only gateway');
      args.only.push(...value.split(',').map((s) => s.trim()).filter(Boolean));
    } else if (arg === '--help' || arg === '-h') {
      process.stdout.write(readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(1, 12).map((l) => l.replace(/^\/\/ ?/, '')).join('\n') + '\n');
      process.exit(0);
    } else fail(`Unknown option ${arg}; use --only <suite>, --quick, --markdown or --list.`);
  }
  return args;
}

function fail(message) {
  process.stderr.write(`bench: ${message}\n`);
  process.exit(2);
}

/**
 * esbuild bundles every module into one file, which breaks modules that find their neighbours through
 * `import.meta.url` (tests/helpers/fake-dida-install.ts locates fake-dida.ts that way): give each project
 * .ts file its own original URL back.
 */
const keepImportMetaUrl = {
  name: 'keep-import-meta-url',
  setup(b) {
    b.onLoad({ filter: /\.[cm]?ts$/ }, async (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const source = await readFile(args.path, 'utf8');
      return { contents: source.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)), loader: 'ts' };
    });
  },
};

async function bundle(name) {
  const entry = path.join(BENCH_DIR, 'suites', `${name}.ts`);
  if (!existsSync(entry)) throw new Error(`bench/suites/${name}.ts does not exist`);
  const outfile = path.join(BUILD_DIR, `${name}.mjs`);
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    sourcemap: 'inline',
    logLevel: 'error',
    plugins: [keepImportMetaUrl],
  });
  return outfile;
}

function runChild(script, name, quick) {
  const resultFile = path.join(BUILD_DIR, `${name}.result.json`);
  rmSync(resultFile, { force: true });
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, [script], {
      cwd: ROOT,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, BENCH_RESULT_FILE: resultFile, BENCH_QUICK: quick ? '1' : '0' },
    });
    const timer = setTimeout(() => {
      process.stderr.write(`bench: suite ${name} ran longer than ${SUITE_TIMEOUT_MS / 60_000} min; stopping it.\n`);
      child.kill('SIGKILL');
    }, SUITE_TIMEOUT_MS);
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve({ ok: false, error: error.message });
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      const seconds = (Date.now() - started) / 1000;
      if (code !== 0 || !existsSync(resultFile)) {
        resolve({ ok: false, error: `exited with ${signal ?? `code ${code}`} after ${seconds.toFixed(1)} s` });
        return;
      }
      try {
        resolve({ ok: true, result: JSON.parse(readFileSync(resultFile, 'utf8')) });
      } catch (error) {
        resolve({ ok: false, error: `wrote unreadable JSON (${error.message})` });
      }
    });
  });
}

function machineInfo() {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpuModel: cpus[0]?.model?.trim() ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    node: process.version,
    date: new Date().toISOString(),
  };
}

/** The 1-minute load average, rounded: other work on the machine skews every figure. */
function load1() {
  return Math.round(os.loadavg()[0] * 100) / 100;
}

function width(text) {
  // Good enough for the ASCII, ·, × and – used in the tables.
  return [...text].length;
}

function textTable(table) {
  const cols = table.columns.map((c, i) => Math.max(width(c), ...table.rows.map((r) => width(r[i] ?? ''))));
  const line = (cells) => cells.map((c, i) => (i < 2 ? c.padEnd(cols[i]) : c.padStart(cols[i]))).join('  ');
  const out = [table.title, line(table.columns), cols.map((w) => '-'.repeat(w)).join('  '), ...table.rows.map(line)];
  for (const note of table.notes ?? []) out.push(`  note: ${note}`);
  return out.join('\n');
}

function markdownTable(table) {
  const align = table.columns.map((_, i) => (i < 2 ? ':--' : '--:'));
  const row = (cells) => `| ${cells.map((c) => String(c).replaceAll('|', '\\|')).join(' | ')} |`;
  const out = [`**${table.title}**`, '', row(table.columns), row(align), ...table.rows.map(row)];
  if (table.notes?.length) out.push('', ...table.notes.map((n) => `- ${n}`));
  return out.join('\n');
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.list) {
    for (const s of SUITES) process.stdout.write(`${s.name.padEnd(10)} ${s.title}\n`);
    return;
  }
  const unknown = args.only.filter((n) => !SUITES.some((s) => s.name === n));
  if (unknown.length) fail(`Unknown suite ${unknown.join(', ')}; known: ${SUITES.map((s) => s.name).join(', ')}.`);
  const selected = args.only.length ? SUITES.filter((s) => args.only.includes(s.name)) : SUITES;

  mkdirSync(BUILD_DIR, { recursive: true });
  const machine = machineInfo();
  process.stdout.write(`dida-todo benchmarks${args.quick ? ' (--quick: smoke run, do not quote)' : ''}\n`);
  process.stdout.write(`${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, ${machine.platform}, Node ${machine.node}, ${machine.date}\n\n`);

  // Earlier results of suites not run now are kept, each with its own measuredAt.
  let previous = {};
  try {
    previous = JSON.parse(readFileSync(RESULTS_FILE, 'utf8')).suites ?? {};
  } catch {
    previous = {};
  }
  const suites = { ...previous };
  const failed = [];
  const started = Date.now();
  for (const suite of selected) {
    const loadBefore = load1();
    process.stderr.write(`▶ ${suite.name}: ${suite.title} (load average ${loadBefore} on ${machine.cpus} CPUs)\n`);
    if (loadBefore > machine.cpus / 2) {
      process.stderr.write(`  ! the machine is busy (load ${loadBefore}); figures will be noisy — the A/B ratios less so than absolute times.\n`);
    }
    let outcome;
    try {
      outcome = await runChild(await bundle(suite.name), suite.name, args.quick);
    } catch (error) {
      outcome = { ok: false, error: `could not be built: ${error.message}` };
    }
    if (!outcome.ok) {
      failed.push(suite.name);
      process.stderr.write(`✗ ${suite.name} ${outcome.error}\n\n`);
      continue;
    }
    suites[suite.name] = { ...outcome.result, machine, load: { before: loadBefore, after: load1() } };
    process.stderr.write(`✓ ${suite.name} (${outcome.result.seconds} s, load average after ${load1()})\n\n`);
    for (const table of outcome.result.tables) process.stdout.write(`${textTable(table)}\n\n`);
    if (args.markdown) for (const table of outcome.result.tables) process.stdout.write(`${markdownTable(table)}\n\n`);
  }

  const ordered = Object.fromEntries(SUITES.filter((s) => suites[s.name]).map((s) => [s.name, suites[s.name]]));
  writeFileSync(RESULTS_FILE, `${JSON.stringify({ machine, quick: args.quick, suites: ordered }, null, 2)}\n`);
  process.stdout.write(`Wrote ${path.relative(ROOT, RESULTS_FILE)} in ${((Date.now() - started) / 1000).toFixed(0)} s.\n`);
  if (failed.length) {
    process.stderr.write(`bench: failed suites: ${failed.join(', ')}\n`);
    process.exitCode = 1;
  }
}

main().catch((error) => {
  process.stderr.write(`bench: ${error.stack ?? error.message}\n`);
  process.exit(1);
});
