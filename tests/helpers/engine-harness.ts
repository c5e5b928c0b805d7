// Builds a WorkEngine over the real HTTP gateway and a started simulator, with temp state, locks and a settable clock.
// The simulator runs the variant named by DIDA_SIM_VARIANT (default kind), so the engine suites run under every one.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { EngineDeps } from '../../src/core/work/engine-context';
import { getLocale } from '../../src/core/text/locale';
import { WorkEngine } from '../../src/core/engine/work-engine';
import type { EngineState } from '../../src/core/work/work-state';
import { createHttpGateway } from '../../src/dida/http-gateway';
import type { DidaGateway } from '../../src/dida/dida-gateway';
import { simVariantFromEnv } from '../../src/sim/sim-variants';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { openEngineStore } from '../../src/wiring/runtime';

export interface EngineHarness {
  sim: Simulator;
  gateway: DidaGateway;
  engine: WorkEngine;
  deps: EngineDeps;
  dir: string;
  clock: { now: number };
  state(): Promise<EngineState>;
  close(): Promise<void>;
}

export interface EngineHarnessOptions {
  /** A simulator the test started itself (its quirks are its own); default: one started with the env variant. */
  sim?: Simulator;
  dir?: string;
  retries?: number;
  timeZone?: string;
  /** Per-request timeout of the HTTP gateway (default 2000 ms). */
  timeoutMs?: number;
}

export async function startEngineHarness(options: EngineHarnessOptions = {}): Promise<EngineHarness> {
  const sim = options.sim ?? (await startSimulator({ quirks: simVariantFromEnv().quirks }));
  // State files on a memory file system when there is one: engine suites make thousands of small fsyncs.
  const dir = options.dir ?? (await mkdtemp(path.join(existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), 'dida-engine-')));
  const gateway = createHttpGateway({ token: sim.token, baseUrl: sim.baseUrl, timeoutMs: options.timeoutMs ?? 2000, retry: { retries: options.retries ?? 0, baseDelayMs: 1, maxDelayMs: 5 } });
  const { state, locks } = openEngineStore({ stateFile: path.join(dir, 'state.json'), lockDir: path.join(dir, 'locks') });
  const clock = { now: Date.UTC(2026, 10, 30, 2, 0, 0) };
  let counter = 0;
  const deps: EngineDeps = {
    gateway,
    state,
    locks,
    now: () => clock.now,
    locale: getLocale('zh'),
    timeZone: options.timeZone ?? 'Asia/Shanghai',
    hostLabel: 'test-host',
    newStepId: () => `s${++counter}`,
  };
  const ownsSim = !options.sim;
  return {
    sim,
    gateway,
    engine: new WorkEngine(deps),
    deps,
    dir,
    clock,
    state: (): Promise<EngineState> => state.read(),
    async close() {
      await gateway.close();
      if (ownsSim) await sim.close();
      if (!options.dir) await rm(dir, { recursive: true, force: true });
    },
  };
}
