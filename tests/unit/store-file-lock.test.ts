import { spawnSync } from 'node:child_process';
import { linkSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LockTimeoutError, lockFileName, lockPathFor, withLock } from '../../src/store/file-lock';
import { DirWaker, UNWATCHED_POLL_MS, WATCHED_POLL_MS } from '../../src/store/dir-waker';
import { acquireQueueLock, type QueueLockOptions } from '../../src/store/lock-queue';
import { HOST_TAG } from '../../src/store/lock-tickets';

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

function queueOptions(extra: Partial<QueueLockOptions> = {}): QueueLockOptions {
  return { staleMs: 2000, deadline: Date.now() + 10_000, signal: undefined, timeoutError: () => new Error('timed out'), onCompromised: () => undefined, ...extra };
}

/** The waiters' tickets in the lock directory of `key`, in name order. */
async function tickets(key: string): Promise<string[]> {
  const names = await readdir(lockPathFor(lockDir, key)).catch(() => [] as string[]);
  return names.filter((n) => n.startsWith('t-')).sort();
}

/** Waits (bounded) until `key` has `count` tickets. */
async function untilTickets(key: string, count: number): Promise<void> {
  for (let i = 0; i < 400 && (await tickets(key)).length < count; i++) await tick();
  expect(await tickets(key)).toHaveLength(count);
}

/** A process id that is certainly not running: a child that already exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

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

  it('waits for the file lock held by someone else and times out clearly, leaving nothing of its own behind', async () => {
    // Another holder of the lock directory that does not go through this process's in-memory queue.
    const other = await acquireQueueLock(lockPathFor(lockDir, 'state'), queueOptions());
    try {
      await expect(withLock(lockDir, 'state', () => 'x', { timeoutMs: 150 })).rejects.toBeInstanceOf(LockTimeoutError);
      expect(await tickets('state')).toHaveLength(1);
    } finally {
      other.release();
    }
    expect(await readdir(lockDir)).toEqual([]);
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

describe('the queue in the lock directory', () => {
  it('serves waiters in the order they queued, whoever looks first', async () => {
    const lockPath = lockPathFor(lockDir, 'state');
    const holder = await acquireQueueLock(lockPath, queueOptions());
    const order: number[] = [];
    const waiters: Promise<void>[] = [];
    for (let i = 1; i <= 4; i++) {
      waiters.push(
        acquireQueueLock(lockPath, queueOptions()).then(async (held) => {
          order.push(i);
          expect(held.stillHeld()).toBe(true);
          await tick();
          held.release();
        }),
      );
      await untilTickets('state', i + 1);
    }
    holder.release();
    await Promise.all(waiters);
    expect(order).toEqual([1, 2, 3, 4]);
    expect(await readdir(lockDir)).toEqual([]);
  });

  it('takes over from a holder that stopped refreshing; that holder then sees stillHeld() false and one compromised signal', async () => {
    const lockPath = lockPathFor(lockDir, 'state');
    const reasons: string[] = [];
    const frozen = await acquireQueueLock(lockPath, queueOptions({ onCompromised: (reason) => reasons.push(reason) }));
    expect(frozen.stillHeld()).toBe(true);
    // What a holder frozen for 5 s looks like from outside: its mark was last refreshed 5 s ago.
    const past = (Date.now() - 5000) / 1000;
    utimesSync(path.join(lockPath, 'owner'), past, past);

    const next = await acquireQueueLock(lockPath, queueOptions());
    expect(frozen.stillHeld()).toBe(false);
    expect(frozen.compromised.aborted).toBe(true);
    expect(frozen.stillHeld()).toBe(false);
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toContain('another process took it over');
    // The old holder's release must not touch the new holder's lock.
    frozen.release();
    expect(next.stillHeld()).toBe(true);
    expect(next.compromised.aborted).toBe(false);
    next.release();
    expect(await readdir(lockDir)).toEqual([]);
  });

  it('treats the lock as lost when the holder was paused longer than the stale time, even before anyone takes it', async () => {
    const lockPath = lockPathFor(lockDir, 'state');
    const reasons: string[] = [];
    const held = await acquireQueueLock(lockPath, queueOptions({ onCompromised: (reason) => reasons.push(reason) }));
    const now = Date.now();
    vi.spyOn(Date, 'now').mockReturnValue(now + 3000);
    expect(held.stillHeld()).toBe(false);
    expect(held.compromised.aborted).toBe(true);
    expect(reasons).toEqual([expect.stringContaining('longer than the stale time of 2000 ms')]);
    vi.restoreAllMocks();
    // Its mark is still removed on release, so the next caller does not wait for it to turn stale.
    held.release();
    expect(await readdir(lockDir)).toEqual([]);
    await expect(withLock(lockDir, 'state', () => 'next', { timeoutMs: 500 })).resolves.toBe('next');
  });

  it('skips the ticket of a waiter whose process died and takes over the mark of a dead holder at once', async () => {
    const lockPath = lockPathFor(lockDir, 'state');
    await mkdir(lockPath, { recursive: true });
    const pid = deadPid();
    const holder = `t-0000000001-${HOST_TAG}-${pid}-0123456789abcdef`;
    const waiter = `t-0000000002-${HOST_TAG}-${pid}-fedcba9876543210`;
    writeFileSync(path.join(lockPath, holder), holder);
    writeFileSync(path.join(lockPath, waiter), waiter);
    linkSync(path.join(lockPath, holder), path.join(lockPath, 'owner'));
    // The files are fresh and the stale time long: only the dead process id lets the caller in.
    await expect(withLock(lockDir, 'state', ({ stillHeld }) => stillHeld(), { staleMs: 60_000, timeoutMs: 1000 })).resolves.toBe(true);
    expect(await readdir(lockDir)).toEqual([]);
  });

  it('judges a ticket made on another machine by its age alone', async () => {
    const lockPath = lockPathFor(lockDir, 'state');
    await mkdir(lockPath, { recursive: true });
    const foreign = `t-0000000001-${HOST_TAG === '00000000' ? '11111111' : '00000000'}-${deadPid()}-0123456789abcdef`;
    writeFileSync(path.join(lockPath, foreign), foreign);
    await expect(withLock(lockDir, 'state', () => 'x', { staleMs: 2000, timeoutMs: 150 })).rejects.toBeInstanceOf(LockTimeoutError);
    const past = (Date.now() - 3000) / 1000;
    utimesSync(path.join(lockPath, foreign), past, past);
    await expect(withLock(lockDir, 'state', () => 'x', { staleMs: 2000, timeoutMs: 1000 })).resolves.toBe('x');
    expect(await readdir(lockDir)).toEqual([]);
  });

  it('stops waiting in the directory when the signal aborts and takes its ticket back', async () => {
    const other = await acquireQueueLock(lockPathFor(lockDir, 'state'), queueOptions());
    const controller = new AbortController();
    const waiting = withLock(lockDir, 'state', () => 'never', { signal: controller.signal });
    await untilTickets('state', 2);
    controller.abort(new Error('cancelled'));
    await expect(waiting).rejects.toThrow('cancelled');
    expect(await tickets('state')).toHaveLength(1);
    other.release();
    expect(await readdir(lockDir)).toEqual([]);
  });

  it('queues again when its ticket was removed while it waited (judged dead while paused)', async () => {
    const lockPath = lockPathFor(lockDir, 'state');
    const holder = await acquireQueueLock(lockPath, queueOptions());
    const waiting = acquireQueueLock(lockPath, queueOptions());
    await untilTickets('state', 2);
    const [, mine] = await tickets('state');
    await rm(path.join(lockPath, mine as string));
    await untilTickets('state', 2);
    expect(await tickets('state')).not.toContain(mine);
    holder.release();
    const held = await waiting;
    expect(held.stillHeld()).toBe(true);
    held.release();
    expect(await readdir(lockDir)).toEqual([]);
  });
});

describe('DirWaker', () => {
  it('falls back to short polling when the directory cannot be watched', async () => {
    const waker = new DirWaker(path.join(dir, 'missing'));
    try {
      expect(waker.pollMs).toBe(UNWATCHED_POLL_MS);
      await expect(waker.next(60_000, undefined)).resolves.toBeUndefined();
    } finally {
      waker.close();
    }
  });

  it('remembers a change that happened between two waits and rejects with the abort reason', async () => {
    await mkdir(lockDir, { recursive: true });
    const waker = new DirWaker(lockDir);
    try {
      expect(waker.pollMs).toBe(WATCHED_POLL_MS);
      writeFileSync(path.join(lockDir, 'a'), '');
      for (let i = 0; i < 100 && !(waker as unknown as { changed: boolean }).changed; i++) await tick();
      expect((waker as unknown as { changed: boolean }).changed).toBe(true);
      await waker.next(60_000, undefined);
      const controller = new AbortController();
      const waiting = waker.next(60_000, controller.signal);
      controller.abort(new Error('stop'));
      await expect(waiting).rejects.toThrow('stop');
    } finally {
      waker.close();
    }
  });

  it('wakes only for names its owner says matter, and never for a refreshed time', async () => {
    await mkdir(lockDir, { recursive: true });
    const waker = new DirWaker(lockDir);
    const seen: string[] = [];
    const changed = () => (waker as unknown as { changed: boolean }).changed;
    waker.relevant = (name) => {
      seen.push(name);
      return name === 'b';
    };
    try {
      writeFileSync(path.join(lockDir, 'a'), '');
      for (let i = 0; i < 100 && !seen.includes('a'); i++) await tick();
      expect(changed()).toBe(false);
      const past = (Date.now() - 5000) / 1000;
      utimesSync(path.join(lockDir, 'a'), past, past);
      writeFileSync(path.join(lockDir, 'b'), '');
      for (let i = 0; i < 100 && !changed(); i++) await tick();
      expect(changed()).toBe(true);
      expect(seen).toEqual(['a', 'b']);
    } finally {
      waker.close();
    }
  });
});
