// Child process used by the store integration tests; the first argument picks the scenario.
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { withLock } from '../../src/store/file-lock';
import { createTestStateStore, largeTestState } from './store-test-state';

const [mode, ...args] = process.argv.slice(2);

async function counter(lockDir: string, counterFile: string, times: number): Promise<void> {
  for (let i = 0; i < times; i++) {
    await withLock(lockDir, 'counter', async () => {
      const current = Number((await readFile(counterFile, 'utf8').catch(() => '0')) || '0');
      await new Promise((resolve) => setImmediate(resolve));
      await writeFile(counterFile, String(current + 1));
    }, { staleMs: 5000, timeoutMs: 15_000 });
  }
}

async function hold(lockDir: string, key: string, staleMs: number): Promise<void> {
  await withLock(lockDir, key, async () => {
    process.stdout.write('locked\n');
    await new Promise(() => setInterval(() => {}, 1000));
  }, { staleMs });
}

/** Holds the lock until a line arrives on stdin, then prints what `stillHeld()` and `compromised` say, and releases. */
async function holdUntilLine(lockDir: string, key: string, staleMs: number): Promise<void> {
  const line = new Promise<void>((resolve) => {
    const input = createInterface({ input: process.stdin });
    input.once('line', () => {
      // Stop reading, so the open stdin pipe does not keep this process alive after the release.
      input.close();
      process.stdin.destroy();
      resolve();
    });
  });
  await withLock(lockDir, key, async ({ stillHeld, compromised }) => {
    process.stdout.write('locked\n');
    await line;
    process.stdout.write(`${JSON.stringify({ stillHeld: stillHeld(), compromised: compromised.aborted })}\n`);
  }, { staleMs });
}

/** Asks for the lock once, appends `label` to `orderFile` when it gets it, and keeps it for `holdMs`. */
async function enter(lockDir: string, key: string, label: string, orderFile: string, holdMs: number): Promise<void> {
  process.stdout.write('asking\n');
  await withLock(lockDir, key, async () => {
    await appendFile(orderFile, `${label}\n`);
    await new Promise((resolve) => setTimeout(resolve, holdMs));
  }, { staleMs: 5000, timeoutMs: 30_000 });
}

async function writeStates(stateFile: string, lockDir: string): Promise<void> {
  const store = createTestStateStore(stateFile, lockDir);
  for (let n = 0; ; n++) {
    await store.update((current) => largeTestState(current.counter + 1));
    if (n === 0) process.stdout.write('ready\n');
  }
}

switch (mode) {
  case 'counter':
    await counter(args[0]!, args[1]!, Number(args[2]));
    break;
  case 'hold':
    await hold(args[0]!, args[1]!, Number(args[2]));
    break;
  case 'hold-until-line':
    await holdUntilLine(args[0]!, args[1]!, Number(args[2]));
    break;
  case 'enter':
    await enter(args[0]!, args[1]!, args[2]!, args[3]!, Number(args[4]));
    break;
  case 'write-states':
    await writeStates(args[0]!, args[1]!);
    break;
  default:
    throw new Error(`unknown mode ${String(mode)}`);
}
