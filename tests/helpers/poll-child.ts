// A long-lived "dsh process" for the multi-process polling tests, benches and the soak: the real DshHost over a small
// fake of dsh's context, its real runtime (config.yaml, state and lock folders from HOME / XDG_*, the token from
// DIDA_TODO_TOKEN), and fake sessions that act like a model when woken: plan one step, finish it, go idle (settle).
// Argv: one JSON spec (see ChildSpec), or the env POLL_CHILD_SPEC (a bench starts its own bundle in this mode).
// Stdout: one JSON event per line (ready, lead, woken, done, failed).
import { DshHost } from '../../src/dsh/dsh-host';
import type { HostToolDefinition } from '../../src/dsh/ports';
import type { HostAgent, UserMessageLike } from '../../src/runtime/session/session-ports';
import { RowConfig } from '../../src/dsh/row-config';

export interface ChildSpec {
  sessions: Array<{ id: string; cwd: string }>;
  /** `idle`: a woken session only reports it; `work`: it carries the Work out (one step) and settles. */
  mode: 'idle' | 'work';
  /** How long a woken session "thinks" before its first tool call, and works on its step. */
  thinkMs?: number;
  workMs?: number;
  pollSeconds?: number;
  pollIntervalMinutes?: number;
  /** Crash recovery on (a restarted process resumes its sessions' interrupted turns after 1 s). */
  recover?: boolean;
  /** Lists whose leadership is reported (`lead` events). */
  lists?: string[];
  /** The row's progress window (default 0: progress goes out at once); the soaks run the product's default. */
  progressWindowSeconds?: number;
}

const spec = JSON.parse(process.env.POLL_CHILD_SPEC ?? process.argv[2] ?? '{}') as ChildSpec;
const emit = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify({ pid: process.pid, at: Date.now(), ...event })}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Listener = (...args: any[]) => any;
const listeners = new Map<string, Listener[]>();
const tools = new Map<string, HostToolDefinition>();
const agents = new Map<string, HostAgent>();
const cleanups: Array<() => unknown> = [];
const ctx = {
  on(event: string, listener: Listener) {
    listeners.set(event, [...(listeners.get(event) ?? []), listener]);
    return () => undefined;
  },
  effect(fn: () => () => unknown) {
    cleanups.push(fn());
    return undefined;
  },
  get: () => undefined,
  tools: { register: (def: HostToolDefinition) => (tools.set(def.name, def), () => undefined) },
  agents: { get: (id: string) => agents.get(id), roots: () => [...agents.values()] },
};
const fire = (event: string, ...args: unknown[]) => {
  for (const listener of listeners.get(event) ?? []) void Promise.resolve(listener(...args)).catch((error: unknown) => emit({ type: 'failed', event, error: String(error) }));
};

const row = RowConfig.safeParse({
  poll: true,
  ...(spec.pollSeconds !== undefined ? { pollSeconds: spec.pollSeconds } : {}),
  ...(spec.pollIntervalMinutes !== undefined ? { pollIntervalMinutes: spec.pollIntervalMinutes } : {}),
  maxAutoContinue: spec.recover ? 3 : 0,
  backoff: [1],
  progressWindowSeconds: spec.progressWindowSeconds ?? 0,
});
if (!row.success) throw new Error(JSON.stringify(row.issues));
const host = new DshHost(ctx as never, row.data);
host.start();

type ToolAnswer = { code: string; message: string; data?: Array<{ content: string; status: string }> };

/** One tool call, as a model makes it: told Dida is rate-limited and to call again in N seconds, it does (three times at most). */
async function call(agent: HostAgent, name: string, args: Record<string, unknown>): Promise<ToolAnswer> {
  for (let attempt = 1; ; attempt++) {
    const answer = (await (tools.get(name) as HostToolDefinition).execute(args, { agent, signal: new AbortController().signal })) as ToolAnswer;
    emit({ type: 'tool', session: agent.id, tool: name, action: args.action, code: answer.code });
    const again = answer.code === 'dida_unavailable' ? /again in (\d+) seconds/.exec(answer.message) : null;
    if (!again || attempt >= 3) return answer;
    await sleep(Number(again[1]) * 1000);
  }
}

const STEP = '完成这项工作';

/**
 * What a model does with the poller's note (or a recovery note after a crash): looks at its current Work, plans the
 * one step unless it is there already, finishes it unless it is finished, then ends the turn (the session settles).
 */
async function work(agent: HostAgent & { status: 'idle' | 'running' }): Promise<void> {
  agent.status = 'running';
  fire('agent/status', { agent, status: 'running' });
  await sleep(spec.thinkMs ?? 50);
  const listed = await call(agent, 'todo', { action: 'list' });
  const key = /current Work is (\S+?)\./.exec(listed.message)?.[1];
  const results = [listed.code];
  if (listed.code === 'ok') {
    const step = listed.data?.find((item) => item.content === STEP);
    if (!step) results.push((await call(agent, 'todo', { action: 'create', steps: [{ title: STEP, status: 'in_progress' }] })).code);
    await sleep(spec.workMs ?? 100);
    if (step?.status !== 'completed') results.push((await call(agent, 'todo', { action: 'update', updates: [{ step: STEP, status: 'completed', resolution: '做完了，并在本地验证过。' }] })).code);
  }
  agent.status = 'idle';
  fire('agent/status', { agent, status: 'idle' });
  emit({ type: 'done', session: agent.id, work: key, results });
}

for (const { id, cwd } of spec.sessions) {
  const agent = {
    id,
    status: 'idle' as 'idle' | 'running',
    session: { id, header: { id, cwd }, append: () => undefined },
    inbox: { nextTurn: [], nextStep: [] },
    ctx: { tools: { restrict: () => () => undefined } },
    followup(message: UserMessageLike) {
      emit({ type: 'woken', session: id, text: message.content[0]?.text ?? '' });
      if (spec.mode === 'work') void work(agent).catch((error: unknown) => emit({ type: 'failed', session: id, error: error instanceof Error ? error.message : String(error) }));
    },
    inject: () => undefined,
    runMaintenance: <T>(job: (signal: AbortSignal) => Promise<T>) => job(new AbortController().signal),
  };
  agents.set(id, agent);
  fire('agent/created', { agent });
  fire('agent/status', { agent, status: 'idle' });
}

// Leadership, as this process sees it (a `lead` event whenever it changes).
const leading = new Map<string, boolean>();
const account = await host.runtime.account().catch(() => undefined);
const watch = setInterval(() => {
  for (const list of spec.lists ?? []) {
    const now = !!account && !!host.machinePoller?.leads(account, list);
    if (leading.get(list) === now) continue;
    leading.set(list, now);
    emit({ type: 'lead', list, leads: now });
  }
}, 100);
emit({ type: 'ready', account: account ?? null });

process.on('SIGTERM', () => {
  clearInterval(watch);
  void (async () => {
    for (const cleanup of cleanups) await cleanup();
    process.exit(0);
  })();
});
