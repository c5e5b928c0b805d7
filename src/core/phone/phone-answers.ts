// Answers from the phone: the list owner's comments on a waiting Work's 🙋 reminder (or on the Work after its waiting
// comment) resume it; their text waits in the state until it is handed to the model, exactly once.
import type { Comment } from '../../dida/types';
import { parseClaim, parseClaimEnd } from '../queue/claims';
import { routeVerdict, type Route } from '../queue/route-tags';
import type { EngineDeps } from '../work/engine-context';
import { commentTime, isStopPhrase, stopPhrasesOf } from './phone-signals';
import { progressEntries, type StepChangeResult } from '../steps/step-ops';
import { fenceUntrusted, showsAnything, stripInvisible, UNTRUSTED_PREAMBLE } from '../text/text-guard';
import { MODEL_BUDGET, withinBudget } from '../text/model-budget';
import { markHandled, resumeWork, waitingComment } from './waiting';
import { commentsIfAny, loadWork, saveWork, withWork } from '../work/work-io';
import type { EngineState, WorkRecord } from '../work/work-state';
import type { LiveMark } from '../queue/claim-holders';

/** A claim by another session counts as holding a Work for this long after its record was last updated. */
const SESSION_HOLD_MS = 30 * 60_000;

/**
 * The texts the bundle itself may have posted on the Work (progress of each of its steps, the waiting comment,
 * "resumed"): comments made only of these (and claims) are never the person's answer.
 */
export function bundleTexts(deps: EngineDeps, work: WorkRecord): string[] {
  const transitions: StepChangeResult['transitions'] = [];
  for (const step of work.steps) {
    for (const to of ['in_progress', 'completed', 'skipped'] as const) {
      transitions.push({ step: { ...structuredClone(step), startedNoted: false }, from: 'pending', to });
    }
  }
  const texts = [...progressEntries(deps, transitions).map((e) => e.text), deps.locale.t('dida.comment.resumed')];
  if (work.waiting?.comment) texts.push(work.waiting.comment);
  if (work.waiting?.reason) texts.push(waitingComment(deps, work.waiting.reason));
  return texts.filter((t) => t !== '').sort((a, b) => b.length - a.length);
}

/** True when `text` is made only of `texts` (the bundle's own posts) and claims: never the person's answer. */
export function isBundleText(text: string, texts: readonly string[]): boolean {
  // A claim, a release (a one-shot that asked and ended posts one on the waiting Work) or a lease report is ours.
  if (parseClaim(text) || parseClaimEnd(text)) return true;
  let rest = text;
  for (const known of texts) rest = rest.split(known).join('');
  return rest.trim() === '';
}

export interface FoundAnswers {
  /** The owner's answers not handled yet, oldest first. */
  answers: Comment[];
  /** On a Work the person paused: the owner's stop comments among them (not answers: the Work already waits). */
  stops: Comment[];
  /** The waiting comment as Dida shows it, when found now. */
  anchor?: { id: string; at: number };
  /** The list owner, when learned now from the author of the waiting comment. */
  learnedOwner?: string;
}

/**
 * The owner's comments that answer a waiting Work (two reads: the reminder's comments and the Work's): every owner
 * comment on the 🙋 reminder, and owner comments on the Work written after its waiting comment that are not the
 * bundle's own texts. Other accounts never count; comments already handled are left out; an unknown owner is learned
 * from the author of the waiting comment (the bundle's own post). On a Work waiting for an answer the agent asked for,
 * every such comment is an answer ("stop" included); on a Work the person paused, a configured stop phrase is a
 * repeated stop, not an answer.
 */
export async function findAnswers(deps: EngineDeps, work: WorkRecord, owner: string | undefined): Promise<FoundAnswers> {
  const waiting = work.waiting;
  if (!waiting) return { answers: [], stops: [] };
  const [onReminder, onWork] = await Promise.all([
    waiting.reminderTaskId ? commentsIfAny(deps, work.projectId, waiting.reminderTaskId) : Promise.resolve([] as Comment[]),
    commentsIfAny(deps, work.projectId, work.taskId),
  ]);
  let anchor = waiting.anchorCommentId ? { id: waiting.anchorCommentId, at: waiting.anchorAt ?? 0 } : undefined;
  let found: FoundAnswers['anchor'];
  let learnedOwner: string | undefined;
  if (!anchor) {
    const text = waiting.comment ?? waitingComment(deps, waiting.reason);
    const posted = onWork.filter((c) => c.title.includes(text)).sort((a, b) => commentTime(b) - commentTime(a))[0];
    if (posted) {
      anchor = found = { id: posted.id, at: commentTime(posted) };
      if (!owner && posted.userId) owner = learnedOwner = posted.userId;
    }
  }
  const handled = new Set(work.phoneHandled ?? []);
  const texts = bundleTexts(deps, work);
  const mine = (c: Comment) => !!owner && c.userId === owner && !handled.has(c.id) && showsAnything(c.title);
  const afterAnchor = (c: Comment) => !!anchor && c.id !== anchor.id && commentTime(c) >= anchor.at && !isBundleText(c.title, texts);
  const all = [...onReminder.filter(mine), ...onWork.filter((c) => mine(c) && afterAnchor(c))].sort((a, b) => commentTime(a) - commentTime(b) || a.id.localeCompare(b.id));
  const phrases = waiting.pausedBy ? await stopPhrasesOf(deps) : [];
  const stops = all.filter((c) => isStopPhrase(c.title, phrases));
  return { answers: all.filter((c) => !stops.includes(c)), stops, ...(found ? { anchor: found } : {}), ...(learnedOwner ? { learnedOwner } : {}) };
}

export interface WaitingCheck {
  resumed: boolean;
  /** How many of the owner's comments were taken as the answer now. */
  answers: number;
}

/**
 * Sync's look at a Work waiting for the person (`listedPriority`: its priority in the list just read). The owner's new
 * answers are recorded as the Work's pending answer (and marked handled) before anything is written, then the Work is
 * resumed — restoring its priority for an answer — when they answered or set the priority back; a resume by priority
 * alone records an empty answer, so the agent is told it may go on. A pending answer left by an interrupted resume
 * resumes the Work too.
 */
export async function checkWaiting(deps: EngineDeps, key: string, listedPriority: number): Promise<WaitingCheck> {
  const answers = await withWork(deps, key, async () => {
    const work = await loadWork(deps, key);
    const waiting = work.waiting;
    if (work.phase !== 'open' || !waiting?.applied) return -1;
    const owner = (await deps.state.read()).owners[work.projectId];
    const found = await findAnswers(deps, work, owner);
    let changed = false;
    if (found.anchor) {
      waiting.anchorCommentId = found.anchor.id;
      waiting.anchorAt = found.anchor.at;
      changed = true;
    }
    if (found.answers.length > 0) {
      const text = found.answers.map((c) => stripInvisible(c.title).trim()).join('\n\n');
      const before = work.pendingAnswer;
      work.pendingAnswer = {
        text: before?.text ? `${before.text}\n\n${text}` : text,
        commentIds: [...(before?.commentIds ?? []), ...found.answers.map((c) => c.id)],
        at: deps.now(),
        ...(waiting.pausedBy ? { paused: true } : { question: waiting.reason }),
      };
      changed = true;
    } else if (listedPriority > 0 && !work.pendingAnswer) {
      work.pendingAnswer = { text: '', commentIds: [], at: deps.now(), ...(waiting.pausedBy ? { paused: true } : { question: waiting.reason }) };
      changed = true;
    }
    if ((found.answers.length > 0 || listedPriority > 0) && !waiting.answered) {
      waiting.answered = true;
      changed = true;
    }
    const handled = [...found.answers, ...found.stops].map((c) => c.id);
    if (handled.length > 0) {
      markHandled(work, handled);
      changed = true;
    }
    if (changed) {
      await saveWork(deps, work, (state) => {
        if (found.learnedOwner) state.owners[work.projectId] ??= found.learnedOwner;
      });
    }
    // An answer to this wait whose resume was cut short resumes it too (an older one, not handed over before the agent
    // asked again, waits for this wait's answer and goes with it).
    return waiting.answered ? found.answers.length : -1;
  });
  if (answers < 0) return { resumed: false, answers: 0 };
  await resumeWork(deps, key, { explicit: listedPriority === 0 });
  return { resumed: true, answers };
}

/**
 * Whether reading list `projectId` may bring an answer to hand over: one of its open Works waits for the person (or was
 * paused by them) or already holds an answer. Otherwise a session need not wait for the read before its first step.
 */
export function answersMayArrive(state: EngineState, projectId: string): boolean {
  return Object.values(state.works).some((work) => work.projectId === projectId && work.phase === 'open' && (work.waiting !== undefined || work.pendingAnswer !== undefined));
}

/** A resume by the person from Dida, taken from the state to be handed to the model. */
export interface TakenAnswer {
  key: string;
  /** The Work's title as Dida shows it (the person's text). */
  title: string;
  answer: NonNullable<WorkRecord['pendingAnswer']>;
}

/**
 * Takes (removes) the pending answers of resumed Works that `pick` selects (at most `limit`), in one state update, so each is handed to
 * the model once across processes: a later take, or a save of a copy loaded before, never brings it back (the
 * Work's revision moves on).
 */
export async function takeAnswers(
  deps: Pick<EngineDeps, 'state' | 'now'>,
  pick: (key: string, work: WorkRecord, state: EngineState) => boolean,
  limit = Number.POSITIVE_INFINITY,
): Promise<TakenAnswer[]> {
  const taken: TakenAnswer[] = [];
  // The usual case, nothing to hand over, is seen in the state held in memory without taking the state lock.
  const held = await deps.state.read();
  if (!Object.values(held.works).some((work) => work.pendingAnswer && !work.waiting && work.phase === 'open')) return taken;
  await deps.state.update((state) => {
    taken.length = 0;
    for (const [key, work] of Object.entries(state.works)) {
      if (taken.length >= limit) break;
      if (!work.pendingAnswer || work.waiting || work.phase !== 'open' || !pick(key, work, state)) continue;
      taken.push({ key, title: work.title, answer: work.pendingAnswer });
      delete work.pendingAnswer;
      work.rev += 1;
      work.updatedAt = deps.now();
    }
  });
  return taken;
}

/**
 * Puts a taken answer back (its delivery failed: the session went away), unless the Work has a newer one meanwhile,
 * which then keeps both texts.
 */
export async function returnAnswer(deps: Pick<EngineDeps, 'state' | 'now'>, taken: TakenAnswer): Promise<void> {
  await deps.state.update((state) => {
    const work = state.works[taken.key];
    if (!work || work.phase !== 'open') return;
    const newer = work.pendingAnswer;
    work.pendingAnswer = newer
      ? { ...newer, text: [taken.answer.text, newer.text].filter(Boolean).join('\n\n'), commentIds: [...taken.answer.commentIds, ...newer.commentIds] }
      : taken.answer;
    work.rev += 1;
    work.updatedAt = deps.now();
  });
}

/** Who asks for answers: a session's bound list and its directory's route. */
export interface AnswerTaker {
  projectId: string;
  route?: Route;
}

/**
 * Whether a session in the directory of `taker` may be handed the answer of `work`: the Work is in its list and may
 * run in its directory (its route tags). An answer never reaches another directory's session; the callers add who
 * else works on the Work (another live session, a recent session record).
 */
export function mayTakeAnswer(work: WorkRecord, taker: AnswerTaker): boolean {
  return work.projectId === taker.projectId && routeVerdict(work.tags, taker.route).ok;
}

/**
 * Whether a session other than `sessionId` works on `key` now (its record names it current and is recent, and it has
 * not ended: a session gone from its process holds nothing).
 */
export function heldByOtherSession(state: EngineState, key: string, sessionId: string | undefined, now: number): boolean {
  return Object.entries(state.sessions).some(
    ([id, session]) => id !== sessionId && session.currentWork === key && now - session.updatedAt < SESSION_HOLD_MS && (session as LiveMark).goneAt === undefined,
  );
}

/**
 * What the model is told about a resume by the person: our words outside the fence (the Work id, its question), the
 * person's (the Work's title and their answer) inside it, each within its budget.
 */
export function answerNote(taken: TakenAnswer): string {
  const { key, answer } = taken;
  const asked = answer.question ? ` You had asked: "${withinBudget(answer.question, MODEL_BUDGET.resolution)}".` : '';
  const how = answer.paused ? 'The person had paused it from Dida and resumed it' : 'The person resumed it from Dida';
  const head = `[dida-todo] Work ${key} is no longer waiting for the person. ${how}${answer.text ? ' with this answer' : ' without writing anything (they set its priority back)'}.${asked}`;
  const next = answer.paused
    ? 'Carry on where it stopped (check its steps with todo list; switch to it with todo_work switch if it is not your current Work).'
    : 'Carry on with it using their answer (check its steps with todo list; switch to it with todo_work switch if it is not your current Work).';
  const body = `Title: ${withinBudget(taken.title, MODEL_BUDGET.title)}${answer.text ? `\nAnswer:\n${withinBudget(answer.text, MODEL_BUDGET.body)}` : ''}`;
  return `${head} ${next}\n${UNTRUSTED_PREAMBLE}\n${fenceUntrusted('answer', body)}`;
}
