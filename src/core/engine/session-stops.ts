// What a session's stop writes into Dida: a model failure that needs the person, a wait for a limit's reset and the
// hand-over after the last automatic attempt (each only on an unfinished Work), and the release of what it held at its end.
import { workUnfinished } from '../continuation/continuation-policy';
import { causeKey, type NeedsPersonCause } from '../continuation/stop-policy';
import { waitForHuman } from '../phone/waiting';
import { heldBySession, releaseClaim } from '../queue/claim-release';
import { MAX_COMMENT_LENGTH, sanitizeForDida } from '../text/text-guard';
import { localTimeIfAny } from '../time/schedule';
import type { EngineDeps } from '../work/engine-context';
import { flushWorkOutbox, queueComment } from '../work/outbox';
import { keyOf, withWork } from '../work/work-io';
import { isSettled, type WorkRecord } from '../work/work-state';
import { withRequestPriority } from '../../dida/request-budget';

/** The session's current Work while it is unfinished (workUnfinished): the only Work a failure is flagged on. */
async function unfinishedCurrent(deps: EngineDeps, sessionId: string): Promise<WorkRecord | undefined> {
  const state = await deps.state.read();
  const key = state.sessions[sessionId]?.currentWork;
  const work = key ? state.works[key] : undefined;
  return workUnfinished(work) ? work : undefined;
}

/**
 * A model failure nothing automatic can fix (see classifyFailure): the session's unfinished current Work waits for the
 * person at once, its 🙋 reminder saying what stopped it and what they can do. Undefined when there is none (a settled
 * Work goes to review, a waiting one already waits). A reset that cannot be told as a time is said in words without one.
 */
export async function waitForModelFailure(deps: EngineDeps, sessionId: string, cause: NeedsPersonCause, code: string, until?: number): Promise<WorkRecord | undefined> {
  const work = await unfinishedCurrent(deps, sessionId);
  if (!work) return undefined;
  const time = until !== undefined ? localTimeIfAny(deps, until) : undefined;
  const key = cause === 'limit' && time === undefined ? 'dida.waiting.cause.limitNoTime' : causeKey(cause);
  const reason = deps.locale.t(key, { error: code, ...(time !== undefined ? { time } : {}) });
  return waitForHuman(deps, keyOf(work), reason, cause);
}

/**
 * The session waits for a model limit's reset: says once on its unfinished current Work when it carries on by itself
 * (the time in the account's zone, or "later" when it cannot be told). False when there is none, or the same words for
 * this reset still wait in the outbox (once posted, a second call would post them again: the caller asks once per reset).
 */
export async function noteWaitUntil(deps: EngineDeps, sessionId: string, until: number): Promise<boolean> {
  const work = await unfinishedCurrent(deps, sessionId);
  if (!work) return false;
  const key = keyOf(work);
  const time = localTimeIfAny(deps, until);
  const words = time === undefined ? deps.locale.t('dida.comment.waitUntilNoTime') : deps.locale.t('dida.comment.waitUntil', { time });
  const comment = sanitizeForDida(words, { maxLength: MAX_COMMENT_LENGTH });
  let queued = false;
  await deps.state.update((state) => {
    if (state.outbox.some((e) => e.workKey === key && e.text === comment)) return;
    queueComment(state, { projectId: work.projectId, taskId: work.taskId, workKey: key, text: comment, createdAt: deps.now() });
    queued = true;
  });
  if (queued) await withWork(deps, key, () => flushWorkOutbox(deps, key));
  return queued;
}

/** What a Work loses when its session's dsh lacks a surface the bundle uses (see src/dsh/host-seams.ts). */
export type HostGap = 'continuation' | 'phone';

/**
 * The session's dsh (`dsh`, as the person reads it: `dsh 0.2.0-rc.2`) lacks what `gap` needs: its open current Work
 * gets one comment saying what does not work and where to look, once per Work and gap (kept in the record). False when
 * there is no open current Work or it was already told.
 */
export async function noteHostGap(deps: EngineDeps, sessionId: string, gap: HostGap, dsh: string): Promise<boolean> {
  const told = (work: WorkRecord | undefined) => !work || work.phase !== 'open' || (work.hostGaps ?? []).includes(gap);
  const state = await deps.state.read();
  const key = state.sessions[sessionId]?.currentWork;
  if (!key || told(state.works[key])) return false;
  const comment = sanitizeForDida(deps.locale.t(gap === 'continuation' ? 'dida.comment.hostGap.continuation' : 'dida.comment.hostGap.phone', { dsh }), { maxLength: MAX_COMMENT_LENGTH });
  let queued = false;
  await deps.state.update((s) => {
    const work = s.works[key];
    if (!work || told(work)) return;
    work.hostGaps = [...(work.hostGaps ?? []), gap];
    queueComment(s, { projectId: work.projectId, taskId: work.taskId, workKey: key, text: comment, createdAt: deps.now() });
    queued = true;
  });
  if (queued) await withWork(deps, key, () => flushWorkOutbox(deps, key));
  return queued;
}

/**
 * Automatic continuation gave up after `attempts` (the last failure `code`): the session's unfinished current Work
 * waits for the person with a 🙋 reminder. Undefined when there is none (a settled Work goes to review).
 */
export async function waitAfterAttempts(deps: EngineDeps, sessionId: string, attempts: number, code: string): Promise<WorkRecord | undefined> {
  const work = await unfinishedCurrent(deps, sessionId);
  if (!work) return undefined;
  return waitForHuman(deps, keyOf(work), deps.locale.t('dida.waiting.exhausted', { attempts, error: code }));
}

/**
 * The session stops (its one-shot process ends, or it was disposed): it holds nothing from now on. Each Work it holds
 * that is open and not settled — waiting for the person or not — is released in Dida with a word on how far it got
 * (see releaseClaim), ahead of everything else in the machine's request budget (these are the last words of a process).
 * The session is recorded as gone first, so a release the budget or Dida refused is owed, not lost: this machine's next
 * sync sends it in the session's name, and no session here takes its claim as held meanwhile (holderGoneHere). Never
 * throws for Dida faults. Returns the keys released.
 */
export async function releaseSessionWorks(deps: EngineDeps, sessionId: string): Promise<string[]> {
  const state = await deps.state.update((s) => {
    const session = s.sessions[sessionId];
    if (session) (session as { goneAt?: number }).goneAt = deps.now();
  });
  const released: string[] = [];
  for (const key of state.sessions[sessionId]?.touched ?? []) {
    const work = state.works[key];
    if (!work || work.phase !== 'open' || isSettled(work) || !heldBySession(deps, work, sessionId)) continue;
    try {
      if (await withRequestPriority('foreground', () => releaseClaim(deps, key, sessionId))) released.push(key);
    } catch (error) {
      deps.log?.(`could not release Work ${key} in Dida now (this machine sends the release at its next sync): ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return released;
}
