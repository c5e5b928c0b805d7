// Runs of the real dsh 0.1.0-rc.8 (installed by ensureDsh) in an isolated DSH_HOME, for the demo and the e2e suites:
// homes, the environment of a dsh child, bounded processes (each in its own process group, killed whole on timeout,
// on stop, or when this process exits), and bundles added to a profile.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureDsh, type DshInstall } from './dsh-install';

/** Base URL used when a test gives none: a closed local port, so a forgotten fake model never reaches a real host. */
const UNREACHABLE_BASE_URL = 'http://127.0.0.1:9/v1';
const OUTPUT_CAP = 8 * 1024 * 1024;

// ---------------------------------------------------------------------------------------------------------------
// Homes and environment

/** Creates an empty temporary DSH_HOME (`$TMPDIR/dida-todo-e2e-home-XXXX`). */
export function makeDshHome(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'dida-todo-e2e-home-'));
}

/** Removes a home made by makeDshHome (best effort). */
export function removeDshHome(home: string): void {
  fs.rmSync(home, { recursive: true, force: true, maxRetries: 3 });
}

export interface EnvOptions {
  home: string;
  /** DEEPSEEK_BASE_URL, e.g. `model.baseUrl`. */
  baseUrl?: string;
  /** Extra variables; `undefined` removes an inherited one. */
  env?: Record<string, string | undefined>;
}

/**
 * The environment of a dsh child: Node ≥ 22.19 and pnpm first on PATH, DSH_HOME, a fake key, the fake model URL,
 * telemetry off, and dida-todo's XDG config/state directories inside the home (never the real user's).
 * Inherited npm_* (pnpm reads them as config), NODE_OPTIONS, VITEST*, NODE_ENV, DEEPSEEK_* and DSH_* are dropped.
 */
export function dshEnv(install: DshInstall, options: EnvOptions): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (/^(npm_|VITEST|DEEPSEEK_|DSH_)/i.test(key) || key === 'NODE_OPTIONS' || key === 'NODE_ENV' || key === 'TEST') continue;
    env[key] = value;
  }
  env.PATH = [install.nodeBinDir, install.pnpmBinDir, process.env.PATH ?? ''].join(path.delimiter);
  env.DSH_HOME = options.home;
  env.DEEPSEEK_API_KEY = 'fake-key';
  env.DEEPSEEK_BASE_URL = options.baseUrl ?? UNREACHABLE_BASE_URL;
  env.DSH_TELEMETRY_DISABLED = '1';
  env.npm_config_store_dir = install.storeDir;
  env.npm_config_update_notifier = 'false';
  env.XDG_CONFIG_HOME = path.join(options.home, '.test-xdg', 'config');
  env.XDG_STATE_HOME = path.join(options.home, '.test-xdg', 'state');
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

// ---------------------------------------------------------------------------------------------------------------
// Bounded processes

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Sends `signal` to the child's whole process group (the child alone when that fails). */
export function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      /* already gone */
    }
  }
}

/** Remembers a child so that it is killed when this process exits. */
export function track(child: ChildProcess): void {
  live.add(child);
  child.on('exit', () => live.delete(child));
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const c of live) killGroup(c, 'SIGKILL');
    });
  }
}

export interface RunResult {
  /** Exit code, or null when killed by a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** True when the run hit timeoutMs and was killed. */
  timedOut: boolean;
  durationMs: number;
}

export interface RunOptions extends EnvOptions {
  cwd?: string;
  timeoutMs?: number;
  /** Sent to the process group on timeout before SIGKILL (default SIGKILL straight away). */
  timeoutSignal?: NodeJS.Signals;
}

/** `current` with `chunk` appended, up to the output cap. */
export function appendCapped(current: string, chunk: string): string {
  return current.length >= OUTPUT_CAP ? current : current + chunk.slice(0, OUTPUT_CAP - current.length);
}

/** Runs `dsh <args>` to completion, killing its process group after timeoutMs (default 60 s). */
export async function runDsh(args: string[], options: RunOptions): Promise<RunResult> {
  const install = await ensureDsh();
  const timeoutMs = options.timeoutMs ?? 60_000;
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(install.dshBin, args, {
      cwd: options.cwd ?? options.home,
      env: dshEnv(install, options),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    track(child);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout = appendCapped(stdout, d)));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr = appendCapped(stderr, d)));
    let timedOut = false;
    let hardKill: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      timedOut = true;
      if (options.timeoutSignal && options.timeoutSignal !== 'SIGKILL') {
        killGroup(child, options.timeoutSignal);
        hardKill = setTimeout(() => killGroup(child, 'SIGKILL'), 5_000);
      } else {
        killGroup(child, 'SIGKILL');
      }
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (hardKill) clearTimeout(hardKill);
      // Reap anything the run left behind in its group (tool subprocesses, workers).
      killGroup(child, 'SIGKILL');
      resolve({ code, signal, stdout, stderr, timedOut, durationMs: Date.now() - started });
    });
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Profiles and bundles

export interface ProfileManifest {
  name: string;
  dependencies?: Record<string, string>;
  dsh?: { profile?: { bundles?: string[] } };
  [key: string]: unknown;
}

export function profileDir(home: string, profile: string): string {
  return path.join(home, 'profiles', profile);
}

export function readProfileManifest(home: string, profile: string): ProfileManifest {
  return JSON.parse(fs.readFileSync(path.join(profileDir(home, profile), 'package.json'), 'utf8')) as ProfileManifest;
}

/** A run's exit and the tails of its output, for an error message. */
export function describeRun(result: RunResult): string {
  return `exit ${result.code ?? result.signal}${result.timedOut ? ' (timed out)' : ''}\n--- stdout\n${result.stdout.slice(-3000)}\n--- stderr\n${result.stderr.slice(-3000)}`;
}

/**
 * `dsh plugin --profile <profile> add <bundlePath>` (pnpm links a local directory); returns the profile package.json.
 * The local path stands in for `github:<owner>/<repo>`.
 */
export async function installBundle(home: string, profile: string, bundlePath: string, options: Partial<RunOptions> = {}): Promise<ProfileManifest> {
  const result = await runDsh(['plugin', '--profile', profile, 'add', bundlePath], { timeoutMs: 180_000, ...options, home });
  if (result.code !== 0) throw new Error(`dsh plugin add ${bundlePath} failed: ${describeRun(result)}`);
  return readProfileManifest(home, profile);
}

/** `dsh plugin --profile <profile> remove <packageName>`; returns the profile package.json afterwards. */
export async function removeBundle(home: string, profile: string, packageName: string, options: Partial<RunOptions> = {}): Promise<ProfileManifest> {
  const result = await runDsh(['plugin', '--profile', profile, 'remove', packageName], { timeoutMs: 180_000, ...options, home });
  if (result.code !== 0) throw new Error(`dsh plugin remove ${packageName} failed: ${describeRun(result)}`);
  return readProfileManifest(home, profile);
}
