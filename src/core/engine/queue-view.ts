// The queue as a person sees it: every open Work of a bound list, the executable ones in the order an agent takes them,
// the others with why not (draft, another day, waiting, held, routed, settled). Read only: no claim, no write.
import { DEFAULT_CLAIM_LEASE_MS, earliestLiveClaim } from '../queue/claims';
import type { SkipReason } from '../queue/queue-policy';
import type { Route } from '../queue/route-tags';
import { levelFromPriority, type PriorityLevel, type TimeGateReason } from '../time/schedule';
import type { WorkEngine } from './work-engine';
import { SETTLED, visibleSteps, workKey, type WorkRecord } from '../work/work-state';
import { askLine } from '../phone/desk-asks';
import { usageOf, workUsage } from '../usage/usage';
import type { Usage } from '../usage/usage-schema';

/** The viewer a person's look at the queue is taken as: a session of this machine that holds nothing. */
export const PERSON_VIEWER = 'dida-todo-queue';

/** Claims of other machines looked up in Dida (one comment read each) at most. */
export const MAX_HOLDER_READS = 10;

export interface PersonQueueEntry {
  /** The Work's key (its task id, plus `#<day>` for an occurrence of a recurring task). */
  key: string;
  taskId: string;
  /** As Dida has it: untrusted text, escape it where it is shown. */
  title: string;
  priority: number;
  level: PriorityLevel;
  /** 1-based place in the order an agent takes the executable Works; absent when the Work is not executable here. */
  position?: number;
  /** Why the Work is not executable here; absent when it is. */
  reason?: SkipReason;
  /** `time_gate`: the day the Work is scheduled for (in its own zone) and how the gate is closed. */
  day?: string;
  gate?: TimeGateReason;
  /** `routed`: the route tag of the other bound directory it belongs to, when one is known here. */
  routedTo?: string;
  /** `claimed`: who holds it — the machine and, when known, the session tag; absent when only "someone else" is known. */
  holder?: { host: string; session?: string };
  /** `waiting_for_human`: the person paused it (rather than the agent asking them something). */
  paused?: boolean;
  /** The current Work of the session looking (`/dida queue` in the session holding it): not offered again. */
  current?: boolean;
  /** The person answered or resumed it in Dida and the agent has not been given the answer yet. */
  answered?: boolean;
  /** dsh's own question or approval the session holding it waits on (the oldest): what it asks. */
  asking?: { number: number; kind: 'question' | 'plan' | 'approval'; text: string };
  steps: { settled: number; total: number };
  tags: string[];
  /** What the Work cost on this machine so far, all rounds (absent before its first model answer). */
  usage?: Usage;
}

export interface PersonQueue {
  projectId: string;
  /** The executable Works in the order an agent takes them, then every other open Work in Dida's order. */
  entries: PersonQueueEntry[];
  /** How many entries are executable here. */
  executable: number;
}

export interface PersonQueueOptions {
  /** The session looking (its own claims do not hold it back); default a session of this machine that holds nothing. */
  sessionId?: string;
  /** The route of the directory looking (see routeFor). */
  route?: Route;
  /** Look up who holds Works claimed on another machine (one comment read each, at most MAX_HOLDER_READS). */
  readHolders?: boolean;
}

function splitHolder(holder: string): { host: string; session?: string } {
  const at = holder.lastIndexOf('#');
  return at > 0 ? { host: holder.slice(0, at), session: holder.slice(at + 1) } : { host: holder };
}

/**
 * The bound list's queue as a person sees it. Reads the list the way a session does (one read of the list; sync never
 * rewrites a person's task), ranks it as the agent would for `sessionId` in a directory with `route`, and never claims.
 * Works another session holds are `claimed`; with `readHolders`, a Work known only to be held "elsewhere" is looked up
 * in its comments to name the holder.
 */
export async function personQueue(engine: WorkEngine, projectId: string, options: PersonQueueOptions = {}): Promise<PersonQueue> {
  const view = await engine.queue(projectId, options.sessionId ?? PERSON_VIEWER, options.route);
  const state = await engine.deps.state.read();
  const works = new Map<string, WorkRecord>();
  for (const work of Object.values(state.works)) if (work.projectId === projectId) works.set(workKey(work.taskId, work.occurrence), work);
  const progress = (key: string) => {
    const steps = works.get(key) ? visibleSteps(works.get(key) as WorkRecord) : [];
    return { settled: steps.filter((s) => SETTLED.has(s.status)).length, total: steps.length };
  };
  const base = (key: string, candidate: { title: string; priority: number; tags?: readonly string[] | null }) => ({
    key,
    taskId: works.get(key)?.taskId ?? key,
    title: candidate.title,
    priority: candidate.priority,
    level: levelFromPriority(candidate.priority),
    steps: progress(key),
    tags: [...(candidate.tags ?? [])],
    ...(state.usage[key] ? { usage: workUsage(usageOf(state, key)) } : {}),
    ...(works.get(key)?.asks?.[0] ? { asking: askingOf(works.get(key)?.asks?.[0] as NonNullable<WorkRecord['asks']>[number]) } : {}),
    ...(works.get(key)?.pendingAnswer ? { answered: true } : {}),
  });
  const viewer = options.sessionId ?? PERSON_VIEWER;
  const currentKey = state.sessions[viewer]?.currentWork;
  const entries: PersonQueueEntry[] = [];
  // The looking session's own current Work is that: never a place in the queue it would take again.
  let place = 0;
  for (const r of view.ranked) {
    if (r.candidate.taskId === currentKey) entries.unshift({ ...base(r.candidate.taskId, r.candidate), current: true });
    else entries.push({ ...base(r.candidate.taskId, r.candidate), position: ++place });
  }
  let reads = 0;
  for (const skipped of view.skipped) {
    const key = skipped.candidate.taskId;
    const held = works.get(key)?.claim;
    // A draft someone holds (taken at priority none on purpose) reads as held, not as a draft nobody works on.
    const reason: SkipReason = skipped.reason === 'draft' && held && key !== currentKey && !works.get(key)?.waiting ? 'claimed' : skipped.reason;
    const entry: PersonQueueEntry = { ...base(key, skipped.candidate), reason };
    if (key === currentKey) entry.current = true;
    if (skipped.reason === 'time_gate') {
      if (skipped.gate?.day) entry.day = skipped.gate.day;
      if (skipped.gate?.reason) entry.gate = skipped.gate.reason;
    }
    if (skipped.reason === 'routed' && skipped.routedTo) entry.routedTo = skipped.routedTo;
    const work = works.get(key);
    if (skipped.reason === 'waiting_for_human' && work?.waiting?.pausedBy) entry.paused = true;
    if (reason === 'claimed' && work?.claim) {
      if (work.claim.holder !== 'elsewhere') entry.holder = splitHolder(work.claim.holder);
      else if (options.readHolders && reads < MAX_HOLDER_READS && state.owners[projectId]) {
        reads++;
        const holder = await holderInDida(engine, work, state.owners[projectId] as string);
        if (holder) entry.holder = splitHolder(holder);
      }
    }
    entries.push(entry);
  }
  return { projectId, entries, executable: place };
}

function askingOf(ask: NonNullable<WorkRecord['asks']>[number]): NonNullable<PersonQueueEntry['asking']> {
  return { number: ask.number, kind: ask.kind, text: askLine(ask) };
}

/** Who holds the Work according to its comments (the earliest live claim by the owner); undefined when unreadable. */
async function holderInDida(engine: WorkEngine, work: WorkRecord, owner: string): Promise<string | undefined> {
  try {
    const comments = await engine.deps.gateway.listComments(work.projectId, work.taskId);
    return earliestLiveClaim(comments, owner, work.occurrence, engine.deps.claimLeaseMs ?? DEFAULT_CLAIM_LEASE_MS, engine.deps.now())?.holder;
  } catch (error) {
    engine.deps.log?.(`could not read who holds a Work: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
}
