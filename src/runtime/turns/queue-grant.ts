// The queue grant: the person's trigger phrase lets the turn pick from the queue, and the turn is given the queue
// itself (the executable Works, bounded and fenced) instead of a bare note.
import { routeFor } from '../../core/queue/route-tags';
import { renderQueuePayload, type QueuePayloadStrings, type RankedWork } from '../../core/queue/queue-policy';
import { detectQueueGrant } from '../../core/queue/queue-trigger';
import type { RuntimeDeps } from '../session/runtime-deps';
import { messageOf } from '../session/runtime-deps';
import type { AgentTrack } from '../session/agent-tracker';
import { pluginMessage } from '../session/messages';
import type { UserMessageLike } from '../session/session-ports';

/** Largest queue text added to a turn (characters). */
export const QUEUE_PAYLOAD_MAX = 8_000;
/** Longest Dida title and body shown per Work in it. */
export const QUEUE_TITLE_MAX = 120;
export const QUEUE_BODY_MAX = 300;
/** How long the turn's first step waits for the queue before falling back to a bare note. */
export const GRANT_WAIT_MS = 10_000;

export const GRANT_HEAD = '[dida-todo] The person asked to check the Dida queue: take the top Work with todo_work next, or another with todo_work switch.';
const GRANT_FALLBACK = `${GRANT_HEAD} The queue could not be read just now.`;

const STRINGS: QueuePayloadStrings = {
  heading: 'Executable Works in the bound Dida list, highest priority first',
  empty: 'Nothing is executable right now.',
  levels: { none: 'none', low: 'low', medium: 'medium', high: 'high' },
  idLabel: 'id',
};

/**
 * The queue as text of at most `max` characters: as many Works as fit, in rank order, each title and body capped,
 * then a visible "… (N more …)" line for the Works left out.
 */
export function boundedQueuePayload(ranked: readonly RankedWork[], now: Date, max: number = QUEUE_PAYLOAD_MAX): string {
  const render = (count: number) => {
    const shown = renderQueuePayload(ranked.slice(0, count), { strings: STRINGS, now, maxTitleLength: QUEUE_TITLE_MAX, maxBodyLength: QUEUE_BODY_MAX, maxEntries: count });
    const left = ranked.length - count;
    return left > 0 ? `${shown}\n\n… (${left} more executable Work${left === 1 ? '' : 's'}: todo_work list shows them)` : shown;
  };
  let low = 0;
  let high = ranked.length;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (render(mid).length <= max) low = mid;
    else high = mid - 1;
  }
  const text = render(low);
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

export class QueueGrant {
  constructor(
    private readonly deps: RuntimeDeps,
    private readonly triggers: () => readonly string[],
  ) {}

  /** A person's message: the exact trigger phrase grants this turn the queue. True when it did. */
  onHumanMessage(track: AgentTrack, text: string): boolean {
    if (!detectQueueGrant(text, this.triggers())) return false;
    track.queueGranted = true;
    track.grantPending = true;
    return true;
  }

  /** The turn's queue message, once after a grant (empty otherwise); bounded in time and size. */
  async messages(track: AgentTrack): Promise<UserMessageLike[]> {
    if (!track.grantPending) return [];
    track.grantPending = false;
    const binding = track.binding;
    let text = GRANT_FALLBACK;
    if (binding) {
      try {
        // Only the Works routed to this directory (its binding's route tag) are offered.
        const route = async () => routeFor(await this.deps.config.read(), binding);
        const read = this.deps.engine().then(async (engine) => boundedQueuePayload((await engine.queue(binding.projectId, undefined, await route())).ranked, new Date(this.deps.clock.now())));
        read.catch(() => undefined);
        const payload = await Promise.race([read, this.deps.clock.wait(GRANT_WAIT_MS, [this.deps.lifetime]).then(() => undefined)]);
        if (payload !== undefined) text = `${GRANT_HEAD}\n\n${payload}`;
      } catch (error) {
        this.deps.log(`could not read the queue for the person's request: ${messageOf(error)}`);
      }
    }
    return [pluginMessage(text, this.deps.newId())];
  }
}
