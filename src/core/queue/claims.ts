// Claims across hosts and sessions: before executing a Work occurrence a session posts a readable claim comment; the
// earliest live claim by the list owner's account wins.
import type { Comment } from '../../dida/types';
import { formatDidaDate, parseDidaDate } from '../../dida/dida-date';
import type { EngineDeps } from '../work/engine-context';
import { WorkError } from '../work/engine-context';
import { getLocale } from '../text/locale';
import { MAX_COMMENT_LENGTH, MAX_TITLE_LENGTH, sanitizeForDida } from '../text/text-guard';
import { loadWork, saveWork, withWork } from '../work/work-io';
import type { EngineState, WorkRecord } from '../work/work-state';
import { holderGoneHere, holderOf, hostLabelOf, postRelease, sessionTag } from './claim-holders';


/** Default lease: a claim with no progress on the Work for this long no longer blocks other sessions. */
export const DEFAULT_CLAIM_LEASE_MS = 30 * 60_000;

const LOCALES = [getLocale('zh'), getLocale('en')];

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function templateRegExp(template: string): RegExp {
  const pattern = escapeRegExp(template)
    .replace(escapeRegExp('{host}'), '(?<host>.+?)')
    .replace(escapeRegExp('{session}'), '(?<session>[0-9A-Za-z]{1,16})')
    .replace(escapeRegExp('{occurrence}'), '(?<occurrence>[0-9-]+)');
  return new RegExp(`^${pattern}$`, 'u');
}

const CLAIM_KEYS = ['dida.comment.claimOccurrence', 'dida.comment.claim', 'dida.comment.claimOccurrenceLegacy', 'dida.comment.claimLegacy'] as const;
const CLAIM_PATTERNS = LOCALES.flatMap((l) => CLAIM_KEYS.map((key) => templateRegExp(l.t(key))));

/** The notices that end a claim: a session's own release, and another host's report that its lease ran out. */
const END_KEYS = ['dida.comment.released', 'dida.comment.releasedWaiting', 'dida.comment.claimExpired'] as const;
const END_PATTERNS = LOCALES.flatMap((l) =>
  END_KEYS.map((key) => {
    const template = l.t(key);
    // Up to the first variable other than the two names: what follows is free text (where it stopped, the minutes).
    const cut = template.search(/\{(?!host\}|session\})\w+\}/);
    const pattern = escapeRegExp(cut >= 0 ? template.slice(0, cut) : template)
      .replace(escapeRegExp('{host}'), '(?<host>.+?)')
      .replace(escapeRegExp('{session}'), '(?<session>[0-9A-Za-z]{1,16})');
    return new RegExp(`^${pattern}`, 'u');
  }),
);

/**
 * The bundle's own words on a Work it works on (progress of a step, asking or answering the person, a pause, a wait, the
 * review): only these move a claim's lease on. The person writes with the same account, so anything else they write
 * ("进展如何？") is no progress: checking on a stuck Work must not keep it stuck.
 */
const PROGRESS_KEYS = [
  'dida.comment.started',
  'dida.comment.completed',
  'dida.comment.completedWithResult',
  'dida.comment.skipped',
  'dida.comment.waiting',
  'dida.comment.resumed',
  'dida.comment.pausedAt',
  'dida.comment.pausedBefore',
  'dida.comment.pausedNoStep',
  'dida.comment.waitUntil',
  'dida.comment.waitUntilNoTime',
  'dida.comment.summary',
  'dida.comment.reworkAck',
] as const;
// What each text starts with before its first variable (a coalesced post starts with its first entry).
const PROGRESS_PREFIXES = [...new Set(LOCALES.flatMap((l) => PROGRESS_KEYS.map((key) => l.t(key).split(/\{\w+\}/)[0] as string)))];

/** Whether a comment is the bundle's own progress on a Work (see PROGRESS_KEYS): never a person's own words. */
export function isBundleProgress(text: string): boolean {
  const trimmed = text.trim();
  return PROGRESS_PREFIXES.some((prefix) => trimmed.startsWith(prefix));
}

/** Reads a notice that ends a claim (a release, or a report that its lease ran out): whose claim it ends. */
export function parseClaimEnd(text: string): { host: string; session: string } | undefined {
  for (const pattern of END_PATTERNS) {
    const match = pattern.exec(text.trim());
    if (match?.groups?.host && match.groups.session) return { host: match.groups.host, session: match.groups.session };
  }
  return undefined;
}

/** Reads a claim comment in any locale: the host label, the session tag ('' in claims of older versions) and the occurrence day. */
export function parseClaim(text: string): { host: string; session: string; occurrence: string } | undefined {
  for (const pattern of CLAIM_PATTERNS) {
    const match = pattern.exec(text.trim());
    if (match?.groups?.host) return { host: match.groups.host, session: match.groups.session ?? '', occurrence: match.groups.occurrence ?? '' };
  }
  return undefined;
}

export function claimText(deps: EngineDeps, occurrence: string, sessionId: string): string {
  const vars = { host: hostLabelOf(deps), session: sessionTag(sessionId), occurrence };
  const text = occurrence ? deps.locale.t('dida.comment.claimOccurrence', vars) : deps.locale.t('dida.comment.claim', vars);
  return sanitizeForDida(text, { maxLength: Math.min(MAX_COMMENT_LENGTH, MAX_TITLE_LENGTH), singleLine: true });
}

export interface LiveClaim {
  comment: Comment;
  holder: string;
  /** When the claim last showed activity (its own time, or the owner's latest progress comment after it), in ms. */
  activity: number;
}

function timeOf(comment: Comment | undefined): number {
  return parseDidaDate(comment?.createdTime)?.getTime() ?? 0;
}

/**
 * The earliest claim for `occurrence` by the owner's account that is still live at `now`. Comments are ordered by
 * `createdTime` (never by list position). A claim's lease runs from its own time and the bundle's own progress after it
 * (isBundleProgress; the person's comments are not progress). Claims by other accounts never count (a collaborator
 * cannot block the owner's agents).
 */
export function earliestLiveClaim(comments: readonly Comment[], ownerUserId: string, occurrence: string, leaseMs: number, now: number): LiveClaim | undefined {
  const owned = comments.filter((c) => c.userId === ownerUserId).sort((a, b) => timeOf(a) - timeOf(b) || a.id.localeCompare(b.id));
  for (let i = 0; i < owned.length; i++) {
    const comment = owned[i] as Comment;
    const claim = parseClaim(comment.title);
    if (!claim || claim.occurrence !== occurrence) continue;
    const later = owned.slice(i + 1);
    // A release by its holder, or a report that its lease ran out, ends the claim.
    if (later.some((c) => endsClaim(c.title, claim))) continue;
    // Progress is the bundle's own later words (never a claim, which proves nothing, nor the person's own comments).
    const progress = later.filter((c) => isBundleProgress(c.title));
    const activity = Math.max(timeOf(comment), timeOf(progress.at(-1)));
    if (now - activity <= leaseMs) return { comment, holder: claim.session ? `${claim.host}#${claim.session}` : claim.host, activity };
  }
  return undefined;
}

function endsClaim(text: string, claim: { host: string; session: string }): boolean {
  const end = parseClaimEnd(text);
  return !!end && end.host === claim.host && (claim.session === '' || end.session === claim.session);
}

export type ClaimOutcome = { status: 'won'; posted: boolean } | { status: 'lost' };

export interface ClaimOptions {
  /** Sessions of this machine whose claims this session takes over (a session that crashed mid-turn). */
  inheritFrom?: readonly string[];
}

/**
 * Claims a Work occurrence for the session `sessionId` under the Work's lock: a claim is posted (its answer names the
 * owner's account) and the comments are listed once: the earliest live claim by the owner decides, and a losing claim
 * is taken back (2 requests; 3 for a loser). When this machine's record names a live holder, or an earlier post may
 * have been made, the comments are listed first and a live claim decides without a post (the session keeps its own).
 * Two sessions of one host are two claimants. A loser must not execute the Work.
 */
export async function claimWork(deps: EngineDeps, key: string, sessionId: string, options: ClaimOptions = {}): Promise<ClaimOutcome> {
  const leaseMs = deps.claimLeaseMs ?? DEFAULT_CLAIM_LEASE_MS;
  const me = holderOf(deps, sessionId);
  const mine = new Set([me, ...(options.inheritFrom ?? []).map((s) => holderOf(deps, s))]);
  return withWork(deps, key, async () => {
    const work = await loadWork(deps, key);
    let owner = (await deps.state.read()).owners[work.projectId];
    let holder: { name: string; at: number } | undefined;
    const decide = (list: readonly Comment[], ownerId: string): ClaimOutcome | undefined => {
      const live = earliestLiveClaim(list, ownerId, work.occurrence, leaseMs, deps.now());
      if (!live) return undefined;
      holder = { name: live.holder, at: live.activity };
      return mine.has(live.holder) ? { status: 'won', posted: live.holder === me ? false : true } : { status: 'lost' };
    };
    const text = claimText(deps, work.occurrence, sessionId);
    // A Work this machine knows no live claim of is claimed by posting first: the one look at the comments after the
    // post decides. The comments are looked at first when the record names a live holder (this session's own too: it
    // keeps it without a post), a post of this session may have been made already (its answer was lost, or the
    // process died before recording it), or a session this one takes over may hold it.
    const recorded = !!work.claim && deps.now() - work.claim.at <= leaseMs;
    // Other machines claiming on this list lately: a post first would often be one to take back (two of them, three).
    const peers = peersActive(await deps.state.read(), work.projectId, deps.now(), leaseMs);
    if (recorded || peers || work.claimPosting !== undefined || (options.inheritFrom?.length ?? 0) > 0) {
      const comments = await releaseGone(deps, work, await notePeers(deps, work.projectId, await deps.gateway.listComments(work.projectId, work.taskId), owner, leaseMs), owner, leaseMs, mine);
      if (!owner) {
        // A claim this session posted before the process died (before it could record the owner): its author is the owner.
        const mine = comments.find((c) => c.title === text && c.userId);
        if (mine?.userId) owner = await learnOwner(deps, work.projectId, mine.userId);
      }
      if (owner) {
        const first = decide(comments, owner);
        // A claim of a session this one takes over is this session's: its own claim is posted so the comments say so.
        if (first && !(first.status === 'won' && first.posted)) return remember(deps, work, first, me, holder);
      }
    }
    // From here a claim of this session may be in Dida: a retry after a crash or a lost answer looks for it first.
    work.claimPosting = deps.now();
    await saveWork(deps, work);
    const posted = await deps.gateway.addComment(work.projectId, work.taskId, text);
    if (posted.userId && posted.userId !== owner) owner = await learnOwner(deps, work.projectId, posted.userId);
    if (!owner) return remember(deps, work, { status: 'won', posted: true }, me);
    // Posted: recorded as this session's until the read below says otherwise, so a read that fails (a rate limit) does
    // not leave a claim in Dida that no record on this machine names (the poller hands such a Work to its claimant).
    await remember(deps, work, { status: 'won', posted: true }, me);
    holder = undefined;
    const after = await releaseGone(deps, work, await notePeers(deps, work.projectId, await deps.gateway.listComments(work.projectId, work.taskId), owner, leaseMs), owner, leaseMs, mine);
    const second = decide(after, owner) ?? { status: 'won' as const, posted: true };
    if (second.status === 'lost') await withdraw(deps, work, posted.id);
    return remember(deps, work, second.status === 'won' ? { status: 'won', posted: true } : second, me, holder);
  });
}

/** Whether another machine's live claim was seen on the list within `leaseMs` (see notePeers). */
export function peersActive(state: EngineState, projectId: string, now: number, leaseMs: number): boolean {
  const seen = state.peers[projectId];
  return seen !== undefined && now - seen <= leaseMs;
}

/**
 * Remembers when another machine's claim on the list (by the owner's account, within its lease) was last seen in
 * `comments` (one state update, only when it is newer than what is known). Returns the comments.
 */
async function notePeers(deps: EngineDeps, projectId: string, comments: Comment[], owner: string | undefined, leaseMs: number): Promise<Comment[]> {
  const host = hostLabelOf(deps);
  let latest = -Infinity;
  for (const comment of comments) {
    if (owner && comment.userId !== owner) continue;
    const claim = parseClaim(comment.title);
    if (!claim || claim.host === host) continue;
    latest = Math.max(latest, timeOf(comment));
  }
  if (latest === -Infinity || deps.now() - latest > leaseMs) return comments;
  const known = (await deps.state.read()).peers[projectId] ?? -Infinity;
  if (latest > known) {
    await deps.state.update((s) => {
      s.peers[projectId] = Math.max(s.peers[projectId] ?? -Infinity, latest);
    });
  }
  return comments;
}

/** At most this many claims of gone sessions are released in one claim (each costs a comment). */
const MAX_GONE_RELEASES = 3;

/**
 * A live claim in `comments` held by a gone session of this machine (holderGoneHere: it ended, its release refused by
 * the budget, or its process died between turns) is no claim: its release is posted in its name first, so every
 * machine reads that nobody holds it. Returns the comments with the releases added.
 */
async function releaseGone(deps: EngineDeps, work: WorkRecord, comments: Comment[], owner: string | undefined, leaseMs: number, mine: ReadonlySet<string>): Promise<Comment[]> {
  if (!owner) return comments;
  const host = hostLabelOf(deps);
  let state: EngineState | undefined;
  let list = comments;
  for (let i = 0; i < MAX_GONE_RELEASES; i++) {
    const live = earliestLiveClaim(list, owner, work.occurrence, leaseMs, deps.now());
    if (!live || mine.has(live.holder)) return list;
    state ??= await deps.state.read();
    if (!holderGoneHere(state, live.holder, host, deps.isAlive)) return list;
    const posted = await postRelease(deps, work, live.holder.slice(host.length + 1));
    deps.log?.(`released the claim of ${live.holder} on Work ${work.taskId}: its session has ended`);
    list = [...list, { ...posted, userId: posted.userId ?? owner, createdTime: posted.createdTime ?? formatDidaDate(deps.now()) }];
  }
  return list;
}

async function learnOwner(deps: EngineDeps, projectId: string, userId: string): Promise<string> {
  await deps.state.update((s) => {
    s.owners[projectId] = userId;
  });
  return userId;
}

/** A losing claim is taken back, so the person does not read that this session started working. */
async function withdraw(deps: EngineDeps, work: WorkRecord, commentId: string): Promise<void> {
  try {
    await deps.gateway.deleteComment?.(work.projectId, work.taskId, commentId);
  } catch (error) {
    deps.log?.(`a losing claim comment could not be removed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * Records the claim decision on the Work: this session's (now), or the other holder's with the time of its last
 * activity in Dida (its lease runs from there).
 */
async function remember(deps: EngineDeps, work: WorkRecord, outcome: ClaimOutcome, me: string, other?: { name: string; at: number }): Promise<ClaimOutcome> {
  const holder = outcome.status === 'won' ? me : (other?.name ?? 'elsewhere');
  const at = outcome.status === 'won' ? deps.now() : Math.min(deps.now(), other?.at ?? deps.now());
  const posting = work.claimPosting !== undefined;
  delete work.claimPosting;
  if (posting || work.claim?.holder !== holder || Math.abs(at - work.claim.at) > 60_000) {
    work.claim = { holder, at };
    await saveWork(deps, work);
  }
  return outcome;
}

/** Throws `claimed_elsewhere` when another session (of this or another host) holds the Work. */
export async function requireClaim(deps: EngineDeps, key: string, sessionId: string, options: ClaimOptions = {}): Promise<void> {
  const outcome = await claimWork(deps, key, sessionId, options);
  if (outcome.status === 'lost') {
    throw new WorkError('claimed_elsewhere', `Another session (on this or another machine) is already working on Work ${key}; pick another Work with todo_work list.`);
  }
}

/**
 * Whether the last claim seen for the Work is another session's and still within its lease (with `state`: a gone
 * session of this machine holds nothing, see holderGoneHere).
 */
export function heldElsewhere(deps: EngineDeps, work: WorkRecord, sessionId: string | undefined, state?: EngineState): boolean {
  const claim = work.claim;
  if (!claim) return false;
  if (state && holderGoneHere(state, claim.holder, hostLabelOf(deps), deps.isAlive)) return false;
  if (sessionId !== undefined && claim.holder === holderOf(deps, sessionId)) return false;
  if (sessionId === undefined && claim.holder.startsWith(`${hostLabelOf(deps)}#`)) return false;
  return deps.now() - claim.at <= (deps.claimLeaseMs ?? DEFAULT_CLAIM_LEASE_MS);
}
