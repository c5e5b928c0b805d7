// Helpers that drive a real dsh 0.1.0-rc.8 (installed by ensureDsh) in an isolated DSH_HOME.
//
// Every process is spawned in its own process group, bounded by a timeout, and killed (whole group) on timeout,
// on `stop()`, or when the test process exits.
//
// zstd: dsh writes durable session logs as `session.jsonl.zstd` (`session.v4.jsonl.zstd` reported from 0.1.7; any name
// SESSION_LOG_FILE matches is read, a plain `.jsonl` as it is). Node 20 has no zstd, so readSessionLogs decodes in
// process when `zlib.zstdDecompressSync` exists (Node ≥ 22.15) and otherwise runs a tiny decoder script under the
// installed Node 24 (`install.nodeBin -e …`), which prints the decoded text as JSON.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import zlib from 'node:zlib';
import { SESSION_LOG_FILE } from '../../../src/dsh/ports';
import { appendCapped, dshEnv, killGroup, runDsh, track, type EnvOptions, type RunOptions, type RunResult } from '../../../src/local-dsh/dsh-process';
import { ensureDsh, repoRoot, type DshInstall } from './dsh-install';

export { ensureDsh, repoRoot, type DshInstall };
export * from '../../../src/local-dsh/dsh-process';


// ---------------------------------------------------------------------------------------------------------------
// Headless runs

export interface HeadlessOptions extends RunOptions {
  prompt: string;
  /** Extra `--patch` overlays after hmr-on.yml (which is always passed first). */
  patches?: string[];
  /** Profile name (default `headless`). */
  profile?: string;
}

export interface HeadlessResult extends RunResult {
  /** Every durable session log under the home after the run (sorted by creation time). */
  sessionLogs: SessionLog[];
}

/** `dsh --profile headless --patch hmr-on.yml [--patch …] "<prompt>"`, bounded by timeoutMs (default 60 s). */
export async function runHeadless(options: HeadlessOptions): Promise<HeadlessResult> {
  const install = await ensureDsh();
  const args = ['--profile', options.profile ?? 'headless', '--patch', install.hmrPatch];
  for (const patch of options.patches ?? []) args.push('--patch', patch);
  args.push(options.prompt);
  const result = await runDsh(args, options);
  return { ...result, sessionLogs: await readSessionLogs(options.home) };
}

// ---------------------------------------------------------------------------------------------------------------
// Web

export interface WebDsh {
  url: string;
  port: number;
  pid: number;
  stdout(): string;
  stderr(): string;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends `signal` (default SIGTERM) to the dsh process, then SIGKILLs the group after graceMs (default 10 s). */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface WebOptions extends EnvOptions {
  /** Port to listen on (default: a free one). */
  port?: number;
  cwd?: string;
  patches?: string[];
  profile?: string;
  /** How long to wait for `dsh web: http://127.0.0.1:<port>` (default 60 s). */
  startTimeoutMs?: number;
}

/** A free TCP port on 127.0.0.1 (bound then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** `dsh --profile web --patch hmr-on.yml --no-open --host 127.0.0.1 --port <port>`; resolves once its URL is printed. */
export async function startWeb(options: WebOptions): Promise<WebDsh> {
  const install = await ensureDsh();
  const port = options.port ?? (await freePort());
  const args = ['--profile', options.profile ?? 'web', '--patch', install.hmrPatch];
  for (const patch of options.patches ?? []) args.push('--patch', patch);
  args.push('--no-open', '--host', '127.0.0.1', '--port', String(port));
  const child = spawn(install.dshBin, args, {
    cwd: options.cwd ?? options.home,
    env: dshEnv(install, options),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  track(child);
  let stdout = '';
  let stderr = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('close', (code, signal) => {
      killGroup(child, 'SIGKILL');
      resolve({ code, signal });
    });
  });
  const expected = `dsh web: http://127.0.0.1:${port}`;
  const timeoutMs = options.startTimeoutMs ?? 60_000;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      killGroup(child, 'SIGKILL');
      reject(new Error(`dsh web did not print "${expected}" within ${timeoutMs} ms\n--- stdout\n${stdout}\n--- stderr\n${stderr.slice(-3000)}`));
    }, timeoutMs);
    const check = () => {
      if (stdout.includes(expected) || stderr.includes(expected)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      stdout = appendCapped(stdout, d);
      check();
    });
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      stderr = appendCapped(stderr, d);
      check();
    });
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`dsh web exited (${code ?? signal}) before printing its URL\n--- stdout\n${stdout}\n--- stderr\n${stderr.slice(-3000)}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    pid: child.pid!,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    stop: async (signal = 'SIGTERM', graceMs = 10_000) => {
      if (child.exitCode === null && child.signalCode === null) {
        try {
          child.kill(signal);
        } catch {
          /* gone */
        }
      }
      const timer = setTimeout(() => killGroup(child, 'SIGKILL'), graceMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Durable session logs

export interface SessionEvent {
  type: string;
  seq: number;
  time: number;
  data: any;
  [key: string]: unknown;
}

export interface SessionLog {
  file: string;
  /** `{"type":"session","version":0,"id":"session-<uuid>","createdAt":…,"cwd":…,"delegationDepth":0}` */
  header: { type: 'session'; id: string; createdAt: number; cwd: string; [key: string]: unknown };
  events: SessionEvent[];
}

/** Every session log file under `dir`, by the names dsh gives them (rc.8's and the newer V4 name). */
export function findSessionFiles(dir: string, out: string[] = []): string[] {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) findSessionFiles(full, out);
    else if (SESSION_LOG_FILE.test(entry.name)) out.push(full);
  }
  return out;
}

const DECODER = `
const fs = require('node:fs'), zlib = require('node:zlib');
const files = JSON.parse(process.argv[1]);
process.stdout.write(JSON.stringify(files.map((f) => {
  try { return { text: zlib.zstdDecompressSync(fs.readFileSync(f)).toString('utf8') }; }
  catch (e) { return { error: String(e && e.message || e) }; }
})));
`;

/** Decodes zstd files to text: in process on Node ≥ 22.15, else with the installed Node 24. */
export async function decodeZstdFiles(files: string[]): Promise<Array<{ text?: string; error?: string }>> {
  if (files.length === 0) return [];
  const inProcess = (zlib as unknown as { zstdDecompressSync?: (b: Buffer) => Buffer }).zstdDecompressSync;
  if (inProcess) {
    return files.map((f) => {
      try {
        return { text: inProcess(fs.readFileSync(f)).toString('utf8') };
      } catch (error) {
        return { error: String((error as Error).message ?? error) };
      }
    });
  }
  const install = await ensureDsh();
  return new Promise((resolve, reject) => {
    const child = spawn(install.nodeBin, ['-e', DECODER, JSON.stringify(files)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) reject(new Error(`zstd decoder failed (${code}): ${stderr}`));
      else resolve(JSON.parse(stdout));
    });
  });
}

/** Finds `$DSH_HOME/sessions/**\/session*.jsonl[.zstd]` and decodes each into its header and events. */
export async function readSessionLogs(home: string): Promise<SessionLog[]> {
  const files = findSessionFiles(path.join(home, 'sessions'));
  const zstd = files.filter((f) => f.endsWith('.zstd'));
  const unpacked = await decodeZstdFiles(zstd);
  const decoded = files.map((f) => (f.endsWith('.zstd') ? unpacked[zstd.indexOf(f)]! : { text: fs.readFileSync(f, 'utf8') }));
  const logs: SessionLog[] = [];
  decoded.forEach((result, i) => {
    if (result.text === undefined) throw new Error(`cannot decode ${files[i]}: ${result.error}`);
    const lines = result.text
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const [header, ...events] = lines;
    logs.push({ file: files[i]!, header: header as SessionLog['header'], events: events as SessionEvent[] });
  });
  return logs.sort((a, b) => (a.header?.createdAt ?? 0) - (b.header?.createdAt ?? 0));
}

/**
 * The environment `dida-todo` (doctor) runs in beside a test's dsh: the installed dsh, its Node and pnpm first on PATH,
 * and the same home, DSH_HOME and dida-todo XDG directories the dsh children get.
 */
export function cliEnv(install: DshInstall, home: string): Record<string, string> {
  return {
    PATH: [install.nodeBinDir, install.pnpmBinDir, path.dirname(install.dshBin), '/usr/bin', '/bin'].join(path.delimiter),
    HOME: home,
    DSH_HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.test-xdg', 'config'),
    XDG_STATE_HOME: path.join(home, '.test-xdg', 'state'),
    DIDA_TODO_E2E_CACHE: path.join(home, 'no-demo-cache'),
    LANG: 'en_US.UTF-8',
  };
}

/** Events of one type in a log. */
export function eventsOf(log: SessionLog, type: string): SessionEvent[] {
  return log.events.filter((e) => e.type === type);
}
