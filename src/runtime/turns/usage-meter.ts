// Meters what the session's current Work costs, from dsh's own session events: each model answer's `usage`, the time
// of turns while the Work is current, and automatic continuations; subagents count toward their root session's Work.
// It only adds numbers to the state (no Dida request), in the background, one write at a time per session.
import { answerUsage, emptyUsage, addUsage } from '../../core/usage/usage';
import type { Usage } from '../../core/usage/usage-schema';
import { recordUsage, usageTarget } from '../../core/work/usage-records';
import type { RuntimeDeps } from '../session/runtime-deps';
import { messageOf } from '../session/runtime-deps';
import type { AgentTrack } from '../session/agent-tracker';
import type { SessionEvent } from '../session/session-ports';

interface Meter {
  /** When the time of the open turn was last counted (undefined: no turn open). */
  mark?: number;
  /** An automatic continuation happened in this turn: later answers are its share. */
  continued: boolean;
  /** Usage of this turn before the session had a current Work (it goes to the Work the turn takes). */
  pending: Usage;
  /** The last write in flight. */
  writing: Promise<unknown>;
}

export class UsageMeter {
  private readonly meters = new WeakMap<AgentTrack, Meter>();

  constructor(private readonly deps: RuntimeDeps) {}

  private meterOf(track: AgentTrack): Meter {
    let meter = this.meters.get(track);
    if (!meter) this.meters.set(track, (meter = { continued: false, pending: emptyUsage(), writing: Promise.resolve() }));
    return meter;
  }

  /** The session whose Work a track's usage counts toward: its own, or for a subagent its root session's. */
  private owner(track: AgentTrack): string | undefined {
    let current: AgentTrack | undefined = track;
    for (let depth = 0; current?.subagent && depth < 16; depth++) {
      const parent: string | undefined = current.agent.session?.header?.parentSession;
      current = parent ? this.deps.tracker.get(parent) : undefined;
    }
    return current && !current.subagent ? current.sessionId : undefined;
  }

  /** A session event of any tracked session (subagents included). */
  observe(track: AgentTrack, event: SessionEvent): void {
    const type = event?.type;
    if (type !== 'turn/start' && type !== 'assistant/message' && type !== 'turn/end') return;
    const meter = this.meterOf(track);
    const now = this.deps.clock.now();
    if (type === 'turn/start') {
      if (!track.subagent) {
        meter.mark = now;
        meter.continued = false;
        // In order with the writes before it: what an earlier turn left unassigned is dropped then.
        this.enqueue(track, meter, async () => {
          meter.pending = emptyUsage();
        });
      }
      return;
    }
    let delta = emptyUsage();
    if (type === 'assistant/message') {
      const usage = event.data?.usage;
      if (!usage || typeof usage !== 'object') return;
      delta = answerUsage({ model: event.data?.message?.source?.model, inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, cacheReadTokens: usage.cacheReadTokens }, meter.continued || this.ownerContinued(track));
    }
    if (!track.subagent && meter.mark !== undefined) {
      delta.ms = Math.max(0, now - meter.mark);
      meter.mark = type === 'turn/end' ? undefined : now;
    }
    this.add(track, delta, type === 'turn/end');
  }

  /** An automatic continuation of the session (after a model error or a crash): counted, and later answers are its share. */
  noteContinuation(track: AgentTrack): void {
    this.meterOf(track).continued = true;
    this.add(track, { ...emptyUsage(), continuations: 1 }, false);
  }

  private ownerContinued(track: AgentTrack): boolean {
    const owner = this.owner(track);
    const ownerTrack = owner ? this.deps.tracker.get(owner) : undefined;
    return !!ownerTrack && this.meters.get(ownerTrack)?.continued === true;
  }

  private add(track: AgentTrack, delta: Usage, turnEnded: boolean): void {
    const owner = this.owner(track);
    if (!owner) return;
    const ownerTrack = this.deps.tracker.get(owner) ?? track;
    const meter = this.meterOf(ownerTrack);
    this.enqueue(ownerTrack, meter, async () => {
      const key = await usageTarget(this.deps, owner);
      if (key) {
        const batch = addUsage(meter.pending, delta);
        meter.pending = emptyUsage();
        if (batch.requests || batch.ms || batch.continuations) await recordUsage(this.deps, key, batch);
      } else if (!turnEnded) meter.pending = addUsage(meter.pending, delta);
      else meter.pending = emptyUsage();
    });
  }

  /** Runs `job` after the session's earlier metering jobs (one at a time, in event order). */
  private enqueue(track: AgentTrack, meter: Meter, job: () => Promise<void>): void {
    const next = meter.writing.then(job).catch((error: unknown) => this.deps.log(`could not record the Work's usage: ${messageOf(error)}`));
    meter.writing = next;
    track.background.add(next);
    void next.finally(() => track.background.delete(next));
  }

  /** Resolves when the session's recorded usage is written (tests, and before a settle reads it). */
  async flushed(track: AgentTrack): Promise<void> {
    await this.meters.get(track)?.writing;
  }
}
