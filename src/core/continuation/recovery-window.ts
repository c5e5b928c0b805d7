// How far back crash recovery looks, and which stored turn markers it could still act on. Imports nothing, so the
// plugin's first-load layer can ask at start without loading the engine.

/** A crash-interrupted turn older than this is not resumed automatically. */
export const CRASH_RECOVERY_WINDOW_MS = 30 * 60_000;

/**
 * Whether some record of a state's `sessions` section holds a turn that crash recovery might resume: open, opened
 * within the window (and not in the future), by a process that no longer runs. A value that is not a record of
 * records answers true: only a clear "nothing" may skip the look.
 */
export function mayHoldInterruptedTurn(sessions: unknown, now: number, alive: (pid: number) => boolean): boolean {
  if (sessions === undefined) return false;
  if (typeof sessions !== 'object' || sessions === null || Array.isArray(sessions)) return true;
  for (const record of Object.values(sessions as Record<string, unknown>)) {
    if (typeof record !== 'object' || record === null) return true;
    const { turnOpenSince: since, turnOpenPid: pid } = record as { turnOpenSince?: unknown; turnOpenPid?: unknown };
    if (since === undefined) continue;
    if (typeof since !== 'number') return true;
    const age = now - since;
    if (age < 0 || age > CRASH_RECOVERY_WINDOW_MS) continue;
    if (typeof pid === 'number' && alive(pid)) continue;
    return true;
  }
  return false;
}
