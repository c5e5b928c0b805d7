// Looks at the dsh a person would start: where it is, its version, the Node and pnpm it runs with, the cordis HMR
// plugin it loads, and its composed configuration for one profile (`dsh --profile <p> --dump-config`, no boot).
import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export interface DshProbe {
  /** The `dsh` found on PATH (undefined: none). */
  bin?: string;
  /** `dsh --version`, e.g. `0.1.0-rc.8`. */
  version?: string;
  /** The Node that runs dsh (its launcher picks it, which may not be the `node` on PATH). */
  node?: { version: string; execPath: string };
  /** Version of `@deepseek-ai/cordis-plugin-hmr` as dsh resolves it. */
  hmrVersion?: string;
  /** `pnpm --version` on dsh's PATH (`dsh plugin` runs pnpm); null when there is none. */
  pnpmVersion?: string | null;
  /** The profile's composed rows, when --dump-config worked. */
  rows?: ProbeRow[];
  /** Why --version or --dump-config failed: dsh's own error message (not a stack frame). */
  error?: string;
  /** Set when dsh said the profile does not exist (it creates only its templates, web and headless, by itself). */
  missingProfile?: boolean;
}

export interface ProbeRow {
  id: string;
  name?: string;
  disabled?: boolean | string;
  /** The row's `inject` list, when it has one. */
  inject?: string[];
  /** The `# == …` source comment above the row (bundle layers and patch files). */
  source?: string;
}

const MARK = 'DIDA_TODO_DOCTOR_PROBE ';

/**
 * Preloaded into dsh's own Node with NODE_OPTIONS=--require: at exit it reports the Node version, the HMR plugin
 * version dsh resolves, and pnpm's version on dsh's PATH, as one marked JSON line on stderr.
 */
const PRELOAD = `
process.on('exit', () => {
  const fs = require('node:fs'), path = require('node:path'), cp = require('node:child_process');
  const out = { node: process.version, execPath: process.execPath, hmr: null, pnpm: null };
  try {
    const from = path.dirname(fs.realpathSync(process.argv[1] || '.'));
    let dir = path.dirname(require.resolve('@deepseek-ai/cordis-plugin-hmr', { paths: [from] }));
    for (let i = 0; i < 6 && !out.hmr; i++, dir = path.dirname(dir)) {
      try { const p = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')); if (p.name === '@deepseek-ai/cordis-plugin-hmr') out.hmr = p.version; } catch {}
    }
  } catch {}
  // Without NODE_OPTIONS: pnpm is itself a Node program and would load this probe again.
  const env = Object.assign({}, process.env, { NODE_OPTIONS: '' });
  try { out.pnpm = String(cp.execFileSync('pnpm', ['--version'], { timeout: 8000, env, stdio: ['ignore', 'pipe', 'ignore'] })).trim() || null; } catch {}
  try { fs.writeSync(2, ${JSON.stringify(MARK)} + JSON.stringify(out) + '\\n'); } catch {}
});
`;

/** The first executable `name` on `pathVariable`, or undefined. */
export async function findOnPath(name: string, pathVariable: string | undefined): Promise<string | undefined> {
  for (const dir of (pathVariable ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, name);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here; keep looking.
    }
  }
  return undefined;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(bin: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Run> {
  return new Promise((resolve) => {
    execFile(bin, args, { env, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024, encoding: 'utf8' }, (error, stdout, stderr) => {
      const code = error ? (typeof (error as { code?: unknown }).code === 'number' ? ((error as { code: number }).code as number) : null) : 0;
      resolve({ code, stdout: String(stdout ?? ''), stderr: String(stderr ?? (error ? error.message : '')) });
    });
  });
}

/** Rows of a `--dump-config` YAML, read line by line (its `!!js` values need no evaluation here). */
export function parseDumpRows(yaml: string): ProbeRow[] {
  const rows: ProbeRow[] = [];
  let source: string | undefined;
  let row: ProbeRow | undefined;
  let inList = false;
  for (const line of yaml.split('\n')) {
    const comment = /^# == (.*)$/.exec(line);
    if (comment) {
      source = comment[1];
      continue;
    }
    const start = /^- id: *['"]?([^'"\s]+)['"]?\s*$/.exec(line);
    if (start) {
      row = { id: start[1] as string, ...(source ? { source } : {}) };
      rows.push(row);
      inList = false;
      continue;
    }
    if (!row) continue;
    const item = /^ {4}- *['"]?([^'"\s]+)['"]?\s*$/.exec(line);
    if (item && inList) {
      (row.inject ??= []).push(item[1] as string);
      continue;
    }
    if (!/^ {2}\S/.test(line)) continue;
    inList = false;
    const inject = /^ {2}inject:(.*)$/.exec(line);
    if (inject) {
      const inline = (inject[1] as string).trim();
      if (inline === '') inList = true;
      else row.inject = inline.replace(/^\[|\]$/g, '').split(',').map((v) => v.trim().replace(/^['"]|['"]$/g, '')).filter(Boolean);
      continue;
    }
    const name = /^ {2}name: *['"]?([^'"]+)['"]?\s*$/.exec(line);
    if (name) row.name = name[1] as string;
    const disabled = /^ {2}disabled: *(.+?)\s*$/.exec(line);
    if (disabled) row.disabled = disabled[1] === 'true' ? true : disabled[1] === 'false' ? false : (disabled[1] as string);
  }
  return rows;
}

/** Probes the dsh on `env.PATH` for `profile`. Never throws; what could not be learnt is left out. */
export async function probeDsh(env: NodeJS.ProcessEnv, profile: string, timeoutMs = 30_000): Promise<DshProbe> {
  const bin = await findOnPath('dsh', env.PATH);
  if (!bin) return {};
  const probe: DshProbe = { bin };
  const childEnv: NodeJS.ProcessEnv = { ...env, DSH_TELEMETRY_DISABLED: '1' };
  const version = await run(bin, ['--version'], childEnv, timeoutMs);
  if (version.code === 0) probe.version = version.stdout.trim().split('\n').pop()?.trim();
  else probe.error = errorLine(version.stderr);

  const dir = await mkdtemp(path.join(os.tmpdir(), 'dida-todo-doctor-'));
  try {
    const preload = path.join(dir, 'probe.cjs');
    await writeFile(preload, PRELOAD);
    const nodeOptions = [env.NODE_OPTIONS ?? '', `--require=${JSON.stringify(preload)}`].join(' ').trim();
    const dump = await run(bin, ['--profile', profile, '--dump-config'], { ...childEnv, NODE_OPTIONS: nodeOptions }, timeoutMs);
    const marked = dump.stderr.split('\n').find((line) => line.startsWith(MARK));
    if (marked) {
      try {
        const facts = JSON.parse(marked.slice(MARK.length)) as { node?: string; execPath?: string; hmr?: string | null; pnpm?: string | null };
        if (facts.node) probe.node = { version: facts.node, execPath: facts.execPath ?? '' };
        if (facts.hmr) probe.hmrVersion = facts.hmr;
        probe.pnpmVersion = facts.pnpm ?? null;
      } catch {
        // A garbled probe line: the facts stay unknown.
      }
    }
    if (dump.code === 0) probe.rows = parseDumpRows(dump.stdout);
    else {
      const stderr = dump.stderr.split('\n').filter((l) => !l.startsWith(MARK)).join('\n');
      probe.error ??= errorLine(stderr);
      if (/\bprofile "[^"]*" does not exist\b/.test(stderr)) probe.missingProfile = true;
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return probe;
}

/**
 * The line of a failed run's stderr that says what went wrong: the thrown error's message (`Error: dsh: …`, without the
 * `Error: ` prefix) or a `dsh: …` line; else the last line. A Node stack trace ends with `at …` frames and the Node
 * version, which say nothing to the person.
 */
export function errorLine(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const thrown = lines.find((l) => /^(?:[A-Z]\w*)?Error(?: \[[A-Z_]+\])?: /.test(l));
  if (thrown) return thrown.replace(/^(?:[A-Z]\w*)?Error(?: \[[A-Z_]+\])?: /, '');
  return lines.find((l) => l.startsWith('dsh: ')) ?? lastLine(text);
}

function lastLine(text: string): string {
  return (
    text
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .pop() ?? ''
  );
}

/** Whether a Node version (`v22.19.0`) is at least `major.minor`. */
export function nodeAtLeast(version: string, major: number, minor: number): boolean {
  const [a = 0, b = 0] = version.replace(/^v/, '').split('.').map(Number);
  return a > major || (a === major && b >= minor);
}
