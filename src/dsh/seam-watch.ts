// Watches, as sessions run, the dsh surfaces that can only be seen working (the pre-step and request-error hooks), and
// tells the person once per Work when the running dsh lacks what the Work's continuation or phone loop needs: the
// session's open current Work gets one comment (src/core/engine/session-stops.ts) after each of its tool calls while
// such a surface is missing, and every session's at once when one turns out missing mid-run.
import { turnEnding } from '../core/continuation/continuation-policy';
import type { AdapterDeps } from './adapter-deps';
import { messageOf } from '../runtime/session/runtime-deps';
import { inBackground, type AgentTrack } from '../runtime/session/agent-tracker';
import { seamOf, type HostSeams } from './host-seams';
import type { SessionEvent } from '../runtime/session/session-ports';

export class SeamWatch {
  constructor(
    private readonly deps: AdapterDeps,
    private readonly seams: HostSeams,
  ) {
    seams.onLack((id) => {
      if (seamOf(id)?.gap) for (const track of deps.tracker.all()) this.noteSession(track);
    });
  }

  /** dsh ran the pre-step hook for the session. */
  sawPreStep(track: AgentTrack | undefined): void {
    if (track) track.preStepSeen = true;
    this.seams.present('preStep');
  }

  /** dsh ran the request-error hook for the session. */
  sawRequestError(track: AgentTrack | undefined): void {
    if (track) track.requestErrorSeen = true;
    this.seams.present('requestError');
  }

  /** A session event of a top-level session. */
  observe(track: AgentTrack, event: SessionEvent): void {
    switch (event?.type) {
      case 'turn/start':
        track.requestErrorSeen = false;
        return;
      case 'step/start':
        // dsh runs the pre-step hook before every step; judged from the second step the host sees (it may load mid-step).
        if (track.preStepSeen === false) this.seams.lack('preStep', `session ${track.sessionId} started a step without it`);
        track.preStepSeen = false;
        return;
      case 'turn/end': {
        // A turn that failed on a model request (a failure with a code) without the request-error hook, in a turn the
        // host saw start, means this dsh lacks it. A kind this bundle does not know (`forked`) is no failure.
        const reason = event.data?.reason;
        const code: unknown = reason?.error?.code;
        const failed = turnEnding(String(reason?.kind ?? '')) === 'failed' && typeof code === 'string' && code !== '' && code !== 'UNKNOWN';
        if (failed && track.requestErrorSeen === false && track.binding) this.seams.lack('requestError', `a turn of session ${track.sessionId} failed (${code}) without it`);
        track.requestErrorSeen = undefined;
        return;
      }
      default:
        return;
    }
  }

  /** The session may hold a Work now: its open current Work is told about each gap of this dsh (no I/O without one). */
  noteSession(track: AgentTrack | undefined): void {
    if (!track || track.subagent || !track.binding || this.seams.gaps().length === 0 || this.deps.lifetime.aborted) return;
    inBackground(track, this.tell(track), this.deps.log, 'telling the Work what this dsh lacks');
  }

  private async tell(track: AgentTrack): Promise<void> {
    const engine = await this.deps.engine();
    for (const gap of this.seams.gaps()) {
      try {
        if (await engine.noteHostGap(track.sessionId, gap, this.seams.dshName)) {
          this.deps.log(`told the current Work of session ${track.sessionId} that this ${this.seams.dshName} lacks what its ${gap === 'phone' ? 'phone loop' : 'automatic continuation'} needs`);
        }
      } catch (error) {
        this.deps.log(`could not tell the Work of session ${track.sessionId} what this dsh lacks: ${messageOf(error)}`);
      }
    }
  }
}
