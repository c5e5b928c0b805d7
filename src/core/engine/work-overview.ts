// What a person asks of the open Works of a list, from the local state alone: who holds each one (machine, session,
// since when, alive or not), why it waits, and the progress comments that have waited long.
import { holderLiveHere } from '../queue/claim-holders';
import { askLine } from '../phone/desk-asks';
import { DEFAULT_CLAIM_LEASE_MS } from '../queue/claims';
import { longWaiting } from '../work/outbox';
import { SETTLED, visibleSteps, type EngineState } from '../work/work-state';
import { usageOf, workUsage } from '../usage/usage';
import type { Usage } from '../usage/usage-schema';

/** Why a Work waits, as status says it: the agent asked, continuation gave up, a model failure, or the person paused it. */
export type WaitReason = 'asked' | 'exhausted' | 'auth' | 'quota' | 'invalid_request' | 'limit' | 'unknown' | 'spend' | 'paused';

const WAIT_REASONS: ReadonlySet<string> = new Set(['asked', 'exhausted', 'auth', 'quota', 'invalid_request', 'limit', 'unknown', 'spend']);

export interface WorkOverview {
  key: string;
  title: string;
  phase: string;
  steps: { done: number; total: number };
  /** The session that holds it, when a claim is recorded. */
  holder?: {
    host: string;
    session: string;
    /** When the claim last showed activity (ms). */
    since: number;
    /** true: live in a process of this machine; false: its lease ran out or its process here is gone; null: another machine, within its lease. */
    alive: boolean | null;
  };
  waiting?: { reason: WaitReason; since: number };
  /** dsh's own questions and approvals that wait for the person's answer (in Dida or at the desk), oldest first. */
  asking?: Array<{ number: number; kind: 'question' | 'plan' | 'approval'; text: string; since: number }>;
  /** Progress comments of this Work that have waited long to be posted (oldest first, ms). */
  commentsWaitingSince?: number;
  /** What it cost on this machine so far, all rounds (absent before its first model answer). */
  usage?: Usage;
}

/**
 * The open (and finalizing) Works of list `projectId`, in the state's order. `host` is this machine's label, used to
 * tell this machine's sessions (checked against their processes) from another machine's (trusted within their lease).
 */
export function workOverview(state: EngineState, projectId: string, now: number, host: string, options: { leaseMs?: number; isAlive?: (pid: number) => boolean } = {}): WorkOverview[] {
  const lease = options.leaseMs ?? DEFAULT_CLAIM_LEASE_MS;
  const late = new Map<string, number>();
  for (const entry of longWaiting(state, now)) if (!late.has(entry.workKey)) late.set(entry.workKey, entry.createdAt);
  const out: WorkOverview[] = [];
  for (const [key, work] of Object.entries(state.works)) {
    if (work.projectId !== projectId || (work.phase !== 'open' && work.phase !== 'finalizing')) continue;
    const steps = visibleSteps(work);
    const view: WorkOverview = { key, title: work.title, phase: work.phase, steps: { done: steps.filter((s) => SETTLED.has(s.status)).length, total: steps.length } };
    const claim = work.claim;
    if (claim && claim.holder !== 'elsewhere') {
      const cut = claim.holder.lastIndexOf('#');
      const holderHost = cut > 0 ? claim.holder.slice(0, cut) : claim.holder;
      const session = cut > 0 ? claim.holder.slice(cut + 1) : '';
      const lapsed = now - claim.at > lease;
      const here = holderHost === host;
      const alive = here ? holderLiveHere(state, claim.holder, host, options.isAlive) : lapsed ? false : null;
      view.holder = { host: holderHost, session, since: claim.at, alive };
    }
    if (work.waiting) {
      const cause = work.waiting.pausedBy ? 'paused' : work.waiting.cause && WAIT_REASONS.has(work.waiting.cause) ? (work.waiting.cause as WaitReason) : 'asked';
      view.waiting = { reason: cause, since: work.waiting.since };
    }
    if (work.asks?.length) view.asking = work.asks.map((a) => ({ number: a.number, kind: a.kind, text: askLine(a), since: a.since }));
    if (state.usage[key]) view.usage = workUsage(usageOf(state, key));
    const waitingSince = late.get(key);
    if (waitingSince !== undefined) view.commentsWaitingSince = waitingSince;
    out.push(view);
  }
  return out;
}
