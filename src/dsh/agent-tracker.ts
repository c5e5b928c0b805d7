// Per-agent live state of the adapter: binding, queue grant, pending waits, panel snapshots.
import type { Binding } from '../store/config-store';
import type { HostAgent } from './host-types';

export interface AgentTrack {
  agent: HostAgent;
  sessionId: string;
  cwd: string;
  /** Subagents never bind, poll or continue. */
  subagent: boolean;
  binding?: Binding;
  /** The current turn may pick from the queue (trigger phrase or poller). */
  queueGranted: boolean;
  /** Aborted when a human message arrives, ending any wait at once. */
  humanSignal: AbortController;
  /** JSON of the last todo/write this plugin published, and in which turn. */
  lastPanel?: string;
  lastPanelTurn?: number;
  /** The model's own open todo_write items (for "has unfinished work"). */
  modelTodosOpen: number;
  /** Set when a crash-interrupted turn should be resumed at the next chance. */
  recoverPending: boolean;
  /** Queue signature of the last poller wake, to never re-wake for an unchanged queue. */
  lastPollSignature?: string;
  /** Settles once the binding is resolved (and the first sync started). */
  ready: Promise<void>;
  /** The sync started for the latest human message; the next panel publish waits for it (bounded). */
  syncing?: Promise<unknown>;
  /** The read started with the session, not yet used by a turn (a turn starting right after it reuses it). */
  sessionSync?: { promise: Promise<unknown>; startedAt: number };
  /** A person's message already started a read of the list. */
  turnSyncStarted?: boolean;
  /** Promise of in-flight background work (sync, settle), awaited on dispose. */
  background: Set<Promise<unknown>>;
}

/** True for a subagent session: a live header with delegationDepth > 0, a parent session, or origin 'subagent'. */
export function isSubagent(agent: HostAgent): boolean {
  const header = agent.session?.header ?? {};
  return (typeof header.delegationDepth === 'number' && header.delegationDepth > 0) || !!header.parentSession || header.origin === 'subagent';
}

export class AgentTracker {
  private readonly tracks = new Map<string, AgentTrack>();

  get(id: string): AgentTrack | undefined {
    return this.tracks.get(id);
  }

  all(): AgentTrack[] {
    return [...this.tracks.values()];
  }

  add(agent: HostAgent): AgentTrack {
    const existing = this.tracks.get(agent.id);
    if (existing) {
      existing.agent = agent;
      return existing;
    }
    const track: AgentTrack = {
      agent,
      sessionId: agent.id,
      cwd: agent.session?.header?.cwd ?? process.cwd(),
      subagent: isSubagent(agent),
      queueGranted: false,
      humanSignal: new AbortController(),
      modelTodosOpen: 0,
      recoverPending: false,
      background: new Set(),
      ready: Promise.resolve(),
    };
    this.tracks.set(agent.id, track);
    return track;
  }

  remove(id: string): AgentTrack | undefined {
    const track = this.tracks.get(id);
    this.tracks.delete(id);
    track?.humanSignal.abort(new Error('agent disposed'));
    return track;
  }
}

/** Runs `work` in the background, remembering it on the track so disposal can wait for it. */
export function inBackground(track: AgentTrack, work: Promise<unknown>, log: (line: string) => void, what: string): void {
  const guarded = work.catch((error: unknown) => log(`${what} failed: ${error instanceof Error ? error.message : String(error)}`));
  track.background.add(guarded);
  void guarded.finally(() => track.background.delete(guarded));
}
