// Whether a process of this machine runs: the one answer the lock tickets and crash recovery both rely on.

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
