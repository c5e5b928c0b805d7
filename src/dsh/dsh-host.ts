// Wires dsh events to the adapter's modules: live binding, list reads, panel, queue grant, continuation, crash
// recovery, poller and settle at idle. Holds no rules of its own.
import { randomUUID } from 'node:crypto';
import { TOOLS, type ToolContext, type ToolResult } from '../core/tools';
import type { WorkEngine } from '../core/engine/work-engine';
import { engineProvider, openRuntime, type Runtime } from '../wiring/runtime';
import type { AdapterDeps } from './adapter-deps';
import { messageOf } from '../runtime/session/runtime-deps';
import { AgentTracker, inBackground, type AgentTrack } from '../runtime/session/agent-tracker';
import { systemClock, type Clock } from '../runtime/session/clock';
import { Continuation, liveFacts } from '../runtime/turns/continuation';
import { DeskAskLoader, registerDeskSeams } from './desk-seams';
import { HostSeams } from './host-seams';
import { SeamWatch } from './seam-watch';
import { UsageMeter } from '../runtime/turns/usage-meter';
import type { CrashRecovery } from '../runtime/turns/crash-recovery';
import { IdleSettle } from '../runtime/turns/idle-settle';
import { ListSync } from '../runtime/session/list-sync';
import { LiveBinding } from '../runtime/session/live-binding';
import { Panel } from './panel';
import { startOutboxTimer } from '../runtime/session/outbox-timer';
import { SessionNotices } from '../runtime/phone/session-notices';
import { PhoneControl } from '../runtime/phone/phone-control';
import { Poller } from '../runtime/polling/poller';
import type { MachinePoller } from '../runtime/polling/machine-poller';
import type { pollSettingsOf } from '../store/config-schema';
import { PollSwitch } from './poll-switch';
import type { PollPace } from '../runtime/polling/poll-pace';
import { hostPortOf, optionalServices, type HostContext, type SlashInvocation, type SlashResult } from './ports';
import { textOf } from '../runtime/session/messages';
import type { HostAgent, PreStepArgs, PreStepDecision, RequestErrorArgs, SessionEvent, UserMessageLike } from '../runtime/session/session-ports';
import { promptFor, registerPrompt } from './prompt';
import { registerSlashCommand } from './slash-command-spec';
import type { SlashCommands } from './slash-commands';
import { QueueGrant } from '../runtime/turns/queue-grant';
import type { RowConfig } from './row-config';
import { StretchCounter } from '../runtime/session/stretch-counter';
import { bridgeTool, type AfterToolCall } from './tool-bridge';
import { toolContextFor } from './tool-context';
import { TurnMarkers } from '../runtime/turns/turn-markers';
import { changesBinding, stretchEventOf } from './tool-effects';

/** How long the first step of a turn waits for the session's attach (binding, recovery) to finish. */
const READY_WAIT_MS = 10_000;

export function log(line: string): void {
  process.stderr.write(`[dida-todo] ${line}\n`);
}

export interface HostOptions {
  clock?: Clock;
  /** Use this runtime instead of opening one from the row config. */
  runtime?: Runtime;
  /** Use this engine instead of one built over the runtime (tests). */
  engine?: () => Promise<WorkEngine>;
  newId?: () => string;
  /** This process's id and a liveness check, for crash recovery. */
  pid?: number;
  isAlive?: (pid: number) => boolean;
  /** This process's mark on the turns it opens (tests start two "processes" in one). */
  mark?: string;
  /** What this dsh lacks (the first-load layer's; by default one that keeps no report). */
  seams?: HostSeams;
}

export class DshHost {
  readonly runtime: Runtime;
  readonly engine: () => Promise<WorkEngine>;
  readonly tracker = new AgentTracker();
  private readonly lifetime = new AbortController();
  private readonly deps: AdapterDeps;
  readonly binding: LiveBinding;
  readonly markers: TurnMarkers;
  /** Crash recovery, loaded on first use (it is not needed for the first request). */
  private recovery: CrashRecovery | undefined;
  private recoveryLoad: Promise<CrashRecovery> | undefined;
  private readonly recoveryOptions: { pid?: number; isAlive?: (pid: number) => boolean; mark?: string };
  readonly poller: Poller;
  /** Whether this process polls for the machine, following config.yaml (poll-switch.ts). */
  private readonly polling: PollSwitch;
  private readonly counter: StretchCounter;
  private readonly sync: ListSync;
  private readonly panel: Panel;
  private readonly notices: SessionNotices;
  private readonly grant: QueueGrant;
  private readonly continuation: Continuation;
  private readonly settler: IdleSettle;
  private readonly phone: PhoneControl;
  private readonly meter: UsageMeter;
  /** dsh's own questions and approvals of sessions holding a Work, in Dida (desk-asks.ts). */
  readonly desk: DeskAskLoader;
  private slash: Promise<SlashCommands> | undefined;
  private readonly watch: SeamWatch;

  constructor(
    private readonly ctx: HostContext,
    private readonly config: RowConfig,
    options: HostOptions = {},
  ) {
    this.runtime =
      options.runtime ??
      openRuntime({
        ...(config.configPath ? { configPath: config.configPath } : {}),
        ...(config.stateDir ? { stateDir: config.stateDir } : {}),
        region: config.dida.region,
        ...(config.dida.baseUrl ? { baseUrl: config.dida.baseUrl } : {}),
        ...(config.dida.didaCommand ? { didaCommand: config.dida.didaCommand } : {}),
        timeoutMs: config.dida.timeoutMs,
        locale: config.locale,
        progressWindowMs: config.progressWindowSeconds * 1000,
        stopPhrases: config.stopPhrases,
        log,
      });
    this.engine = options.engine ?? engineProvider(this.runtime, log);
    this.deps = {
      ctx,
      host: hostPortOf(ctx),
      settings: config,
      state: this.runtime.state,
      config: this.runtime.config,
      locale: this.runtime.locale,
      engine: this.engine,
      tracker: this.tracker,
      clock: options.clock ?? systemClock,
      log,
      lifetime: this.lifetime.signal,
      newId: options.newId ?? randomUUID,
      seams: options.seams ?? new HostSeams({ log, version: undefined }),
    };
    this.watch = new SeamWatch(this.deps, this.deps.seams!);
    this.sync = new ListSync(this.deps);
    this.binding = new LiveBinding(this.deps, (track) => this.sync.start(track, 'session'));
    this.counter = new StretchCounter(this.deps);
    this.markers = new TurnMarkers(this.deps, options.pid, options.mark);
    // Each receiver falls back to this process (pid, liveness check, mark) for a value left undefined.
    this.recoveryOptions = { pid: options.pid, isAlive: options.isAlive, mark: options.mark };
    this.panel = new Panel(this.deps, () => this.binding.config);
    this.notices = new SessionNotices(this.deps, () => this.binding.config);
    this.grant = new QueueGrant(this.deps, () => this.config.queueTriggers);
    this.phone = new PhoneControl(this.deps, this.engine, this.counter, () => this.binding.config, this.notices);
    this.continuation = new Continuation(this.deps, this.counter, (track) => this.phone.lookForPause(track), (track) => this.meter.noteContinuation(track));
    this.poller = new Poller(this.deps, this.counter, () => this.phone.afterPoll());
    this.meter = new UsageMeter(this.deps);
    this.settler = new IdleSettle(this.deps, this.binding, this.markers, (track) => this.meter.flushed(track));
    this.polling = new PollSwitch(this.deps, { oneShot: optionalServices.isOneShot(ctx), refresh: () => this.binding.refresh(), create: () => this.makePoller() });
    const waitMinutes = () => (optionalServices.isOneShot(ctx) ? config.oneShotAnswerWaitMinutes : config.maxAnswerWaitMinutes);
    this.desk = new DeskAskLoader(this.deps, () => ({ engineDeps: async () => (await this.engine()).deps, waitMinutes, ...this.recoveryOptions }));
  }

  start(): void {
    const { ctx } = this;
    for (const tool of TOOLS) ctx.tools.register(this.bridged(tool.name));
    ctx.on('agent/created', ({ agent }: { agent: HostAgent }) => this.onCreated(agent));
    ctx.on('agent/status', ({ agent, status }: { agent: HostAgent; status: string }) => this.onStatus(agent, status));
    ctx.on('agent/inbox/inserted', ({ agent, message }: { agent: HostAgent; message: UserMessageLike }) => this.onInbox(agent, message));
    ctx.on('agent/disposed', ({ agent }: { agent: HostAgent }) => void this.release(agent.id));
    ctx.on('session/event', (session: { id: string }, event: SessionEvent) => this.onSessionEvent(session, event));
    ctx.on('agent/pre-step', (args: PreStepArgs, next: () => Promise<PreStepDecision>) => this.onPreStep(args, next));
    ctx.on('agent/request-error', (args: RequestErrorArgs, next: () => Promise<unknown>) => this.onRequestError(args, next));
    registerSlashCommand(ctx, this.config.locale, (invocation) => this.slashCommand(invocation));
    registerDeskSeams(ctx, async () => this.desk, log);
    this.begin();
    ctx.effect(() => () => this.dispose());
  }

  /** The bridged tool `name` (registered by start(), or by the plugin's first-load layer that hands calls over). */
  bridged(name: string) {
    const tool = TOOLS.find((t) => t.name === name);
    if (!tool) throw new Error(`no tool ${name}`);
    const after: AfterToolCall = (call) => this.afterToolCall(call);
    return bridgeTool(tool, (exec) => this.toolContext(exec.agent, exec.signal), after);
  }

  /**
   * What starts with the host: the prompt section (unless the first-load layer registered it and asks `promptText`),
   * config.yaml's first read, the poller and crash recovery.
   */
  begin(options: { prompt?: boolean } = {}): void {
    if (options.prompt !== false) registerPrompt(optionalServices.systemPrompt(this.ctx), this.tracker);
    // config.yaml is read right away, so a session created later knows its binding before its first prompt.
    void this.binding.refresh().then((settings) => {
      if (this.lifetime.signal.aborted) return;
      // Polling is on in long-lived profiles unless config.yaml (or the row) turns it off; a one-shot run never polls.
      this.polling.begin(settings);
      startOutboxTimer({ state: this.runtime.state, flush: async () => (await this.engine()).flushComments({ onlyDue: true }), progressWindowSeconds: this.config.progressWindowSeconds, lifetime: this.lifetime.signal, log });
      this.desk.sweepAtStart().catch((error: unknown) => log(`withdrawing the questions of ended sessions failed: ${messageOf(error)}`));
      this.crashRecovery()
        .then((recovery) => recovery.scanAtStart())
        .catch((error: unknown) => log(`resuming interrupted sessions failed: ${messageOf(error)}`));
    });
  }

  /** The machine's shared polling while this process takes part in it (machine-poller.ts). */
  get machinePoller(): MachinePoller | undefined {
    return this.polling.current;
  }

  /** Takes part in the machine's polling: one poller per account and list is elected among the machine's processes. */
  private async makePoller(): Promise<{ poller: MachinePoller; pace: (configured: ReturnType<typeof pollSettingsOf>) => PollPace }> {
    const [{ MachinePoller }, { pollPaceFrom }] = await Promise.all([import('../runtime/polling/machine-poller'), import('../runtime/polling/poll-pace')]);
    const poller = new MachinePoller(this.deps, this.poller, this.counter, {
      lockDir: this.runtime.paths.lockDir,
      account: () => this.runtime.account(),
      engine: this.engine,
      pid: this.recoveryOptions.pid,
      isAlive: this.recoveryOptions.isAlive,
      afterRead: () => this.phone.afterPoll(),
    });
    return { poller, pace: (configured) => pollPaceFrom(this.config, configured) };
  }



  /** The system prompt section's text for an agent (see prompt.ts). */
  promptText(agentId: string | undefined): string {
    return promptFor(this.tracker, agentId);
  }

  /**
   * A failed model request, after dsh's own retries. The mark of the person's messages is taken before anything is
   * awaited (the rest of the chain, or the first-load layer's `personWrote` taken before the host loaded), so a message
   * that arrives while the failure is still being handed over ends the backoff at once.
   */
  async onRequestError(args: RequestErrorArgs, next: () => Promise<unknown>, personWrote?: () => boolean): Promise<unknown> {
    const track = this.tracker.get(args.agent.id);
    this.watch.sawRequestError(track);
    const mark = track?.humanCount ?? 0;
    const wrote = () => (personWrote?.() ?? false) || (this.tracker.get(args.agent.id)?.humanCount ?? 0) !== mark;
    const upstream = await next();
    if (upstream) return upstream;
    return this.continuation.onRequestError(args, wrote);
  }

  /** Answers `/dida …` (see slash-commands.ts; loaded at the first command). */
  async slashCommand(invocation: SlashInvocation): Promise<SlashResult> {
    this.slash ??= import('./slash-commands').then(
      ({ SlashCommands }) =>
        new SlashCommands({
          deps: this.deps,
          runtime: this.runtime,
          engine: this.engine,
          binding: this.binding,
          counter: this.counter,
          track: async (agent) => {
            if (!this.tracker.get(agent.id)) this.onCreated(agent);
            const track = this.tracker.get(agent.id);
            await track?.ready;
            return track;
          },
        }),
    );
    return (await this.slash).answer(invocation);
  }

  /** Crash recovery, loaded once. */
  crashRecovery(): Promise<CrashRecovery> {
    this.recoveryLoad ??= import('../runtime/turns/crash-recovery').then(({ CrashRecovery }) => {
      this.recovery = new CrashRecovery(this.deps, { config: () => this.binding.config, ...this.recoveryOptions });
      return this.recovery;
    });
    return this.recoveryLoad;
  }

  /** The per-call tool context for an agent (undefined for non-agent callers; a refusal for subagents). */
  toolContext(agent: HostAgent | undefined, signal?: AbortSignal): ToolContext | ToolResult | undefined {
    return toolContextFor(this.tracker, this.runtime, this.engine, agent, signal);
  }

  private async afterToolCall(call: Parameters<AfterToolCall>[0]): Promise<void> {
    try {
      if (changesBinding(call)) await this.binding.refresh();
      const event = stretchEventOf(call);
      const id = call.exec.agent?.id;
      if (event && id) await this.counter.note(id, event);
      await this.phone.afterToolCall(call);
      await this.notices.afterToolCall(call);
      this.watch.noteSession(id ? this.tracker.get(id) : undefined);
    } catch (error) {
      log(`after ${call.tool}: ${messageOf(error)}`);
    }
  }

  onCreated(agent: HostAgent): void {
    try {
      const track = this.tracker.add(agent);
      this.binding.apply(track);
      if (track.subagent) return;
      track.ready = this.attach(track).catch((error: unknown) => log(`binding the session failed: ${messageOf(error)}`));
      inBackground(track, track.ready, log, 'binding the session');
    } catch (error) {
      log(`agent/created: ${messageOf(error)}`);
    }
  }

  /** Resolves the live binding (no Dida traffic when unbound), then lets crash recovery look at the session. */
  private async attach(track: AgentTrack): Promise<void> {
    await this.binding.refresh();
    if (track.binding) await this.markers.markLive(track);
    await (await this.crashRecovery()).onAttached(track);
  }

  onStatus(agent: HostAgent, status: string): void {
    // A restored session can show up through its first status rather than agent/created.
    if (!this.tracker.get(agent.id)) this.onCreated(agent);
    const track = this.tracker.get(agent.id);
    if (!track || track.subagent) return;
    if (status === 'running') {
      const open = async () => {
        await track.ready;
        await this.binding.refresh();
        if (track.binding) await this.markers.markOpen(track, liveFacts(this.deps, track));
      };
      inBackground(track, open(), log, 'recording the open turn');
      return;
    }
    if (status !== 'idle') return;
    track.queueGranted = false;
    track.grantPending = false;
    this.phone.onIdle(track);
    this.settler.onIdle(track);
  }

  onInbox(agent: HostAgent, message: UserMessageLike): void {
    if (message?.source?.kind !== 'user') return;
    const track = this.tracker.get(agent.id);
    if (!track || track.subagent) return;
    track.humanAt = this.deps.clock.now();
    track.humanCount += 1;
    track.humanSignal.abort(new Error('a person wrote'));
    track.humanSignal = new AbortController();
    this.recovery?.onHumanMessage(track.sessionId);
    // A person's message starts a turn: read the list once so their latest edits reach the panel and the tools.
    this.sync.start(track, 'turn');
    this.grant.onHumanMessage(track, textOf(message));
    inBackground(track, this.counter.note(track.sessionId, { kind: 'human_message' }), log, 'resetting the continuation counter');
    inBackground(track, this.binding.refresh(), log, 'reading config.yaml');
  }

  onSessionEvent(session: { id: string }, event: SessionEvent): void {
    const track = this.tracker.get(session.id);
    if (track) this.meter.observe(track, event);
    if (!track || track.subagent) return;
    this.panel.observe(track, event);
    if (event?.type === 'todo/write' && track.binding) inBackground(track, this.markers.noteFacts(track.sessionId, liveFacts(this.deps, track)), log, 'recording the open todo items');
    this.watch.observe(track, event);
    if (event?.type === 'turn/end') {
      const reason = String(event.data?.reason?.kind ?? '');
      inBackground(track, this.counter.note(track.sessionId, { kind: 'turn_end', reason }), log, 'resetting the continuation counter');
    }
  }

  /** Publishes the panel, then adds this turn's queue and pending notes to the step's messages. */
  async onPreStep(args: PreStepArgs, next: () => Promise<PreStepDecision>): Promise<PreStepDecision> {
    const track = this.tracker.get(args.agent.id);
    this.watch.sawPreStep(track);
    if (!track || track.subagent) return next();
    await Promise.race([track.ready, this.deps.clock.wait(READY_WAIT_MS, [this.lifetime.signal])]);
    // A pause found at this step is applied first, so the panel the step publishes already shows it.
    await this.phone.beforeStep(track, args);
    await this.panel.publish(track, args.turn);
    const decision = await next();
    if (decision.kind !== 'enter' || !Array.isArray(decision.messages) || decision.messages.length === 0) return decision;
    const extra = [...(await this.grant.messages(track)), ...track.pendingNotes.splice(0)];
    return extra.length ? { ...decision, messages: [...decision.messages, ...extra] } : decision;
  }

  /**
   * The session is disposed (it ended in a long-lived profile): what it was working on is released in Dida for other
   * sessions, with a word on how far it got.
   */
  async release(id: string): Promise<void> {
    const track = this.tracker.remove(id);
    if (!track) return;
    this.desk.released(id);
    await Promise.allSettled([...track.background]);
    if (!track.binding || track.subagent || this.lifetime.signal.aborted) return;
    try {
      const released = await (await this.engine()).releaseSession(id);
      if (released.length) log(`session ${id} ended with steps open: released ${released.join(', ')} for other sessions`);
      await this.markers.markGone(id);
    } catch (error) {
      log(`releasing the Works of session ${id} failed (their claims lapse after the lease): ${messageOf(error)}`);
    }
  }

  async dispose(): Promise<void> {
    this.lifetime.abort(new Error('dida-todo is unloading'));
    const pending: Promise<unknown>[] = [this.polling.close(), this.desk.settled()];
    pending.push(...this.tracker.all().flatMap((t) => [...t.background]));
    for (const track of this.tracker.all()) this.tracker.remove(track.sessionId);
    let bound: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled(pending), new Promise((resolve) => (bound = setTimeout(resolve, 5_000)).unref?.())]);
    clearTimeout(bound);
    await this.runtime.close();
  }
}
