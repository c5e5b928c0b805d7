// A Work is held only while someone is on it: a session that stops releases its claim in Dida with a word on how far
// it got (a release it could not send is sent by this machine later), and the first host that finds a claim whose lease
// ran out says so once and puts the Work back in the queue.
import { DEFAULT_CLAIM_LEASE_MS, earliestLiveClaim, parseClaim, parseClaimEnd } from './claims';
import { holderGoneHere, holderLiveHere, hostLabelOf, postRelease, sessionTag, whereItStopped } from './claim-holders';

import type { EngineDeps } from '../work/engine-context';
import { MAX_COMMENT_LENGTH, sanitizeForDida } from '../text/text-guard';
import { loadWork, saveWork, withWork } from '../work/work-io';
import { isSettled, type EngineState, type WorkRecord } from '../work/work-state';
import { parseDidaDate } from '../../dida/dida-date';

/**
 * Whether sync should look at the Work's claim: open, not waiting, with a claim whose lease ran out by the record and
 * whose holder is not a session live on this machine (a long-lived session keeps its claim while its process lives).
 */
export function claimLapsed(deps: EngineDeps, state: EngineState, work: WorkRecord): boolean {
  const claim = work.claim;
  if (work.phase !== 'open' || !claim) return false;
  // A gone session of this machine holds nothing: its release is owed now, lease or not (a settled Work goes to review).
  if (!isSettled(work) && holderGoneHere(state, claim.holder, hostLabelOf(deps), deps.isAlive)) return true;
  if (work.waiting || deps.now() - claim.at <= (deps.claimLeaseMs ?? DEFAULT_CLAIM_LEASE_MS)) return false;
  return !holderLiveHere(state, claim.holder, hostLabelOf(deps), deps.isAlive);
}

/** Whether the Work's last recorded claim is this session's. */
export function heldBySession(deps: EngineDeps, work: WorkRecord, sessionId: string): boolean {
  return work.claim?.holder === `${hostLabelOf(deps)}#${sessionTag(sessionId)}`;
}

/**
 * The session stops working on `key` (its process ends with steps still open): posts one release comment saying how
 * far it got and that nobody is on it now, and forgets the claim, so any session or machine may take the Work at once.
 * Nothing happens when the session does not hold the Work, or it is no longer open. Returns whether it released.
 */
export async function releaseClaim(deps: EngineDeps, key: string, sessionId: string): Promise<boolean> {
  return withWork(deps, key, async () => {
    const work = await loadWork(deps, key);
    if (work.phase !== 'open' || !heldBySession(deps, work, sessionId)) return false;
    await postRelease(deps, work, sessionTag(sessionId));
    delete work.claim;
    await saveWork(deps, work);
    return true;
  });
}

const timeOf = (createdTime: string | null | undefined) => parseDidaDate(createdTime ?? undefined)?.getTime() ?? 0;

/**
 * A claim of a gone session of this machine (holderGoneHere): its release is posted in its name, at once. A claim by
 * another session whose lease ran out by the record (its holder is gone: a killed process, a machine switched off):
 * reads the Work's comments once; when no claim is live and nobody has said so yet, comments once that
 * the session stopped and where, and forgets the claim so the queue offers the Work again. A claim still live
 * (progress since) only moves the record's lease on. Returns whether it reported.
 */
export async function reportExpiredClaim(deps: EngineDeps, key: string): Promise<boolean> {
  const leaseMs = deps.claimLeaseMs ?? DEFAULT_CLAIM_LEASE_MS;
  return withWork(deps, key, async () => {
    const work = await loadWork(deps, key);
    const claim = work.claim;
    if (work.phase !== 'open' || !claim) return false;
    const state = await deps.state.read();
    const host = hostLabelOf(deps);
    if (!isSettled(work) && holderGoneHere(state, claim.holder, host, deps.isAlive)) {
      // The release its session owed at its end (refused then, or never sent): sent now, in its name.
      await postRelease(deps, work, claim.holder.slice(host.length + 1));
      delete work.claim;
      await saveWork(deps, work);
      return true;
    }
    if (work.waiting || deps.now() - claim.at <= leaseMs) return false;
    const owner = state.owners[work.projectId];
    if (!owner) return false;
    const comments = await deps.gateway.listComments(work.projectId, work.taskId);
    const live = earliestLiveClaim(comments, owner, work.occurrence, leaseMs, deps.now());
    if (live) {
      work.claim = { holder: live.holder, at: live.activity };
      await saveWork(deps, work);
      return false;
    }
    const owned = comments.filter((c) => c.userId === owner).sort((a, b) => timeOf(a.createdTime) - timeOf(b.createdTime));
    const lastClaimAt = owned.reduce((at, c) => (parseClaim(c.title)?.occurrence === work.occurrence ? timeOf(c.createdTime) : at), -1);
    const lastClaim = [...owned].reverse().find((c) => parseClaim(c.title)?.occurrence === work.occurrence);
    const ended = lastClaimAt < 0 || owned.some((c) => timeOf(c.createdTime) >= lastClaimAt && parseClaimEnd(c.title));
    if (!ended && lastClaim) {
      const holder = parseClaim(lastClaim.title) as { host: string; session: string };
      const minutes = Math.round((deps.now() - claim.at) / 60_000);
      const text = sanitizeForDida(deps.locale.t('dida.comment.claimExpired', { host: holder.host, session: holder.session || 'main', minutes, where: whereItStopped(deps, work) }), {
        maxLength: MAX_COMMENT_LENGTH,
      });
      await deps.gateway.addComment(work.projectId, work.taskId, text);
    }
    delete work.claim;
    await saveWork(deps, work);
    return !ended;
  });
}

