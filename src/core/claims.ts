// Claims across hosts: before executing a Work occurrence a host posts a readable claim comment; the earliest live claim wins.
import type { Comment, Task } from '../dida/types';
import { parseDidaDate } from '../dida/dida-date';
import type { EngineDeps } from './engine-context';
import { WorkError } from './engine-context';
import { getLocale } from './locale';
import { MAX_COMMENT_LENGTH, MAX_TITLE_LENGTH, sanitizeForDida } from './text-guard';
import { lockKeyOf, loadWork, saveWork } from './work-io';
import type { WorkRecord } from './work-state';

/** Default lease: a claim with no progress on the Work for this long no longer blocks other hosts. */
export const DEFAULT_CLAIM_LEASE_MS = 30 * 60_000;

const LOCALES = [getLocale('zh'), getLocale('en')];

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function templateRegExp(template: string): RegExp {
  const pattern = escapeRegExp(template)
    .replace(escapeRegExp('{host}'), '(?<host>.+?)')
    .replace(escapeRegExp('{occurrence}'), '(?<occurrence>[0-9-]+)');
  return new RegExp(`^${pattern}$`, 'u');
}

const CLAIM_PATTERNS = LOCALES.flatMap((l) => [templateRegExp(l.t('dida.comment.claimOccurrence')), templateRegExp(l.t('dida.comment.claim'))]);

/** Reads a claim comment in any locale: the host label and, for recurring Works, the occurrence day. */
export function parseClaim(text: string): { host: string; occurrence: string } | undefined {
  for (const pattern of CLAIM_PATTERNS) {
    const match = pattern.exec(text.trim());
    if (match?.groups?.host) return { host: match.groups.host, occurrence: match.groups.occurrence ?? '' };
  }
  return undefined;
}

/** The label this host signs claims with (sanitized, single line). */
export function hostLabelOf(deps: EngineDeps): string {
  return sanitizeForDida(deps.hostLabel ?? 'dsh', { maxLength: 60, singleLine: true }) || 'dsh';
}

export function claimText(deps: EngineDeps, occurrence: string): string {
  const host = hostLabelOf(deps);
  const text = occurrence ? deps.locale.t('dida.comment.claimOccurrence', { host, occurrence }) : deps.locale.t('dida.comment.claim', { host });
  return sanitizeForDida(text, { maxLength: Math.min(MAX_COMMENT_LENGTH, MAX_TITLE_LENGTH) });
}

export interface LiveClaim {
  comment: Comment;
  host: string;
}

/**
 * The earliest claim for `occurrence` that is still live at `now`: its lease runs from the latest sign of
 * progress after it (its own time, any later comment, the task's last modification).
 */
export function earliestLiveClaim(comments: readonly Comment[], task: Pick<Task, 'modifiedTime'>, occurrence: string, leaseMs: number, now: number): LiveClaim | undefined {
  const taskActivity = parseDidaDate(task.modifiedTime)?.getTime() ?? 0;
  for (let i = 0; i < comments.length; i++) {
    const comment = comments[i] as Comment;
    const claim = parseClaim(comment.title);
    if (!claim || claim.occurrence !== occurrence) continue;
    let activity = Math.max(parseDidaDate(comment.createdTime)?.getTime() ?? 0, taskActivity);
    for (let j = i + 1; j < comments.length; j++) activity = Math.max(activity, parseDidaDate(comments[j]?.createdTime)?.getTime() ?? 0);
    if (now - activity <= leaseMs) return { comment, host: claim.host };
  }
  return undefined;
}

export type ClaimOutcome = { status: 'won'; posted: boolean } | { status: 'lost'; holder: string };

/**
 * Claims a Work occurrence for this host under the Work's lock: keeps a live claim it already holds, else posts
 * a claim and re-lists the comments; the earliest live claim decides. A loser must not execute the Work.
 */
export async function claimWork(deps: EngineDeps, key: string): Promise<ClaimOutcome> {
  const leaseMs = deps.claimLeaseMs ?? DEFAULT_CLAIM_LEASE_MS;
  const me = hostLabelOf(deps);
  return deps.locks.withLock(lockKeyOf(key), async () => {
    const work = await loadWork(deps, key);
    // The task is read once: the lease counts from its last change, which posting a claim does not move.
    const [task, comments] = await Promise.all([deps.gateway.getTask(work.projectId, work.taskId), deps.gateway.listComments(work.projectId, work.taskId)]);
    const decide = (list: readonly Comment[]): ClaimOutcome | undefined => {
      const live = earliestLiveClaim(list, task, work.occurrence, leaseMs, deps.now());
      if (!live) return undefined;
      return live.host === me ? { status: 'won', posted: false } : { status: 'lost', holder: live.host };
    };
    const first = decide(comments);
    if (first) return remember(deps, work, first);
    await deps.gateway.addComment(work.projectId, work.taskId, claimText(deps, work.occurrence));
    const second = decide(await deps.gateway.listComments(work.projectId, work.taskId)) ?? { status: 'won' as const, posted: true };
    return remember(deps, work, second.status === 'won' ? { status: 'won', posted: true } : second);
  });
}

async function remember(deps: EngineDeps, work: WorkRecord, outcome: ClaimOutcome): Promise<ClaimOutcome> {
  const claim = outcome.status === 'won' ? { holder: hostLabelOf(deps), at: deps.now() } : { holder: outcome.holder, at: deps.now() };
  if (work.claim?.holder !== claim.holder) {
    work.claim = claim;
    await saveWork(deps, work);
  }
  return outcome;
}

/** Throws `claimed_elsewhere` when another host holds the Work. */
export async function requireClaim(deps: EngineDeps, key: string, title: string): Promise<void> {
  const outcome = await claimWork(deps, key);
  if (outcome.status === 'lost') {
    throw new WorkError('claimed_elsewhere', `Another machine (${outcome.holder}) is already working on "${title}"; pick another Work with todo_work list.`);
  }
}
