// Time as the adapter sees it: now, abortable waits and repeating timers (tests hand in a fake clock).
import { waitUnlessAborted } from '../../core/continuation/continuation-policy';

export interface Clock {
  now(): number;
  /** Resolves true after `ms`, or false as soon as any signal aborts (at once when one already has). */
  wait(ms: number, signals?: readonly (AbortSignal | undefined)[]): Promise<boolean>;
  /** Calls `fn` every `ms` until the returned function is called; never keeps the process alive on its own. */
  every(ms: number, fn: () => void): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  wait: (ms, signals = []) => waitUnlessAborted(ms, signals),
  every(ms, fn) {
    const timer = setInterval(fn, ms);
    timer.unref?.();
    return () => clearInterval(timer);
  },
};
