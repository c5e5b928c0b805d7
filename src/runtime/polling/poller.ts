// The poller's one look at a list: wakes idle bound sessions when the list has executable work none of them was offered
// yet, claiming the Work for a session before waking it (or, for a session of another process, before handing it over),
// and never handing one Work to two sessions.
import { sessionPaused } from '../../core/phone/phone-signals';
import { sessionTag } from '../../core/queue/claim-holders';
import { routesHere } from '../../core/queue/route-tags';
import { fenceUntrusted, truncateGraphemes, UNTRUSTED_PREAMBLE } from '../../core/text/text-guard';
import { workKey, type WorkRecord } from '../../core/work/work-state';
import type { Binding } from '../../store/config-schema';
import { withRequestPriority } from '../../dida/request-budget';
import type { RuntimeDeps } from '../session/runtime-deps';
import type { AgentTrack } from '../session/agent-tracker';
import { canWake, sendOwnMessage } from '../session/messages';
import type { StretchCounter } from '../session/stretch-counter';

/** Longest Work title shown in the wake note. */
export const POLL_TITLE_MAX = 200;

/** The note that wakes a session with its new current Work (the title bounded and fenced). */
export function pollNote(title: string): string {
  return `[dida-todo] New work from the bound Dida list is now your current Work. Check it with todo list, plan it with todo, and carry it out. ${UNTRUSTED_PREAMBLE}\n${fenceUntrusted('title', truncateGraphemes(title.trim(), POLL_TITLE_MAX))}`;
}

/** An idle bound session a poll may hand work to: a track of this process, or a session of another process. */
export interface PollCandidate {
  sessionId: string;
  binding: Binding;
  /** Set for a session of this process (woken directly); absent for one of another process (handed an offer). */
  track?: AgentTrack;
}

export interface PollListOptions {
  /** Works offered already (the machine's poller keeps them in the state): not offered again while they are listed. */
  offered: ReadonlySet<string>;
  /** Works that live sessions (of any process) have as their current Work, or that wait in an offer. */
  held?: ReadonlySet<string>;
  /** Hands a Work claimed for a session of another process over to it. */
  handOff?: (sessionId: string, work: WorkRecord) => Promise<void>;
  /** Records that a session of this process was woken for a Work (so a later poller does not offer it again). */
  woke?: (sessionId: string, key: string) => Promise<void>;
}

export interface PollListOutcome {
  /** The list's open tasks as read (ids and versions): equal fingerprints mean nothing changed. */
  fingerprint: string;
  /** Works handed to a session in this poll. */
  handed: string[];
}

export class Poller {
  /** `afterRead` runs once a list was read, before anyone is woken (answers from the phone go out first). */
  constructor(
    private readonly deps: RuntimeDeps,
    private readonly counter: StretchCounter,
    private readonly afterRead?: () => Promise<void>,
  ) {}

  /**
   * Reads the list once (its queue, as sync reads it) and, for each candidate in turn, claims the best Work routed to
   * its directory that nobody was offered, nobody holds and no paused session would get; a session of this process is
   * woken with the Work as its current one, a session of another process is handed it (`handOff`). Throws when the
   * list cannot be read.
   */
  async pollList(projectId: string, candidates: readonly PollCandidate[], options: PollListOptions): Promise<PollListOutcome> {
    const engine = await this.deps.engine();
    const queue = await engine.queue(projectId, undefined, undefined, { looks: 'paced' });
    await this.afterRead?.();
    const fingerprint = (queue.report?.tasks ?? []).map((t) => `${t.id}:${t.etag ?? t.modifiedTime ?? ''}`).join(',');
    // Works offered already (and those handed in this poll) are not offered again.
    const offered = new Set(options.offered);
    // Works another live session has as its current Work are not offered to a second one.
    const state = await this.deps.state.read();
    const held = new Set([...this.deps.tracker.all().map((t) => state.sessions[t.sessionId]?.currentWork).filter((k): k is string => !!k), ...(options.held ?? [])]);
    // Sessions of one list in directories with different route tags are offered different Works.
    const config = await this.deps.config.read().catch(() => undefined);
    const lost = new Set<string>();
    const handed: string[] = [];
    // A Work in the queue whose recorded claim names a session of this poll (its claim was posted but the hand-over
    // failed, e.g. the read after it was refused): that session gets it, and no other is sent to lose it.
    const claimant = (key: string) => {
      const holder = state.works[key]?.claim?.holder;
      return holder ? candidates.find((c) => holder.endsWith(`#${sessionTag(c.sessionId)}`))?.sessionId : undefined;
    };
    for (const candidate of candidates) {
      const { track } = candidate;
      if (!track && !options.handOff) continue;
      const ranked = queue.ranked
        .filter((entry) => !offered.has(entry.candidate.taskId) && !held.has(entry.candidate.taskId) && !lost.has(entry.candidate.taskId) && routesHere(config, candidate.binding, entry.candidate.tags))
        .filter((entry) => (claimant(entry.candidate.taskId) ?? candidate.sessionId) === candidate.sessionId)
        .sort((a, b) => Number(claimant(b.candidate.taskId) === candidate.sessionId) - Number(claimant(a.candidate.taskId) === candidate.sessionId));
      if (ranked.length === 0) continue;
      // A session whose Work the person paused from Dida is not handed other work either.
      // Nor is a session this dsh cannot wake (no agent.followup): the Work would be held by a session that never hears of it.
      if ((track && (track.agent.status !== 'idle' || !canWake(track.agent))) || this.deps.lifetime.aborted || sessionPaused(state, candidate.sessionId)) continue;
      // A session of another process makes the Work current itself when it takes the hand-over.
      // The claim is the acknowledgement of work already found: it goes with settles and comments, not with the next
      // speculative read of the list (the machine's request budget keeps a larger reserve for those).
      const work = await withRequestPriority('background', () => engine.claimNext(candidate.sessionId, projectId, { ...queue, ranked }, undefined, track ? {} : { makeCurrent: false }));
      if (!work) {
        // Every Work it tried is held elsewhere: the next session is not sent after them again.
        for (const entry of ranked) lost.add(entry.candidate.taskId);
        continue;
      }
      const key = workKey(work.taskId, work.occurrence);
      offered.add(key);
      held.add(key);
      handed.push(key);
      if (!track) {
        await options.handOff?.(candidate.sessionId, work);
        continue;
      }
      if (track.agent.status !== 'idle') continue;
      track.queueGranted = true;
      await this.counter.note(track.sessionId, { kind: 'new_work' });
      await options.woke?.(track.sessionId, key);
      sendOwnMessage((message) => track.agent.followup(message), pollNote(work.title), this.deps.newId());
    }
    return { fingerprint, handed };
  }
}
