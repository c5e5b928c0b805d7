// A fake dsh newer than 0.1.0-rc.8, as plugin authors' upgrade logs report 0.1.7 and 0.2.x (dsh-plugin-guide §0.5; none
// of it verified here), built over the rc.8 fake (dsh-host-fake.ts). Each difference names its source; "assumed" marks
// what no report says and the fake had to choose. `lacks` takes surfaces away, to see them reported as designed.
import fs from 'node:fs';
import path from 'node:path';
import { vi } from 'vitest';
import { fakeAgent, fakeHost, type FakeAgent } from './dsh-host-fake';
import { peerCheck, type InstallCheck } from './peer-range';

/** Surfaces a test may take away from the newer host. */
export type NewerLack = 'request-error' | 'pre-step' | 'followup' | 'commands' | 'inbox' | 'cancel';

export interface NewerHostOptions {
  /** The version it reports (default 0.2.0-rc.2, the public `latest` since early October per §0.5). */
  version?: string;
  lacks?: NewerLack[];
  /** Services besides the newer base's (headlessStartup for a one-shot run). */
  services?: Record<string, unknown>;
}

/**
 * §0.5, "Message source": the shared `{kind:'plugin'}` source is refused on write by one author's account (another's:
 * only deprecated). This fake takes the stricter account. Assumed: the refusal is a synchronous Error naming the source
 * kind, thrown by every way a message enters the session (followup, inject, append).
 */
export const PLUGIN_KIND_REFUSAL = 'user/message source kind "plugin" is no longer accepted; declare a MessageSourceMap kind of your own';

function refusePluginKind(message: unknown): void {
  const kind = (message as { source?: { kind?: unknown } } | undefined)?.source?.kind;
  if (kind === 'plugin') throw new Error(PLUGIN_KIND_REFUSAL);
}

export interface NewerAgent extends FakeAgent {
  /** Every user/message that entered the session (after the kind check), in order. */
  admitted: Array<{ id: string; source: { kind: string; [key: string]: unknown }; content: Array<{ text: string }> }>;
}

/**
 * Installs a stand-in `@deepseek-ai/dsh` of `version` under `dir` and returns the path of its `lib/bin.js`: the process
 * "started from" it (process.argv[1]) is how the bundle learns which dsh runs it, as with a real install.
 */
export function fakeDshInstall(dir: string, version: string): string {
  const pkg = path.join(dir, 'node_modules', '@deepseek-ai', 'dsh');
  fs.mkdirSync(path.join(pkg, 'lib'), { recursive: true });
  fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: '@deepseek-ai/dsh', version, type: 'module', bin: { dsh: 'lib/bin.js' } }));
  fs.writeFileSync(path.join(pkg, 'lib', 'bin.js'), '// stand-in\n');
  return path.join(pkg, 'lib', 'bin.js');
}

/** Runs `fn` as if this process was started from `bin` (restored afterwards). */
export function startedFrom<T>(bin: string, fn: () => T): T {
  const before = process.argv[1];
  process.argv[1] = bin;
  try {
    return fn();
  } finally {
    process.argv[1] = before as string;
  }
}

export function newerHost(options: NewerHostOptions = {}) {
  const version = options.version ?? '0.2.0-rc.2';
  const lacks = new Set(options.lacks ?? []);
  // The base bundle of a newer dsh offers what rc.8's does (§0.5, "Unchanged … ctx.commands.register, sessionProjections").
  const host = fakeHost({ ...(lacks.has('commands') ? { commands: undefined } : {}), ...options.services });
  const on = host.ctx.on.bind(host.ctx);
  // Listeners of surfaces this host lacks are accepted and never called (a missing seam is silent, as §0.5 warns).
  const silent = new Map<string, string>([
    ['agent/request-error', 'request-error'],
    ['agent/pre-step', 'pre-step'],
    ['agent/inbox/inserted', 'inbox'],
  ]);
  (host.ctx as { on: (event: string, listener: (...args: any[]) => any, prepend?: boolean) => () => unknown }).on = (event, listener, prepend) => {
    const lack = silent.get(event);
    if (lack && lacks.has(lack as NewerLack)) return () => undefined;
    return on(event, listener, prepend);
  };
  const has = (event: string) => (host.listeners.get(event)?.length ?? 0) > 0;

  /** A top-level agent of this host: its messages pass the kind check; a lacked method is absent. */
  function agent(id: string, header: Record<string, unknown>): NewerAgent {
    const base = fakeAgent(id, header) as NewerAgent;
    base.admitted = [];
    const admit = (message: any) => {
      refusePluginKind(message);
      base.admitted.push(message);
    };
    base.followup = vi.fn(admit);
    base.inject = vi.fn(admit);
    (base.session as { append: unknown }).append = vi.fn((type: string, data: unknown) => {
      if (type === 'user/message') admit(data);
      return { seq: 0 };
    });
    if (lacks.has('followup')) delete (base as { followup?: unknown }).followup;
    if (lacks.has('cancel')) delete (base as { cancel?: unknown }).cancel;
    host.agents.set(id, base);
    return base;
  }

  /** §0.5: `agent/session-start` was folded into `agent/created`. Assumed: the start's source rides on the payload. */
  function create(a: NewerAgent): void {
    host.emit('agent/created', { agent: a, source: 'startup' });
  }

  const event = (a: NewerAgent, type: string, data: unknown) => {
    if (has('session/event')) host.emit('session/event', { id: a.id }, { type, data });
  };

  /**
   * One turn of `steps` steps ending with `reason`. Each step: the pre-step waterfall (unless lacked), `step/start`, the
   * step's messages admitted. §0.5 reports a new durable `developer/message` event and `tool/result` reshaped to
   * `role: 'tool'` with top-level `toolCallId`/`isError` (V4): both are sent, and the bundle must take no notice.
   */
  async function turn(a: NewerAgent, turnNo: number, reason: Record<string, unknown>, opts: { steps?: number; messages?: any[]; failure?: Record<string, unknown> } = {}): Promise<any[]> {
    const entered: any[] = [];
    a.status = 'running';
    host.emit('agent/status', { agent: a, status: 'running' });
    event(a, 'turn/start', { turn: turnNo });
    event(a, 'developer/message', { turn: turnNo, content: [{ type: 'text', text: 'runtime context' }] });
    for (let step = 1; step <= (opts.steps ?? 1); step++) {
      const messages = step === 1 ? (opts.messages ?? []) : [];
      let decision: { kind: string; messages?: any[] } = { kind: 'enter', messages };
      if (!lacks.has('pre-step') && has('agent/pre-step')) decision = await host.waterfall('agent/pre-step', { agent: a, turn: turnNo, step, messages }, async () => ({ kind: 'enter', messages }));
      event(a, 'step/start', { turn: turnNo, step });
      for (const message of decision.messages ?? []) {
        (a.session.append as (type: string, data: unknown, options: unknown) => unknown)('user/message', message, { surfaceOp: 'append' });
        event(a, 'user/message', message);
        entered.push(message);
      }
      event(a, 'tool/result', { turn: turnNo, step, role: 'tool', toolCallId: `call-${step}`, isError: false, content: [{ type: 'text', text: 'ok' }] });
      event(a, 'step/end', { turn: turnNo, step });
    }
    if (opts.failure && !lacks.has('request-error') && has('agent/request-error')) {
      await host.waterfall('agent/request-error', { agent: a, turn: turnNo, step: 1, failure: opts.failure, signal: new AbortController().signal });
    }
    event(a, 'turn/end', { turn: turnNo, reason });
    a.status = 'idle';
    host.emit('agent/status', { agent: a, status: 'idle' });
    return entered;
  }

  /** A person's message: queued (agent/inbox/inserted, unless lacked), then admitted when a turn claims it. */
  function personWrites(a: NewerAgent, text: string, id = `human-${Math.random().toString(36).slice(2)}`) {
    const message = { id, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } };
    if (!lacks.has('inbox') && has('agent/inbox/inserted')) host.emit('agent/inbox/inserted', { agent: a, message });
    return message;
  }

  /** §0.5, "Peer ranges enforced" (from 0.1.7): the install and boot check of a plugin's manifest. */
  function install(manifest: Record<string, any>): InstallCheck {
    return peerCheck(manifest, version);
  }

  return { ...host, version, lacks, agent, create, turn, personWrites, install, event };
}
