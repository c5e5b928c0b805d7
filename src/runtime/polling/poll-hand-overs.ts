// The hand-overs of the machine's poller on the side of the process whose sessions are handed work: its sessions marked
// as polling with the machine, the offers the leader made them taken (or declined and released), a session handed a Work
// before its process restarted woken again, and a claim given back when nobody will carry the Work on.
import { releaseClaim } from '../../core/queue/claim-release';
import { sessionPaused } from '../../core/phone/phone-signals';
import type { WorkEngine } from '../../core/engine/work-engine';
import { isSettled, type EngineState, type WorkRecord } from '../../core/work/work-state';
import type { RuntimeDeps } from '../session/runtime-deps';
import { messageOf } from '../session/runtime-deps';
import type { AgentTrack } from '../session/agent-tracker';
import { canWake, sendOwnMessage } from '../session/messages';
import type { StretchCounter } from '../session/stretch-counter';
import { forgetWoken, removeOffer, type MarkedRecord } from './poll-marks';
import { QUIET_STEP_MS } from './poll-pace';
import { pollNote } from './poller';
import { resumePending, turnPending, type TurnMarker } from '../turns/turn-markers';

export interface HandOverOptions {
  pid: number;
  isAlive: (pid: number) => boolean;
  /** The full engine: its deps (claims), touch and switchTo (taking a Work over). */
  engine: () => Promise<WorkEngine>;
}

export class HandOvers {
  /** Sessions of this process already looked at for a Work handed to them before a restart. */
  private readonly resumed = new Set<string>();

  constructor(
    private readonly deps: RuntimeDeps,
    private readonly counter: StretchCounter,
    private readonly options: HandOverOptions,
  ) {}

  /** This process's bound sessions (subagents aside). */
  own(): AgentTrack[] {
    return this.deps.tracker.all().filter((t) => !t.subagent && t.binding);
  }

  /** Marks this process's bound sessions as living here and polling with the machine (again if the mark went missing). */
  async markReady(state: EngineState): Promise<void> {
    const missing = this.own().filter((t) => {
      const record = state.sessions[t.sessionId] as MarkedRecord | undefined;
      return record?.livePid !== this.options.pid || record.pollReady !== this.options.pid || record.cwd !== t.cwd;
    });
    if (missing.length === 0) return;
    const now = this.deps.clock.now();
    await this.deps.state.update((s) => {
      for (const track of missing) {
        const record = (s.sessions[track.sessionId] ??= { touched: [], autoAttempts: 0, updatedAt: now }) as MarkedRecord;
        record.livePid = this.options.pid;
        record.pollReady = this.options.pid;
        record.cwd = track.cwd;
        // A record older than the prune age is dropped by the next sync that writes.
        if (now - record.updatedAt > QUIET_STEP_MS) record.updatedAt = now;
      }
    });
  }

  /** Whether a person's answer waits in the state for the current Work of one of this process's sessions. */
  answerWaits(state: EngineState): boolean {
    return this.own().some((t) => {
      const key = state.sessions[t.sessionId]?.currentWork;
      const work = key ? state.works[key] : undefined;
      return !!work?.pendingAnswer && !work.waiting;
    });
  }

  /**
   * Offers the leader made to this process's sessions: an idle session takes its Work (it becomes current and the
   * session is woken); a session that is busy, paused or bound elsewhere declines, and the Work's claim is released.
   * The offer is removed from the state first, so only one of this process and the leader (withdrawing it) acts on it.
   */
  async takeOffers(state: EngineState): Promise<void> {
    for (const track of this.own()) {
      const offer = (state.sessions[track.sessionId] as MarkedRecord | undefined)?.pollOffer;
      if (!offer || this.deps.lifetime.aborted) continue;
      if (!(await removeOffer(this.deps.state, track.sessionId, offer.key))) continue;
      const work = state.works[offer.key];
      const resuming = resumePending(state.sessions[track.sessionId] as TurnMarker | undefined, this.deps.clock.now(), this.options.isAlive);
      const fits = track.agent.status === 'idle' && canWake(track.agent) && !resuming && track.binding?.projectId === offer.projectId && !sessionPaused(state, track.sessionId) && work?.phase === 'open';
      const engine = await this.options.engine();
      if (!fits || !work) {
        await this.release(engine, track.sessionId, offer.key, 'its session was busy when the hand-over arrived');
        continue;
      }
      try {
        await engine.touch(track.sessionId, offer.key, true);
        await this.wake(track, work);
        this.deps.log(`session ${track.sessionId} took Work ${offer.key} from the machine's poller`);
      } catch (error) {
        this.deps.log(`session ${track.sessionId} could not take Work ${offer.key}: ${messageOf(error)}`);
        await this.release(engine, track.sessionId, offer.key, 'taking it over failed');
      }
    }
  }

  /** Wakes a session of this process for the Work the poller handed it (its current Work now), and says who woke it. */
  private async wake(track: AgentTrack, work: WorkRecord): Promise<void> {
    track.queueGranted = true;
    await this.counter.note(track.sessionId, { kind: 'new_work' });
    await this.deps.state.update((s) => {
      const record = s.sessions[track.sessionId] as MarkedRecord | undefined;
      if (record) record.pollWokenBy = this.options.pid;
    });
    sendOwnMessage((message) => track.agent.followup(message), pollNote(work.title), this.deps.newId());
  }

  /**
   * A session of this process whose current Work the poller handed it in an earlier process (this one restarted, or
   * died right after the hand-over, before the session's turn began — nothing for crash recovery to resume): woken for
   * it once more, after confirming its claim, so the Work is not left held by a session that does not know it has it.
   */
  async resumeHanded(state: EngineState): Promise<void> {
    for (const track of this.own()) {
      if (this.resumed.has(track.sessionId) || track.agent.status !== 'idle') continue;
      const record = state.sessions[track.sessionId] as MarkedRecord | undefined;
      const key = record?.currentWork;
      const work = key ? state.works[key] : undefined;
      if (!record || !key || !work || record.pollOffer) continue;
      this.resumed.add(track.sessionId);
      // An interrupted turn is crash recovery's to resume (or not): one wake for it, never a second from here.
      if (turnPending(record as TurnMarker, this.deps.clock.now(), this.options.isAlive)) continue;
      if (!record.pollWoken?.includes(key) || record.pollWokenBy === this.options.pid || work.phase !== 'open' || work.waiting || isSettled(work)) continue;
      if (track.binding?.projectId !== work.projectId || sessionPaused(state, track.sessionId)) continue;
      try {
        const engine = await this.options.engine();
        await engine.switchTo(track.sessionId, work.projectId, key);
        await this.wake(track, work);
        this.deps.log(`session ${track.sessionId} is woken again for Work ${key}, handed to it before its process restarted`);
      } catch (error) {
        this.deps.log(`session ${track.sessionId} could not go back to Work ${key}: ${messageOf(error)}`);
      }
    }
  }

  /** Releases the session's claim on `key` in Dida, and forgets that it was handed the Work (so it may be offered again). */
  async release(engine: WorkEngine, sessionId: string, key: string, why: string): Promise<void> {
    try {
      if (await releaseClaim(engine.deps, key, sessionId)) this.deps.log(`released Work ${key} for other sessions: ${why}`);
    } catch (error) {
      this.deps.log(`could not release Work ${key} (its claim lapses after the lease): ${messageOf(error)}`);
    }
    await forgetWoken(this.deps.state, sessionId, key);
  }
}
