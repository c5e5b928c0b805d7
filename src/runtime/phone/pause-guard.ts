// Pause from the phone at step boundaries: after each `todo`/`todo_work` call and before each step, the session's
// current Work is looked at; when the person paused it in Dida the Work waits for them and the turn is cancelled.
import type { EngineDeps } from '../../core/work/engine-context';
import { boundaryWork, checkBoundary, pauseWork } from '../../core/phone/phone-pause';
import { PAUSE_CHECK_INTERVAL_MS } from '../../core/phone/phone-signals';
import { stopForSpend } from '../../core/phone/spend-stop';
import { holderOf } from '../../core/queue/claim-holders';
import type { RuntimeDeps } from '../session/runtime-deps';
import { messageOf } from '../session/runtime-deps';
import type { AgentTrack } from '../session/agent-tracker';
import type { EngineState, WorkRecord } from '../../core/work/work-state';
import { pluginMessage } from '../session/messages';
import type { PreStepArgs, ToolExecution } from '../session/session-ports';

/** The cause the cancelled turn ends with (`turn/end` `{kind:'aborted', reason:{kind:'hook', reason}}`). */
export const PAUSE_CANCEL_REASON = 'dida-todo: the person paused the Work in Dida';

/** A boundary waits at most this long for its look at Dida; a slower look finishes (and may still stop the turn) later. */
export const PAUSE_CHECK_WAIT_MS = 3_000;

/** What the model is told at the first step of a turn while its session's current Work is paused by the person. */
export const PAUSED_NOTE = (key: string) =>
  `[dida-todo] Work ${key} is paused: the person paused it in Dida (or with /dida pause), so leave its steps as they are. If they asked you in this conversation to continue it, call todo_work resume first (Dida then shows it resumed); otherwise help with what they ask and tell them it is paused.`;

/** What one session's stretch has seen: the current Work's priority while it ran, and when Dida was last read. */
interface Seen {
  key?: string;
  priority?: number;
  readAt?: number;
  /** When the session last went idle: a Work claimed before it is read again at the next look. */
  idledAt?: number;
}

/**
 * What the session record keeps of a stretch (the record schema keeps unknown keys): the priority the current Work ran
 * with, so the first look after a restart (crash recovery, or a one-shot taking the Work over) knows it ran, and a
 * priority of none found then is the person's pause. Cleared when the session goes idle.
 */
interface RanWith {
  pauseSeen?: { key: string; priority: number };
}

export class PauseGuard {
  private readonly seen = new WeakMap<AgentTrack, Seen>();
  /** The turn each session was last told its Work is paused in. */
  private readonly noted = new WeakMap<AgentTrack, number>();

  /** `onPaused` is told of each pause this guard applied (the session shows it: session-notices.ts). */
  constructor(
    private readonly deps: RuntimeDeps,
    private readonly engineDeps: () => Promise<EngineDeps>,
    private readonly stopPhrases: () => readonly string[],
    private readonly onPaused: (track: AgentTrack, work: WorkRecord) => void = () => undefined,
  ) {}

  /**
   * Before a step. At the first step of a turn a person's message opened, a pause found is applied but the turn goes on
   * (the person is talking to the session); anywhere else the turn is cancelled.
   */
  async beforeStep(track: AgentTrack, args: Pick<PreStepArgs, 'step' | 'messages'> & { turn?: number }): Promise<void> {
    const personOpened = args.step === 1 && (args.messages ?? []).some((m) => m?.source?.kind === 'user');
    await this.bounded(track, this.atBoundary(track, !personOpened));
    if (args.step === undefined || args.step === 1) await this.notePaused(track, args.turn);
  }

  /**
   * At the first step of a turn: when the session's current Work is paused by the person, the model is told so (once
   * per turn), so a turn the person opens does not carry on with it; the step tools refuse it too.
   */
  private async notePaused(track: AgentTrack, turn: number | undefined): Promise<void> {
    try {
      const state = await this.deps.state.read();
      const key = state.sessions[track.sessionId]?.currentWork;
      const work = key ? state.works[key] : undefined;
      if (!key || work?.phase !== 'open' || !work.waiting?.pausedBy) return;
      if (turn !== undefined && this.noted.get(track) === turn) return;
      if (turn !== undefined) this.noted.set(track, turn);
      track.pendingNotes.push(pluginMessage(PAUSED_NOTE(key), this.deps.newId()));
    } catch (error) {
      this.deps.log(`could not tell the model its Work is paused: ${messageOf(error)}`);
    }
  }

  /**
   * After the poller read the lists: the idle sessions' current Works are looked at in the state it just wrote (no
   * request), so a priority set to none between turns is acknowledged in Dida at once.
   */
  async afterPoll(): Promise<void> {
    for (const track of this.deps.tracker.all()) {
      if (track.subagent || !track.binding || track.agent.status !== 'idle') continue;
      await this.atBoundary(track, false, { readDida: false });
    }
  }

  /** After a `todo` or `todo_work` call of a session (before its result is returned). */
  async afterToolCall(call: { tool: string; exec: ToolExecution }): Promise<void> {
    if (call.tool !== 'todo' && call.tool !== 'todo_work') return;
    const track = call.exec.agent ? this.deps.tracker.get(call.exec.agent.id) : undefined;
    if (track) await this.bounded(track, this.atBoundary(track, true));
  }

  /** Waits for a boundary's look at most PAUSE_CHECK_WAIT_MS (a slow Dida never holds a step up for long). */
  private async bounded(track: AgentTrack, look: Promise<boolean>): Promise<void> {
    const done = new AbortController();
    track.background.add(look);
    void look.finally(() => {
      track.background.delete(look);
      done.abort();
    });
    await Promise.race([look, this.deps.clock.wait(PAUSE_CHECK_WAIT_MS, [this.deps.lifetime, done.signal])]);
  }

  /**
   * The session went idle. The priority its current Work ran with is kept (a priority set to none between turns is a
   * pause too); the next boundary reads Dida afresh.
   */
  onIdle(track: AgentTrack): void {
    const seen = this.seen.get(track);
    if (seen) {
      delete seen.readAt;
      seen.idledAt = this.deps.clock.now();
    }
  }

  /**
   * What this process has not seen itself, from the state: the priority the Work `key` ran with in this session before
   * a restart, or in a session of this machine whose turn was cut off (one this session took over).
   */
  private restored(state: EngineState, sessionId: string, key: string): Seen {
    const own = (state.sessions[sessionId] as RanWith | undefined)?.pauseSeen;
    if (own?.key === key) return { key, priority: own.priority };
    for (const record of Object.values(state.sessions)) {
      const ran = (record as RanWith).pauseSeen;
      if (ran?.key === key && record.turnOpenSince !== undefined) return { key, priority: ran.priority };
    }
    return {};
  }

  /** Keeps the priority the Work runs with in the session record (written only when it changes). */
  private async rememberRun(sessionId: string, key: string, priority: number): Promise<void> {
    const known = ((await this.deps.state.read()).sessions[sessionId] as RanWith | undefined)?.pauseSeen;
    if (known?.key === key && known.priority === priority) return;
    await this.deps.state.update((state) => {
      const session = state.sessions[sessionId] as (RanWith & EngineState['sessions'][string]) | undefined;
      if (session) session.pauseSeen = { key, priority };
    });
  }

  /**
   * One boundary: the record (free) at every boundary, the task and its comments from Dida at most every 30 s. True
   * when the Work was paused here. Never throws (a failure is logged; the next boundary looks again).
   */
  async atBoundary(track: AgentTrack, mayCancel: boolean, options: { readDida?: boolean } = {}): Promise<boolean> {
    if (track.subagent || !track.binding || this.deps.lifetime.aborted) return false;
    try {
      const now = this.deps.clock.now();
      const state = await this.deps.state.read();
      // No current Work to look at: nothing to read, and no engine (nor its first Dida request) to wait for.
      const current = boundaryWork(state, track.sessionId);
      if (!current) return false;
      let seen = this.seen.get(track);
      if (!seen) {
        seen = this.restored(state, track.sessionId, current.key);
        this.seen.set(track, seen);
      }
      // A Work this session created moments ago cannot have been paused from the phone yet, and one it claimed moments
      // ago was just read (the list for its priority, its comments for the claim): Dida is not read for it again.
      const deps = await this.engineDeps();
      const justCreated = current.work.origin === 'agent' && this.deps.clock.now() - current.work.createdAt < PAUSE_CHECK_INTERVAL_MS;
      // (Only while nothing was seen of this Work: not after a restart that kept its priority, nor for a Work claimed
      // before the session last went idle, which the person may have paused between turns.)
      const claim = current.work.claim;
      const fresh = (seen.priority === undefined || seen.key !== current.key) && (seen.idledAt === undefined || (claim !== undefined && claim.at >= seen.idledAt));
      const justClaimed = fresh && claim?.holder === holderOf(deps, track.sessionId) && this.deps.clock.now() - claim.at < PAUSE_CHECK_INTERVAL_MS;
      // The claim's read of the list is this Work's last look: the next read comes 30 s after it, not at the next step.
      if (justClaimed && seen.readAt === undefined) seen.readAt = claim.at;
      const readDida = options.readDida ?? (!justCreated && !justClaimed && (seen.readAt === undefined || now - seen.readAt >= PAUSE_CHECK_INTERVAL_MS));
      const check = await checkBoundary(deps, track.sessionId, {
        stopPhrases: this.stopPhrases(),
        readDida,
        ...(seen.priority !== undefined ? { seenPriority: seen.priority } : {}),
        ...(seen.key !== undefined ? { seenFor: seen.key } : {}),
      });
      if (readDida && check.key) seen.readAt = now;
      if (check.key && check.priority !== undefined && check.priority > 0) {
        seen.key = check.key;
        seen.priority = check.priority;
        await this.rememberRun(track.sessionId, check.key, check.priority);
      }
      if (check.key && check.spend) {
        await stopForSpend(deps, check.key, check.spend);
        this.deps.log(`Work ${check.key} passed its spend limit (${check.spend.what}: ${check.spend.used} of ${check.spend.limit}): it waits for the person${mayCancel ? ' and the turn of ' + track.sessionId + ' is stopped' : ''}`);
        if (mayCancel) this.cancel(track);
        return true;
      }
      if (!check.key || !check.pause) return false;
      const paused = await pauseWork(deps, check.key, check.pause);
      if (!paused) return false;
      this.onPaused(track, paused);
      const how = check.pause.by === 'priority' ? 'set its priority to none' : 'commented a stop phrase';
      this.deps.log(`the person ${how} in Dida: Work ${check.key} is paused${mayCancel ? ' and the turn of ' + track.sessionId + ' is stopped' : ''}`);
      if (mayCancel) this.cancel(track);
      return true;
    } catch (error) {
      this.deps.log(`looking for a pause from Dida failed: ${messageOf(error)}`);
      return false;
    }
  }

  private cancel(track: AgentTrack): void {
    try {
      track.agent.cancel?.({ kind: 'hook', reason: PAUSE_CANCEL_REASON }, { keepInbox: true });
    } catch (error) {
      this.deps.log(`could not stop the turn of ${track.sessionId}: ${messageOf(error)}`);
    }
  }
}
