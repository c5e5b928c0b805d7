// Child process used by the store integration tests; the first argument picks the scenario.
import { readFile, writeFile } from 'node:fs/promises';
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
  case 'write-states':
    await writeStates(args[0]!, args[1]!);
    break;
  default:
    throw new Error(`unknown mode ${String(mode)}`);
}
