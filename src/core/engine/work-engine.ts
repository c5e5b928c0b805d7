// The engine facade the tools and adapters use: one list's queue, the session's current Work, steps, settle.
import { claimText, claimWork, DEFAULT_CLAIM_LEASE_MS, heldElsewhere, peersActive, requireClaim, type ClaimOptions } from '../queue/claims';
import { holderOf, hostLabelOf } from '../queue/claim-holders';
import { createOwnTask } from '../work/own-creates';
import { abortableLocks } from '../../common/abortable-lock';
import { abortableGateway, baseGateway } from '../../dida/abortable-gateway';
import { isDidaError } from '../../dida/dida-error';
import { withRequestPriority } from '../../dida/request-budget';
import type { EngineDeps } from '../work/engine-context';
import { WorkError } from '../work/engine-context';
import { finalizeBlocker, finalizeWork, type FinalizeOutcome } from '../review/finalize';
import { agentWorkFromTask } from '../work/work-reconcile';
import { isExecutable, orderForMachine, rankQueue, type QueueCandidate, type RankedQueue } from '../queue/queue-policy';
import type { Route } from '../queue/route-tags';
import { priorityFromLevel, type SettablePriorityLevel } from '../time/schedule';
import { changeSteps, type StepChangeOptions, type StepChangeResult } from '../steps/step-ops';
import type { StepChange } from '../work/step-change';
import { syncList, type SyncOptions, type SyncReport } from './sync';
import { MAX_ITEM_TITLE_LENGTH, MAX_REPORT_LENGTH, MAX_TITLE_LENGTH, sanitizeForDida } from '../text/text-guard';
import { resumeWork, waitForHuman } from '../phone/waiting';
import { flushWorkProgress, progressKeys } from '../work/background-writer';
import { takeNews, type TakenNews } from './work-news';
import type { NeedsPersonCause } from '../continuation/stop-policy';
import { noteHostGap, noteWaitUntil, releaseSessionWorks, waitAfterAttempts, waitForModelFailure, type HostGap } from './session-stops';
import { keyOf, loadWork, saveWork, stepIdFactory, withWork } from '../work/work-io';
import { SETTLED, visibleSteps, type EngineState, type SessionRecord, type WorkRecord } from '../work/work-state';

export interface NewWork {
  title: string;
  steps?: string[];
  level?: SettablePriorityLevel;
  /** Plain-language description kept in the task body. */
  body?: string;
}

export interface QueueView extends RankedQueue {
  report: SyncReport;
}

/** Claim comments of Works created in this process that are still being posted (createWork's claimInBackground). */
const POSTING_CLAIMS = new Set<Promise<void>>();

/** Resolves once every claim comment still being posted in the background was posted or given up. */
export async function claimsPosted(): Promise<void> {
  while (POSTING_CLAIMS.size > 0) await Promise.allSettled([...POSTING_CLAIMS]);
}

/** Waits before each retry of a claim posted in the background (a rate-limited Dida gets the longest). */
const CLAIM_RETRY_MS = [1_000, 5_000, 20_000];

/** Runs `post` with background priority, retrying after failures a Dida may recover from; logs when it gives up. */
async function postInBackground(post: () => Promise<void>, log?: (line: string) => void): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await withRequestPriority('background', post);
      return;
    } catch (error) {
      const wait = CLAIM_RETRY_MS[attempt];
      if (!isDidaError(error) || !error.retryable || wait === undefined) {
        log?.(`the claim comment of a new Work could not be posted (other machines may take it): ${error instanceof Error ? error.message : String(error)}`);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.max(wait, error.retryAfterMs ?? 0)));
    }
  }
}

export class WorkEngine {
  constructor(readonly deps: EngineDeps) {}

  /**
   * This engine bound to `signal` (a turn's abort signal): every Dida call carries it and none starts once it is
   * aborted, and lock waits end at the abort. The engine it came from is unchanged.
   */
  withSignal(signal: AbortSignal): WorkEngine {
    return new WorkEngine({ ...this.deps, gateway: abortableGateway(this.deps.gateway, signal), locks: abortableLocks(this.deps.locks, signal) });
  }

  /** Syncs the list (see syncList). */
  sync(projectId: string, options: SyncOptions = {}): Promise<SyncReport> {
    return syncList(this.deps, projectId, options);
  }

  /**
   * Syncs and ranks the list's executable Works (priority desc, then Dida order) as seen by `sessionId` in a directory
   * with `route` (Works routed to another directory are skipped with reason `routed`).
   */
  async queue(projectId: string, sessionId?: string, route?: Route, options: SyncOptions = {}): Promise<QueueView> {
    const report = await this.sync(projectId, options);
    const state = await this.deps.state.read();
    const byTask = new Map<string, WorkRecord>();
    for (const work of Object.values(state.works)) if (work.projectId === projectId && work.phase === 'open') byTask.set(work.taskId, work);
    const candidates: QueueCandidate[] = [];
    report.tasks.forEach((task, order) => {
      const work = byTask.get(task.id);
      if (!work) return;
      const steps = visibleSteps(work);
      candidates.push({
        taskId: keyOf(work),
        title: task.title,
        priority: task.priority,
        sortOrder: task.sortOrder ?? null,
        order,
        task,
        status: 'open',
        // A Work the person re-opened needs a look even when every step is settled.
        hasPlan: steps.length > 0 && !work.reopened,
        unsettledSteps: steps.filter((s) => !SETTLED.has(s.status)).length,
        waitingForHuman: !!work.waiting,
        claimedByOtherHost: heldElsewhere(this.deps, work, sessionId, state),
        keepOpen: work.keepOpen,
        tags: task.tags ?? [],
      });
    });
    return { ...rankQueue(candidates, new Date(this.deps.now()), this.deps.timeZone ?? 'UTC', route), report };
  }

  async works(projectId: string, options: { includeClosed?: boolean } = {}): Promise<WorkRecord[]> {
    const state = await this.deps.state.read();
    return Object.values(state.works).filter((w) => w.projectId === projectId && (options.includeClosed || w.phase !== 'closed'));
  }

  getWork(key: string): Promise<WorkRecord> {
    return loadWork(this.deps, key);
  }

  async session(sessionId: string): Promise<SessionRecord | undefined> {
    return (await this.deps.state.read()).sessions[sessionId];
  }

  /** The session's current Work, if it is still open. */
  async currentWork(sessionId: string): Promise<WorkRecord | undefined> {
    const state = await this.deps.state.read();
    const key = state.sessions[sessionId]?.currentWork;
    const work = key ? state.works[key] : undefined;
    return work && work.phase !== 'closed' ? work : undefined;
  }

  /** Makes `key` the session's current Work (it must be open and in `projectId`). */
  async switchTo(sessionId: string, projectId: string, key: string, options: ClaimOptions = {}): Promise<WorkRecord> {
    const state = await this.deps.state.read();
    const work = state.works[key] ?? Object.values(state.works).find((w) => w.taskId === key && w.phase !== 'closed');
    if (!work || work.projectId !== projectId) {
      throw new WorkError('work_not_found', `No Work in the bound list has id ${key}; call todo_work list to see the current ids.`);
    }
    if (work.phase === 'closed' || work.phase === 'accepting') {
      throw new WorkError('work_closed', `The Work ${keyOf(work)} is already sent for review or closed; pick another one from todo_work list.`);
    }
    await requireClaim(this.deps, keyOf(work), sessionId, options);
    await this.touch(sessionId, keyOf(work), true);
    return loadWork(this.deps, keyOf(work));
  }

  /**
   * Takes the best executable Work this host can claim in a directory with `route`: tries the ranked queue in order,
   * skipping Works another host holds, and makes the first one won the session's current Work. A `known` queue is
   * taken as already ranked for this directory. Undefined when nothing can be taken. `makeCurrent: false` claims it
   * for a session of another process, which makes it current (touch) when it takes the Work over.
   */
  async claimNext(sessionId: string, projectId: string, known?: QueueView, route?: Route, options: { makeCurrent?: boolean } = {}): Promise<WorkRecord | undefined> {
    const queue = known ?? (await this.queue(projectId, sessionId, route));
    const state = await this.deps.state.read();
    const peers = peersActive(state, projectId, this.deps.now(), this.deps.claimLeaseMs ?? DEFAULT_CLAIM_LEASE_MS);
    for (const entry of peers ? orderForMachine(queue.ranked, hostLabelOf(this.deps)) : queue.ranked) {
      // Another session took it since the queue was read (this machine's record says so): no look at its comments.
      const now = await this.deps.state.read();
      const record = now.works[entry.candidate.taskId];
      if (record && heldElsewhere(this.deps, record, sessionId, now)) continue;
      const outcome = await claimWork(this.deps, entry.candidate.taskId, sessionId);
      if (outcome.status === 'won') {
        if (options.makeCurrent !== false) await this.touch(sessionId, entry.candidate.taskId, true);
        return loadWork(this.deps, entry.candidate.taskId);
      }
    }
    return undefined;
  }

  /**
   * Creates an agent Work (a new Dida task with one checklist item per step) and makes it current. With
   * `claimInBackground` the claim comment is posted after this resolves (a tool call does not wait for it; settle,
   * release and flushes wait for it first, so a process does not end before it is posted).
   */
  async createWork(sessionId: string, projectId: string, input: NewWork, options: { claimInBackground?: boolean } = {}): Promise<WorkRecord> {
    const title = sanitizeForDida(input.title, { maxLength: MAX_TITLE_LENGTH, singleLine: true });
    if (title === '') throw new WorkError('invalid_text', 'The Work title is empty; give the request a short plain-language title.');
    const steps = (input.steps ?? []).map((s) => sanitizeForDida(s, { maxLength: MAX_ITEM_TITLE_LENGTH, singleLine: true }));
    if (steps.some((s) => s === '')) throw new WorkError('invalid_text', 'A step title is empty; give every step a short plain-language title.');
    const duplicate = steps.find((s, i) => steps.indexOf(s) !== i);
    if (duplicate) throw new WorkError('duplicate_step', `Two steps are titled "${duplicate}"; give each step a distinct title.`);
    const body = input.body ? sanitizeForDida(input.body, { maxLength: MAX_REPORT_LENGTH }) : '';
    const { task, pendingId } = await createOwnTask(
      this.deps,
      {
        projectId,
        title,
        ...(body ? { content: body } : {}),
        priority: priorityFromLevel(input.level ?? 'medium'),
        ...(steps.length ? { items: steps.map((t) => ({ title: t, status: 0 })) } : {}),
      },
      { kind: 'work' },
    );
    const state = await this.deps.state.read();
    const now = this.deps.now();
    const work = agentWorkFromTask(task, { now, newStepId: stepIdFactory(this.deps, state) });
    // Record the Work before anything else can fail, so a retry never creates the task twice.
    work.claim = { holder: holderOf(this.deps, sessionId), at: now };
    await saveWork(this.deps, work, (s) => {
      delete s.pendingCreates[pendingId];
    });
    await this.touch(sessionId, keyOf(work), true);
    // A Work this session created is its own: post the readable claim so other sessions leave it alone.
    if (!options.claimInBackground) {
      await this.postOwnClaim(this.deps.gateway, projectId, task.id, sessionId);
      return work;
    }
    // The create was made, so its claim is posted even if the turn is stopped meanwhile (the turn's gateway is not used).
    const posting = postInBackground(() => this.postOwnClaim(baseGateway(this.deps.gateway), projectId, task.id, sessionId), this.deps.log);
    POSTING_CLAIMS.add(posting);
    void posting.finally(() => POSTING_CLAIMS.delete(posting));
    return work;
  }

  private async postOwnClaim(gateway: EngineDeps['gateway'], projectId: string, taskId: string, sessionId: string): Promise<void> {
    const claim = await gateway.addComment(projectId, taskId, claimText(this.deps, '', sessionId));
    if (claim.userId) {
      const owner = claim.userId;
      await this.deps.state.update((s) => {
        s.owners[projectId] ??= owner;
      });
    }
  }

  /**
   * Step changes on the session's current Work (or `key`), coalesced into one Dida write. With the session's `cwd`,
   * steps record what was committed there while they ran.
   */
  async changeSteps(sessionId: string, changes: readonly StepChange[], key?: string, options: StepChangeOptions = {}): Promise<StepChangeResult> {
    const resolved = key ?? (await this.requireCurrent(sessionId));
    const result = await changeSteps(this.deps, resolved, changes, options);
    await this.touch(sessionId, resolved, true);
    return result;
  }

  async requireCurrent(sessionId: string): Promise<string> {
    const work = await this.currentWork(sessionId);
    if (!work) throw new WorkError('no_current_work', 'This session has no current Work; call todo_work next (or switch) to pick one, or todo create to start one.');
    return keyOf(work);
  }

  /** Asks a person for help on the current Work (or `key`); `cause` says why for status (default: the agent asked). */
  async waitForHuman(sessionId: string, reason: string, key?: string, cause?: string): Promise<WorkRecord> {
    return waitForHuman(this.deps, key ?? (await this.requireCurrent(sessionId)), reason, cause);
  }

  /**
   * The session stops (its one-shot process ends, or it was disposed): each unsettled Work it holds is released in Dida
   * with a word on how far it got (see releaseSessionWorks). Never throws for Dida faults. Returns the keys released.
   */
  async releaseSession(sessionId: string): Promise<string[]> {
    await claimsPosted();
    const touched = (await this.deps.state.read()).sessions[sessionId]?.touched ?? [];
    await this.flushProgress(progressKeys(await this.deps.state.read()).filter((key) => touched.includes(key)));
    return releaseSessionWorks(this.deps, sessionId);
  }

  /** A model failure nothing automatic can fix: the unfinished current Work waits for the person (see session-stops). */
  waitForModelFailure(sessionId: string, cause: NeedsPersonCause, code: string, until?: number): Promise<WorkRecord | undefined> {
    return waitForModelFailure(this.deps, sessionId, cause, code, until);
  }

  /** The session waits for a model limit's reset: said once on its unfinished current Work (see session-stops). */
  noteWaitUntil(sessionId: string, until: number): Promise<boolean> {
    return noteWaitUntil(this.deps, sessionId, until);
  }

  /** The session's dsh lacks what `gap` needs: its open current Work is told once (see session-stops). */
  noteHostGap(sessionId: string, gap: HostGap, dsh: string): Promise<boolean> {
    return noteHostGap(this.deps, sessionId, gap, dsh);
  }

  /** Automatic continuation gave up: the unfinished current Work waits for the person (see session-stops). */
  waitAfterAttempts(sessionId: string, attempts: number, code: string): Promise<WorkRecord | undefined> {
    return waitAfterAttempts(this.deps, sessionId, attempts, code);
  }

  async resume(sessionId: string, key?: string): Promise<WorkRecord> {
    return resumeWork(this.deps, key ?? (await this.requireCurrent(sessionId)), { explicit: true });
  }

  /** Keeps the Work open (no automatic acceptance) until the person edits it or this is called with false. */
  async keepOpen(key: string, keep: boolean): Promise<WorkRecord> {
    return withWork(this.deps, key, async () => {
      const work = await loadWork(this.deps, key);
      work.keepOpen = keep;
      await saveWork(this.deps, work);
      return work;
    });
  }

  /**
   * The session settled (dsh idle): finalizes every Work the session touched that is settled, not a draft, not
   * kept open and not waiting, and retries interrupted finalizations. Never throws for Dida faults: they are
   * reported in the outcomes and retried at the next settle or sync.
   */
  async settle(sessionId: string): Promise<Array<{ key: string; outcome: FinalizeOutcome }>> {
    await claimsPosted();
    const state = await this.deps.state.read();
    const touched = state.sessions[sessionId]?.touched ?? [];
    const results: Array<{ key: string; outcome: FinalizeOutcome }> = [];
    for (const key of touched) {
      const work = state.works[key];
      if (!work) continue;
      if (work.phase === 'open' && finalizeBlocker(work)) continue;
      if (work.phase !== 'open' && work.phase !== 'finalizing') continue;
      try {
        // Finalizing posts the Work's waiting progress together with its summary.
        results.push({ key, outcome: await finalizeWork(this.deps, key) });
      } catch (error) {
        results.push({ key, outcome: { status: 'failed', message: error instanceof Error ? error.message : String(error) } });
      }
    }
    // The progress of every other Work the session touched goes out now (the session is idle): its steps, its comments.
    await this.flushProgress(progressKeys(await this.deps.state.read()).filter((key) => touched.includes(key)));
    return results;
  }

  /** Writes the recorded steps and posts the comments of `keys` now (see flushWorkProgress); never throws for Dida faults. */
  private async flushProgress(keys: readonly string[], options: { onlyDue?: boolean } = {}): Promise<number> {
    let waiting = 0;
    for (const key of keys) {
      try {
        waiting += await withWork(this.deps, key, (lock) => flushWorkProgress(this.deps, key, lock, options));
      } catch (error) {
        this.deps.log?.(`progress will be written later: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    return waiting;
  }

  /**
   * What the model has not heard yet about the Works the session touched (the background writer's merges and failures,
   * a task closed in Dida meanwhile); taken once (see work-news). No Dida request.
   */
  takeNews(sessionId: string): Promise<TakenNews[]> {
    return takeNews(this.deps, sessionId);
  }

  /**
   * Writes the step changes left to the background writer and posts the progress comments waiting in the outbox
   * (coalesced), for every Work or only those whose oldest change has waited the progress window. Never throws for
   * Dida faults: what fails waits for the next flush (and the model hears of it at its next call).
   */
  async flushComments(options: { onlyDue?: boolean } = {}): Promise<number> {
    await claimsPosted();
    return this.flushProgress(progressKeys(await this.deps.state.read()), options);
  }

  /** Records that the session worked on `key` (and optionally makes it current). */
  async touch(sessionId: string, key: string, makeCurrent: boolean): Promise<void> {
    // Most calls change nothing (the session already works on this Work): the state is read, not written.
    const known = (await this.deps.state.read()).sessions[sessionId];
    const recent = known && this.deps.now() - known.updatedAt < 60_000;
    if (recent && known.touched.includes(key) && (!makeCurrent || known.currentWork === key)) return;
    await this.deps.state.update((state: EngineState) => {
      const session = (state.sessions[sessionId] ??= { touched: [], autoAttempts: 0, updatedAt: 0 });
      if (!session.touched.includes(key)) session.touched.push(key);
      if (session.touched.length > 50) session.touched.splice(0, session.touched.length - 50);
      if (makeCurrent) session.currentWork = key;
      // A session that works again is not gone (it was disposed and came back).
      delete (session as { goneAt?: number }).goneAt;
      session.updatedAt = this.deps.now();
    });
  }

  /** Whether a Work may be executed now (for `todo_work next`). */
  static executable(candidate: QueueCandidate, now: number, zone: string): boolean {
    return isExecutable(candidate, new Date(now), zone).ok;
  }
}
