// A lock port bound to one abort signal: the wait for a lock ends at the abort, and work never starts after it.

/** The shape of a lock port: run `fn` while holding the lock `key` (whatever the port hands `fn` is passed through). */
export interface LockRunner {
  withLock<T>(key: string, fn: (...held: any[]) => Promise<T>): Promise<T>;
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('The turn was stopped while waiting for a lock.', { cause: signal.reason });
}

/**
 * Wraps `locks` so that a call made after `signal` aborted rejects at once, a wait for a busy lock rejects as soon as
 * `signal` aborts (the lock, if it is granted later, is released without running `fn`), and `fn` never starts once
 * `signal` aborted. A running `fn` is not interrupted.
 */
export function abortableLocks<L extends LockRunner>(locks: L, signal: AbortSignal): L {
  const bound: LockRunner = {
    withLock<T>(key: string, fn: (...held: any[]) => Promise<T>): Promise<T> {
      if (signal.aborted) return Promise.reject(abortReason(signal));
      let started = false;
      const held = locks.withLock(key, async (...lock: any[]) => {
        if (signal.aborted) throw abortReason(signal);
        started = true;
        return fn(...lock);
      });
      return new Promise<T>((resolve, reject) => {
        const onAbort = () => {
          if (started) return;
          held.catch(() => undefined);
          reject(abortReason(signal));
        };
        signal.addEventListener('abort', onAbort, { once: true });
        held.then(
          (value) => {
            signal.removeEventListener('abort', onAbort);
            resolve(value);
          },
          (error: unknown) => {
            signal.removeEventListener('abort', onAbort);
            reject(error);
          },
        );
      });
    },
  };
  return { ...locks, ...bound } as L;
}
