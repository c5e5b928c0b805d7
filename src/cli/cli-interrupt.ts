// Ctrl+C (SIGINT) and SIGTERM for the `dida-todo` process: exit 130 / 143 at once, except while files that belong
// together are being saved (then right after), never leaving a file half-written.
import fs from 'node:fs';
import path from 'node:path';

/** Exit code of a command stopped by SIGINT (128 + 2, as shells report it). */
export const INTERRUPTED_EXIT = 130;
const SIGNAL_EXIT: Record<'SIGINT' | 'SIGTERM', number> = { SIGINT: INTERRUPTED_EXIT, SIGTERM: 143 };

interface InterruptContext {
  /** Folders whose temp files of this process are removed on the way out (config and state folders). */
  dirs: string[];
  /** One line for stderr when the process stops. */
  stoppedLine: string;
  /** One line for stderr when it waits for a save to finish first. */
  finishingLine: string;
}

let context: InterruptContext = { dirs: [], stoppedLine: 'dida-todo: interrupted.', finishingLine: 'dida-todo: interrupted; finishing the save first…' };
let saving = 0;
let pending: number | undefined;
let claimant: ((signal: NodeJS.Signals) => void) | undefined;
let installed: { write: (text: string) => void; exit: (code: number) => never } | undefined;

/** What the handler needs to know about the command that runs (set once its language and folders are known). */
export function setInterruptContext(next: Partial<InterruptContext>): void {
  context = { ...context, ...next };
}

/**
 * Installs the process's SIGINT/SIGTERM handler (the executable only; tests that call `main` in-process never
 * install it). A signal exits at once with 130 (SIGINT) or 143 (SIGTERM), after removing this process's temp files
 * (`.<name>.<pid>.<hex>.tmp`, what an atomic write leaves when stopped before its rename) from the known folders.
 * While `uninterruptible` work runs, the exit waits until it ends, so files that belong together (the token and the
 * Dida it was checked against) are saved both or neither. A command that stops on Ctrl+C by design (`sim`)
 * takes the signal with `claimInterrupt`.
 */
export function installInterruptHandler(write: (text: string) => void = (text) => void process.stderr.write(text), exit: (code: number) => never = (code) => process.exit(code)): void {
  if (installed) return;
  installed = { write, exit };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (claimant) return claimant(signal);
      const code = SIGNAL_EXIT[signal];
      if (saving > 0) {
        if (pending === undefined) write(`\n${context.finishingLine}\n`);
        pending ??= code;
        return;
      }
      stopNow(code);
    });
  }
}

function stopNow(code: number): never {
  removeOwnTempFiles(context.dirs);
  installed?.write(`\n${context.stoppedLine}\n`);
  return (installed?.exit ?? ((c: number) => process.exit(c)))(code);
}

/**
 * Runs `fn` so that a Ctrl+C arriving meanwhile takes effect only once it has finished (successfully or not).
 * Without an installed handler it simply runs `fn`.
 */
export async function uninterruptible<T>(fn: () => Promise<T>): Promise<T> {
  saving++;
  try {
    return await fn();
  } finally {
    saving--;
    if (saving === 0 && pending !== undefined) stopNow(pending);
  }
}

/**
 * Lets a command handle SIGINT/SIGTERM itself (the simulator stops on Ctrl+C and exits 0); returns the function that
 * gives the signals back.
 */
export function claimInterrupt(handler: (signal: NodeJS.Signals) => void): () => void {
  claimant = handler;
  // Run in-process (tests calling `main`), nothing listens yet: listen for the command itself.
  const own = installed ? [] : (['SIGINT', 'SIGTERM'] as const).map((signal) => {
    const listener = () => handler(signal);
    process.once(signal, listener);
    return () => process.off(signal, listener);
  });
  return () => {
    if (claimant === handler) claimant = undefined;
    for (const off of own) off();
  };
}

/** Synchronously removes `.<name>.<this pid>.<12 hex>.tmp` files from `dirs` (nothing else; missing folders are fine). */
export function removeOwnTempFiles(dirs: readonly string[], pid = process.pid): number {
  const own = new RegExp(`^\\..+\\.${pid}\\.[0-9a-f]{12}\\.tmp$`);
  let removed = 0;
  for (const dir of new Set(dirs)) {
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch {
      // A folder that does not exist (or cannot be read) holds no temp file of ours.
      continue;
    }
    for (const name of names) {
      if (!own.test(name)) continue;
      try {
        fs.rmSync(path.join(dir, name), { force: true });
        removed++;
      } catch {
        // Best effort on the way out: a temp file that cannot be removed is swept by the next writer's cleanup.
        continue;
      }
    }
  }
  return removed;
}
