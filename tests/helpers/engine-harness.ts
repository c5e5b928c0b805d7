// Builds a WorkEngine over the real HTTP gateway and a started simulator, with temp state, locks and a settable clock.
// The simulator runs the variant named by DIDA_SIM_VARIANT (default kind), so the engine suites run under every one.
// Under the rate-limit variant the windows are scaled to a one-second "minute", the gateway goes through the machine's
// request budget (scaled alike), and closing the harness fails when Dida had to answer 429 (decision 0086).
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
import { accountKey, createRequestBudget, DEFAULT_BUDGET, type BudgetLimits } from '../../src/dida/request-budget';
import { limitsRate, RATE_LIMIT_TEST_WINDOW_MS, simVariantFromEnv } from '../../src/sim/sim-variants';
import { budgetStore } from '../../src/store/budget-store';
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
  /** Put the machine's request budget in front of the gateway, with these limits (in a budget file in `dir`). */
  budget?: BudgetLimits;
}

export async function startEngineHarness(options: EngineHarnessOptions = {}): Promise<EngineHarness> {
  const variant = simVariantFromEnv().quirks;
  const limited = !options.sim && limitsRate(variant);
  const sim = options.sim ?? (await startSimulator({ quirks: limited ? { ...variant, rateLimitWindowMs: RATE_LIMIT_TEST_WINDOW_MS } : variant }));
  // State files on a memory file system when there is one: engine suites make thousands of small fsyncs.
  const dir = options.dir ?? (await mkdtemp(path.join(existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), 'dida-engine-')));
  const store = () => budgetStore(dir, path.join(dir, 'locks'), accountKey(sim.baseUrl, sim.token));
  const gate = options.budget
    ? createRequestBudget({ store: store(), limits: () => options.budget as BudgetLimits })
    : limited
      ? createRequestBudget({ store: store(), limits: () => DEFAULT_BUDGET, minuteMs: RATE_LIMIT_TEST_WINDOW_MS })
      : undefined;
  const gateway = createHttpGateway({
    token: sim.token,
    baseUrl: sim.baseUrl,
    timeoutMs: options.timeoutMs ?? 2000,
    retry: { retries: options.retries ?? 0, baseDelayMs: 1, maxDelayMs: 5 },
    ...(gate ? { gate } : {}),
  });
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
      // Under the rate-limit variant the budget must have kept every request within Dida's limit.
      if (limited && sim.rateLimitRefusals() > 0) {
        await sim.close();
        throw new Error(`the simulator answered ${sim.rateLimitRefusals()} request(s) with 429: the request budget let the engine pass Dida's rate limit`);
      }
      if (ownsSim) await sim.close();
      if (!options.dir) await rm(dir, { recursive: true, force: true });
    },
  };
}
