// Owns cross-process locks: an in-process queue per key in front of a proper-lockfile lock directory.
import { sleep } from '../common/abortable-sleep';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';

export interface LockOptions {
  /** A lock whose holder stopped refreshing it for this long is taken over (proper-lockfile clamps it to ≥ 2000). */
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

/** The lock directory proper-lockfile creates for `key` (delete it by hand only if no dida-todo process runs). */
export function lockPathFor(lockDir: string, key: string): string {
  return path.join(path.resolve(lockDir), `${lockFileName(key)}.lock`);
}

/**
 * Runs `fn` while holding the lock `key` in `lockDir`, across processes of this host.
 * Callers in the same process queue in FIFO order before touching the file system.
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
  const staleMs = options.staleMs ?? DEFAULT_LOCK_STALE_MS;
  const timeoutMs = options.timeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  const lockPath = lockPathFor(lockDir, key);
  const deadline = Date.now() + timeoutMs;
  options.signal?.throwIfAborted();

  const releaseLocal = await localMutex(lockPath).acquire(deadline, options.signal, () => new LockTimeoutError(key, lockPath, timeoutMs));
  try {
    const compromised = new AbortController();
    const releaseFile = await acquireFileLock(lockPath, staleMs, deadline, options.signal, compromised, () => new LockTimeoutError(key, lockPath, timeoutMs));
    // Each holder signs the lock in a file beside it; a holder that was paused and taken over no longer finds its token.
    const holderFile = `${lockPath}.holder`;
    const token = `${process.pid}-${randomBytes(8).toString('hex')}`;
    writeFileSync(holderFile, token, { mode: 0o600 });
    const stillHeld = (): boolean => {
      if (compromised.signal.aborted) return false;
      try {
        return readFileSync(holderFile, 'utf8') === token;
      } catch {
        return false;
      }
    };
    try {
      return await fn({ compromised: compromised.signal, stillHeld });
    } finally {
      if (stillHeld()) rmSync(holderFile, { force: true });
      await releaseFile();
    }
  } finally {
    releaseLocal();
  }
}

async function acquireFileLock(
  lockPath: string,
  staleMs: number,
  deadline: number,
  signal: AbortSignal | undefined,
  compromised: AbortController,
  timeoutError: () => LockTimeoutError,
): Promise<() => Promise<void>> {
  // CommonJS module: bundled, its functions sit on `default`; under Node's own loader both shapes occur.
  const imported = (await import('proper-lockfile')) as typeof import('proper-lockfile') & { default?: typeof import('proper-lockfile') };
  const lockfile = imported.default ?? imported;
  await mkdir(path.dirname(lockPath), { recursive: true, mode: 0o700 });
  const target = lockPath.replace(/\.lock$/, '.lock-target');
  const stale = Math.max(2000, staleMs);
  const lockOptions = {
    realpath: false,
    lockfilePath: lockPath,
    stale,
    update: Math.max(1000, Math.floor(stale / 3)),
    retries: 0,
    onCompromised: (err: Error) => {
      process.stderr.write(`[dida-todo] lock ${lockPath} was compromised (${err.message}); continuing without it.\n`);
      compromised.abort(err);
    },
  };
  for (let attempt = 0; ; attempt++) {
    signal?.throwIfAborted();
    try {
      const release = await lockfile.lock(target, lockOptions);
      return async () => {
        try {
          await release();
        } catch {
          // Releasing fails only when the lock was already compromised or removed; nothing is left to free.
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
    }
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw timeoutError();
    const backoff = Math.min(250, 10 * 2 ** Math.min(attempt, 5));
    await sleep(Math.min(remaining, backoff * (0.5 + Math.random())), signal);
  }
}


interface Waiter {
  grant: () => void;
  fail: (err: unknown) => void;
}

/** A FIFO async mutex; ownership passes directly from the releaser to the next waiter. */
class LocalMutex {
  private held = false;
  private readonly waiters: Waiter[] = [];

  constructor(private readonly onIdle: () => void) {}

  acquire(deadline: number, signal: AbortSignal | undefined, timeoutError: () => Error): Promise<() => void> {
    const release = () => this.release();
    if (!this.held) {
      this.held = true;
      return Promise.resolve(once(release));
    }
    return new Promise((resolve, reject) => {
      const cleanup = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const index = this.waiters.indexOf(waiter);
        if (index >= 0) this.waiters.splice(index, 1);
      };
      const waiter: Waiter = {
        grant: () => {
          cleanup();
          resolve(once(release));
        },
        fail: (err) => {
          cleanup();
          reject(err);
          if (!this.held && this.waiters.length === 0) this.onIdle();
        },
      };
      const onAbort = () => waiter.fail(signal?.reason);
      const timer = setTimeout(() => waiter.fail(timeoutError()), Math.max(0, deadline - Date.now()));
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  private release(): void {
    const next = this.waiters[0];
    if (next) {
      next.grant();
      return;
    }
    this.held = false;
    this.onIdle();
  }
}

function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}

const mutexes = new Map<string, LocalMutex>();

function localMutex(lockPath: string): LocalMutex {
  let mutex = mutexes.get(lockPath);
  if (!mutex) {
    const created = new LocalMutex(() => {
      if (mutexes.get(lockPath) === created) mutexes.delete(lockPath);
    });
    mutex = created;
    mutexes.set(lockPath, mutex);
  }
  return mutex;
}
