// dsh's own questions and approvals in Dida: a request the session waits on is filed as a 🙋 reminder with a comment
// on the Work, the list owner's comments are read as its answer (a misfit gets a one-line reply), and the request is
// closed with a word on how it ended (answered here, at the desk, withdrawn, no answer in time).
import { randomUUID } from 'node:crypto';
import { formatDidaDate } from '../../dida/dida-date';
import type { Comment } from '../../dida/types';
import type { EngineDeps } from '../work/engine-context';
import { MAX_COMMENT_LENGTH, MAX_REPORT_LENGTH, MAX_TITLE_LENGTH, sanitizeForDida, showsAnything, stripInvisible } from '../text/text-guard';
import { createOwnTask } from '../work/own-creates';
import { queueComment, flushWorkOutbox } from '../work/outbox';
import { commentsIfAny, completeOwnTask, loadWork, saveWork, withWork } from '../work/work-io';
import type { DeskAsk, WorkRecord } from '../work/work-state';
import { parseDeskAnswer, type DeskAnswer, type Misfit } from './desk-answers';
import { bundleTexts, isBundleText } from './phone-answers';
import { commentTime, isStopPhrase, stopPhrasesOf } from './phone-signals';
import { markHandled, REMINDER_TRIGGERS } from './waiting';

/** What dsh asks, as the adapter hands it over (the model's text; sanitized here before anything is written). */
export interface DeskAskRequest {
  kind: DeskAsk['kind'];
  sessionId: string;
  pid?: number;
  questions?: DeskAsk['questions'];
  approval?: DeskAsk['approval'];
}

const QUESTION_LENGTH = 500;
const DETAIL_LENGTH = 1500;
const LABEL_LENGTH = 120;
const SUBJECT_LENGTH = 600;

function clean(text: string | undefined, maxLength: number): string | undefined {
  if (text === undefined) return undefined;
  const out = sanitizeForDida(text, { maxLength });
  return out === '' ? undefined : out;
}

/** The request as it is kept and shown: every text sanitized and bounded (never a prompt, id or JSON in Dida). */
function cleanRequest(request: DeskAskRequest): Pick<DeskAsk, 'questions' | 'approval'> {
  const questions = request.questions?.map((q) => {
    const options = q.options.map((o) => ({ label: clean(o.label, LABEL_LENGTH) ?? '…', ...(clean(o.description, LABEL_LENGTH) ? { description: clean(o.description, LABEL_LENGTH) } : {}) }));
    const approveAt = q.approve !== undefined ? q.options.findIndex((o) => o.label === q.approve) : -1;
    return {
      id: q.id,
      question: clean(q.question, QUESTION_LENGTH) ?? '…',
      ...(clean(q.header, LABEL_LENGTH) ? { header: clean(q.header, LABEL_LENGTH) } : {}),
      ...(clean(q.detail, DETAIL_LENGTH) ? { detail: clean(q.detail, DETAIL_LENGTH) } : {}),
      options,
      ...(q.multiSelect ? { multiSelect: true } : {}),
      ...(approveAt >= 0 ? { approve: (options[approveAt] as { label: string }).label } : {}),
    };
  });
  const approval = request.approval
    ? {
        tool: clean(request.approval.tool, LABEL_LENGTH) ?? '…',
        ...(clean(request.approval.subject, SUBJECT_LENGTH) ? { subject: clean(request.approval.subject, SUBJECT_LENGTH) } : {}),
        ...(clean(request.approval.justification, QUESTION_LENGTH) ? { justification: clean(request.approval.justification, QUESTION_LENGTH) } : {}),
      }
    : undefined;
  return { ...(questions ? { questions } : {}), ...(approval ? { approval } : {}) };
}

/** What a waiting request asks, without words of any locale (for `dida-todo status`, `queue` and `/dida`): the first question, or the tool and what it acts on. */
export function askLine(ask: Pick<DeskAsk, 'kind' | 'questions' | 'approval'>): string {
  if (ask.kind === 'approval') return ask.approval?.subject ? `${ask.approval.tool}: ${ask.approval.subject}` : (ask.approval?.tool ?? '');
  const first = ask.questions?.[0];
  return first ? (first.header ? `${first.header}: ${first.question}` : first.question) : '';
}

/** What the request asks, in one line (the Work's comment and the reply texts). */
export function askHeadline(deps: Pick<EngineDeps, 'locale'>, ask: Pick<DeskAsk, 'kind' | 'questions' | 'approval'>): string {
  if (ask.kind === 'approval') {
    const a = ask.approval;
    return deps.locale.t('dida.ask.headline.approval', { tool: a?.tool ?? '…', subject: a?.subject ?? a?.tool ?? '…' });
  }
  const first = ask.questions?.[0];
  const more = (ask.questions?.length ?? 0) - 1;
  const text = first ? (first.header ? `${first.header}：${first.question}` : first.question) : '…';
  return more > 0 ? deps.locale.t('dida.ask.headline.more', { question: text, more }) : text;
}

/** The 🙋 reminder's body: what is asked, the options numbered 1…n (or what the approval is for), how to answer here. */
export function askBody(deps: Pick<EngineDeps, 'locale'>, ask: Pick<DeskAsk, 'kind' | 'number' | 'questions' | 'approval'>): string {
  const t = deps.locale.t;
  const lines: string[] = [t(`dida.ask.intro.${ask.kind}`, { number: ask.number })];
  if (ask.kind === 'approval') {
    const a = ask.approval;
    lines.push(t('dida.ask.approval.tool', { tool: a?.tool ?? '…' }));
    if (a?.subject) lines.push(t('dida.ask.approval.subject', { subject: a.subject }));
    if (a?.justification) lines.push(t('dida.ask.approval.why', { why: a.justification }));
    lines.push('', t('dida.ask.howTo.approval'));
  } else {
    const questions = ask.questions ?? [];
    for (const [i, q] of questions.entries()) {
      lines.push('', `${questions.length > 1 ? `${i + 1}. ` : ''}${q.header ? `【${q.header}】` : ''}${q.question}`);
      if (q.detail) lines.push(q.detail);
      for (const [n, o] of q.options.entries()) lines.push(`  ${n + 1}) ${o.label}${o.description ? ` — ${o.description}` : ''}`);
      if (q.multiSelect) lines.push(t('dida.ask.multi'));
    }
    lines.push('', t(questions.length > 1 ? 'dida.ask.howTo.questions' : questions[0]?.options.length ? 'dida.ask.howTo.options' : 'dida.ask.howTo.text'));
  }
  return sanitizeForDida(lines.join('\n'), { maxLength: MAX_REPORT_LENGTH });
}

function askTitle(deps: Pick<EngineDeps, 'locale'>, work: Pick<WorkRecord, 'title'>, ask: Pick<DeskAsk, 'kind' | 'number'>, several: boolean): string {
  const title = deps.locale.t(`dida.ask.title.${ask.kind}`, { title: work.title });
  return sanitizeForDida(several ? `${title}（#${ask.number}）` : title, { maxLength: MAX_TITLE_LENGTH, singleLine: true });
}

/**
 * Files what dsh asks on the open Work `key`: the request is recorded first, then the Work's waiting progress comments
 * go out (so every comment after the request's own is the person's or a reply of this module), the 🙋 reminder is
 * created and the request's comment posted on the Work. Undefined (nothing written) when the Work is not open.
 */
export async function openDeskAsk(deps: EngineDeps, key: string, request: DeskAskRequest): Promise<DeskAsk | undefined> {
  return withWork(deps, key, async () => {
    const work = await loadWork(deps, key);
    if (work.phase !== 'open') return undefined;
    const number = work.nextAskNumber ?? 1;
    const base = { number, kind: request.kind, ...cleanRequest(request) };
    const ask: DeskAsk = {
      id: randomUUID(),
      ...base,
      sessionId: request.sessionId,
      ...(request.pid !== undefined ? { pid: request.pid } : {}),
      ...(deps.hostLabel ? { host: deps.hostLabel } : {}),
      since: deps.now(),
      comment: sanitizeForDida(deps.locale.t(`dida.ask.comment.${request.kind}`, { number, headline: askHeadline(deps, base) }), { maxLength: MAX_COMMENT_LENGTH }),
    };
    const several = (work.asks ?? []).length > 0;
    work.asks = [...(work.asks ?? []), ask];
    work.nextAskNumber = number + 1;
    await saveWork(deps, work);
    await flushWorkOutbox(deps, key).catch((error: unknown) => deps.log?.(`progress comments of ${key} wait for later: ${messageOf(error)}`));
    const { task: reminder, pendingId } = await createOwnTask(
      deps,
      {
        projectId: work.projectId,
        title: askTitle(deps, work, ask, several),
        content: askBody(deps, ask),
        priority: work.priority > 0 ? work.priority : 3,
        startDate: formatDidaDate(deps.now()),
        dueDate: formatDidaDate(deps.now()),
        isAllDay: false,
        ...(deps.timeZone ? { timeZone: deps.timeZone } : {}),
        reminders: [...REMINDER_TRIGGERS],
      },
      { kind: 'reminder', forKey: `${key}#ask${number}` },
    );
    ask.reminderTaskId = reminder.id;
    await saveWork(deps, work, (state) => {
      state.ownTasks[reminder.id] = 'reminder';
      delete state.pendingCreates[pendingId];
    });
    try {
      const posted = await deps.gateway.addComment(work.projectId, work.taskId, ask.comment);
      ask.anchorCommentId = posted.id;
      ask.anchorAt = commentTime(posted) || deps.now();
      await saveWork(deps, work, (state) => {
        if (posted.userId) state.owners[work.projectId] ??= posted.userId;
      });
    } catch (error) {
      // The outbox posts it (exactly once); the first look finds it by its text.
      deps.log?.(`the comment for a question on ${key} is posted later: ${messageOf(error)}`);
      await saveWork(deps, work, (state) => queueComment(state, { projectId: work.projectId, taskId: work.taskId, workKey: key, text: ask.comment, createdAt: deps.now() }));
    }
    return ask;
  });
}

/** One look at Dida for an answer: nothing yet, the answer (its comment handled), the person's stop, or the request is gone. */
export type DeskLook =
  | { kind: 'none' }
  | { kind: 'gone' }
  | { kind: 'answer'; answer: DeskAnswer; summary: string; commentId: string }
  | { kind: 'stop'; commentId: string };

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function findAsk(work: WorkRecord, id: string): DeskAsk | undefined {
  return work.asks?.find((a) => a.id === id);
}

/**
 * Looks for the owner's answer to the request `askId` of Work `key`: every owner comment on its 🙋 reminder, and (with
 * `readWork`) owner comments on the Work written after the request's own comment that are not the bundle's. Oldest
 * first: a stop phrase stops the Work (it is not an answer); a comment that names another waiting request is left to
 * that one; one that fits nothing gets a one-line reply on the task it was written on. Every comment taken is marked
 * handled under the Work's lock, so two looks never take it twice. Other accounts never count.
 */
export async function lookForDeskAnswer(deps: EngineDeps, key: string, askId: string, options: { readWork: boolean }): Promise<DeskLook> {
  const before = (await deps.state.read()).works[key];
  const seen = before ? findAsk(before, askId) : undefined;
  if (!before || !seen) return { kind: 'gone' };
  const [onReminder, onWork] = await Promise.all([
    seen.reminderTaskId ? commentsIfAny(deps, before.projectId, seen.reminderTaskId) : Promise.resolve([] as Comment[]),
    options.readWork ? commentsIfAny(deps, before.projectId, before.taskId) : Promise.resolve([] as Comment[]),
  ]);
  const phrases = await stopPhrasesOf(deps);
  return withWork(deps, key, async () => {
    const work = await loadWork(deps, key);
    const ask = findAsk(work, askId);
    if (!ask) return { kind: 'gone' } as const;
    const state = await deps.state.read();
    let owner = state.owners[work.projectId];
    let changed = false;
    if (!ask.anchorCommentId) {
      const posted = onWork.filter((c) => c.title === ask.comment).sort((a, b) => commentTime(b) - commentTime(a))[0];
      if (posted) {
        ask.anchorCommentId = posted.id;
        ask.anchorAt = commentTime(posted);
        owner ??= posted.userId ?? undefined;
        changed = true;
      }
    }
    const handled = new Set(work.phoneHandled ?? []);
    const own = [...bundleTexts(deps, work), ...(work.asks ?? []).map((a) => a.comment)];
    const mine = (c: Comment) => !!owner && c.userId === owner && !handled.has(c.id) && showsAnything(c.title);
    // Strictly later than the request's own comment: a comment of the same instant may be older (a grant is at stake).
    const afterAnchor = (c: Comment) => !!ask.anchorCommentId && c.id !== ask.anchorCommentId && commentTime(c) > (ask.anchorAt ?? 0) && !isBundleText(c.title, own);
    const candidates = [
      ...onReminder.filter(mine).map((c) => ({ c, where: 'reminder' as const })),
      ...onWork.filter((c) => mine(c) && afterAnchor(c)).map((c) => ({ c, where: 'work' as const })),
    ].sort((a, b) => commentTime(a.c) - commentTime(b.c) || a.c.id.localeCompare(b.c.id));
    const openNumbers = new Set((work.asks ?? []).map((a) => a.number));
    let outcome: DeskLook = { kind: 'none' };
    for (const { c, where } of candidates) {
      const text = stripInvisible(c.title).trim();
      if (isStopPhrase(text, phrases)) {
        markHandled(work, [c.id]);
        outcome = { kind: 'stop', commentId: c.id };
        break;
      }
      const parsed = parseDeskAnswer(ask, text, { numbered: where === 'work' && openNumbers.size > 1 });
      if (parsed.fits) {
        markHandled(work, [c.id]);
        outcome = { kind: 'answer', answer: parsed.answer, summary: parsed.summary, commentId: c.id };
        break;
      }
      // Another waiting request's answer is that request's; a number nothing waits under is a misfit.
      if ('other' in parsed && openNumbers.has(parsed.other)) continue;
      const misfit: Misfit | 'unknown_number' = 'other' in parsed ? 'unknown_number' : parsed.misfit;
      markHandled(work, [c.id]);
      changed = true;
      const reply = misfitReply(deps, ask, misfit, 'other' in parsed ? parsed.other : parsed.count);
      const taskId = where === 'reminder' ? (ask.reminderTaskId as string) : work.taskId;
      try {
        const posted = await deps.gateway.addComment(work.projectId, taskId, reply);
        markHandled(work, [posted.id]);
      } catch (error) {
        deps.log?.(`could not reply to a comment that answers nothing on ${key}: ${messageOf(error)}`);
      }
    }
    if (changed || outcome.kind !== 'none') {
      await saveWork(deps, work, (s) => {
        if (owner) s.owners[work.projectId] ??= owner;
      });
    }
    return outcome;
  });
}

/** The one-line reply to a comment that answers nothing: what is expected instead. */
export function misfitReply(deps: Pick<EngineDeps, 'locale'>, ask: Pick<DeskAsk, 'number' | 'kind'>, misfit: Misfit | 'unknown_number', count?: number): string {
  const t = deps.locale.t;
  const vars = { number: ask.number, count: count ?? 0 };
  const text = misfit === 'empty' ? t(ask.kind === 'approval' ? 'dida.ask.misfit.approval_word' : 'dida.ask.misfit.empty', vars) : t(`dida.ask.misfit.${misfit}`, vars);
  return sanitizeForDida(text, { maxLength: MAX_COMMENT_LENGTH, singleLine: true });
}

/** How a request ended, for Dida. */
export type DeskAskEnd =
  | { how: 'phone'; summary: string }
  | { how: 'desk' }
  | { how: 'stopped' }
  | { how: 'withdrawn'; why: 'cancelled' | 'gone' | 'failed' }
  | { how: 'timeout'; minutes: number };

/**
 * Closes the request `askId` of Work `key`: it is taken off the record first (a later comment answers nothing), then
 * its 🙋 reminder gets the word on how it ended (answered at the desk, withdrawn) and is completed, or the Work gets
 * the acknowledgement of the person's answer, or the word that no answer came in time. A failed write is logged; the
 * reminder then stays open for the person to complete (it answers nothing any more). False when it was already closed.
 */
export async function closeDeskAsk(deps: EngineDeps, key: string, askId: string, end: DeskAskEnd): Promise<boolean> {
  return withWork(deps, key, async () => {
    const work = await loadWork(deps, key);
    const ask = findAsk(work, askId);
    if (!ask) return false;
    work.asks = (work.asks ?? []).filter((a) => a.id !== askId);
    if (work.asks.length === 0) delete work.asks;
    await saveWork(deps, work);
    const t = deps.locale.t;
    const onReminder = end.how === 'desk' ? t('dida.ask.end.desk') : end.how === 'withdrawn' ? t(`dida.ask.end.withdrawn.${end.why}`) : undefined;
    const onWork =
      end.how === 'phone'
        ? t('dida.ask.end.phone', { number: ask.number, summary: sanitizeForDida(end.summary, { maxLength: 200, singleLine: true }) })
        : end.how === 'timeout'
          ? t(`dida.ask.end.timeout.${ask.kind === 'approval' ? 'approval' : 'question'}`, { number: ask.number, minutes: end.minutes, headline: askHeadline(deps, ask) })
          : undefined;
    try {
      if (onReminder && ask.reminderTaskId) await deps.gateway.addComment(work.projectId, ask.reminderTaskId, sanitizeForDida(onReminder, { maxLength: MAX_COMMENT_LENGTH }));
      if (ask.reminderTaskId) await completeOwnTask(deps, work.projectId, ask.reminderTaskId);
      if (onWork) {
        const posted = await deps.gateway.addComment(work.projectId, work.taskId, sanitizeForDida(onWork, { maxLength: MAX_COMMENT_LENGTH }));
        markHandled(work, [posted.id]);
        await saveWork(deps, work);
      }
    } catch (error) {
      deps.log?.(`closing a question of ${key} in Dida failed (its reminder may stay open): ${messageOf(error)}`);
    }
    return true;
  });
}

/** The requests of this machine whose process is gone (`alive` false): their tool call ended with that process. */
export function staleAsks(state: { works: Record<string, WorkRecord> }, host: string | undefined, alive: (pid: number) => boolean): Array<{ key: string; ask: DeskAsk }> {
  const out: Array<{ key: string; ask: DeskAsk }> = [];
  for (const [key, work] of Object.entries(state.works)) {
    for (const ask of work.asks ?? []) {
      if (ask.host === host && ask.pid !== undefined && !alive(ask.pid)) out.push({ key, ask });
    }
  }
  return out;
}
