// Step changes of one Work (add, status/resolution, rename, delete, clear), coalesced into one Dida write.
import type { StepChange } from '../work/step-change';
import type { EngineDeps } from '../work/engine-context';
import { WorkError } from '../work/engine-context';
import { MAX_COMMENT_LENGTH, MAX_ITEM_TITLE_LENGTH, sanitizeForDida, truncateGraphemes } from '../text/text-guard';
import { dropComments, queueComment } from '../work/outbox';
import { stepEvidenceText } from '../evidence/repo-evidence';
import { headBefore, recordEvidence } from './step-evidence';
import { isRefusal, MAX_CHECKLIST_ITEMS, tooManySteps, writeWork } from '../work/task-writer';
import { notePending } from '../work/background-writer';
import { keyOf, restoreWork, saveWork, stepIdFactory, withWork, workIn } from '../work/work-io';
import type { ReconcileResult } from '../work/work-reconcile';
import { SETTLED, visibleSteps, type StepRecord, type StepStatus, type WorkRecord } from '../work/work-state';


export interface StepChangeResult {
  work: WorkRecord;
  /** Steps whose status changed in this call. */
  transitions: Array<{ step: StepRecord; from: StepStatus; to: StepStatus }>;
  /** True when Dida was written. */
  wrote: boolean;
  /** What the person changed in Dida meanwhile (merged in; the model is told). */
  merge?: ReconcileResult;
  /** Left to the background writer (`background`): Dida is written after the result, the changes are on disk. */
  pending?: boolean;
}

const MAX_RESOLUTION = 1000;
/** Room for the commits in a step's completion comment. */
const EVIDENCE_IN_COMMENT = 1500;

/** Where the call comes from: the session's working directory (its repository's commits become the steps' evidence). */
export interface StepChangeOptions {
  cwd?: string;
  /**
   * Record the changes and their progress notes and return without a request: the background writer writes them
   * (see core/work/background-writer), with the same read and merge of the person's edits right before its write.
   */
  background?: boolean;
}

/** Finds a visible step by id, or by exact (then case-insensitive) title; ambiguous titles are an error. */
export function findStep(work: WorkRecord, ref: string): StepRecord {
  const wanted = ref.trim();
  const steps = visibleSteps(work);
  const byId = steps.find((s) => s.id === wanted);
  if (byId) return byId;
  let matches = steps.filter((s) => s.title === wanted);
  if (matches.length === 0) matches = steps.filter((s) => s.title.toLowerCase() === wanted.toLowerCase());
  if (matches.length === 1) return matches[0] as StepRecord;
  if (matches.length > 1) {
    throw new WorkError('step_ambiguous', `Several steps have that title (${matches.map((s) => s.id).join(', ')}); pass the step id instead.`);
  }
  throw new WorkError('step_not_found', `Work ${keyOf(work)} has no step ${JSON.stringify(truncateGraphemes(wanted, 80))}; call todo list to see its step ids.`);
}

function cleanTitle(title: string, what: string): string {
  const clean = sanitizeForDida(title, { maxLength: MAX_ITEM_TITLE_LENGTH, singleLine: true });
  if (clean === '') throw new WorkError('invalid_text', `The ${what} is empty after removing what is not for people; write a short plain-language title.`);
  return clean;
}

function cleanResolution(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const clean = sanitizeForDida(text, { maxLength: MAX_RESOLUTION });
  return clean === '' ? undefined : clean;
}

/**
 * Applies `changes` to the Work's record in memory (no I/O). Validates everything first: on any invalid change
 * nothing is applied. Rules: completed/skipped are terminal (only an agent step may still be deleted); completing
 * needs a resolution and skipping a reason; human steps may only change status; titles are unique among visible steps
 * (adding an agent step that is there already with the status asked for changes nothing, like a repeated update).
 */
export function applyStepChanges(work: WorkRecord, changes: readonly StepChange[], now: number, newId: () => string): StepChangeResult['transitions'] {
  const draft = structuredClone(work);
  const transitions: StepChangeResult['transitions'] = [];
  for (const change of changes) {
    if (change.op === 'add') {
      const title = cleanTitle(change.title, 'step title');
      if (visibleSteps(draft).some((s) => s.title === title)) {
        const existing = visibleSteps(draft).find((s) => s.title === title) as StepRecord;
        const sameCall = draft.steps.indexOf(existing) >= work.steps.length;
        // The agent's own step exactly as asked, from an earlier call (one the model was told to call again after Dida's
        // rate limit, whose change was recorded): nothing to add; the write below carries what Dida does not show yet.
        if (!sameCall && existing.origin === 'agent' && existing.status === (change.status ?? 'pending')) continue;
        throw new WorkError(
          'duplicate_step',
          sameCall
            ? `Two of the steps you passed have the same title; give each step a distinct title.`
            : `Step ${existing.id} already has that title; use a different title or update step ${existing.id}.`,
        );
      }
      const status = change.status ?? 'pending';
      const step: StepRecord = { id: newId(), title, status, origin: 'agent', updatedAt: now };
      draft.steps.push(step);
      draft.nextStepNumber += 1;
      if (status !== 'pending') transitions.push({ step, from: 'pending', to: status });
      continue;
    }
    if (change.op === 'clear') {
      for (const step of visibleSteps(draft)) {
        if (step.origin === 'agent' && !SETTLED.has(step.status)) {
          transitions.push({ step, from: step.status, to: 'deleted' });
          step.status = 'deleted';
          step.updatedAt = now;
        }
      }
      continue;
    }
    const step = findStep(draft, change.step);
    if (change.op === 'delete') {
      if (step.origin === 'human') {
        throw new WorkError('human_item_readonly', `Step ${step.id} was written by the person in Dida and cannot be deleted; mark it skipped with a reason instead.`);
      }
      transitions.push({ step, from: step.status, to: 'deleted' });
      step.status = 'deleted';
      step.updatedAt = now;
      continue;
    }
    if (change.title !== undefined) {
      const title = cleanTitle(change.title, 'step title');
      if (title !== step.title) {
        if (step.origin === 'human') {
          throw new WorkError('human_item_readonly', `Step ${step.id} was written by the person in Dida; only its status can change, not its title.`);
        }
        if (visibleSteps(draft).some((s) => s !== step && s.title === title)) {
          throw new WorkError('duplicate_step', `Another step already has that title; choose another title for step ${step.id}.`);
        }
        step.title = title;
        step.updatedAt = now;
      }
    }
    const resolution = cleanResolution(change.resolution);
    const to = change.status;
    if (to !== undefined && to !== step.status) {
      if (SETTLED.has(step.status)) {
        throw new WorkError('invalid_transition', `Step ${step.id} is already ${step.status}, which is final; add a new step for further work.`);
      }
      if (to === 'completed' && !resolution) {
        throw new WorkError('missing_resolution', `Completing step ${step.id} needs a resolution: one sentence on what changed and how it was verified.`);
      }
      if (to === 'skipped' && !resolution) {
        throw new WorkError('missing_resolution', `Skipping step ${step.id} needs a resolution giving the reason it was not done.`);
      }
      transitions.push({ step, from: step.status, to });
      step.status = to;
      step.updatedAt = now;
      if (to === 'in_progress') step.startedNoted = false;
    }
    if (resolution !== undefined && (to === undefined || to === step.status)) step.resolution = resolution;
  }
  Object.assign(work, draft);
  return transitions;
}

/** One progress note per transition the person should read about: started, completed (with its result), skipped. */
export function progressEntries(deps: EngineDeps, transitions: StepChangeResult['transitions']): Array<{ kind: 'started' | 'completed' | 'skipped'; stepId: string; text: string }> {
  const out: Array<{ kind: 'started' | 'completed' | 'skipped'; stepId: string; text: string }> = [];
  const clean = (text: string) => sanitizeForDida(text, { maxLength: MAX_COMMENT_LENGTH });
  for (const { step, to } of transitions) {
    if (to === 'in_progress' && !step.startedNoted) {
      out.push({ kind: 'started', stepId: step.id, text: clean(deps.locale.t('dida.comment.started', { step: step.title })) });
      step.startedNoted = true;
    } else if (to === 'completed') {
      const text = step.resolution
        ? deps.locale.t('dida.comment.completedWithResult', { step: step.title, resolution: step.resolution })
        : deps.locale.t('dida.comment.completed', { step: step.title });
      const evidence = stepEvidenceText(deps.locale, step.evidence, EVIDENCE_IN_COMMENT);
      out.push({ kind: 'completed', stepId: step.id, text: clean(evidence ? `${text}\n${evidence}` : text) });
    } else if (to === 'skipped') {
      out.push({ kind: 'skipped', stepId: step.id, text: clean(deps.locale.t('dida.comment.skipped', { step: step.title, reason: step.resolution ?? '' })) });
    }
  }
  return out.filter((e) => e.text !== '');
}

/** The progress comment for a call's transitions as one text (what the outbox posts when nothing else waits). */
export function progressComment(deps: EngineDeps, transitions: StepChangeResult['transitions']): string {
  return progressEntries(deps, transitions)
    .map((e) => e.text)
    .join('\n\n');
}

/**
 * Applies step changes to a Work under its cross-process lock. The changes are validated against the record and saved
 * with their progress notes (the intent; the outbox posts them later, coalesced) before Dida is touched; then the task writer reads the task, merges what
 * the person changed meanwhile (their ticks, unticks, deletions and renames win) and writes only what Dida does not
 * show yet — nothing at all when only statuses Dida does not show changed (in_progress). When Dida refuses the write
 * (a 4xx, or too many items) the record and its comments are put back as they were; when the outcome is unknown
 * (timeout, dropped or truncated answer, server error) the intent stays and the next write carries it.
 */
export async function changeSteps(deps: EngineDeps, key: string, changes: readonly StepChange[], options: StepChangeOptions = {}): Promise<StepChangeResult> {
  // HEAD is read before the lock; the commit list of a completed step (bounded by git's timeout) inside it.
  const head = await headBefore(deps, options.cwd, changes);
  return withWork(deps, key, async (lock) => {
    const state = await deps.state.read();
    const work = workIn(state, key);
    if (work.phase === 'accepting' || work.phase === 'closed' || (work.phase === 'finalizing' && work.finalize?.acceptanceTaskId)) {
      throw new WorkError('work_closed', `The Work ${key} is already sent for review; create a new Work for further changes.`);
    }
    // A Work the person paused stays as they left it, whoever asks: the agent resumes it first when asked to go on.
    if (work.waiting?.pausedBy) {
      throw new WorkError('waiting_for_human', `The person paused Work ${key}; leave its steps until they resume it. If they asked you to continue it, call todo_work resume first.`);
    }
    const before = structuredClone(work);
    if (work.phase === 'finalizing') work.phase = 'open';
    const transitions = applyStepChanges(work, changes, deps.now(), stepIdFactory(deps, state));
    if (changes.length > 0) delete work.reopened;
    if (options.cwd && head) await recordEvidence(deps, work, transitions, options.cwd, head);
    if (options.cwd) work.dir = options.cwd;
    const notes = progressEntries(deps, transitions);
    if (options.background) {
      // Dida's item cap is checked here, as the write would (the person's own items not yet read are the writer's to meet).
      const count = visibleSteps(work).length;
      if (work.mode === 'checklist' && count > MAX_CHECKLIST_ITEMS) throw tooManySteps(count);
      notePending(work, deps.now());
      await saveWork(deps, work, (s) => {
        for (const note of notes) queueComment(s, { projectId: work.projectId, taskId: work.taskId, workKey: key, createdAt: deps.now(), ...note });
      });
      return { work, transitions, wrote: false, pending: work.pendingSince !== undefined };
    }
    const queued = new Set<string>();
    await saveWork(deps, work, (s) => {
      queued.clear();
      for (const note of notes) queued.add(queueComment(s, { projectId: work.projectId, taskId: work.taskId, workKey: key, createdAt: deps.now(), ...note }));
    });
    let written: Awaited<ReturnType<typeof writeWork>>;
    try {
      written = await writeWork(deps, work, { state, lock });
    } catch (error) {
      // Dida refused the write: nothing changed there, so neither does the record. Any other failure may have been
      // applied: the intent stays, so the items it added are still known as the agent's.
      if (isRefusal(error) || (error instanceof WorkError && error.code === 'too_many_steps')) await restoreWork(deps, work, before, (s) => dropComments(s, queued));
      throw error;
    }
    if (written.task && written.task.status !== 0) {
      work.phase = 'closed';
      work.outcome = 'completed_by_human';
      await saveWork(deps, work, (s) => dropComments(s, queued));
      throw new WorkError('work_completed_remotely', `The Dida task of Work ${key} was completed in Dida meanwhile; call todo_work list to pick other work.`);
    }
    if (written.merge?.changed || written.wrote) await saveWork(deps, work);
    // Progress comments wait in the outbox (coalesced, posted off the tool's path: at settle, idle or when due).
    return { work, transitions, wrote: written.wrote, ...(written.merge ? { merge: written.merge } : {}) };
  });
}

