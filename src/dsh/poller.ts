// The poller: wakes an idle bound session when the list has executable work it was not offered yet, claiming the
// Work for that session before waking it, and never handing one Work to two sessions.
import { sessionPaused } from '../core/phone/phone-signals';
import { routesHere } from '../core/queue/route-tags';
import { fenceUntrusted, truncateGraphemes, UNTRUSTED_PREAMBLE } from '../core/text/text-guard';
import { workKey } from '../core/work/work-state';
import { messageOf, type AdapterDeps } from './adapter-deps';
import type { AgentTrack } from './agent-tracker';
import { pluginMessage } from './ports';
import type { StretchCounter } from './stretch-counter';

/** Longest Work title shown in the wake note. */
export const POLL_TITLE_MAX = 200;

/** The note that wakes a session with its new current Work (the title bounded and fenced). */
export function pollNote(title: string): string {
  return `[dida-todo] New work from the bound Dida list is now your current Work. Check it with todo list, plan it with todo, and carry it out. ${UNTRUSTED_PREAMBLE}\n${fenceUntrusted('title', truncateGraphemes(title.trim(), POLL_TITLE_MAX))}`;
}

export class Poller {
  /** Per list: Works a session was already woken for (kept while they stay in the list's queue). */
  private readonly offered = new Map<string, Set<string>>();
  private stop: (() => void) | undefined;
  private running: Promise<void> | undefined;

  /** `afterRead` runs once a list was read, before anyone is woken (answers from the phone go out first). */
  constructor(
    private readonly deps: AdapterDeps,
    private readonly counter: StretchCounter,
    private readonly afterRead?: () => Promise<void>,
  ) {}

  /** Polls every `minutes` until `close()`. */
  start(minutes: number): void {
    this.stop?.();
    this.stop = this.deps.clock.every(minutes * 60_000, () => void this.poll());
  }

  close(): void {
    this.stop?.();
    this.stop = undefined;
  }

  /** One poll (a poll already running is joined, not repeated). */
  poll(): Promise<void> {
    this.running ??= this.pollOnce().finally(() => (this.running = undefined));
    return this.running;
  }

  private async pollOnce(): Promise<void> {
    const byList = new Map<string, AgentTrack[]>();
    for (const track of this.deps.tracker.all()) {
      if (track.subagent || !track.binding || track.agent.status !== 'idle') continue;
      const list = byList.get(track.binding.projectId) ?? [];
      list.push(track);
      byList.set(track.binding.projectId, list);
    }
    for (const [projectId, tracks] of byList) {
      if (this.deps.lifetime.aborted) return;
      try {
        await this.pollList(projectId, tracks);
      } catch (error) {
        this.deps.log(`polling the Dida list failed (will retry): ${messageOf(error)}`);
      }
    }
  }

  private async pollList(projectId: string, tracks: AgentTrack[]): Promise<void> {
    const engine = await this.deps.engine();
    const queue = await engine.queue(projectId);
    await this.afterRead?.();
    const known = new Set([...queue.ranked, ...queue.skipped].map((entry) => entry.candidate.taskId));
    const offered = new Set([...(this.offered.get(projectId) ?? [])].filter((key) => known.has(key)));
    this.offered.set(projectId, offered);
    // Works another live session of this process has as its current Work are not offered to a second one.
    const state = await this.deps.state.read();
    const held = new Set(this.deps.tracker.all().map((t) => state.sessions[t.sessionId]?.currentWork).filter((k): k is string => !!k));
    // Sessions of one list in directories with different route tags are offered different Works.
    const config = await this.deps.config.read().catch(() => undefined);
    const lost = new Set<string>();
    for (const track of tracks) {
      const ranked = queue.ranked.filter((entry) => !offered.has(entry.candidate.taskId) && !held.has(entry.candidate.taskId) && !lost.has(entry.candidate.taskId) && routesHere(config, track.binding, entry.candidate.tags));
      if (ranked.length === 0) continue;
      // A session whose Work the person paused from Dida is not handed other work either.
      if (track.agent.status !== 'idle' || this.deps.lifetime.aborted || sessionPaused(state, track.sessionId)) continue;
      const work = await engine.claimNext(track.sessionId, projectId, { ...queue, ranked });
      if (!work) {
        // Every Work it tried is held elsewhere: the next session is not sent after them again.
        for (const entry of ranked) lost.add(entry.candidate.taskId);
        continue;
      }
      const key = workKey(work.taskId, work.occurrence);
      offered.add(key);
      held.add(key);
      if (track.agent.status !== 'idle') continue;
      track.queueGranted = true;
      await this.counter.note(track.sessionId, { kind: 'new_work' });
      track.agent.followup(pluginMessage(pollNote(work.title), this.deps.newId()));
    }
  }
}
