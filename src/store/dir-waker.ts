// Owns waking a lock waiter: a file-system watch on the lock directory, with a timer as the fallback.
import { watch, type FSWatcher } from 'node:fs';

/** Polling interval when the watch works: it only covers missed events and holders that died without a trace. */
export const WATCHED_POLL_MS = 25;
/** Polling interval when the platform refuses the watch (no inotify watches left, an exotic file system). */
export const UNWATCHED_POLL_MS = 5;

/**
 * Wakes its owner when a name in `dir` is created, removed or renamed and `relevant(name)` says it matters (a refresh of
 * a file's time never does; an event without a name always does), or after the poll interval. Events between two waits
 * are remembered, so no change is missed between a look and a wait.
 */
export class DirWaker {
  private watcher: FSWatcher | undefined;
  private changed = false;
  private wake: (() => void) | undefined;
  /** Which names wake the owner; set it after each look to what that look waits for. */
  relevant: (name: string) => boolean = () => true;

  constructor(dir: string) {
    try {
      this.watcher = watch(dir, { persistent: false }, (event, name) => {
        if (event === 'rename' && (!name || this.relevant(String(name)))) this.poke();
      });
      this.watcher.on('error', () => this.unwatch());
    } catch {
      // fs.watch is unavailable here (ENOSPC: no inotify watches left, or an unsupported file system): poll instead.
      this.watcher = undefined;
    }
  }

  get pollMs(): number {
    return this.watcher ? WATCHED_POLL_MS : UNWATCHED_POLL_MS;
  }

  /** Resolves at the next change, after `min(ms, pollMs)`, or rejects with the abort reason. */
  next(ms: number, signal: AbortSignal | undefined): Promise<void> {
    if (this.changed) {
      this.changed = false;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.wake = undefined;
      };
      const onAbort = () => {
        done();
        reject(signal?.reason);
      };
      const timer = setTimeout(() => {
        done();
        resolve();
      }, Math.max(0, Math.min(ms, this.pollMs)));
      this.wake = () => {
        done();
        resolve();
      };
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  close(): void {
    this.unwatch();
    this.wake = undefined;
  }

  private poke(): void {
    const wake = this.wake;
    if (wake) wake();
    else this.changed = true;
  }

  private unwatch(): void {
    this.watcher?.close();
    this.watcher = undefined;
  }
}
