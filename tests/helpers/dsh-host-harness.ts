// One harness for the composition (src/dsh/dsh-host.ts): a DshHost over a fake dsh context, an in-memory runtime (no
// Dida behind it), a scriptable engine and a manual clock, plus a way to introduce sessions. The dsh-host suites use it.
import os from 'node:os';
import path from 'node:path';
import { vi } from 'vitest';
import type { WorkEngine } from '../../src/core/engine/work-engine';
import { emptyEngineState, type EngineState } from '../../src/core/work/work-state';
import { DshHost } from '../../src/dsh/dsh-host';
import { RowConfig } from '../../src/dsh/row-config';
import type { DidaTodoConfig } from '../../src/store/config-schema';
import type { Runtime } from '../../src/wiring/runtime';
import { bound, FakeClock, fakeAgent, fakeEngine, fakeRuntime, flush, memoryConfig, memoryState, work, type FakeAgent } from './dsh-fakes';
import { fakeHost, installResume } from './dsh-host-fake';

/** The directory the harness binds (config.yaml binds it unless told otherwise). */
export const HOST_CWD = '/work/project';

export interface HostHarnessOptions {
  /** Plugin row keys over `{maxAutoContinue: 3, backoff: [1]}`. */
  row?: Record<string, unknown>;
  config?: DidaTodoConfig;
  state?: EngineState;
  /** Runtime members to replace (a gateway, an account…). */
  runtime?: Record<string, unknown>;
  /** Services `ctx.get` answers (goals, headlessStartup, userQuestions…). */
  services?: Record<string, unknown>;
  isAlive?: (pid: number) => boolean;
  /** Call `start()` (default true). */
  start?: boolean;
}

/** Plugin row config with the harness's defaults under `extra`. */
export function hostRow(extra: Record<string, unknown> = {}): RowConfig {
  return (RowConfig['~standard'].validate({ maxAutoContinue: 3, backoff: [1], ...extra }) as { value: RowConfig }).value;
}

export function hostHarness(options: HostHarnessOptions = {}) {
  const clock = new FakeClock();
  const state = memoryState(options.state);
  const config = memoryConfig(options.config ?? bound(HOST_CWD));
  const engine = { ...fakeEngine(), flushComments: vi.fn(async () => undefined) };
  const runtime = { ...fakeRuntime(state, config, path.join(os.tmpdir(), `dida-host-locks-${process.pid}`)), ...options.runtime } as unknown as Runtime & { close: ReturnType<typeof vi.fn> };
  const host = fakeHost(options.services);
  const resume = vi.fn(async ({ resumeSessionId }: { resumeSessionId: string }) => {
    const agent = fakeAgent(resumeSessionId, { cwd: HOST_CWD });
    host.agents.set(resumeSessionId, agent as never);
    return { agent };
  });
  installResume(host.ctx.agents, resume);
  let ids = 0;
  const plugin = new DshHost(host.ctx as never, hostRow(options.row), { clock, runtime, engine: async () => engine as unknown as WorkEngine, newId: () => `m${++ids}`, pid: 1, isAlive: options.isAlive ?? (() => false) });
  if (options.start !== false) plugin.start();
  /** Introduces a session (agent/created) and lets its attach run. */
  const create = async (id = 's1', header: Record<string, unknown> = { cwd: HOST_CWD }): Promise<FakeAgent> => {
    const agent = fakeAgent(id, header);
    host.agents.set(id, agent as never);
    host.emit('agent/created', { agent });
    await flush();
    return agent;
  };
  return { clock, state, config, engine, runtime, host, plugin, create, resume };
}

/** A state in which session s1's current Work is w1, with its one step in progress. */
export function withCurrentWork(): EngineState {
  const state = emptyEngineState();
  state.works.w1 = work('w1', ['in_progress']);
  state.sessions.s1 = { touched: ['w1'], currentWork: 'w1', autoAttempts: 0, updatedAt: 0 };
  return state;
}
