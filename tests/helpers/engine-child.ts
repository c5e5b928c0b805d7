// Child process for the engine concurrency tests: its own WorkEngine over HTTP, sharing the parent's state file and locks.
// Env: DIDA_BASE_URL, DIDA_TOKEN, ENGINE_DIR. Argv: `complete <workKey> <stepId,...>` or `settle <workKey>`.
import path from 'node:path';
import type { EngineDeps, LockPort, StatePort } from '../../src/core/engine-context';
import { getLocale } from '../../src/core/locale';
import { WorkEngine } from '../../src/core/work-engine';
import { ENGINE_STATE_VERSION, EngineStateSchema, emptyEngineState, type EngineState } from '../../src/core/work-state';
import { createHttpGateway } from '../../src/dida/http-gateway';
import { withLock } from '../../src/store/file-lock';
import { StateStore } from '../../src/store/state-store';

const dir = process.env.ENGINE_DIR as string;
const gateway = createHttpGateway({ token: process.env.DIDA_TOKEN as string, baseUrl: process.env.DIDA_BASE_URL as string, timeoutMs: 10_000, retry: { retries: 0 } });
const store = new StateStore<EngineState>({
  file: path.join(dir, 'state.json'),
  lockDir: path.join(dir, 'locks'),
  schema: EngineStateSchema,
  version: ENGINE_STATE_VERSION,
  empty: emptyEngineState,
});
const state: StatePort = { read: () => store.read(), update: (fn) => store.update(async (s) => (await fn(s)) ?? s) };
const locks: LockPort = { withLock: (key, fn) => withLock(path.join(dir, 'locks'), key, fn, { timeoutMs: 60_000 }) };
const deps: EngineDeps = { gateway, state, locks, now: Date.now, locale: getLocale('zh'), timeZone: 'Asia/Shanghai', hostLabel: `child-${process.pid}` };
const engine = new WorkEngine(deps);
const session = `child-${process.pid}`;

const [mode, key, list] = process.argv.slice(2);
try {
  if (mode === 'complete') {
    for (const step of (list ?? '').split(',').filter(Boolean)) {
      await engine.changeSteps(session, [{ op: 'update', step, status: 'completed', resolution: `完成 ${step}` }], key);
    }
    process.stdout.write('done\n');
  } else if (mode === 'settle') {
    await engine.touch(session, key as string, true);
    process.stdout.write(`${JSON.stringify(await engine.settle(session))}\n`);
  } else {
    throw new Error(`unknown mode ${String(mode)}`);
  }
} finally {
  await gateway.close();
}
