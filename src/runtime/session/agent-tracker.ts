// Per-agent live state of the adapter: binding, queue grant, person's messages, panel snapshot, background work.
import type { Binding } from '../../store/config-schema';
import type { HostAgent, UserMessageLike } from './session-ports';

export interface AgentTrack {
  agent: HostAgent;
  sessionId: string;
  cwd: string;
  /** Subagents never bind, poll or continue. */
  subagent: boolean;
  /** The live binding of `cwd` (follows config.yaml: bind and unbind mid-session take effect). */
  binding?: Binding;
  /** The current turn may pick from the queue (trigger phrase or poller). */
  queueGranted: boolean;
  /** The next pre-step adds the queue to the turn (set by the trigger phrase). */
  grantPending: boolean;
  /** Notes for the model added at the next pre-step. */
  pendingNotes: UserMessageLike[];
  /** When a person last wrote in this session (this process's clock); undefined while nobody has. */
  humanAt?: number;
  /** Aborted when a person's message arrives, ending any wait at once; replaced by a fresh one. */
  humanSignal: AbortController;
  /** How many messages a person wrote in this session (this process): a mark taken before an await compares against it. */
  humanCount: number;
  /** JSON of the last todo/write this plugin published, and in which turn. */
  lastPanel?: string;
  lastPanelTurn?: number;
  /** The model's own open todo_write items (for "has unfinished work"). */
  modelTodosOpen: number;
  /** Settles once the binding is resolved (and the first sync started). */
  ready: Promise<void>;
  /** The sync started for the latest human message; the next panel publish waits for it (bounded). */
  syncing?: Promise<unknown>;
  /** The read started with the session, not yet used by a turn (a turn starting right after it reuses it). */
  sessionSync?: { promise: Promise<unknown>; startedAt: number };
  /** A person's message already started a read of the list. */
  turnSyncStarted?: boolean;
  /**
   * No list read is started for this session: a one-shot run's host loaded late, for a Dida need (a tool call) that
   * reads what it needs itself; the turn's read would only hold the panel up.
   */
  noListReads?: boolean;
  /** Lifts the tool restriction this plugin placed on the agent (unbound: only dida_todo_setup). */
  liftRestriction?: () => void;
  /** Which restriction is in place ('unbound' or 'subagent'), to change it only when needed. */
  restriction?: string;
  /** A pre-step ran since the last step started (undefined until the host has seen one step: no judgement yet). */
  preStepSeen?: boolean;
  /** The request-error hook ran in the current turn (undefined until the host saw the turn start). */
  requestErrorSeen?: boolean;
  /** Promises of in-flight background work (sync, settle), awaited on dispose. */
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

  /** Tracks `agent` (or refreshes the agent object of a known id) and returns its track. */
  add(agent: HostAgent, fallbackCwd: string = process.cwd()): AgentTrack {
    const existing = this.tracks.get(agent.id);
    if (existing) {
      existing.agent = agent;
      return existing;
    }
    const track: AgentTrack = {
      agent,
      sessionId: agent.id,
      cwd: agent.session?.header?.cwd ?? fallbackCwd,
      subagent: isSubagent(agent),
      queueGranted: false,
      grantPending: false,
      pendingNotes: [],
      humanSignal: new AbortController(),
      humanCount: 0,
      modelTodosOpen: 0,
      background: new Set(),
      ready: Promise.resolve(),
    };
    this.tracks.set(agent.id, track);
    return track;
  }

  /** Forgets the agent: its waits end and its tool restriction is lifted. */
  remove(id: string): AgentTrack | undefined {
    const track = this.tracks.get(id);
    this.tracks.delete(id);
    track?.humanSignal.abort(new Error('agent disposed'));
    try {
      track?.liftRestriction?.();
    } catch {
      // The agent's scope is already gone, and its restrictions with it.
    }
    return track;
  }
}

/** Runs `work` in the background, remembering it on the track so disposal can wait for it. */
export function inBackground(track: AgentTrack, work: Promise<unknown>, log: (line: string) => void, what: string): void {
  const guarded = work.catch((error: unknown) => log(`${what} failed: ${error instanceof Error ? error.message : String(error)}`));
  track.background.add(guarded);
  void guarded.finally(() => track.background.delete(guarded));
}
