// Child process for the engine concurrency tests: its own WorkEngine over HTTP, sharing the parent's state file and locks.
// Env: DIDA_BASE_URL, DIDA_TOKEN, ENGINE_DIR, ENGINE_LOCK_STALE_MS (optional). Argv: `complete <workKey> <stepId,...>`,
// `settle <workKey>`, or `record <workKey> <stepId>` (a tool call's completion left to the background writer; the
// process then says `recorded` and waits to be killed, before anything is written).
import path from 'node:path';
import type { EngineDeps } from '../../src/core/work/engine-context';
import { getLocale } from '../../src/core/text/locale';
import { WorkEngine } from '../../src/core/engine/work-engine';
import { createHttpGateway } from '../../src/dida/http-gateway';
import { openEngineStore } from '../../src/wiring/runtime';

const dir = process.env.ENGINE_DIR as string;
const gateway = createHttpGateway({ token: process.env.DIDA_TOKEN as string, baseUrl: process.env.DIDA_BASE_URL as string, timeoutMs: 10_000, retry: { retries: 0 } });
const staleMs = Number(process.env.ENGINE_LOCK_STALE_MS) || undefined;
const { state, locks } = openEngineStore({ stateFile: path.join(dir, 'state.json'), lockDir: path.join(dir, 'locks'), lockOptions: { timeoutMs: 60_000, ...(staleMs ? { staleMs } : {}) } });
const deps: EngineDeps = { gateway, state, locks, now: Date.now, locale: getLocale('zh'), timeZone: 'Asia/Shanghai', hostLabel: `child-${process.pid}` };
const engine = new WorkEngine(deps);
const session = `child-${process.pid}`;

const [mode, key, list] = process.argv.slice(2);
try {
  if (mode === 'complete') {
    for (const step of (list ?? '').split(',').filter(Boolean)) {
      await engine.changeSteps(session, [{ op: 'update', step, status: 'completed', resolution: `完成 ${step}` }], key);
    }
    // As a one-shot run does before it exits: post the progress comments still waiting.
    await engine.flushComments();
    process.stdout.write('done\n');
  } else if (mode === 'record') {
    await engine.changeSteps(session, [{ op: 'update', step: list as string, status: 'completed', resolution: `完成 ${list}` }], key, { background: true });
    process.stdout.write('recorded\n');
    await new Promise(() => undefined);
  } else if (mode === 'settle') {
    await engine.touch(session, key as string, true);
    process.stdout.write(`${JSON.stringify(await engine.settle(session))}\n`);
  } else {
    throw new Error(`unknown mode ${String(mode)}`);
  }
} finally {
  await gateway.close();
}
