import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, afterEach, describe, expect, it } from 'vitest';
import { LockTimeoutError, lockPathFor, withLock } from '../../src/store/file-lock';
import { buildScript } from '../helpers/build-script';
import { createTestStateStore, TestStateSchema } from '../helpers/store-test-state';

const here = path.dirname(fileURLToPath(import.meta.url));
let script: string;
let dir: string;
const children = new Set<ChildProcess>();

beforeAll(async () => {
  script = await buildScript(path.join(here, '../helpers/store-child.ts'));
});
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'dida-todo-mp-'));
});
afterEach(async () => {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
  await rm(dir, { recursive: true, force: true });
});
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
});

function start(...args: string[]): ChildProcess {
  const child = spawn(process.execPath, [script, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  children.add(child);
  child.on('exit', () => children.delete(child));
  return child;
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stderr })));
}

function printed(child: ChildProcess, line: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes(`${line}\n`)) resolve();
    });
    child.on('exit', (code) => reject(new Error(`child exited (${code}) before printing ${line}`)));
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The next line the child prints after this call. */
function nextLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const end = out.indexOf('\n');
      if (end < 0) return;
      child.stdout?.off('data', onData);
      resolve(out.slice(0, end));
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`child exited (${code}) before printing a line`)));
  });
}

/** Waiters' tickets in the lock directory of `key`. */
async function tickets(lockDir: string, key: string): Promise<string[]> {
  return (await readdir(lockPathFor(lockDir, key)).catch(() => [] as string[])).filter((name) => name.startsWith('t-'));
}

/** Waits (bounded, ~3 s) until `key` has at least `count` waiters' tickets; answers whether it got there. */
async function untilTickets(lockDir: string, key: string, count: number): Promise<boolean> {
  for (let i = 0; i < 300; i++) {
    if ((await tickets(lockDir, key)).length >= count) return true;
    await sleep(10);
  }
  return false;
}

describe('cross-process locks', () => {
  it('two processes incrementing one counter under the lock lose no update', async () => {
    const lockDir = path.join(dir, 'locks');
    const counterFile = path.join(dir, 'counter.txt');
    const times = 40;
    const runs = [start('counter', lockDir, counterFile, String(times)), start('counter', lockDir, counterFile, String(times))].map(exited);
    const results = await Promise.all(runs);
    for (const result of results) expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(Number(await readFile(counterFile, 'utf8'))).toBe(2 * times);
    expect(await readdir(lockDir)).toEqual([]);
  });

  it('recovers the lock of a process SIGKILLed while holding it', async () => {
    const lockDir = path.join(dir, 'locks');
    const holder = start('hold', lockDir, 'state', '2000');
    const gone = exited(holder);
    await printed(holder, 'locked');

    const busy = await withLock(lockDir, 'state', () => 'x', { staleMs: 2000, timeoutMs: 200 }).catch((err: unknown) => err);
    expect(busy).toBeInstanceOf(LockTimeoutError);
    expect((busy as LockTimeoutError).message).toContain('another dida-todo process is busy');
    // The caller that timed out took its ticket back: only the holder's remains.
    expect(await tickets(lockDir, 'state')).toHaveLength(1);

    holder.kill('SIGKILL');
    expect((await gone).signal).toBe('SIGKILL');
    // The dead holder stops refreshing, so the lock is taken over at the latest after the 2 s stale period (at once,
    // since its process is gone), and nothing of it is left afterwards.
    await expect(withLock(lockDir, 'state', () => 'recovered', { staleMs: 2000, timeoutMs: 6000 })).resolves.toBe('recovered');
    expect(await readdir(lockDir)).toEqual([]);
  });

  it('serves processes in the order they asked, not the order they happen to look', async () => {
    const lockDir = path.join(dir, 'locks');
    const orderFile = path.join(dir, 'order.txt');
    await writeFile(orderFile, '');
    const holder = start('hold-until-line', lockDir, 'work', '5000');
    await printed(holder, 'locked');
    const waiters: ChildProcess[] = [];
    for (let i = 1; i <= 4; i++) {
      const waiter = start('enter', lockDir, 'work', String(i), orderFile, '30');
      waiters.push(waiter);
      await printed(waiter, 'asking');
      // Each waiter is in the queue before the next one starts (a lock without visible waiters just gets time).
      await untilTickets(lockDir, 'work', i + 1);
    }
    const ends = [holder, ...waiters].map(exited);
    holder.stdin?.write('release\n');
    for (const end of await Promise.all(ends)) expect(end).toMatchObject({ code: 0, stderr: '' });
    expect((await readFile(orderFile, 'utf8')).trim().split('\n')).toEqual(['1', '2', '3', '4']);
    expect(await readdir(lockDir)).toEqual([]);
  }, 30_000);

  it('takes the lock from a SIGSTOPped holder once it is stale; resumed, that holder sees stillHeld() false and leaves the new holder alone', async () => {
    const lockDir = path.join(dir, 'locks');
    // The frozen holder's own stale time is long: only the take-over, not its own clock, can tell it the lock is gone.
    const holder = start('hold-until-line', lockDir, 'state', '60000');
    const gone = exited(holder);
    await printed(holder, 'locked');
    process.kill(holder.pid as number, 'SIGSTOP');
    const result = await withLock(
      lockDir,
      'state',
      async ({ stillHeld, compromised }) => {
        process.kill(holder.pid as number, 'SIGCONT');
        const report = nextLine(holder);
        holder.stdin?.write('check\n');
        const seen = JSON.parse(await report) as { stillHeld: boolean; compromised: boolean };
        const end = await gone;
        // The resumed holder released on its way out; that must not have freed this holder's lock.
        return { seen, end, stillHeld: stillHeld(), compromised: compromised.aborted };
      },
      { staleMs: 2000, timeoutMs: 15_000 },
    );
    expect(result.seen).toEqual({ stillHeld: false, compromised: true });
    expect(result.end.code).toBe(0);
    expect(result.end.stderr.match(/\[dida-todo\] lock .* was compromised/g)).toHaveLength(1);
    expect(result).toMatchObject({ stillHeld: true, compromised: false });
    expect(await readdir(lockDir)).toEqual([]);
  }, 30_000);

  it('does not let a waiter SIGKILLed in the queue hold up the ones behind it, and leaves nothing behind', async () => {
    const lockDir = path.join(dir, 'locks');
    const orderFile = path.join(dir, 'order.txt');
    const holder = start('hold-until-line', lockDir, 'state', '5000');
    const holderGone = exited(holder);
    await printed(holder, 'locked');
    const doomed = start('enter', lockDir, 'state', 'doomed', orderFile, '0');
    const doomedGone = exited(doomed);
    await printed(doomed, 'asking');
    expect(await untilTickets(lockDir, 'state', 2)).toBe(true);
    doomed.kill('SIGKILL');
    expect((await doomedGone).signal).toBe('SIGKILL');
    // Queued behind the dead waiter, with a stale time far longer than the test: only its dead process lets us pass.
    const mine = withLock(lockDir, 'state', () => 'served', { staleMs: 60_000, timeoutMs: 10_000 });
    expect(await untilTickets(lockDir, 'state', 3)).toBe(true);
    holder.stdin?.write('release\n');
    await expect(mine).resolves.toBe('served');
    expect((await holderGone).code).toBe(0);
    expect(await readdir(lockDir)).toEqual([]);
  }, 30_000);

  it('stops a caller waiting behind another process when its signal aborts, without a trace in the queue', async () => {
    const lockDir = path.join(dir, 'locks');
    const holder = start('hold-until-line', lockDir, 'state', '5000');
    const holderGone = exited(holder);
    await printed(holder, 'locked');
    const controller = new AbortController();
    const waiting = withLock(lockDir, 'state', () => 'never', { signal: controller.signal, timeoutMs: 10_000 });
    expect(await untilTickets(lockDir, 'state', 2)).toBe(true);
    controller.abort(new Error('the tool call was cancelled'));
    await expect(waiting).rejects.toThrow('the tool call was cancelled');
    expect(await tickets(lockDir, 'state')).toHaveLength(1);
    holder.stdin?.write('release\n');
    expect((await holderGone).code).toBe(0);
    expect(await readdir(lockDir)).toEqual([]);
  }, 30_000);

  it('leaves a valid state file when a writer is SIGKILLed mid-write, again and again', async () => {
    const stateFile = path.join(dir, 'state', 'state.json');
    let lastCounter = 0;
    for (let round = 0; round < 5; round++) {
      const lockDir = path.join(dir, `locks-${round}`);
      const writer = start('write-states', stateFile, lockDir);
      const gone = exited(writer);
      await printed(writer, 'ready');
      await sleep(20 + Math.random() * 150);
      writer.kill('SIGKILL');
      expect((await gone).signal).toBe('SIGKILL');

      const raw = JSON.parse(await readFile(stateFile, 'utf8')) as { version: number };
      expect(raw.version).toBe(1);
      const { version: _version, ...data } = raw;
      const parsed = TestStateSchema.safeParse(data);
      expect(parsed.success).toBe(true);
      const counter = parsed.success ? parsed.data.counter : -1;
      expect(counter).toBeGreaterThan(lastCounter);
      lastCounter = counter;

      const result = await createTestStateStore(stateFile, lockDir).readResult();
      expect(result).toMatchObject({ exists: true });
      expect(result.corrupt).toBeUndefined();
    }
    // The next writer clears temp files the killed writers left behind.
    const store = createTestStateStore(stateFile, path.join(dir, 'locks-final'));
    await store.update((s) => ({ ...s, counter: s.counter + 1 }));
    expect(await readdir(path.dirname(stateFile))).toEqual(['state.json']);
  });
});
