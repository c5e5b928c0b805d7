// Several "processes" of one machine inside one test process, for the machine poller's tests and benches: each has its
// own state store over the shared state file, its own engine, tracker, manual clock and process id; all share one
// simulator, one lock folder and one config.yaml. Their sessions record the notes they are woken with. No vitest here
// (the bench bundles it).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ConfigPort } from '../../src/core/queue/bindings';
import { parseClaim, parseClaimEnd } from '../../src/core/queue/claims';
import { getLocale } from '../../src/core/text/locale';
import { WorkEngine } from '../../src/core/engine/work-engine';
import type { EngineState } from '../../src/core/work/work-state';
import { createHttpGateway } from '../../src/dida/http-gateway';
import type { AdapterDeps } from '../../src/dsh/adapter-deps';
import type { EnginePort } from '../../src/runtime/session/runtime-deps';
import { AgentTracker, type AgentTrack } from '../../src/runtime/session/agent-tracker';
import { MachinePoller } from '../../src/runtime/polling/machine-poller';
import type { PollMarks } from '../../src/runtime/polling/poll-marks';
import type { PollPace } from '../../src/runtime/polling/poll-pace';
import { Poller } from '../../src/runtime/polling/poller';
import { StretchCounter } from '../../src/runtime/session/stretch-counter';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { defaultConfig, type DidaTodoConfig } from '../../src/store/config-schema';
import { findBinding } from '../../src/store/config-bindings';
import { openEngineStore } from '../../src/wiring/runtime';
import type { Clock } from '../../src/runtime/session/clock';
import type { UserMessageLike } from '../../src/runtime/session/session-ports';

/** A session as the poller sees it: its status, and the notes it was woken with. */
export interface PollAgent {
  id: string;
  status: 'idle' | 'running';
  session: { id: string; header: { id: string; cwd: string }; append: () => void };
  woken: UserMessageLike[];
  followup(message: UserMessageLike): void;
  inject(): void;
}

/** A clock that moves only when told; its repeating timers fire in time order as it moves. */
export class ManualClock implements Clock {
  private timers: Array<{ at: number; every: number; fn: () => void; id: number }> = [];
  private ids = 0;
  constructor(private time: number) {}
  now(): number {
    return this.time;
  }
  async wait(ms: number): Promise<boolean> {
    await this.advance(ms);
    return true;
  }
  every(ms: number, fn: () => void): () => void {
    const id = ++this.ids;
    this.timers.push({ at: this.time + ms, every: ms, fn, id });
    return () => (this.timers = this.timers.filter((t) => t.id !== id));
  }
  async advance(ms: number): Promise<void> {
    const end = this.time + ms;
    for (;;) {
      const next = [...this.timers].sort((a, b) => a.at - b.at)[0];
      if (!next || next.at > end) break;
      this.time = next.at;
      next.at += next.every;
      next.fn();
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.time = end;
  }
}

const flush = async () => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

export interface PollProcess {
  pid: number;
  deps: AdapterDeps;
  engine: WorkEngine;
  tracker: AgentTracker;
  clock: ManualClock;
  machine: MachinePoller;
  logs: string[];
  agents: Map<string, PollAgent>;
  /** Adds a session in `cwd`, idle unless told (its record says it lives in this process, as the host's attach writes). */
  session(id: string, cwd: string, status?: 'idle' | 'running'): Promise<PollAgent>;
  /** One look at the shared state (offers, election, a poll when due), waiting for the poll it started. */
  tick(): Promise<void>;
  /** Moves this process's clock on. */
  advance(ms: number): Promise<void>;
  close(): void;
  readonly closed: boolean;
}

export interface PollWorld {
  sim: Simulator;
  dir: string;
  list: { id: string };
  config: ConfigPort & { value: DidaTodoConfig };
  alive: Set<number>;
  /** Processes that live but are stopped (SIGSTOP, Ctrl-Z): they look at nothing until taken out again. */
  frozen: Set<number>;
  process(pid: number, pace?: Partial<PollPace>, options?: ProcessOptions): PollProcess;
  state(): Promise<EngineState>;
  /** Moves every open process's clock on by `ms` and gives each one look, `times` over. */
  rounds(times: number, ms?: number): Promise<void>;
  /** Data reads of the list the simulator answered (each poll reads it once when nothing else changed). */
  reads(): number;
  /** The claims and the claim ends posted on a task, oldest first. */
  claimsOf(taskId: string): Array<NonNullable<ReturnType<typeof parseClaim>>>;
  releasesOf(taskId: string): Array<{ id: string; title: string }>;
  /** A task the person writes into the list at priority 3 (medium). */
  task(title: string, tags?: string[]): { id: string };
  /** The poll marks the shared state file holds for a session. */
  marks(sessionId: string): Promise<SessionMarks | undefined>;
  close(): Promise<void>;
}

/** What a session record holds that the machine poller's tests look at. */
export type SessionMarks = PollMarks & { currentWork?: string; livePid?: number; turnOpenSince?: number };

export const ACCOUNT = 'acct';

/** What a test may put in place of a process's defaults. */
export interface ProcessOptions {
  /** The Dida account (default: always ACCOUNT). */
  account?: () => Promise<string>;
  /** Runs when an answer waits for one of the process's sessions, and after each list read. */
  afterRead?: () => Promise<void>;
  /** The engine reads the process's manual clock too (default: the real time), for schedules kept in the state. */
  engineOnClock?: boolean;
}

/** Bound: the list is bound to that directory in config.yaml from the start. */
export async function startPollWorld(options: { bound?: string } = {}): Promise<PollWorld> {
  const sim = await startSimulator();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dida-poll-world-'));
  const list = sim.seedProject({ name: 'Work' });
  const stateFile = path.join(dir, 'state.json');
  const lockDir = path.join(dir, 'locks');
  const configValue = defaultConfig();
  if (options.bound) configValue.bindings = [{ cwd: options.bound, projectId: list.id }];
  const config = {
    value: configValue,
    read: async () => structuredClone(config.value),
    update: async (fn: (c: DidaTodoConfig) => DidaTodoConfig | Promise<DidaTodoConfig>) => (config.value = await fn(config.value)),
  };
  const alive = new Set<number>();
  const frozen = new Set<number>();
  const processes: PollProcess[] = [];
  const reader = openEngineStore({ stateFile, lockDir });

  function process(pid: number, pace: Partial<PollPace> = {}, options: ProcessOptions = {}): PollProcess {
    alive.add(pid);
    const { state, locks } = openEngineStore({ stateFile, lockDir });
    const gateway = createHttpGateway({ token: sim.token, baseUrl: sim.baseUrl, timeoutMs: 5000, retry: { retries: 0 } });
    // The world's own processes are the ones alive (their pids are made up), for the engine's claims as for the poller.
    const clock = new ManualClock(Date.now());
    const now = options.engineOnClock ? () => clock.now() : Date.now;
    const engine = new WorkEngine({ gateway, state, locks, now, locale: getLocale('zh'), timeZone: 'Asia/Shanghai', hostLabel: 'box', isAlive: (p) => alive.has(p) });
    const tracker = new AgentTracker();
    const logs: string[] = [];
    const lifetime = new AbortController();
    const agents = new Map<string, PollAgent>();
    let ids = 0;
    let closed = false;
    const deps: AdapterDeps = {
      ctx: { on: () => () => undefined, effect: () => undefined, get: () => undefined, tools: { register: () => () => undefined }, agents: { get: (id: string) => agents.get(id) } } as never,
      host: { oneShot: () => false, goal: () => undefined, resumeGoal: () => false, agent: (id: string) => agents.get(id) as never, resume: () => undefined },
      settings: {} as never,
      state,
      config,
      locale: getLocale('en'),
      engine: async () => engine as unknown as EnginePort,
      tracker,
      clock,
      log: (line) => logs.push(line),
      lifetime: lifetime.signal,
      newId: () => `m${pid}-${++ids}`,
    };
    const counter = new StretchCounter(deps);
    const poller = new Poller(deps, counter, options.afterRead);
    const machine = new MachinePoller(deps, poller, counter, {
      lockDir,
      account: options.account ?? (async () => ACCOUNT),
      engine: async () => engine,
      pid,
      isAlive: (p) => alive.has(p),
      canLook: (p) => !frozen.has(p),
      tickMs: 1_000,
      ...(options.afterRead ? { afterRead: options.afterRead } : {}),
    });
    machine.start({ baseMs: pace.baseMs ?? 20_000, ceilingMs: pace.ceilingMs ?? 10 * 60_000 });
    const proc: PollProcess = {
      pid,
      deps,
      engine,
      tracker,
      clock,
      machine,
      logs,
      agents,
      async session(id, cwd, status = 'idle') {
        const agent: PollAgent = {
          id,
          status,
          session: { id, header: { id, cwd }, append: () => undefined },
          woken: [],
          followup(message) {
            agent.woken.push(message);
          },
          inject: () => undefined,
        };
        agents.set(id, agent);
        const track: AgentTrack = tracker.add(agent as never);
        track.binding = findBinding(config.value, cwd);
        await state.update((s) => {
          s.sessions[id] = { ...(s.sessions[id] ?? { touched: [], autoAttempts: 0, updatedAt: 0 }), livePid: pid, cwd } as never;
        });
        return agent;
      },
      async tick() {
        await machine.tick();
        // The poll a look started runs on its own: wait until its claim and hand-over are written.
        await machine.polled();
        await flush();
      },
      advance: (ms) => clock.advance(ms),
      close() {
        closed = true;
        lifetime.abort();
        machine.close();
      },
      get closed() {
        return closed;
      },
    };
    processes.push(proc);
    return proc;
  }

  return {
    sim,
    dir,
    list,
    config,
    alive,
    frozen,
    process,
    state: () => reader.state.read(),
    async rounds(times, ms = 1_000) {
      for (let i = 0; i < times; i++) {
        for (const p of processes.filter((q) => !q.closed)) {
          await p.advance(ms);
          await p.tick();
        }
      }
    },
    reads: () => sim.counters()['GET /project/{pid}/data'] ?? 0,
    claimsOf: (taskId) => sim.listComments(taskId).flatMap((c) => parseClaim(c.title) ?? []),
    releasesOf: (taskId) => sim.listComments(taskId).filter((c) => parseClaimEnd(c.title)),
    task: (title, tags) => sim.seedTask({ projectId: list.id, title, priority: 3, ...(tags ? { tags } : {}) }),
    marks: async (sessionId) => (await reader.state.read()).sessions[sessionId] as SessionMarks | undefined,
    async close() {
      for (const p of processes) p.close();
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
