// What the machine's poller does around Poller.pollList for the suites that test one poll at a time: the idle bound
// sessions of this process grouped by list, one pollList per list with the Works offered so far (the machine keeps them
// in the state; here a map), a failing list logged, nothing after disposal.
import type { Poller, PollCandidate } from '../../src/runtime/polling/poller';
import type { RuntimeDeps } from '../../src/runtime/session/runtime-deps';

/** A poll of every idle bound session of `deps`'s tracker; each call is one poll. */
export function idlePolling(poller: Poller, deps: Pick<RuntimeDeps, 'tracker' | 'lifetime' | 'log'>): () => Promise<void> {
  const offered = new Map<string, Set<string>>();
  return async () => {
    const byList = new Map<string, PollCandidate[]>();
    for (const track of deps.tracker.all()) {
      if (track.subagent || !track.binding || track.agent.status !== 'idle') continue;
      byList.set(track.binding.projectId, [...(byList.get(track.binding.projectId) ?? []), { sessionId: track.sessionId, binding: track.binding, track }]);
    }
    for (const [projectId, candidates] of byList) {
      if (deps.lifetime.aborted) return;
      const known = offered.get(projectId) ?? new Set<string>();
      try {
        const outcome = await poller.pollList(projectId, candidates, { offered: known });
        offered.set(projectId, new Set([...known, ...outcome.handed]));
      } catch (error) {
        deps.log(`polling the Dida list failed (will retry): ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  };
}
