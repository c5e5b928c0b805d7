// A JSON-RPC client for the sdk and acp profiles (prepareProfile in harness/profile.ts makes them ready), written here
// (no SDK package): it spawns `dsh --profile sdk` (or `acp`), speaks NDJSON on stdin/stdout, keeps every stdout line,
// and routes the sdk's `session.status` / `session.event` and ACP's `session/update` notifications by `sessionId`
// (dsh-plugin-guide §0.3a).
import { spawn } from 'node:child_process';
import { dshEnv, ensureDsh, type EnvOptions, type SessionEvent } from './dsh-run';

/** One line of the process's stdout, parsed. */
export interface JsonRpcFrame {
  jsonrpc: '2.0';
  id?: number | string | null;
  method?: string;
  params?: any;
  result?: any;
  error?: { code: number; message: string; data?: unknown };
}

/** Why `line` is not a JSON-RPC 2.0 frame (request, notification or response), or undefined when it is one. */
export function frameProblem(line: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return 'not JSON';
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a JSON object';
  const frame = value as Record<string, unknown>;
  if (frame.jsonrpc !== '2.0') return 'no "jsonrpc": "2.0"';
  const hasId = 'id' in frame;
  if (hasId && !(typeof frame.id === 'number' || typeof frame.id === 'string' || frame.id === null)) return 'an id that is not a number, string or null';
  if (typeof frame.method === 'string') {
    if ('result' in frame || 'error' in frame) return 'a method together with a result or error';
    if ('params' in frame && (typeof frame.params !== 'object' || frame.params === null)) return 'params that are not an object or array';
    return undefined;
  }
  if ('method' in frame) return 'a method that is not a string';
  if (!hasId) return 'neither a method nor an id';
  if ('result' in frame === 'error' in frame) return 'a response without exactly one of result and error';
  if ('error' in frame) {
    const error = frame.error as Record<string, unknown> | null;
    if (typeof error !== 'object' || error === null || typeof error.code !== 'number' || typeof error.message !== 'string') return 'an error without a numeric code and a message';
  }
  return undefined;
}

export class JsonRpcError extends Error {
  constructor(
    readonly method: string,
    readonly error: { code: number; message: string; data?: unknown },
  ) {
    super(`${method} failed: ${error.code} ${error.message}`);
  }
}

export interface SdkExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface SdkOptions extends EnvOptions {
  /** `sdk` (default) or `acp`: both speak NDJSON JSON-RPC 2.0 on stdio. */
  profile?: 'sdk' | 'acp';
  /** The process's own cwd (default the home); the session cwd is what `initialize` says. */
  cwd?: string;
  /** `--patch` overlays (the profile's own layer already re-enables `hmr`). */
  patches?: string[];
  /** Killed (whole process group) after this long whatever happens (default 120 s). */
  lifetimeMs?: number;
}

export interface SdkProcess {
  readonly pid: number;
  /** Every stdout line, as written (a last line without a newline included once the process has exited). */
  readonly lines: string[];
  /** The lines that parsed as frames, in order. */
  readonly frames: JsonRpcFrame[];
  /** `{line, problem}` for every stdout line that is not a JSON-RPC 2.0 frame. */
  badLines(): Array<{ line: string; problem: string }>;
  stderr(): string;
  /** Sends a request and resolves with its result (rejects with JsonRpcError on an error answer). */
  request(method: string, params?: unknown, timeoutMs?: number): Promise<any>;
  /** `initialize` with the fake model's provider and model and this session cwd. */
  initialize(cwd: string): Promise<any>;
  /** `session/prompt` with one text block; resolves with `{messageId}` once the turn has started. */
  prompt(sessionId: string, text: string): Promise<{ messageId: string }>;
  /** The durable events of `session.event` notifications for one session id, in arrival order. */
  events(sessionId: string): SessionEvent[];
  /** The `session.status` values for one session id, in arrival order. */
  statuses(sessionId: string): string[];
  /** The `update` of each ACP `session/update` notification for one session id, in arrival order. */
  updates(sessionId: string): any[];
  /** Every session id a notification named, in first-seen order. */
  sessionIds(): string[];
  /** Polls `probe` (every 50 ms) until it returns a truthy value; rejects with the stderr tail after timeoutMs. */
  until<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs?: number): Promise<T>;
  /** Sends `shutdown` and waits for the exit (SIGKILL after timeoutMs). */
  shutdown(timeoutMs?: number): Promise<SdkExit>;
  /** Ends the process's stdin (EOF). */
  closeStdin(): void;
  /** Sends a signal to the whole process group and waits for the exit. */
  kill(signal: NodeJS.Signals): Promise<SdkExit>;
  readonly exited: Promise<SdkExit>;
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is gone already.
  }
}

const live = new Set<number>();
let exitHook = false;

/** Spawns `dsh --profile sdk [--patch …]` with the test environment; nothing is sent until a method is called. */
export async function startSdk(options: SdkOptions): Promise<SdkProcess> {
  const install = await ensureDsh();
  const args = ['--profile', options.profile ?? 'sdk'];
  for (const patch of options.patches ?? []) args.push('--patch', patch);
  const child = spawn(install.dshBin, args, {
    cwd: options.cwd ?? options.home,
    env: dshEnv(install, options),
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  const pid = child.pid!;
  live.add(pid);
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => {
      for (const p of live) killGroup(p, 'SIGKILL');
    });
  }
  const lines: string[] = [];
  const frames: JsonRpcFrame[] = [];
  const bad: Array<{ line: string; problem: string }> = [];
  const events = new Map<string, SessionEvent[]>();
  const statuses = new Map<string, string[]>();
  const updates = new Map<string, any[]>();
  const order: string[] = [];
  const pending = new Map<number | string, { method: string; resolve: (v: any) => void; reject: (e: Error) => void }>();
  let stderr = '';
  let buffer = '';
  let nextId = 1;

  const onLine = (line: string) => {
    lines.push(line);
    const problem = frameProblem(line);
    if (problem) {
      bad.push({ line, problem });
      return;
    }
    const frame = JSON.parse(line) as JsonRpcFrame;
    frames.push(frame);
    if (frame.method === undefined && frame.id !== undefined && frame.id !== null) {
      const waiter = pending.get(frame.id);
      if (!waiter) return;
      pending.delete(frame.id);
      if (frame.error) waiter.reject(new JsonRpcError(waiter.method, frame.error));
      else waiter.resolve(frame.result);
      return;
    }
    const sessionId = frame.params?.sessionId;
    if (typeof sessionId !== 'string') return;
    if (!order.includes(sessionId)) order.push(sessionId);
    if (frame.method === 'session.event') {
      const list = events.get(sessionId) ?? [];
      list.push(frame.params.event as SessionEvent);
      events.set(sessionId, list);
    } else if (frame.method === 'session/update') {
      const list = updates.get(sessionId) ?? [];
      list.push(frame.params.update);
      updates.set(sessionId, list);
    } else if (frame.method === 'session.status') {
      const list = statuses.get(sessionId) ?? [];
      list.push(String(frame.params.status));
      statuses.set(sessionId, list);
    }
  };

  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
      onLine(buffer.slice(0, at));
      buffer = buffer.slice(at + 1);
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    if (stderr.length < 4 * 1024 * 1024) stderr += chunk;
  });
  // A closed stdin pipe (the process is gone) must not crash the test process.
  child.stdin!.on('error', () => undefined);

  const lifetime = setTimeout(() => killGroup(pid, 'SIGKILL'), options.lifetimeMs ?? 120_000);
  const exited = new Promise<SdkExit>((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(lifetime);
      live.delete(pid);
      if (buffer !== '') onLine(buffer);
      buffer = '';
      // Reap anything left in its group (tool subprocesses, workers).
      killGroup(pid, 'SIGKILL');
      for (const waiter of pending.values()) waiter.reject(new Error(`dsh exited (${code ?? signal}) before answering ${waiter.method}\n--- stderr\n${stderr.slice(-3000)}`));
      pending.clear();
      resolve({ code, signal });
    });
  });

  const send = (frame: object) => child.stdin!.write(`${JSON.stringify(frame)}\n`);

  const request = (method: string, params?: unknown, timeoutMs = 30_000): Promise<any> => {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`no answer to ${method} within ${timeoutMs} ms\n--- stderr\n${stderr.slice(-3000)}`));
      }, timeoutMs);
      pending.set(id, {
        method,
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      send({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
    });
  };

  const waitExit = async (timeoutMs: number): Promise<SdkExit> => {
    const timer = setTimeout(() => killGroup(pid, 'SIGKILL'), timeoutMs);
    const result = await exited;
    clearTimeout(timer);
    return result;
  };

  return {
    pid,
    lines,
    frames,
    badLines: () => [...bad],
    stderr: () => stderr,
    request,
    initialize: (cwd) => request('initialize', { cwd, provider: 'deepseek-official', model: 'deepseek-v4-flash' }, 60_000),
    prompt: (sessionId, text) => request('session/prompt', { sessionId, contentBlocks: [{ type: 'text', text }] }, 60_000),
    events: (sessionId) => [...(events.get(sessionId) ?? [])],
    statuses: (sessionId) => [...(statuses.get(sessionId) ?? [])],
    updates: (sessionId) => [...(updates.get(sessionId) ?? [])],
    sessionIds: () => [...order],
    until: async (what, probe, timeoutMs = 30_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const value = await probe();
        if (value) return value;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n--- stderr\n${stderr.slice(-4000)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    shutdown: async (timeoutMs = 20_000) => {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      await request('shutdown', undefined, timeoutMs).catch(() => undefined);
      return waitExit(timeoutMs);
    },
    closeStdin: () => child.stdin!.end(),
    kill: async (signal) => {
      killGroup(pid, signal);
      return waitExit(10_000);
    },
    exited,
  };
}
