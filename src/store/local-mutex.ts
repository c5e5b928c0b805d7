// Owns the in-process half of a lock: one FIFO async mutex per lock path, so callers of one process queue in memory.

interface Waiter {
  grant: () => void;
  fail: (err: unknown) => void;
}

/** A FIFO async mutex; ownership passes directly from the releaser to the next waiter. */
class LocalMutex {
  private held = false;
  private readonly waiters: Waiter[] = [];

  constructor(private readonly onIdle: () => void) {}

  /** Resolves with a release function (safe to call twice); rejects with `timeoutError()` at `deadline` or the abort reason. */
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

/** The mutex for `lockPath` in this process; it is dropped again once nobody holds or waits for it. */
export function localMutex(lockPath: string): LocalMutex {
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
