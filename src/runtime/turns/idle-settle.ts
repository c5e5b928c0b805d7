// At idle: the turn is closed (nothing to recover), and every settled Work the session touched is sent for review.
import type { RuntimeDeps } from '../session/runtime-deps';
import { messageOf } from '../session/runtime-deps';
import { inBackground, type AgentTrack } from '../session/agent-tracker';
import type { TurnMarkers } from './turn-markers';
import type { LiveBinding } from '../session/live-binding';

/** Longest a settle may hold the session's maintenance slot. */
export const SETTLE_BUDGET_MS = 60_000;

export class IdleSettle {
  constructor(
    private readonly deps: RuntimeDeps,
    private readonly binding: LiveBinding,
    private readonly markers: TurnMarkers,
    /** Resolves once the session's metered usage is written (the review todo shows it). */
    private readonly usageWritten: (track: AgentTrack) => Promise<void> = async () => undefined,
  ) {}

  /** Settles in the agent's maintenance slot (a one-shot host waits for it before exiting), bounded to 60 s. */
  onIdle(track: AgentTrack): void {
    const bounded = () => {
      const settling = this.settle(track);
      // Disposal waits for the settle itself: the unload's abort ends the 60-s bound at once, not the settle's writes.
      inBackground(track, settling, this.deps.log, 'settling the session');
      return Promise.race([settling.catch(() => undefined), this.deps.clock.wait(SETTLE_BUDGET_MS, [this.deps.lifetime])]);
    };
    try {
      if (track.agent.runMaintenance) {
        inBackground(track, track.agent.runMaintenance(() => bounded()), this.deps.log, 'settling the session');
        return;
      }
    } catch {
      // The agent already has other work queued; settle in the background instead.
    }
    void bounded();
  }

  /**
   * Closes the turn marker, then (with the live binding) finalizes the session's settled Works. A settle that reaches
   * the marker after the next turn started leaves it alone: that marker is the new turn's.
   */
  async settle(track: AgentTrack): Promise<void> {
    await track.ready;
    await this.binding.refresh();
    if (track.agent.status !== 'running') await this.markers.markClosed(track.sessionId);
    if (!track.binding || this.deps.lifetime.aborted) return;
    await this.usageWritten(track);
    const engine = await this.deps.engine();
    for (const { outcome } of await engine.settle(track.sessionId)) {
      if (outcome.status === 'failed') this.deps.log(`sending for review failed (will retry): ${messageOf(outcome.message)}`);
    }
    // A one-shot run ends with its turn: nobody works on what it leaves open, so its claims are released now.
    if (this.deps.host.oneShot() && track.agent.status !== 'running') {
      const released = await engine.releaseSession(track.sessionId);
      if (released.length) this.deps.log(`the run ended with steps open: released ${released.join(', ')} for other sessions`);
      await this.markers.markGone(track.sessionId);
    }
  }
}
