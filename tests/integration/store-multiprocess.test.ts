import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, afterEach, describe, expect, it } from 'vitest';
import { LockTimeoutError, withLock } from '../../src/store/file-lock';
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
  const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
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

  it('recovers the lock of a process SIGKILLed while holding it once it turns stale', async () => {
    const lockDir = path.join(dir, 'locks');
    const holder = start('hold', lockDir, 'state', '2000');
    const gone = exited(holder);
    await printed(holder, 'locked');

    const busy = await withLock(lockDir, 'state', () => 'x', { staleMs: 2000, timeoutMs: 200 }).catch((err: unknown) => err);
    expect(busy).toBeInstanceOf(LockTimeoutError);
    expect((busy as LockTimeoutError).message).toContain('another dida-todo process is busy');

    holder.kill('SIGKILL');
    expect((await gone).signal).toBe('SIGKILL');
    // The stale period is 2 s; the dead holder stops refreshing, so the lock is taken over after it.
    await expect(withLock(lockDir, 'state', () => 'recovered', { staleMs: 2000, timeoutMs: 6000 })).resolves.toBe('recovered');
  });

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
