// Runs one `dida` child process (argv only, never a shell) with a deadline, an output cap and cancellation.
import { spawn, type ChildProcess } from 'node:child_process';
import { DidaError } from './dida-error';

export interface CliRunSpec {
  command: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  cwd: string | undefined;
  timeoutMs: number;
  /** Combined stdout + stderr bytes allowed before the child is killed. */
  maxOutputBytes: number;
  /** Time between SIGTERM and SIGKILL when the child must be stopped. */
  killGraceMs: number;
  /** Route template and command words, used only in error messages. */
  route: string;
  label: string;
  signal: AbortSignal | undefined;
}

export interface CliRunResult {
  exitCode: number | null;
  /** Set when the child died from a signal we did not send. */
  exitSignal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Marks errors that say the command cannot run at all, so callers never retry them. */
export const PERMANENT_FAILURES = new WeakSet<DidaError>();

/** Owns the live children of one gateway so that `killAll` can stop them on close. */
export class CliProcessRunner {
  private readonly live = new Set<(reason: unknown) => void>();

  /**
   * Resolves with the exit status and decoded output once the child has exited and its pipes closed.
   * Rejects with DidaError `network` (command missing or not executable), `timeout` (deadline passed; the child is
   * killed first), `invalid_response` (output above the cap; the child is killed first), or the caller's abort reason.
   */
  run(spec: CliRunSpec): Promise<CliRunResult> {
    if (spec.signal?.aborted) return Promise.reject(spec.signal.reason);
    return new Promise<CliRunResult>((resolve, reject) => {
      let child: ChildProcess;
      try {
        child = spawn(spec.command, [...spec.args], {
          shell: false,
          env: spec.env,
          cwd: spec.cwd,
          stdio: ['ignore', 'pipe', 'pipe'],
          windowsHide: true,
        });
      } catch (error) {
        reject(spawnFailure(spec, error));
        return;
      }

      const stdout: Buffer[] = [];
      const stderr: Buffer[] = [];
      let bytes = 0;
      let failure: unknown;
      let stopping = false;
      let exited = false;
      let settled = false;
      const timers: NodeJS.Timeout[] = [];

      const finish = (settle: () => void) => {
        if (settled) return;
        settled = true;
        for (const timer of timers) clearTimeout(timer);
        spec.signal?.removeEventListener('abort', onAbort);
        this.live.delete(stop);
        settle();
      };

      // Kills the child and rejects with `reason` once it has exited (or after a last-resort delay).
      const stop = (reason: unknown) => {
        if (stopping || settled) return;
        stopping = true;
        failure = reason;
        if (exited) {
          finish(() => reject(failure));
          return;
        }
        child.kill('SIGTERM');
        timers.push(
          setTimeout(() => {
            child.kill('SIGKILL');
            timers.push(setTimeout(() => finish(() => reject(failure)), 1_000));
          }, spec.killGraceMs),
        );
      };
      const onAbort = () => stop(spec.signal?.reason);

      const collect = (into: Buffer[]) => (chunk: Buffer) => {
        if (stopping) return;
        bytes += chunk.length;
        if (bytes > spec.maxOutputBytes) {
          stop(
            new DidaError({
              code: 'invalid_response',
              route: spec.route,
              message: `\`${spec.label}\` printed more than ${spec.maxOutputBytes} bytes; the output was cut off and the command stopped.`,
            }),
          );
          return;
        }
        into.push(chunk);
      };
      child.stdout?.on('data', collect(stdout));
      child.stderr?.on('data', collect(stderr));

      child.on('error', (error) => {
        if (stopping) return;
        finish(() => reject(spawnFailure(spec, error)));
      });
      child.on('exit', () => {
        exited = true;
        if (stopping) finish(() => reject(failure));
      });
      child.on('close', (code, signal) => {
        if (stopping) {
          finish(() => reject(failure));
          return;
        }
        finish(() =>
          resolve({
            exitCode: code,
            exitSignal: signal,
            stdout: Buffer.concat(stdout).toString('utf8'),
            stderr: Buffer.concat(stderr).toString('utf8'),
          }),
        );
      });

      spec.signal?.addEventListener('abort', onAbort, { once: true });
      timers.push(
        setTimeout(() => {
          stop(
            new DidaError({
              code: 'timeout',
              route: spec.route,
              message: `\`${spec.label}\` did not finish within ${spec.timeoutMs} ms and was stopped; check the network, it will be retried later.`,
            }),
          );
        }, spec.timeoutMs),
      );
      this.live.add(stop);
    });
  }

  /** Stops every running child; their calls reject with `reason`. */
  killAll(reason: unknown): void {
    for (const stop of [...this.live]) stop(reason);
  }
}

function spawnFailure(spec: CliRunSpec, error: unknown): DidaError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  let message: string;
  if (code === 'ENOENT') {
    message =
      `The \`${spec.command}\` command was not found. Install the Dida CLI with \`npm install -g @suibiji/dida-cli\` ` +
      'and log in with `dida auth login`, set the full path of the command, or switch to the HTTP gateway (a Dida API token).';
  } else if (code === 'EACCES' || code === 'EPERM') {
    message = `The \`${spec.command}\` command could not be started (${code}: not executable); fix its permissions or switch to the HTTP gateway.`;
  } else {
    const detail = code ?? (error instanceof Error ? error.message : String(error));
    message = `The \`${spec.command}\` command could not be started (${detail}); check the command or switch to the HTTP gateway.`;
  }
  const failure = new DidaError({ code: 'network', route: spec.route, message, cause: error });
  PERMANENT_FAILURES.add(failure);
  return failure;
}
