// Whether a process of this machine runs, and whether it is stopped (src/common/process-alive.ts): a real child
// stopped with SIGSTOP and continued, this process, a pid that is gone, and /proc stat lines of every shape.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { processAlive, processStopped } from '../../src/common/process-alive';

async function until(probe: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !probe(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe('processStopped', () => {
  it.runIf(existsSync('/proc/self/stat'))('a child stopped with SIGSTOP is alive and stopped; continued, it runs again', async () => {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      const pid = child.pid as number;
      await until(() => processAlive(pid));
      expect(processStopped(pid)).toBe(false);
      child.kill('SIGSTOP');
      await until(() => processStopped(pid));
      expect(processStopped(pid)).toBe(true);
      expect(processAlive(pid)).toBe(true);
      child.kill('SIGCONT');
      await until(() => !processStopped(pid));
      expect(processStopped(pid)).toBe(false);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('this process, a pid that is no process, and odd pids are never stopped', () => {
    expect(processStopped(process.pid)).toBe(false);
    expect(processStopped(2 ** 22 + 12345)).toBe(false);
    for (const pid of [0, -1, 1.5, Number.NaN]) expect(processStopped(pid)).toBe(false);
  });

  it('reads the state after the last parenthesis (a name may hold spaces and parentheses); no /proc is not stopped', () => {
    const stat = (text: string) => () => text;
    expect(processStopped(4242, stat('4242 (node) T 1 4242 4242 0 -1'))).toBe(true);
    expect(processStopped(4242, stat('4242 (a) T (b) S 1 4242'))).toBe(false);
    expect(processStopped(4242, stat('4242 (odd ) name) t 1'))).toBe(true);
    expect(processStopped(4242, stat('4242 (node) S 1 4242'))).toBe(false);
    expect(processStopped(4242, stat('4242 (node) R 1 4242'))).toBe(false);
    expect(
      processStopped(4242, () => {
        throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
      }),
    ).toBe(false);
  });
});
