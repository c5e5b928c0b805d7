// Progress posted in the background once it has waited the progress window (the step changes tool calls recorded and
// their comments, together), so a long turn's progress does not wait for the session to go idle.
import type { StatePort } from '../../core/work/engine-context';
import { progressKeys } from '../../core/work/background-writer';
import { messageOf } from './runtime-deps';

/** How often waiting progress comments are checked for being due (at most; a quarter of the window when shorter). */
export const OUTBOX_CHECK_MS = 15_000;

/**
 * Checks every quarter window (1–15 s) and writes the steps and posts the comments that are due; reads the state only
 * (a stat) when nothing waits. Stops when `lifetime` aborts; the timer never keeps the process alive.
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
      if (progressKeys(await options.state.read()).length === 0) return;
      await options.flush();
    })().catch((error: unknown) => options.log(`posting progress comments failed (will retry): ${messageOf(error)}`));
  }, Math.min(OUTBOX_CHECK_MS, Math.max(1_000, (options.progressWindowSeconds * 1000) / 4)));
  timer.unref?.();
  options.lifetime.addEventListener('abort', () => clearInterval(timer), { once: true });
}
