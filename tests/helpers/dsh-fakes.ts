// Fakes for the dsh adapter's module tests: a manual clock, agents that record what they are sent, an in-memory
// state store, a config port, a scriptable engine, and createHarness() wiring them into AdapterDeps.
import { vi, type Mock } from 'vitest';
import type { ConfigPort } from '../../src/core/queue/bindings';
import type { StatePort } from '../../src/core/work/engine-context';
import { getLocale } from '../../src/core/text/locale';
import type { QueueView } from '../../src/core/engine/work-engine';
import { emptyEngineState, type EngineState, type WorkRecord } from '../../src/core/work/work-state';
import type { AdapterDeps } from '../../src/dsh/adapter-deps';
import type { EnginePort } from '../../src/runtime/session/runtime-deps';
import { AgentTracker } from '../../src/runtime/session/agent-tracker';
import type { Clock } from '../../src/runtime/session/clock';
import { hostPortOf, type HostContext } from '../../src/dsh/ports';
import type { GoalView, HostAgent, UserMessageLike } from '../../src/runtime/session/session-ports';
import { RowConfig } from '../../src/dsh/row-config';
import { installResume } from './dsh-host-fake';
import { defaultConfig, type DidaTodoConfig } from '../../src/store/config-schema';
import { getLocale as localeOf } from '../../src/core/text/locale';
import type { Runtime } from '../../src/wiring/runtime';

/** A clock that only moves when told: `advance(ms)` runs due waits and intervals in time order. */
export class FakeClock implements Clock {
  private time: number;
  private readonly timers: Array<{ at: number; fire: () => void; every?: number; id: number }> = [];
  private nextId = 0;
  /** Every wait requested, in order (ms). */
  readonly waits: number[] = [];

  constructor(start = 1_000_000) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  wait(ms: number, signals: readonly (AbortSignal | undefined)[] = []): Promise<boolean> {
    this.waits.push(ms);
    const live = signals.filter((s): s is AbortSignal => !!s);
    if (live.some((s) => s.aborted)) return Promise.resolve(false);
    return new Promise((resolve) => {
      const id = this.nextId++;
      const onAbort = () => {
        this.cancel(id);
        resolve(false);
      };
      for (const s of live) s.addEventListener('abort', onAbort, { once: true });
      this.timers.push({
        at: this.time + ms,
        id,
        fire: () => {
          for (const s of live) s.removeEventListener('abort', onAbort);
          resolve(true);
        },
      });
    });
  }

  every(ms: number, fn: () => void): () => void {
    const id = this.nextId++;
    this.intervals.push(ms);
    this.timers.push({ at: this.time + ms, fire: fn, every: ms, id });
    return () => this.cancel(id);
  }

  /** Interval lengths asked for with every(). */
  readonly intervals: number[] = [];

  /** Timers still pending. */
  pending(): number {
    return this.timers.length;
  }

  private cancel(id: number): void {
    const i = this.timers.findIndex((t) => t.id === id);
    if (i >= 0) this.timers.splice(i, 1);
  }

  /** Moves time forward by `ms`, firing what falls due (and letting promise callbacks run in between). */
  async advance(ms: number): Promise<void> {
    const end = this.time + ms;
    for (;;) {
      await flush();
      this.timers.sort((a, b) => a.at - b.at);
      const next = this.timers[0];
      if (!next || next.at > end) break;
      this.time = next.at;
      if (next.every) next.at += next.every;
      else this.timers.shift();
      next.fire();
    }
    this.time = end;
    await flush();
  }
}

/** Lets pending promise callbacks (and a few macrotask hops) run. */
export async function flush(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * Polls `probe` (flushing in between) until it holds; throws after `rounds` flushes and at least `ms` of real time (a
 * module the code under test imports lazily may take that long to load the first time a test file runs).
 */
export async function eventually(probe: () => boolean, rounds = 200, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (let i = 0; i < rounds || Date.now() < deadline; i++) {
    if (probe()) return;
    await flush(1);
    if (i >= rounds) await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error('condition never held');
}

type AnyFn = (...args: any[]) => any;

export interface FakeAgent extends HostAgent {
  session: HostAgent['session'] & { append: Mock<AnyFn> };
  followup: Mock<AnyFn>;
  inject: Mock<AnyFn>;
  restrict: Mock<AnyFn>;
  lift: Mock<AnyFn>;
  runMaintenance: Mock<AnyFn>;
  inbox: { nextTurn: UserMessageLike[]; nextStep: UserMessageLike[] };
}

export function fakeAgent(id: string, header: Record<string, unknown> = {}): FakeAgent {
  const lift = vi.fn<AnyFn>();
  const restrict = vi.fn<AnyFn>(() => lift);
  return {
    id,
    status: 'idle',
    session: { id, header: { id, ...header }, append: vi.fn<AnyFn>() },
    inbox: { nextTurn: [], nextStep: [] },
    ctx: { tools: { restrict } },
    restrict,
    lift,
    followup: vi.fn<AnyFn>(),
    inject: vi.fn<AnyFn>(),
    runMaintenance: vi.fn<AnyFn>(async (job: (signal: AbortSignal) => Promise<unknown>) => job(new AbortController().signal)),
  };
}

export function personSays(text: string, id = 'human-1'): UserMessageLike {
  return { id, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } };
}

/** An in-memory state store with the StatePort semantics (updates serialised). */
export function memoryState(initial: EngineState = emptyEngineState()): StatePort & { value: EngineState; writes: number } {
  let chain: Promise<unknown> = Promise.resolve();
  const port = {
    value: structuredClone(initial),
    writes: 0,
    read: async () => structuredClone(port.value),
    update: (fn: (state: EngineState) => EngineState | void | Promise<EngineState | void>) => {
      const run = chain.then(async () => {
        const draft = structuredClone(port.value);
        const result = (await fn(draft)) ?? draft;
        port.value = structuredClone(result);
        port.writes++;
        return structuredClone(port.value);
      });
      chain = run.catch(() => undefined);
      return run;
    },
  };
  return port;
}

/** A config port whose content the test sets. */
export function memoryConfig(config: DidaTodoConfig = defaultConfig()): ConfigPort & { value: DidaTodoConfig } {
  const port = {
    value: config,
    read: async () => structuredClone(port.value),
    update: async (fn: (c: DidaTodoConfig) => DidaTodoConfig | void | Promise<DidaTodoConfig | void>) => {
      port.value = (await fn(port.value)) ?? port.value;
      return port.value;
    },
  };
  return port as ConfigPort & { value: DidaTodoConfig };
}

export function bound(cwd: string, projectId = 'list-1'): DidaTodoConfig {
  return { ...defaultConfig(), bindings: [{ cwd, projectId, label: 'list' }] } as DidaTodoConfig;
}

/** A Work record with the given steps (status per step). */
export function work(key: string, steps: Array<WorkRecord['steps'][number]['status']>, extra: Partial<WorkRecord> = {}): WorkRecord {
  return {
    taskId: key,
    projectId: 'list-1',
    occurrence: '',
    title: `Work ${key}`,
    origin: 'human',
    mode: 'checklist',
    priority: 3,
    phase: 'open',
    steps: steps.map((status, i) => ({ id: `s${i}`, title: `step ${i}`, status, origin: 'agent', updatedAt: 0 })),
    ...extra,
  } as WorkRecord;
}

export function emptyQueue(): QueueView {
  return { ranked: [], skipped: [], report: { tasks: [] } } as unknown as QueueView;
}

/** A queue whose executable Works are `keys`, in that order. */
export function queueOf(keys: string[], titles: Record<string, string> = {}): QueueView {
  return {
    ranked: keys.map((key, i) => ({
      position: i + 1,
      level: 'medium',
      candidate: { taskId: key, title: titles[key] ?? `Work ${key}`, priority: 3, order: i, task: {}, status: 'open', hasPlan: true, unsettledSteps: 1, waitingForHuman: false, claimedByOtherHost: false },
    })),
    skipped: [],
    report: { tasks: [] },
  } as unknown as QueueView;
}

export type FakeEngine = Record<keyof EnginePort, Mock<AnyFn>>;

/** A scriptable engine: every method is a vi.fn with a harmless default; `overrides` replace implementations. */
export function fakeEngine(overrides: Partial<Record<keyof EnginePort, AnyFn>> = {}): FakeEngine {
  const engine: FakeEngine = {
    sync: vi.fn<AnyFn>(async () => ({ tasks: [] })),
    queue: vi.fn<AnyFn>(async () => emptyQueue()),
    claimNext: vi.fn<AnyFn>(async () => undefined),
    settle: vi.fn<AnyFn>(async () => []),
    currentWork: vi.fn<AnyFn>(async () => undefined),
    waitForHuman: vi.fn<AnyFn>(async () => undefined),
    switchTo: vi.fn<AnyFn>(async (_s: string, _p: string, key: string) => work(key, ['in_progress'])),
    withSignal: vi.fn<AnyFn>(() => engine),
    releaseSession: vi.fn<AnyFn>(async () => []),
    waitForModelFailure: vi.fn<AnyFn>(async () => undefined),
    noteWaitUntil: vi.fn<AnyFn>(async () => false),
    waitAfterAttempts: vi.fn<AnyFn>(async () => undefined),
    noteHostGap: vi.fn<AnyFn>(async () => false),
    takeNews: vi.fn<AnyFn>(async () => []),
  };
  for (const [name, fn] of Object.entries(overrides) as Array<[keyof EnginePort, AnyFn]>) {
    engine[name] = vi.isMockFunction(fn) ? (fn as Mock<AnyFn>) : vi.fn<AnyFn>(fn);
  }
  return engine;
}

export interface HarnessOptions {
  row?: Record<string, unknown>;
  config?: DidaTodoConfig;
  state?: EngineState;
  engine?: FakeEngine;
  goals?: { get: (agent: HostAgent) => GoalView | undefined; resume: ReturnType<typeof vi.fn> };
  /** Services `ctx.get` returns (goals, agentDefaultModel, headlessStartup…). */
  services?: Record<string, unknown>;
  agents?: Map<string, FakeAgent>;
  resume?: ReturnType<typeof vi.fn>;
}

/** AdapterDeps over fakes, plus the fakes and what they recorded. */
export function createHarness(options: HarnessOptions = {}) {
  const clock = new FakeClock();
  const state = memoryState(options.state);
  const config = memoryConfig(options.config);
  const engine = options.engine ?? fakeEngine();
  const agents = options.agents ?? new Map<string, FakeAgent>();
  const logs: string[] = [];
  const lifetime = new AbortController();
  const resume = options.resume;
  const services: Record<string, unknown> = { ...(options.goals ? { goals: options.goals } : {}), ...options.services };
  const ctx: HostContext = {
    on: () => () => undefined,
    effect: () => undefined,
    get: (name: string) => services[name],
    tools: { register: () => () => undefined },
    agents: { get: (id) => agents.get(id) },
  };
  if (resume) installResume(ctx.agents, resume as (options: unknown) => unknown);
  const parsed = RowConfig['~standard'].validate(options.row ?? {}) as { value: RowConfig };
  let ids = 0;
  const deps: AdapterDeps = {
    ctx,
    host: hostPortOf(ctx),
    settings: parsed.value,
    state,
    config,
    locale: getLocale('en'),
    engine: async () => engine as unknown as EnginePort,
    tracker: new AgentTracker(),
    clock,
    log: (line) => logs.push(line),
    lifetime: lifetime.signal,
    newId: () => `id-${++ids}`,
  };
  return { deps, clock, state, config, engine, agents, logs, lifetime, services };
}

/** A runtime over in-memory state and config for DshHost, with no Dida behind it (its gateway and account reject). */
export function fakeRuntime(state: StatePort, config: ConfigPort, lockDir: string): Runtime {
  return {
    config,
    state,
    locks: { withLock: (_k: string, fn: () => Promise<unknown>) => fn() },
    locale: localeOf('en'),
    hostLabel: 'host-a',
    corruptions: [],
    gateway: vi.fn(async () => Promise.reject(new Error('no gateway here'))),
    tokenSource: vi.fn(async () => undefined),
    account: vi.fn(async () => Promise.reject(new Error('no account here'))),
    paths: { lockDir },
    close: vi.fn(async () => undefined),
  } as unknown as Runtime;
}
