// Background reads of a session's bound list: one when the session starts (reused by a turn right after it), one per
// person's message, so the person's latest edits reach the panel and the tools.
import type { RuntimeDeps } from './runtime-deps';
import { inBackground, type AgentTrack } from './agent-tracker';

/** The session's first read also serves a turn starting within this long; later turns read again. */
export const SESSION_SYNC_REUSE_MS = 5_000;

export class ListSync {
  constructor(private readonly deps: RuntimeDeps) {}

  /**
   * Starts a read of the track's bound list in the background (nothing when unbound). `session`: the session just
   * started or became bound; skipped when a person's message already read it. `turn`: a person's message starts a
   * turn; reuses the session's read when it started less than 5 s ago.
   */
  start(track: AgentTrack, origin: 'session' | 'turn'): void {
    const binding = track.binding;
    if (!binding || track.noListReads) return;
    const now = this.deps.clock.now();
    const fresh = track.sessionSync && now - track.sessionSync.startedAt < SESSION_SYNC_REUSE_MS;
    if (origin === 'turn' && fresh && track.sessionSync) {
      track.syncing = track.sessionSync.promise;
      track.sessionSync = undefined;
      return;
    }
    if (origin === 'session' && track.turnSyncStarted) return;
    const sync = this.deps.engine().then((engine) => engine.sync(binding.projectId, { looks: 'paced' }));
    inBackground(track, sync, this.deps.log, 'syncing the bound Dida list (will retry later)');
    // A person's message that came before the binding was known (the sdk profile creates the session with its first
    // prompt) could not start its turn's read: this read is that turn's, and no later turn may reuse it.
    if (origin === 'session' && track.humanAt === undefined) track.sessionSync = { promise: sync, startedAt: now };
    else {
      track.syncing = sync;
      track.turnSyncStarted = true;
    }
  }
}
