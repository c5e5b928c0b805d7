// The plugin's first load: registers the tools and the hooks, and loads the rest (the engine, the Dida client, zod and
// yaml) only once a session may be bound, a tool is called, or something has to run at start.
import { readFileSync, statSync } from 'node:fs';
import { SETUP_DESCRIPTION, SETUP_PARAMETERS, TODO_DESCRIPTION, TODO_PARAMETERS, TODO_WORK_DESCRIPTION, TODO_WORK_PARAMETERS } from '../core/tools/tool-specs';
import { renderResult, type ParameterSpec, type ToolResult } from '../core/tools/tool-types';
import { processAlive } from '../common/process-alive';
import { detectQueueGrant } from '../core/queue/queue-trigger';
import { mayHoldInterruptedTurn } from '../core/continuation/recovery-window';
import { resolvePaths } from '../store/paths';
import { peekConfig, peekMayBind, type ConfigPeek } from '../store/config-peek';
import { peekState, type StatePeek } from '../store/state-peek';
import { isSubagent } from '../runtime/session/agent-tracker';
import { PROMPT_SECTION_NAME, PROMPT_SECTION_ORDER } from './prompt';
import { registerSlashCommand } from './slash-command-spec';
import { registerDeskSeams } from './desk-seams';
import { SYSTEM_PROMPT_SECTION } from './prompt-text';
import type { DshHost } from './dsh-host';
import { ANNOUNCE_AFTER_MS, HostSeams, type SeamId } from './host-seams';
import { optionalServices, type HostContext, type HostToolDefinition } from './ports';
import { isPersonSource, onOwnKindRefused, textOf } from '../runtime/session/messages';
import type { HostAgent, PreStepArgs, PreStepDecision, RequestErrorArgs, SessionEvent, ToolExecution, UserMessageLike } from '../runtime/session/session-ports';
import type { RowConfig } from './row-config';
import { toJsonSchema } from './tool-bridge';

const TOOL_SPECS: ReadonlyArray<{ name: string; description: string; parameters: Record<string, ParameterSpec> }> = [
  { name: 'todo', description: TODO_DESCRIPTION, parameters: TODO_PARAMETERS },
  { name: 'todo_work', description: TODO_WORK_DESCRIPTION, parameters: TODO_WORK_PARAMETERS },
  { name: 'dida_todo_setup', description: SETUP_DESCRIPTION, parameters: SETUP_PARAMETERS },
];
/** What an unbound session is not shown; a subagent is shown none of the tools (as the full host does). */
const BOUND_ONLY_TOOLS = ['todo', 'todo_work'];
const ALL_TOOLS = TOOL_SPECS.map((t) => t.name);

function log(line: string): void {
  process.stderr.write(`[dida-todo] ${line}\n`);
}

/** At most this many ids of a person's messages are kept between dsh queueing them and admitting them. */
const INBOX_IDS_MAX = 500;

/**
 * Stands in for the full host until it is needed: every hook is registered at once (dsh allows no later
 * registration of tools), and while no session can be bound each hook does nothing but let dsh go on. The full host
 * is loaded when a session's directory may be bound (config.yaml names it or a parent of it), when a tool is called,
 * when a model request fails, or at start when a crashed session may need resuming; from then on every hook is handed over,
 * and the sessions seen so far are introduced to it.
 */
export class LazyHost {
  private host: DshHost | undefined;
  private loading: Promise<DshHost> | undefined;
  private disposed = false;
  private readonly seen = new Map<string, HostAgent>();
  private readonly lifts = new Map<string, () => void>();
  /** Each session's last todo/write (the model's own todos count as unfinished work for continuation). */
  private readonly todos = new Map<string, { session: { id: string }; event: SessionEvent }>();
  /**
   * Bound sessions of a one-shot run whose host is put off until their first Dida need (see `defers`), with the
   * person's messages they got meanwhile (handed to the host when it loads).
   */
  private readonly deferred = new Map<string, UserMessageLike[]>();
  private config: { file: string; mtimeMs: number; size: number; peek: ConfigPeek } | undefined;
  /** The person's messages per session, counted as they arrive (before the host loads or hears them). */
  private readonly humanCounts = new Map<string, number>();
  /** The host's sessions whose binding it has resolved (its prompt answer then stands). */
  private readonly bindingKnown = new WeakSet<object>();
  private readonly paths: ReturnType<typeof resolvePaths>;
  /** What this dsh lacks of the surfaces the bundle uses (host-seams.ts). */
  readonly seams: HostSeams;
  /** Ids of a person's messages dsh queued (agent/inbox/inserted) and has not admitted yet. */
  private readonly inboxIds = new Set<string>();
  private announceTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly ctx: HostContext,
    private readonly row: RowConfig,
  ) {
    this.paths = resolvePaths(process.env, { configPath: row.configPath, stateDir: row.stateDir });
    this.seams = new HostSeams({ stateDir: this.paths.stateDir, log });
  }

  /** Registers everything; a surface this dsh lacks or shapes differently is told (host-seams.ts), never thrown. */
  start(): void {
    const { ctx, seams } = this;
    onOwnKindRefused(() => seams.lack('ownKind', "dsh refused the bundle's own message kind; its messages carry the shared plugin kind from now on"));
    for (const spec of TOOL_SPECS) this.guard('tools', () => ctx.tools.register(this.tool(spec)));
    this.listen('agent/created', ({ agent }: { agent: HostAgent }) => {
      this.firstAgent(agent);
      this.onAgent(agent, (h) => h.onCreated(agent));
    });
    this.listen('agent/status', ({ agent, status }: { agent: HostAgent; status: string }) => this.onAgent(agent, (h) => h.onStatus(agent, status)));
    this.listen('agent/inbox/inserted', ({ agent, message }: { agent: HostAgent; message: UserMessageLike }) => this.onInbox(agent, message, 'event'), 'inbox');
    this.listen('agent/disposed', ({ agent }: { agent: HostAgent }) => {
      this.forget(agent.id);
      this.when((h) => void h.release(agent.id));
    });
    this.listen('session/event', (session: { id: string }, event: SessionEvent) => {
      this.admitted(session, event);
      if (!this.host && !this.loading && event?.type === 'todo/write') this.todos.set(session.id, { session, event });
      this.when((h) => h.onSessionEvent(session, event));
    });
    this.listen(
      'agent/pre-step',
      async (args: PreStepArgs, next: () => Promise<PreStepDecision>) => {
        for (const message of args?.messages ?? []) this.unqueued(args.agent, message, 'claimed');
        const host = await this.current();
        return host ? host.onPreStep(args, next) : next();
      },
      'preStep',
    );
    // A failed model request may be continued in any session (bound or not): the host loads for it. The person's mark
    // is taken before the load is awaited, so a message written meanwhile ends the backoff at once.
    this.listen(
      'agent/request-error',
      async (args: RequestErrorArgs, next: () => Promise<unknown>) => {
        const id = args.agent.id;
        const mark = this.humanCounts.get(id) ?? 0;
        return (await this.load()).onRequestError(args, next, () => (this.humanCounts.get(id) ?? 0) !== mark);
      },
      'requestError',
    );
    this.guard('systemPrompt', () => this.registerPromptSection());
    // dsh asking the person: a session the host serves may hold a Work; any other passes straight through.
    this.guard('approval', () => registerDeskSeams(ctx, async () => (this.loading ? (await this.loading).desk : undefined), log, (id, detail) => seams.lack(id, detail)));
    // `/dida …` (web only): the person asked, so the host loads for it.
    this.guard('commands', () => registerSlashCommand(ctx, this.row.locale, async (invocation) => (await this.load()).slashCommand(invocation), (detail) => seams.lack('commands', detail)));
    this.guard('events', () => ctx.effect(() => () => this.dispose()));
    this.announceTimer = setTimeout(() => seams.announce(ctx), ANNOUNCE_AFTER_MS);
    this.announceTimer.unref?.();
    if (this.neededAtStart()) void this.load().catch((error: unknown) => log(`starting failed: ${error instanceof Error ? error.message : String(error)}`));
  }

  /** Runs one registration; one that throws means this dsh lacks (or shapes differently) the surface `seam`. */
  private guard(seam: SeamId, register: () => unknown): void {
    try {
      register();
    } catch (error) {
      this.seams.lack(seam, error instanceof Error ? error.message : String(error));
    }
  }

  private listen(event: string, listener: (...args: any[]) => unknown, seam: SeamId = 'events'): void {
    this.guard(seam, () => this.ctx.on(event, listener));
  }

  /** The prompt section, now or once dsh provides its system prompt service. */
  private registerPromptSection(): void {
    type Sections = { section?: (s: { name: string; order: number; text: (c: { agent?: { id: string } }) => string }) => unknown } | undefined;
    const register = (service: Sections) => {
      if (typeof service?.section !== 'function') return false;
      service.section({ name: PROMPT_SECTION_NAME, order: PROMPT_SECTION_ORDER, text: (context) => this.promptText(context.agent?.id) });
      return true;
    };
    if (!register(this.ctx.get('systemPrompt') as Sections)) this.ctx.inject?.(['systemPrompt'], (sub) => this.guard('systemPrompt', () => register(sub.get('systemPrompt') as Sections)));
  }

  /** The first top-level session: what dsh lets the bundle do with it, and the start report (services are in by now). */
  private firstAgent(agent: HostAgent): void {
    if (!agent || isSubagent(agent)) return;
    this.seams.probeAgent(agent);
    clearTimeout(this.announceTimer);
    this.seams.announce(this.ctx);
  }

  /** A person's message dsh admitted (the last place one it never queued can be noticed); its id is done with. */
  private admitted(session: { id: string }, event: SessionEvent): void {
    const message = event?.type === 'user/message' ? (event.data as UserMessageLike | undefined) : undefined;
    const agent = message ? (this.seen.get(session.id) ?? (this.ctx.agents.get(session.id) as HostAgent | undefined)) : undefined;
    if (message && agent && !this.unqueued(agent, message, 'admitted')) this.inboxIds.delete(message.id);
  }

  /**
   * A person's message a step claims or dsh admits that never came through agent/inbox/inserted: this dsh lacks that
   * event, and the message is taken as the person's now (at the step that claims it, as the event would have been).
   */
  private unqueued(agent: HostAgent, message: UserMessageLike, how: 'claimed' | 'admitted'): boolean {
    if (!agent || typeof message?.id !== 'string' || !isPersonSource(message.source) || this.inboxIds.has(message.id)) return false;
    this.seams.lack('inbox', `a person's message in session ${agent.id} was ${how} without it`);
    this.onInbox(agent, message, how);
    return true;
  }

  /** Whether the full host was loaded (or is loading). */
  get loaded(): boolean {
    return this.loading !== undefined;
  }

  /** The full host, loading it on first use. */
  load(): Promise<DshHost> {
    this.loading ??= import('./dsh-host').then(({ DshHost }) => {
      const host = new DshHost(this.ctx, this.row, { seams: this.seams });
      host.begin({ prompt: false });
      for (const agent of this.seen.values()) {
        // A one-shot session that went without the host reads no list now: what loads it reads what it needs.
        if (this.deferred.has(agent.id)) host.tracker.add(agent).noListReads = true;
        // The restriction placed here is handed over as the host's own, so the session's tools do not flicker.
        const lift = this.lifts.get(agent.id);
        if (lift) {
          const track = host.tracker.add(agent);
          track.liftRestriction = lift;
          track.restriction = isSubagent(agent) ? 'subagent' : 'unbound';
        }
        host.onCreated(agent);
      }
      this.lifts.clear();
      for (const { session, event } of this.todos.values()) host.onSessionEvent(session, event);
      this.todos.clear();
      // A session whose host was put off: what it missed meanwhile (its person's messages, a turn already running).
      for (const [id, messages] of this.deferred) {
        const agent = this.seen.get(id);
        if (!agent) continue;
        for (const message of messages) host.onInbox(agent, message);
        if (agent.status === 'running') host.onStatus(agent, 'running');
      }
      this.deferred.clear();
      this.host = host;
      if (this.disposed) void host.dispose();
      return host;
    });
    return this.loading;
  }

  /** The host when it is loaded or loading (the load sets both); undefined while nothing needs it. */
  private async current(): Promise<DshHost | undefined> {
    return this.loading;
  }

  /** Runs `fn` on the host now, after it loads, or not at all while it is not needed. */
  private when(fn: (host: DshHost) => void): void {
    if (this.host) fn(this.host);
    else if (this.loading) void this.loading.then(fn, () => undefined);
  }

  private onAgent(agent: HostAgent, fn: (host: DshHost) => void): void {
    if (this.host || this.loading) {
      this.when(fn);
      return;
    }
    if (this.seen.has(agent.id)) return;
    this.seen.set(agent.id, agent);
    const subagent = isSubagent(agent);
    const cwd = agent.session?.header?.cwd;
    if (!subagent && cwd && this.mayBeBound(cwd)) {
      if (this.defers()) this.deferred.set(agent.id, []);
      else void this.load().catch((error: unknown) => log(`loading failed: ${error instanceof Error ? error.message : String(error)}`));
      return;
    }
    // As the full host does: an unbound session sees only dida_todo_setup, a subagent none of the tools.
    const tools = agent.ctx?.tools;
    if (!tools) return;
    try {
      this.lifts.set(agent.id, tools.restrict({ deny: subagent ? ALL_TOOLS : BOUND_ONLY_TOOLS }));
    } catch (error) {
      log(`could not hide the Dida tools from session ${agent.id}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** A person's message: handed to the host, or kept for it while the session's host is put off (the queue phrase loads it). */
  private onInbox(agent: HostAgent, message: UserMessageLike, how: 'event' | 'claimed' | 'admitted'): void {
    if (isPersonSource(message?.source)) {
      this.humanCounts.set(agent.id, (this.humanCounts.get(agent.id) ?? 0) + 1);
      if (how !== 'admitted' && typeof message.id === 'string') this.rememberInbox(message.id, how === 'event');
    }
    const kept = this.host || this.loading ? undefined : this.deferred.get(agent.id);
    if (!kept) {
      this.when((h) => h.onInbox(agent, message));
      return;
    }
    if (!isPersonSource(message?.source)) return;
    kept.push(message);
    if (detectQueueGrant(textOf(message), this.row.queueTriggers)) void this.load().catch((error: unknown) => log(`loading failed: ${error instanceof Error ? error.message : String(error)}`));
  }

  /**
   * Whether a bound session may go without the host until its first Dida need — a tool call, the queue phrase, a
   * failed model request. Only in a one-shot run (it ends with its turn, so the list read a turn starts with serves
   * nothing but the panel and the next tool, which reads it itself), and only while the state asks for nothing at
   * the turn's start: no turn crash recovery could take over, no Work waiting for the person or holding their answer,
   * no progress comment waiting to be posted, no create of unknown outcome. A state it cannot read loads the host.
   */
  private defers(): boolean {
    if (!optionalServices.isOneShot(this.ctx)) return false;
    const state = peekState(this.paths.stateFile);
    if (interruptedTurnMayWait(state)) return false;
    for (const [name, mark] of [['outbox', '"workKey"'], ['pendingCreates', '"marker"']] as const) {
      const section = state.section(name, mark);
      if (!section.known || !isEmpty(section.value)) return false;
    }
    return !state.mentions(['"waiting":{', '"pendingAnswer":{']);
  }

  /**
   * The prompt section for an agent: the host's answer once it knows the session's binding; until then (dsh may build
   * the first request while the host still loads) config.yaml's text decides.
   */
  private promptText(agentId: string | undefined): string {
    const fromHost = this.host?.promptText(agentId) ?? '';
    if (fromHost || !agentId) return fromHost;
    // Once the host has resolved the session's binding its "none" stands (config.yaml may be of a form the cheap
    // reader is not sure of, which would show the rules to every session).
    const track = this.host?.tracker.get(agentId);
    if (track) {
      if (this.bindingKnown.has(track)) return '';
      void track.ready.then(() => this.bindingKnown.add(track));
    }
    const agent = this.seen.get(agentId) ?? (this.ctx.agents.get(agentId) as HostAgent | undefined);
    const cwd = agent?.session?.header?.cwd;
    return agent && !isSubagent(agent) && cwd && this.mayBeBound(cwd) ? SYSTEM_PROMPT_SECTION : '';
  }

  /** Keeps the id of a queued message of a person until dsh admits it (the oldest go first beyond INBOX_IDS_MAX). */
  private rememberInbox(id: string, byEvent: boolean): void {
    if (byEvent) this.seams.present('inbox');
    this.inboxIds.add(id);
    if (this.inboxIds.size > INBOX_IDS_MAX) this.inboxIds.delete(this.inboxIds.values().next().value as string);
  }

  private forget(id: string): void {
    this.seen.delete(id);
    this.humanCounts.delete(id);
    this.todos.delete(id);
    this.deferred.delete(id);
    const lift = this.lifts.get(id);
    this.lifts.delete(id);
    try {
      lift?.();
    } catch {
      // The agent's scope is already gone, and its restriction with it.
    }
  }

  private tool(spec: (typeof TOOL_SPECS)[number]): HostToolDefinition {
    return {
      name: spec.name,
      description: spec.description,
      parameters: toJsonSchema(spec.parameters),
      output: { schema: {}, render: (_args, value: ToolResult) => [{ type: 'text', text: renderResult(value) }] },
      execute: async (args: unknown, exec: ToolExecution) => (await this.load()).bridged(spec.name).execute(args, exec),
    };
  }

  /**
   * Whether config.yaml may bind `cwd`: it names the directory or one of its parents, or it is written in a form the
   * cheap reader (src/store/config-peek.ts, no YAML parser) is not sure of. A false "maybe" only loads the host; a
   * false "no" cannot happen for a file the config parser accepts (docs/decisions/0063).
   */
  private mayBeBound(cwd: string): boolean {
    const peek = this.configPeek();
    return peek !== undefined && peekMayBind(peek, cwd);
  }

  /** The cheap reading of config.yaml, read again when the file changed; undefined when there is none. */
  private configPeek(): ConfigPeek | undefined {
    const file = this.paths.configFile;
    try {
      const { mtimeMs, size } = statSync(file);
      if (this.config?.file !== file || this.config.mtimeMs !== mtimeMs || this.config.size !== size) this.config = { file, mtimeMs, size, peek: peekConfig(readFileSync(file, 'utf8')) };
      return this.config.peek;
    } catch {
      // No config.yaml (or it cannot be read): no directory is bound.
      return undefined;
    }
  }

  /**
   * Whether something must run before any session shows up: crash recovery, when a turn of this machine was cut off
   * within its window by a process that is gone (it resumes sessions that are not live yet). Polling needs no early
   * start: it only polls bound sessions, and each of those loads the host. A state this cannot read with certainty
   * loads the host (the host then reads it properly).
   */
  private neededAtStart(): boolean {
    return this.row.maxAutoContinue > 0 && interruptedTurnMayWait(peekState(this.paths.stateFile));
  }

  private async dispose(): Promise<void> {
    this.disposed = true;
    clearTimeout(this.announceTimer);
    for (const id of [...this.lifts.keys()]) this.forget(id);
    if (this.host) await this.host.dispose();
  }
}

/** Nothing in it: absent, or an array or object without entries (anything else, null included, is not sure to be empty). */
function isEmpty(value: unknown): boolean {
  return value === undefined || (typeof value === 'object' && value !== null && Object.keys(value).length === 0);
}

/** Whether the state may hold a turn crash recovery could still resume (one it cannot read may). */
function interruptedTurnMayWait(state: StatePeek): boolean {
  const sessions = state.section('sessions', '"turnOpenSince"');
  return !sessions.known || mayHoldInterruptedTurn(sessions.value, Date.now(), processAlive);
}
