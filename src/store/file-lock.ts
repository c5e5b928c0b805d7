// Owns cross-process locks by key: an in-process FIFO queue in front of a fair ticket queue in a lock directory.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { localMutex } from './local-mutex';

export interface LockOptions {
  /**
   * A holder (or waiter) that stopped refreshing its files for this long is treated as dead and skipped or taken over;
   * a holder paused this long loses the lock. Clamped to ≥ 2000. A process of this machine that no longer runs is
   * treated as dead at once.
   */
  staleMs?: number;
  /** Total time to wait for the lock (queue in this process + other processes) before `LockTimeoutError`. */
  timeoutMs?: number;
  /** Aborting stops waiting with the signal's reason; it never interrupts `fn` once the lock is held. */
  signal?: AbortSignal | undefined;
}

/** Handed to the locked function; `compromised` aborts if the lock was lost (another process took it over). */
export interface LockContext {
  compromised: AbortSignal;
  /**
   * Synchronously checks that this holder still owns the lock (a holder paused past the stale time loses it to another
   * process, which may only be noticed later by `compromised`). Call it right before an irreversible write.
   */
  stillHeld(): boolean;
}

export const DEFAULT_LOCK_STALE_MS = 10_000;
export const DEFAULT_LOCK_TIMEOUT_MS = 15_000;

/** Thrown when the lock stayed busy for the whole timeout. */
export class LockTimeoutError extends Error {
  readonly code = 'lock_timeout' as const;
  constructor(
    readonly key: string,
    readonly lockPath: string,
    readonly timeoutMs: number,
  ) {
    super(
      `Timed out after ${timeoutMs} ms waiting for the dida-todo lock "${key}" (${lockPath}): another dida-todo process is busy with it. ` +
        `Try again shortly; if no dida-todo process is running, delete the directory ${lockPath}.`,
    );
    this.name = 'LockTimeoutError';
  }
}

/** Turns a key into a safe file name; long or unusual keys get a readable prefix plus a hash. */
export function lockFileName(key: string): string {
  if (/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(key)) return key;
  const readable = key.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[._-]+/, '').slice(0, 40);
  const hash = createHash('sha256').update(key).digest('hex').slice(0, 16);
  return readable ? `${readable}-${hash}` : hash;
}

/** The lock directory for `key`: waiters' tickets and the holder's mark (delete it by hand only if no dida-todo process runs). */
export function lockPathFor(lockDir: string, key: string): string {
  return path.join(path.resolve(lockDir), `${lockFileName(key)}.lock`);
}

/** The smallest stale time: holders refresh every ≤ 500 ms, and some file systems keep mtimes in whole seconds. */
export const MIN_LOCK_STALE_MS = 2000;

/**
 * Runs `fn` while holding the lock `key` in `lockDir`, across processes of this host.
 * Callers in the same process queue in FIFO order in memory; processes queue in the lock directory and are served in
 * the order they asked (one ticket per process at a time), so a hand-off waits for the sections ahead, not for a retry.
 * The lock is not re-entrant: calling `withLock` for a key already held by the caller's own chain waits
 * until `timeoutMs` and then throws `LockTimeoutError` — do not nest locks on one key.
 * The lock is always released, also when `fn` throws. Throws `LockTimeoutError` or the abort reason.
 */
export async function withLock<T>(
  lockDir: string,
  key: string,
  fn: (ctx: LockContext) => Promise<T> | T,
  options: LockOptions = {},
): Promise<T> {
  const staleMs = Math.max(MIN_LOCK_STALE_MS, options.staleMs ?? DEFAULT_LOCK_STALE_MS);
  const timeoutMs = options.timeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  const lockPath = lockPathFor(lockDir, key);
  const deadline = Date.now() + timeoutMs;
  const timeoutError = () => new LockTimeoutError(key, lockPath, timeoutMs);
  options.signal?.throwIfAborted();

  const releaseLocal = await localMutex(lockPath).acquire(deadline, options.signal, timeoutError);
  try {
    // Loaded on first use (its own chunk in the bundle), so a process that never locks does not load it.
    const { acquireQueueLock } = await import('./lock-queue');
    const held = await acquireQueueLock(lockPath, {
      staleMs,
      deadline,
      signal: options.signal,
      timeoutError,
      onCompromised: (reason) => process.stderr.write(`[dida-todo] lock ${lockPath} was compromised (${reason}); continuing without it.\n`),
    });
    try {
      return await fn({ compromised: held.compromised, stillHeld: held.stillHeld });
    } finally {
      held.release();
    }
  } finally {
    releaseLocal();
  }
}
