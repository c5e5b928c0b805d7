// A small fake of dsh's plugin context for driving the whole plugin entry (src/dsh/index.ts) in unit tests: it records
// registered tools, listeners and prompt sections, and lets a test emit events and call waterfalls. By default it has
// what dsh 0.1.0-rc.8 offers a plugin (goals, commands, the todos projection, agent.cancel); a service given as
// undefined is left out.
import { expect, vi } from 'vitest';

type Listener = (...args: any[]) => any;

export interface FakeAgent {
  id: string;
  status: 'idle' | 'running';
  session: { id: string; header: Record<string, unknown>; append: ReturnType<typeof vi.fn> };
  inbox: { nextTurn: unknown[]; nextStep: unknown[] };
  followup: ReturnType<typeof vi.fn>;
  inject: ReturnType<typeof vi.fn>;
  steer: ReturnType<typeof vi.fn>;
  runMaintenance: ReturnType<typeof vi.fn>;
  cancel: ReturnType<typeof vi.fn>;
  /** The agent-scoped tool registry: `restrict` records filters and returns their lifters. */
  ctx: { tools: { restrict: ReturnType<typeof vi.fn> } };
}

export function fakeAgent(id: string, header: Record<string, unknown>): FakeAgent {
  return {
    id,
    status: 'idle',
    session: { id, header: { id, createdAt: Date.now(), ...header }, append: vi.fn() },
    inbox: { nextTurn: [], nextStep: [] },
    followup: vi.fn(),
    inject: vi.fn(),
    steer: vi.fn(),
    runMaintenance: vi.fn(async (job: (signal: AbortSignal) => Promise<unknown>) => job(new AbortController().signal)),
    cancel: vi.fn(),
    ctx: { tools: { restrict: vi.fn(() => vi.fn()) } },
  };
}

interface PromptSection {
  name: string;
  order: number;
  text: string | ((context: { agent?: unknown }) => string);
}

/** What rc.8's base bundle provides besides agents and tools (no goal is ever set; the todos projection takes any list). */
export function rc8Services(): Record<string, unknown> {
  return {
    goals: { get: () => undefined, resume: () => undefined },
    commands: { register: () => () => undefined },
    sessionProjections: { snapshot: () => ({ asOfSeq: 0, values: { todos: null } }) },
  };
}

export function fakeHost(given: Record<string, unknown> = {}) {
  const services: Record<string, unknown> = { ...rc8Services(), ...given };
  const listeners = new Map<string, Listener[]>();
  const cleanups: Array<() => unknown> = [];
  const tools: any[] = [];
  const sections: PromptSection[] = [];
  const agents = new Map<string, FakeAgent>();
  const ctx = {
    on(event: string, listener: Listener, prepend = false) {
      const list = listeners.get(event) ?? [];
      if (prepend) list.unshift(listener);
      else list.push(listener);
      listeners.set(event, list);
      return () => list.splice(list.indexOf(listener), 1);
    },
    effect(fn: () => () => unknown) {
      cleanups.push(fn());
      return undefined;
    },
    /** Runs `fn` at once when every named service is given (dsh runs it when they appear). */
    inject(deps: string[], fn: (scope: unknown) => void) {
      if (deps.every((name) => services[name] !== undefined)) fn(ctx);
      return undefined;
    },
    get(name: string) {
      if (name === 'systemPrompt') return { section: (s: PromptSection) => (sections.push(s), () => undefined) };
      return services[name];
    },
    tools: { register: (def: unknown) => (tools.push(def), () => undefined) },
    agents: {
      get: (id: string) => agents.get(id),
      roots: () => [...agents.values()].filter((a) => !a.session.header.parentSession),
    } as { get(id: string): FakeAgent | undefined; roots(): FakeAgent[]; resume?: unknown },
  };
  // rc.8 resumes a persisted session; this fake has none (a test that resumes puts its own in place).
  installResume(ctx.agents, async ({ resumeSessionId }: { resumeSessionId: string }) => {
    throw new Error(`no persisted session ${resumeSessionId}`);
  });
  const only = (event: string): Listener => {
    const list = listeners.get(event) ?? [];
    expect(list, event).toHaveLength(1);
    return list[0]!;
  };
  return {
    ctx,
    listeners,
    tools,
    sections,
    agents,
    emit: (event: string, ...args: unknown[]) => only(event)(...args),
    /** Calls a waterfall listener with a `next` that answers `undefined` (no upstream retry). */
    waterfall: (event: string, args: unknown, next: () => Promise<unknown> = async () => undefined) => only(event)(args, next),
    dispose: async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    },
  };
}


/**
 * Puts `resume` on a fake agents service as dsh has it: a method of the service, which reads its own context through
 * `this` — so a caller that detaches the method from its service fails here as it does in dsh.
 */
export function installResume<A, R>(agents: object, resume: (options: A) => R): void {
  (agents as { resume?: unknown }).resume = function (this: unknown, options: A): R {
    if (this !== agents) throw new TypeError("Cannot read properties of undefined (reading 'ctx')");
    return resume(options);
  };
}
