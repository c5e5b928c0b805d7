// A dsh headless run that the test can signal mid-turn (e.g. SIGKILL while the model stalls), bounded like runDsh.
import { spawn, type ChildProcess } from 'node:child_process';
import { dshEnv, ensureDsh, type HeadlessOptions } from './dsh-run';

export interface LiveHeadless {
  pid: number;
  stdout(): string;
  stderr(): string;
  /** Resolves once the process has exited (the whole group is then reaped). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends `signal` to the whole process group. */
  kill(signal: NodeJS.Signals): void;
}

const live = new Set<ChildProcess>();
let hooked = false;

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    /* already gone */
  }
}

/** Spawns `dsh --profile headless --patch hmr-on.yml [--patch …] "<prompt>"`; SIGKILLs its group after timeoutMs (default 60 s). */
export async function spawnHeadless(options: HeadlessOptions): Promise<LiveHeadless> {
  const install = await ensureDsh();
  const args = ['--profile', options.profile ?? 'headless', '--patch', install.hmrPatch];
  for (const patch of options.patches ?? []) args.push('--patch', patch);
  args.push(options.prompt);
  const child = spawn(install.dshBin, args, {
    cwd: options.cwd ?? options.home,
    env: dshEnv(install, options),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  live.add(child);
  if (!hooked) {
    hooked = true;
    process.on('exit', () => {
      for (const c of live) killGroup(c, 'SIGKILL');
    });
  }
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const timer = setTimeout(() => killGroup(child, 'SIGKILL'), options.timeoutMs ?? 60_000);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      killGroup(child, 'SIGKILL');
      live.delete(child);
      resolve({ code, signal });
    });
  });
  return { pid: child.pid!, stdout: () => stdout, stderr: () => stderr, exited, kill: (signal) => killGroup(child, signal) };
}
