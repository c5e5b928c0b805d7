// What the machine's polling does besides reading lists: the settles Dida refused, tried again while their sessions are
// idle, so a review does not wait for the session's next turn.
import type { WorkEngine } from '../../core/engine/work-engine';
import { isSettled, type EngineState } from '../../core/work/work-state';
import { withRequestPriority } from '../../dida/request-budget';
import { messageOf } from '../session/runtime-deps';
import type { AgentTrack } from '../session/agent-tracker';

/**
 * Idle sessions among `tracks` with a Work that is settled but not sent for review (a request of the finalization was
 * refused, e.g. the machine's request budget was used up, or the finalization was cut short): settled again.
 */
export async function retrySettles(
  tracks: readonly AgentTrack[],
  state: EngineState,
  engine: () => Promise<WorkEngine>,
  log: (line: string) => void,
  lifetime: AbortSignal,
): Promise<void> {
  for (const track of tracks) {
    if (track.agent.status !== 'idle' || lifetime.aborted) continue;
    const touched = state.sessions[track.sessionId]?.touched ?? [];
    const due = touched.some((key) => {
      const work = state.works[key];
      return !!work && (work.phase === 'finalizing' || (work.phase === 'open' && !work.waiting && isSettled(work)));
    });
    if (!due) continue;
    try {
      await withRequestPriority('background', async () => (await engine()).settle(track.sessionId));
    } catch (error) {
      log(`sending a settled Work of session ${track.sessionId} for review failed (will retry): ${messageOf(error)}`);
    }
  }
}
