// Crash recovery: resumes a session whose turn a crash interrupted (see turn-markers.ts) — by
// itself when dsh starts (long-lived profiles), or when the session comes back — once, with the backoff and the
// counter; a one-shot headless run in the same directory takes the interrupted Work over instead.
import { processAlive } from '../../common/process-alive';
import { decideRecovery, RECOVERY_MESSAGE, unfinishedWork, type RecoveryDecision, type SessionWorkFacts } from '../../core/continuation/continuation-policy';
import { fenceUntrusted, truncateGraphemes, UNTRUSTED_PREAMBLE } from '../../core/text/text-guard';
import type { EngineState } from '../../core/work/work-state';
import { recordUsage, usageTarget } from '../../core/work/usage-records';
import type { DidaTodoConfig } from '../../store/config-schema';
import { findBinding } from '../../store/config-bindings';
import type { RuntimeDeps } from '../session/runtime-deps';
import { messageOf } from '../session/runtime-deps';
import type { AgentTrack } from '../session/agent-tracker';
import type { WaitMark } from './continuation';
import { personIsWaiting, pluginMessage, sendOwnMessage } from '../session/messages';
import { HostNotReady, type HostAgent } from '../session/session-ports';
import { THIS_PROCESS, type MarkedSession, type TurnMarker } from './turn-markers';

/** How long a resume waits for dsh's agent factory and the resumed agent to become idle. */
const RESUME_PATIENCE_MS = 30_000;
const POLL_MS = 100;


export interface RecoveryOptions {
  /** This process's id (default `process.pid`). */
  pid?: number;
  isAlive?: (pid: number) => boolean;
  /** This process's mark on the turns it opens (default `THIS_PROCESS`, as `TurnMarkers` writes it). */
  mark?: string;
  /** The config read last (for the bindings of sessions that are not live). */
  config: () => DidaTodoConfig | undefined;
}

export class CrashRecovery {
  /** Waits in progress, by session id; a person's message in that session aborts its wait. */
  private readonly waits = new Map<string, AbortController>();
  private readonly pid: number;
  private readonly isAlive: (pid: number) => boolean;
  private readonly mark: string;

  constructor(
    private readonly deps: RuntimeDeps,
    private readonly options: RecoveryOptions,
  ) {
    this.pid = options.pid ?? process.pid;
    this.isAlive = options.isAlive ?? processAlive;
    this.mark = options.mark ?? THIS_PROCESS;
  }

  /** A person wrote in the session: a recovery waiting for its backoff there gives way. */
  onHumanMessage(sessionId: string): void {
    this.waits.get(sessionId)?.abort(new Error('a person wrote'));
  }

  /**
   * At dsh start (long-lived profiles only): resumes, through the agents service, every session of this machine
   * whose turn was interrupted at most 30 minutes ago with unfinished work in a bound directory. Resolves when all
   * are handled.
   */
  async scanAtStart(): Promise<void> {
    if (this.deps.host.oneShot() || this.deps.settings.maxAutoContinue <= 0) return;
    const state = await this.deps.state.read();
    const ids = Object.keys(state.sessions).filter((id) => state.sessions[id]?.turnOpenSince !== undefined);
    await Promise.all(ids.map((id) => this.recover(id)));
  }

  /**
   * A session became live in this process. When its own turn was interrupted, it is resumed (unless a person writes
   * first). In a one-shot run, a new session instead takes over the Work of an interrupted session in its directory.
   */
  async onAttached(track: AgentTrack): Promise<void> {
    if (track.subagent || !track.binding) return;
    const state = await this.deps.state.read();
    if (state.sessions[track.sessionId]?.turnOpenSince !== undefined) {
      await this.recover(track.sessionId);
      return;
    }
    if (this.deps.host.oneShot()) await this.adopt(track, state);
  }

  private decide(state: EngineState, id: string): RecoveryDecision {
    const record = state.sessions[id] as MarkedSession | undefined;
    const pid = record?.turnOpenPid;
    return decideRecovery({
      openSince: record?.turnOpenSince,
      now: this.deps.clock.now(),
      // A turn this very process opened runs here (the start scan may meet a session that just started its turn).
      ownerAlive: record?.turnOpenBy === this.mark || (pid !== undefined && pid !== this.pid && this.isAlive(pid)),
      attempts: record?.autoAttempts ?? 0,
      maxAutoContinue: this.deps.settings.maxAutoContinue,
      backoffSeconds: this.deps.settings.backoff,
      hasUnfinishedWork: unfinishedWork(state, id, this.factsOf(id, record)) !== undefined,
      ...((record as WaitMark | undefined)?.waitUntil ? { waitUntil: (record as WaitMark).waitUntil!.until } : {}),
    });
  }

  /**
   * What is known of the session's own work: live (its goal, its todo_write items) when the session runs in this process,
   * else as its turn marker recorded it; the more demanding of the two counts.
   */
  private factsOf(id: string, record: MarkedSession | undefined): SessionWorkFacts {
    const recorded = record?.turnFacts;
    const track = this.deps.tracker.get(id);
    const phase = track ? this.deps.host.goal(track.agent)?.phase : undefined;
    const goalPhase = phase === 'active' ? phase : (recorded?.goalPhase ?? phase);
    return { modelTodosOpen: Math.max(track?.modelTodosOpen ?? 0, recorded?.modelTodosOpen ?? 0), ...(goalPhase ? { goalPhase } : {}) };
  }

  /** The directory's binding of a session record (live track first, then the recorded directory). */
  private bindingOf(id: string, record: TurnMarker | undefined) {
    const cwd = this.deps.tracker.get(id)?.cwd ?? record?.cwd;
    const config = this.options.config();
    return cwd && config ? findBinding(config, cwd) : undefined;
  }

  /**
   * Takes the recovery of `id` for this process: clears its marker and counts the attempt, only if the marker is
   * still the one decided on (so two processes never both resume it). With no attempt, only clears the marker. With
   * `resumeInMs`, marks the session as about to be resumed (see TurnMarker.resumeDue).
   */
  private async take(id: string, openSince: number | undefined, attempt?: number, resumeInMs?: number): Promise<boolean> {
    let won = false;
    const now = this.deps.clock.now();
    await this.deps.state.update((state) => {
      const session = state.sessions[id] as MarkedSession | undefined;
      if (!session || session.turnOpenSince === undefined || session.turnOpenSince !== openSince) return;
      delete session.turnOpenSince;
      delete session.turnOpenPid;
      delete session.turnOpenBy;
      delete (session as WaitMark).waitUntil;
      if (attempt !== undefined) {
        session.autoAttempts = attempt;
        session.lastAutoAt = now;
      }
      // Until the resumed turn opens, nobody hands the session other work (it looks idle and free meanwhile).
      if (resumeInMs !== undefined) session.resumeDue = { pid: this.pid, until: now + resumeInMs + RESUME_PATIENCE_MS };
      session.updatedAt = now;
      won = true;
    });
    return won;
  }

  private async recover(id: string): Promise<void> {
    if (this.waits.has(id) || this.deps.lifetime.aborted) return;
    // Registered before any await, so a second caller (start scan and attach at once) backs off.
    const pending = new AbortController();
    this.waits.set(id, pending);
    let due = false;
    try {
      const state = await this.deps.state.read();
      const record = state.sessions[id] as MarkedSession | undefined;
      // A turn this very process opened is running here: nothing was interrupted, nothing to say.
      if (record?.turnOpenBy === this.mark) return;
      const decision = this.decide(state, id);
      if (decision.kind === 'skip') {
        if (decision.reason !== 'owner_alive' && decision.reason !== 'not_interrupted') await this.take(id, record?.turnOpenSince);
        if (decision.reason !== 'not_interrupted') this.deps.log(`not resuming the interrupted turn of ${id} (${decision.reason})`);
        return;
      }
      if (!this.bindingOf(id, record)) {
        await this.take(id, record?.turnOpenSince);
        return;
      }
      if (!(await this.take(id, record?.turnOpenSince, decision.attempt, decision.delayMs))) return;
      due = true;
      this.deps.log(`resuming the interrupted turn of ${id} in ${Math.round(decision.delayMs / 1000)} s (attempt ${decision.attempt}/${this.deps.settings.maxAutoContinue})`);
      if (!(await this.deps.clock.wait(decision.delayMs, [this.deps.lifetime, pending.signal])) || this.personWrote(id)) return;
      const agent = await this.liveAgent(id, pending.signal);
      if (!agent || !(await this.untilIdle(agent, pending.signal)) || this.personWrote(id) || personIsWaiting(agent)) return;
      this.act(agent);
      // The resumed turn's marker replaces the mark (or it lapses): the session stays out of others' way until then.
      due = false;
      await this.countContinuation(id);
    } catch (error) {
      this.deps.log(`could not resume the interrupted turn of ${id}: ${messageOf(error)}`);
    } finally {
      if (this.waits.get(id) === pending) this.waits.delete(id);
      if (due) await this.dropResumeDue(id).catch((error: unknown) => this.deps.log(`could not clear the resume mark of ${id}: ${messageOf(error)}`));
    }
  }

  /** The resume this process took will not happen (a person wrote, dsh stopped, the session never came back). */
  private async dropResumeDue(id: string): Promise<void> {
    if (((await this.deps.state.read()).sessions[id] as MarkedSession | undefined)?.resumeDue?.pid !== this.pid) return;
    await this.deps.state.update((state) => {
      const session = state.sessions[id] as MarkedSession | undefined;
      if (session?.resumeDue?.pid === this.pid) delete session.resumeDue;
    });
  }

  /** A person wrote in the session since it became live here: their message wins over the recovery. */
  private personWrote(id: string): boolean {
    return this.deps.tracker.get(id)?.humanAt !== undefined;
  }

  /** The live agent of session `id`, resuming the persisted session when it is not live (retrying until dsh is ready). */
  private async liveAgent(id: string, signal: AbortSignal): Promise<HostAgent | undefined> {
    const { host } = this.deps;
    const deadline = this.deps.clock.now() + RESUME_PATIENCE_MS;
    for (;;) {
      const live = host.agent(id);
      if (live) return live;
      const resumed = host.resume(id);
      if (!resumed) return undefined;
      try {
        return await resumed;
      } catch (error) {
        // While the host is still starting, a resume is refused: it is tried again; anything else is final.
        if (!(error instanceof HostNotReady) || this.deps.clock.now() > deadline) throw error;
      }
      if (!(await this.deps.clock.wait(POLL_MS, [this.deps.lifetime, signal]))) return undefined;
    }
  }

  private async untilIdle(agent: HostAgent, signal: AbortSignal): Promise<boolean> {
    const deadline = this.deps.clock.now() + RESUME_PATIENCE_MS;
    while (agent.status !== 'idle') {
      if (this.deps.clock.now() > deadline || !(await this.deps.clock.wait(POLL_MS, [this.deps.lifetime, signal]))) return false;
    }
    return !signal.aborted && !this.deps.lifetime.aborted;
  }

  /** A resume is an automatic continuation of the session's current Work (it counts toward the Work's usage). */
  private async countContinuation(sessionId: string): Promise<void> {
    const key = await usageTarget(this.deps, sessionId);
    if (key) await recordUsage(this.deps, key, { continuations: 1 });
  }

  /** Re-arms a goal the restart disarmed, or sends the recovery follow-up. */
  private act(agent: HostAgent): void {
    const goal = this.deps.host.goal(agent);
    if (!(goal && goal.phase === 'active' && goal.activation === 'disarmed' && this.deps.host.resumeGoal(agent, goal))) sendOwnMessage((message) => agent.followup(message), RECOVERY_MESSAGE, this.deps.newId());
    this.deps.log(`resumed the interrupted turn of ${agent.id}`);
  }

  /** One-shot run: takes over the current Work of the latest interrupted session in this directory. */
  private async adopt(track: AgentTrack, state: EngineState): Promise<void> {
    const binding = track.binding;
    if (!binding) return;
    const candidates = Object.entries(state.sessions)
      .filter(([id, record]) => id !== track.sessionId && (record as TurnMarker).cwd === track.cwd && record.turnOpenSince !== undefined)
      .sort(([, a], [, b]) => (b.turnOpenSince ?? 0) - (a.turnOpenSince ?? 0));
    for (const [id, record] of candidates) {
      const decision = this.decide(state, id);
      if (decision.kind === 'skip') {
        if (decision.reason !== 'owner_alive') await this.take(id, record.turnOpenSince);
        continue;
      }
      const key = record.currentWork;
      const work = key ? state.works[key] : undefined;
      if (!key || !work || work.projectId !== binding.projectId || !(await this.take(id, record.turnOpenSince, decision.attempt))) continue;
      const engine = await this.deps.engine();
      // The interrupted session's claim is this machine's: this session takes it over.
      const adopted = await engine.switchTo(track.sessionId, binding.projectId, key, { inheritFrom: [id] });
      const note = `[dida-todo] An interrupted session was working on Work ${key}; it is now your current Work: check it with todo list and finish it without redoing completed steps. ${UNTRUSTED_PREAMBLE}\n${fenceUntrusted('title', truncateGraphemes(adopted.title, 200))}`;
      track.pendingNotes.push(pluginMessage(note, this.deps.newId()));
      await this.countContinuation(track.sessionId);
      this.deps.log(`took over the interrupted Work of ${id}`);
      return;
    }
  }
}
