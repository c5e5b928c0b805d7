// Progress comments posted in the background once they have waited the progress window, so a long turn's notes do not
// wait for the session to go idle.
import type { StatePort } from '../../core/work/engine-context';
import { messageOf } from './runtime-deps';

/** How often waiting progress comments are checked for being due (at most; a quarter of the window when shorter). */
export const OUTBOX_CHECK_MS = 15_000;

/**
 * Checks every quarter window (1–15 s) and posts the comments that are due; reads the state only (a stat) when nothing
 * waits. Stops when `lifetime` aborts; the timer never keeps the process alive.
 */
export function startOutboxTimer(options: {
  state: StatePort;
  flush: () => Promise<unknown>;
  progressWindowSeconds: number;
  lifetime: AbortSignal;
  log: (line: string) => void;
}): void {
  const timer = setInterval(() => {
    if (options.lifetime.aborted) return;
    void (async () => {
      if ((await options.state.read()).outbox.length === 0) return;
      await options.flush();
    })().catch((error: unknown) => options.log(`posting progress comments failed (will retry): ${messageOf(error)}`));
  }, Math.min(OUTBOX_CHECK_MS, Math.max(1_000, (options.progressWindowSeconds * 1000) / 4)));
  timer.unref?.();
  options.lifetime.addEventListener('abort', () => clearInterval(timer), { once: true });
}
