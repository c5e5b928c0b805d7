import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LockTimeoutError, lockFileName, lockPathFor, withLock } from '../../src/store/file-lock';

let dir: string;
let lockDir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'dida-todo-lock-'));
  lockDir = path.join(dir, 'locks');
});
afterEach(async () => {
  vi.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('lockFileName', () => {
  it('keeps simple keys and hashes unsafe or long ones into safe, distinct names', () => {
    expect(lockFileName('state')).toBe('state');
    const a = lockFileName('work:abc/../x');
    const b = lockFileName('work:abc/../y');
    expect(a).toMatch(/^[A-Za-z0-9._-]+$/);
    expect(a).not.toBe(b);
    expect(lockFileName('.hidden')).toMatch(/^hidden-[0-9a-f]{16}$/);
    expect(lockFileName('x'.repeat(300)).length).toBeLessThanOrEqual(57);
    expect(lockFileName('/')).toMatch(/^[0-9a-f]{16}$/);
  });
});

describe('withLock', () => {
  it('runs callers of one key one at a time, in order, and returns their results', async () => {
    let inside = 0;
    let maxInside = 0;
    const order: number[] = [];
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        withLock(lockDir, 'state', async () => {
          inside++;
          maxInside = Math.max(maxInside, inside);
          await tick();
          order.push(i);
          inside--;
          return i * 10;
        }),
      ),
    );
    expect(maxInside).toBe(1);
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
    expect(results).toEqual([0, 10, 20, 30, 40, 50]);
  });

  it('lets different keys run at the same time', async () => {
    let inside = 0;
    let maxInside = 0;
    await Promise.all(
      ['a', 'b'].map((key) =>
        withLock(lockDir, key, async () => {
          inside++;
          maxInside = Math.max(maxInside, inside);
          await tick();
          inside--;
        }),
      ),
    );
    expect(maxInside).toBe(2);
  });

  it('creates the lock directory beside the state with mode 0700 and removes the lock after use', async () => {
    await withLock(lockDir, 'state', async () => {
      expect((await stat(lockPathFor(lockDir, 'state'))).isDirectory()).toBe(true);
    });
    expect((await stat(lockDir)).mode & 0o777).toBe(0o700);
    expect(await readdir(lockDir)).toEqual([]);
  });

  it('releases the lock when fn throws', async () => {
    await expect(withLock(lockDir, 'state', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(withLock(lockDir, 'state', () => 'again')).resolves.toBe('again');
    expect(await readdir(lockDir)).toEqual([]);
  });

  it('times out a queued caller with a message naming the key, the lock path and what to do', async () => {
    let release!: () => void;
    const held = withLock(lockDir, 'state', () => new Promise<void>((resolve) => (release = resolve)));
    await tick();
    const error = await withLock(lockDir, 'state', () => 'never', { timeoutMs: 50 }).catch((err: unknown) => err);
    release();
    await held;
    expect(error).toBeInstanceOf(LockTimeoutError);
    const timeout = error as LockTimeoutError;
    expect(timeout.code).toBe('lock_timeout');
    expect(timeout.lockPath).toBe(lockPathFor(lockDir, 'state'));
    expect(timeout.message).toContain('"state"');
    expect(timeout.message).toContain(timeout.lockPath);
    expect(timeout.message).toContain('another dida-todo process is busy');
    expect(timeout.message).toContain('if no dida-todo process is running, delete the directory');
    // The queue is intact after a timeout.
    await expect(withLock(lockDir, 'state', () => 'ok', { timeoutMs: 1000 })).resolves.toBe('ok');
  });

  it('waits for the file lock held by someone else and times out clearly', async () => {
    const lockfile = await import('proper-lockfile');
    const { mkdir } = await import('node:fs/promises');
    await mkdir(lockDir, { recursive: true });
    const release = await lockfile.lock(path.join(lockDir, 'state.lock-target'), {
      realpath: false,
      lockfilePath: lockPathFor(lockDir, 'state'),
    });
    try {
      await expect(withLock(lockDir, 'state', () => 'x', { timeoutMs: 150 })).rejects.toBeInstanceOf(LockTimeoutError);
    } finally {
      await release();
    }
    await expect(withLock(lockDir, 'state', () => 'x', { timeoutMs: 1000 })).resolves.toBe('x');
  });

  it('stops waiting when the signal aborts', async () => {
    let release!: () => void;
    const held = withLock(lockDir, 'state', () => new Promise<void>((resolve) => (release = resolve)));
    await tick();
    const controller = new AbortController();
    const waiting = withLock(lockDir, 'state', () => 'never', { signal: controller.signal });
    controller.abort(new Error('cancelled'));
    await expect(waiting).rejects.toThrow('cancelled');
    release();
    await held;
    await expect(withLock(lockDir, 'state', () => 'ok')).resolves.toBe('ok');
  });

  it('does not crash when the lock is compromised: one [dida-todo] line on stderr and an aborted signal', async () => {
    const writes: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      writes.push(String(chunk));
      return true;
    });
    const result = await withLock(
      lockDir,
      'state',
      async ({ compromised }) => {
        await rm(lockPathFor(lockDir, 'state'), { recursive: true });
        await new Promise<void>((resolve) => compromised.addEventListener('abort', () => resolve(), { once: true }));
        return compromised.aborted;
      },
      { staleMs: 2000 },
    );
    expect(result).toBe(true);
    const lines = writes.filter((w) => w.startsWith('[dida-todo]'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('was compromised');
    await expect(withLock(lockDir, 'state', () => 'ok')).resolves.toBe('ok');
  });
});
