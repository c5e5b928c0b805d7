// Whether a process of this machine runs: the one answer the lock tickets and crash recovery both rely on.
import { readFileSync } from 'node:fs';

/** True for this process and any process that answers signal 0 (EPERM: it runs as another user). */
export function processAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * True for a process that runs but is stopped (SIGSTOP, or Ctrl-Z in a terminal): it answers signal 0 yet does nothing
 * until it is continued. Read from /proc where there is one (Linux); elsewhere, and for any process it cannot read,
 * false (a stopped process then looks like a running one, as before).
 */
export function processStopped(pid: number, readStat: (file: string) => string = (file) => readFileSync(file, 'utf8')): boolean {
  if (pid === process.pid || !Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    const stat = readStat(`/proc/${pid}/stat`);
    // "pid (name) S …": the name may hold spaces and parentheses, so the state follows the last ')'.
    const state = stat.slice(stat.lastIndexOf(')') + 1).trim()[0];
    return state === 'T' || state === 't';
  } catch {
    // No /proc (macOS), or the process is gone: not known to be stopped.
    return false;
  }
}
