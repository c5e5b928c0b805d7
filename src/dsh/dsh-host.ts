// Wires dsh events to the engine: binding, background sync, settle at idle, continuation, panel, prompt, poller.
import { randomUUID } from 'node:crypto';
import { continuationMessage, decideContinuation, RECOVERY_MESSAGE, shouldRecoverCrash, waitUnlessAborted } from '../core/continuation-policy';
import { detectQueueGrant } from '../core/queue-policy';
import { fenceUntrusted, UNTRUSTED_PREAMBLE } from '../core/text-guard';
import { TOOLS, panelItems, type ToolContext, type ToolResult } from '../core/tools';
import { SETTLED, visibleSteps } from '../core/work-state';
import type { WorkEngine } from '../core/work-engine';
import { findBinding, type DidaTodoConfig } from '../store/config-store';
import { engineProvider, openRuntime, type Runtime } from '../wiring/runtime';
import { AgentTracker, inBackground, type AgentTrack } from './agent-tracker';
import type { HostAgent, HostContext, LlmFailureLike, SessionEvent, SystemPromptService, UserMessageLike, GoalsService } from './host-types';
import type { RowConfig } from './row-config';
import { bridgeTool } from './tool-bridge';
import { SYSTEM_PROMPT_SECTION } from './prompt-text';

const PLUGIN = 'dida-todo';
const SETTLE_BUDGET_MS = 60_000;
/** How long the first step of a turn waits for the sync a person's message started. */
const PANEL_SYNC_WAIT_MS = 5_000;
/** The session's first read also serves a turn starting within this long; later turns read again. */
const SESSION_SYNC_REUSE_MS = 5_000;

export function log(line: string): void {
  process.stderr.write(`[dida-todo] ${line}\n`);
}

function pluginMessage(text: string, form: 'notice' | 'instructions' = 'notice'): UserMessageLike {
  return Object.freeze({
    id: randomUUID(),
    role: 'user' as const,
    content: Object.freeze([Object.freeze({ type: 'text' as const, text })]),
    source: Object.freeze({ kind: 'plugin', plugin: PLUGIN, form }),
  });
}

function textOf(message: { content?: ReadonlyArray<{ type: string; text?: string }> } | undefined): string {
  return (message?.content ?? []).filter((b) => b.type === 'text').map((b) => b.text ?? '').join('');
}

export class DshHost {
  readonly runtime: Runtime;
  readonly engine: () => Promise<WorkEngine>;
  readonly tracker = new AgentTracker();
  private disposed = false;
  private pollTimer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly ctx: HostContext,
    private readonly config: RowConfig,
  ) {
    this.runtime = openRuntime({
      ...(config.configPath ? { configPath: config.configPath } : {}),
      ...(config.stateDir ? { stateDir: config.stateDir } : {}),
      region: config.dida.region,
      ...(config.dida.baseUrl ? { baseUrl: config.dida.baseUrl } : {}),
      ...(config.dida.didaCommand ? { didaCommand: config.dida.didaCommand } : {}),
      timeoutMs: config.dida.timeoutMs,
      locale: config.locale,
      log,
    });
    this.engine = engineProvider(this.runtime, log);
  }

  start(): void {
    const { ctx } = this;
    // config.yaml is read right away (below), so a session created later knows its binding before its first prompt.
    for (const tool of TOOLS) ctx.tools.register(bridgeTool(tool, (exec) => this.toolContext(exec.agent, exec.signal)));

    ctx.on('agent/created', ({ agent }: { agent: HostAgent }) => this.onCreated(agent));
    ctx.on('agent/status', ({ agent, status }: { agent: HostAgent; status: string }) => this.onStatus(agent, status));
    ctx.on('agent/inbox/inserted', ({ agent, message }: { agent: HostAgent; message: UserMessageLike }) => this.onInbox(agent, message));
    ctx.on('agent/disposed', ({ agent }: { agent: HostAgent }) => void this.release(agent.id));
    ctx.on('session/event', (session: { id: string }, event: SessionEvent) => this.onSessionEvent(session, event));
    ctx.on('agent/pre-step', async (args: { agent: HostAgent; turn: number }, next: () => Promise<unknown>) => {
      await this.publishPanel(args.agent, args.turn);
      return next();
    });
    ctx.on('agent/request-error', async (args: { agent: HostAgent; failure: LlmFailureLike; signal?: AbortSignal }, next: () => Promise<unknown>) => {
      const upstream = await next();
      if (upstream) return upstream;
      return this.onRequestError(args);
    });

    const prompt = ctx.get('systemPrompt') as SystemPromptService | undefined;
    prompt?.section({
      name: 'dida-todo',
      order: 450,
      text: (context) => {
        const track = context.agent ? this.tracker.get(context.agent.id) : undefined;
        return track?.binding && !track.subagent ? SYSTEM_PROMPT_SECTION : '';
      },
    });

    // Polling is on when the plugin row or config.yaml turns it on; config.yaml's interval wins when it sets one.
    void this.refreshConfig().then((settings) => {
      if (this.disposed) return;
      const enabled = this.config.poll || settings?.poll?.enabled === true;
      if (!enabled) return;
      const minutes = settings?.poll?.enabled ? settings.poll.intervalMinutes : this.config.pollIntervalMinutes;
      this.pollTimer = setInterval(() => void this.poll(), minutes * 60_000);
      this.pollTimer.unref?.();
    });
    ctx.effect(() => () => this.dispose());
  }

  /** The per-call tool context for an agent (undefined for non-agent callers; a refusal for subagents). */
  toolContext(agent: HostAgent | undefined, signal?: AbortSignal): ToolContext | ToolResult | undefined {
    if (!agent) return undefined;
    const track = this.tracker.get(agent.id) ?? this.tracker.add(agent);
    if (track.subagent) {
      return {
        code: 'invalid_argument',
        message: 'The Dida tools belong to the main session; a subagent reports its results to its parent, which updates the Dida steps.',
      };
    }
    return {
      sessionId: agent.id,
      cwd: track.cwd,
      queueGranted: track.queueGranted,
      config: this.runtime.config,
      engine: this.engine,
      gateway: () => this.runtime.gateway(),
      tokenSource: () => this.runtime.tokenSource(),
      ...(signal ? { signal } : {}),
    };
  }

  private latestConfig: DidaTodoConfig | undefined;

  private refreshConfig(): Promise<DidaTodoConfig | undefined> {
    return this.runtime.config.read().then(
      (config) => (this.latestConfig = config),
      (error: unknown) => {
        log(error instanceof Error ? error.message : String(error));
        return undefined;
      },
    );
  }

  private onCreated(agent: HostAgent): void {
    try {
      const track = this.tracker.add(agent);
      if (track.subagent) return;
      if (this.latestConfig) track.binding = findBinding(this.latestConfig, track.cwd);
      track.ready = this.attach(track).catch((error: unknown) => log(`binding the session failed: ${error instanceof Error ? error.message : String(error)}`));
      inBackground(track, track.ready, log, 'binding the session');
    } catch (error) {
      log(`agent/created: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** Resolves the binding (no Dida traffic when unbound), syncs in the background, notes a crash-interrupted turn. */
  private async attach(track: AgentTrack): Promise<void> {
    // onInbox replaces this signal when a person writes; a message during the reads below must win over recovery.
    const humanAtStart = track.humanSignal;
    const config = await this.refreshConfig();
    if (config) track.binding = findBinding(config, track.cwd);
    if (!track.binding) return;
    const session = (await this.runtime.state.read()).sessions[track.sessionId];
    if (shouldRecoverCrash(session?.turnOpenSince, Date.now()) && track.humanSignal === humanAtStart) {
      track.recoverPending = true;
      setTimeout(() => this.recover(track), 0).unref?.();
    }
    // The first sync runs in the background: a failing or slow Dida never blocks the session.
    this.startSync(track, 'session');
  }

  /**
   * Reads the bound list. The read started with the session also serves the session's first turn (a one-shot run
   * reads the list once); every later human turn reads it again so the person's latest edits show up.
   */
  private startSync(track: AgentTrack, origin: 'session' | 'turn'): void {
    const binding = track.binding;
    if (!binding) return;
    const fresh = track.sessionSync && Date.now() - track.sessionSync.startedAt < SESSION_SYNC_REUSE_MS;
    if (origin === 'turn' && fresh && track.sessionSync) {
      track.syncing = track.sessionSync.promise;
      track.sessionSync = undefined;
      return;
    }
    // A turn that started before the session's read was set up already read the list.
    if (origin === 'session' && track.turnSyncStarted) return;
    const sync = this.engine().then((engine) => engine.sync(binding.projectId));
    inBackground(track, sync, log, 'syncing the bound Dida list (will retry later)');
    if (origin === 'session') track.sessionSync = { promise: sync, startedAt: Date.now() };
    else {
      track.syncing = sync;
      track.turnSyncStarted = true;
    }
  }

  private onStatus(agent: HostAgent, status: string): void {
    let track = this.tracker.get(agent.id);
    if (!track) {
      // A restored session can show up through its first status rather than agent/created.
      this.onCreated(agent);
      track = this.tracker.get(agent.id);
    }
    if (!track || track.subagent) return;
    const bound = track;
    if (status === 'running') {
      inBackground(track, track.ready.then(() => (bound.binding ? this.markTurnOpen(bound.sessionId, true) : undefined)), log, 'recording the open turn');
      return;
    }
    if (status !== 'idle') return;
    track.queueGranted = false;
    if (track.recoverPending) {
      this.recover(track);
      return;
    }
    const settle = async () => {
      await track.ready;
      if (!track.binding) return;
      await this.markTurnOpen(track.sessionId, false);
      const engine = await this.engine();
      const results = await engine.settle(track.sessionId);
      for (const { outcome } of results) if (outcome.status === 'failed') log(`sending for review failed (will retry): ${outcome.message}`);
    };
    // Run as agent maintenance so one-shot hosts (headless) wait for it before exiting.
    const bounded = () => Promise.race([settle(), new Promise<void>((resolve) => setTimeout(resolve, SETTLE_BUDGET_MS).unref?.())]);
    try {
      if (agent.runMaintenance) {
        inBackground(track, agent.runMaintenance(() => bounded()), log, 'settling the session');
        return;
      }
    } catch {
      // The agent already has other work queued; settle in the background instead.
    }
    inBackground(track, bounded(), log, 'settling the session');
  }

  private async markTurnOpen(sessionId: string, open: boolean): Promise<void> {
    await this.runtime.state.update((state) => {
      const session = (state.sessions[sessionId] ??= { touched: [], autoAttempts: 0, updatedAt: 0 });
      if (open) session.turnOpenSince ??= Date.now();
      else delete session.turnOpenSince;
      session.updatedAt = Date.now();
    });
  }

  /** Resumes a crash-interrupted turn once: re-arms a disarmed goal, or sends a follow-up. */
  private recover(track: AgentTrack): void {
    if (!track.recoverPending || this.disposed) return;
    const agent = track.agent;
    if (agent.status !== 'idle') return;
    track.recoverPending = false;
    const goals = this.ctx.get('goals') as GoalsService | undefined;
    const goal = goals?.get(agent);
    try {
      if (goal && goal.phase === 'active' && goal.activation === 'disarmed') {
        goals?.resume(agent, { id: goal.id, revision: goal.revision });
      } else {
        agent.followup(pluginMessage(RECOVERY_MESSAGE));
      }
      log(`resumed the interrupted turn of ${track.sessionId}`);
    } catch (error) {
      log(`could not resume the interrupted turn: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private onInbox(agent: HostAgent, message: UserMessageLike): void {
    if (message?.source?.kind !== 'user') return;
    const track = this.tracker.get(agent.id);
    if (!track || track.subagent) return;
    track.humanSignal.abort(new Error('a person wrote'));
    track.humanSignal = new AbortController();
    track.recoverPending = false;
    // A person's message starts a turn: read the list once so their latest edits reach the panel and the tools.
    this.startSync(track, 'turn');
    if (detectQueueGrant(textOf(message), this.config.queueTriggers)) {
      track.queueGranted = true;
      try {
        agent.inject(pluginMessage('[dida-todo] The person asked to check the Dida queue: call todo_work next to take the top Work (or todo_work list to see it).'));
      } catch (error) {
        log(`could not add the queue note: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    const reset = async () => {
      // Read first without the lock: most sessions have nothing to reset, and unbound ones no record at all.
      if (!(await this.runtime.state.read()).sessions[track.sessionId]?.autoAttempts) return;
      await this.runtime.state.update((state) => {
        const session = state.sessions[track.sessionId];
        if (session) session.autoAttempts = 0;
      });
    };
    inBackground(track, reset(), log, 'resetting the continuation counter');
  }

  private onSessionEvent(session: { id: string }, event: SessionEvent): void {
    if (event?.type !== 'todo/write') return;
    const track = this.tracker.get(session.id);
    if (!track) return;
    const todos: Array<{ status?: string }> = Array.isArray(event.data?.todos) ? event.data.todos : [];
    if (JSON.stringify(event.data?.todos) === track.lastPanel) return; // our own mirror
    track.modelTodosOpen = todos.filter((t) => t.status !== 'completed').length;
  }

  /** Publishes the current Work's steps as a todo/write snapshot inside the open turn, only when changed. */
  private async publishPanel(agent: HostAgent, turn: number): Promise<void> {
    const track = this.tracker.get(agent.id);
    if (!track || track.subagent || !track.binding) return;
    try {
      if (track.syncing) {
        const syncing = track.syncing;
        track.syncing = undefined;
        await Promise.race([syncing.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, PANEL_SYNC_WAIT_MS).unref?.())]);
      }
      const state = await this.runtime.state.read();
      const key = state.sessions[track.sessionId]?.currentWork;
      const todos = panelItems(key ? state.works[key] : undefined);
      if (todos.length === 0) return;
      const json = JSON.stringify(todos);
      if (json === track.lastPanel && track.lastPanelTurn === turn) return;
      agent.session.append('todo/write', { todos });
      track.lastPanel = json;
      track.lastPanelTurn = turn;
    } catch (error) {
      log(`could not update the task panel: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** After dsh's own retries: waits the backoff and retries the request, or gives up and asks the person. */
  private async onRequestError(args: { agent: HostAgent; failure: LlmFailureLike; signal?: AbortSignal }): Promise<{ kind: 'retry' } | undefined> {
    const track = this.tracker.get(args.agent.id);
    if (!track || track.subagent || this.disposed) return undefined;
    const code = args.failure?.code ?? 'UNKNOWN';
    const state = await this.runtime.state.read();
    const session = state.sessions[track.sessionId];
    const decision = decideContinuation({
      failureCode: code,
      attempts: session?.autoAttempts ?? 0,
      maxAutoContinue: this.config.maxAutoContinue,
      backoffSeconds: this.config.backoff,
      hasUnfinishedWork: await this.hasUnfinishedWork(track),
    });
    if (decision.kind === 'stop') {
      if (decision.reason === 'exhausted') await this.exhausted(track, code, session?.autoAttempts ?? 0);
      return undefined;
    }
    await this.runtime.state.update((s) => {
      const rec = (s.sessions[track.sessionId] ??= { touched: [], autoAttempts: 0, updatedAt: 0 });
      rec.autoAttempts = decision.attempt;
      rec.lastAutoAt = Date.now();
      rec.updatedAt = Date.now();
    });
    log(`model request failed (${code}); continuing automatically in ${Math.round(decision.delayMs / 1000)} s (attempt ${decision.attempt}/${this.config.maxAutoContinue})`);
    const waited = await waitUnlessAborted(decision.delayMs, [args.signal, track.humanSignal.signal]);
    if (!waited || this.disposed) return undefined;
    try {
      args.agent.inject(pluginMessage(continuationMessage(decision, this.config.maxAutoContinue, code)));
    } catch (error) {
      log(`could not add the continuation note: ${error instanceof Error ? error.message : String(error)}`);
    }
    return { kind: 'retry' };
  }

  private async hasUnfinishedWork(track: AgentTrack): Promise<boolean> {
    if (track.modelTodosOpen > 0) return true;
    const goal = (this.ctx.get('goals') as GoalsService | undefined)?.get(track.agent);
    if (goal && goal.phase !== 'complete' && goal.phase !== 'paused') return true;
    const state = await this.runtime.state.read();
    const touched = state.sessions[track.sessionId]?.touched ?? [];
    return touched.some((key) => {
      const work = state.works[key];
      return !!work && work.phase === 'open' && !work.waiting && (visibleSteps(work).length === 0 || visibleSteps(work).some((s) => !SETTLED.has(s.status)));
    });
  }

  /** The last automatic attempt failed: the current Work waits for the person, with a 🙋 reminder. */
  private async exhausted(track: AgentTrack, code: string, attempts: number): Promise<void> {
    if (!track.binding) return;
    try {
      const engine = await this.engine();
      const reason = this.runtime.locale.t('dida.waiting.exhausted', { attempts, error: code });
      const current = await engine.currentWork(track.sessionId);
      if (current) await engine.waitForHuman(track.sessionId, reason);
      else log(`automatic continuation gave up after ${attempts} attempts (${code}); no current Work to flag`);
    } catch (error) {
      log(`could not ask the person for help: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** Wakes idle bound sessions when the list has executable work that changed since the last wake. */
  private async poll(): Promise<void> {
    if (this.disposed) return;
    for (const track of this.tracker.all()) {
      if (track.subagent || !track.binding || track.agent.status !== 'idle') continue;
      try {
        const engine = await this.engine();
        const queue = await engine.queue(track.binding.projectId);
        const signature = queue.ranked.map((r) => `${r.candidate.taskId}:${r.candidate.priority}:${r.candidate.unsettledSteps}`).join('|');
        if (queue.ranked.length === 0 || signature === track.lastPollSignature) continue;
        track.lastPollSignature = signature;
        const work = await engine.claimNext(track.sessionId, track.binding.projectId, queue);
        if (!work || track.agent.status !== 'idle') continue;
        track.queueGranted = true;
        track.agent.followup(
          pluginMessage(
            `[dida-todo] New work from the bound Dida list is now your current Work. Check it with todo list, plan it with todo, and carry it out. ${UNTRUSTED_PREAMBLE}\n${fenceUntrusted('title', work.title)}`,
          ),
        );
      } catch (error) {
        log(`polling the Dida list failed (will retry): ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  private async release(id: string): Promise<void> {
    const track = this.tracker.remove(id);
    if (track) await Promise.allSettled([...track.background]);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    if (this.pollTimer) clearInterval(this.pollTimer);
    const pending = this.tracker.all().flatMap((t) => [...t.background]);
    for (const track of this.tracker.all()) this.tracker.remove(track.sessionId);
    await Promise.race([Promise.allSettled(pending), new Promise((resolve) => setTimeout(resolve, 5_000).unref?.())]);
    await this.runtime.close();
  }
}
