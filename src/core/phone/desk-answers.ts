// What the person's comment means for a dsh question or approval waiting in Dida (pure rules, no I/O): an option by
// number or label, free text, 允许 / 拒绝 (either language, whatever the locale), and the request number "#2" when
// several wait.
import type { DeskAsk } from '../work/work-state';
import { normalisePhrase } from './phone-signals';

/** An approval answer: one grant for the one request (never "always"), or a refusal. */
export type ApprovalOutcome = 'allowed-once' | 'rejected';

/** One question's answer as dsh's question service answers it: option labels, or the person's own words. */
export interface QuestionAnswerItem {
  id: string;
  selected: string[];
  custom?: string;
}

export type DeskAnswer = { kind: 'question'; answers: QuestionAnswerItem[] } | { kind: 'approval'; outcome: ApprovalOutcome };

/** Why a comment answers nothing (the person gets a one-line reply saying what is expected). */
export type Misfit = 'option_range' | 'one_option' | 'lines' | 'approval_word' | 'number_needed' | 'empty';

export type ParsedAnswer =
  | { fits: true; answer: DeskAnswer; /** What was chosen, in the person's words or the option labels. */ summary: string }
  | { fits: false; misfit: Misfit; /** The highest option number or the number of questions, for the reply. */ count?: number }
  /** The comment names another request by its number. */
  | { fits: false; other: number };

/** Words that grant an approval, in both languages (the whole comment, after its request number). */
export const ALLOW_WORDS: readonly string[] = ['允许', '允许一次', '同意', '批准', '可以', '好', '好的', '行', 'allow', 'allowed', 'approve', 'approved', 'yes', 'y', 'ok', 'okay'];
/** Words that refuse an approval, in both languages. */
export const DENY_WORDS: readonly string[] = ['拒绝', '不允许', '不同意', '不批准', '不可以', '不行', '不要', '否', 'deny', 'denied', 'reject', 'rejected', 'no', 'n'];

const ALLOW = new Set(ALLOW_WORDS.map(normalisePhrase));
const DENY = new Set(DENY_WORDS.map(normalisePhrase));

const REQUEST_NUMBER = /^\s*[#＃]\s*(\d{1,4})(?:\s*[:：.。、,，)）-]\s*|\s+|$)/u;

/** A leading request number ("#2 允许", "＃2：1") and the rest of the comment. */
export function splitRequestNumber(text: string): { number?: number; rest: string } {
  const match = REQUEST_NUMBER.exec(text);
  if (!match) return { rest: text.trim() };
  return { number: Number(match[1]), rest: text.slice(match[0].length).trim() };
}

/** The comparison form of an option label: as a phrase, without a "(Recommended)" mark. */
function labelForm(label: string): string {
  return normalisePhrase(label.replace(/[(（]\s*(recommended|推荐)\s*[)）]/giu, ''));
}

const NUMBER_LIST = /^\d{1,3}(?:\s*[,，、;；\s]\s*\d{1,3})*$/u;
const LINE_NUMBER = /^(\d{1,2})\s*[.)）、:：]\s*(\S[\s\S]*)$/u;

type QuestionRecord = NonNullable<DeskAsk['questions']>[number];
type One = { item: QuestionAnswerItem; summary: string } | { misfit: Misfit; count?: number };

function answerOne(question: QuestionRecord, text: string): One {
  const options = question.options;
  const said = normalisePhrase(text);
  const bare = text.normalize('NFKC').trim().replace(/[。.!]+$/u, '');
  if (options.length > 0) {
    if (NUMBER_LIST.test(bare)) {
      const picked = [...new Set(bare.split(/[^\d]+/u).filter(Boolean).map(Number))];
      if (picked.length > 1 && !question.multiSelect) return { misfit: 'one_option' };
      if (picked.some((n) => n < 1 || n > options.length)) return { misfit: 'option_range', count: options.length };
      const labels = picked.map((n) => (options[n - 1] as { label: string }).label);
      return { item: { id: question.id, selected: labels }, summary: labels.join('、') };
    }
    const byLabel = options.find((o) => labelForm(o.label) === said && said !== '');
    if (byLabel) return { item: { id: question.id, selected: [byLabel.label] }, summary: byLabel.label };
    // A plan review: a grant word approves the plan, a refusal keeps planning.
    const approve = question.approve !== undefined ? options.find((o) => o.label === question.approve) : undefined;
    const decline = approve ? options.find((o) => o !== approve) : undefined;
    const chosen = approve && ALLOW.has(said) ? approve : decline && DENY.has(said) ? decline : undefined;
    if (chosen) return { item: { id: question.id, selected: [chosen.label] }, summary: chosen.label };
  }
  return { item: { id: question.id, selected: [], custom: text.trim() }, summary: text.trim() };
}

/**
 * What `text` (an owner's comment, whole) answers of `ask`. `numbered`: several requests wait on the Work and the
 * comment was written on the Work (not on this request's own 🙋), so it must name the request ("#2 …"). A comment that
 * names another request is that one's; one that fits nothing says why.
 */
export function parseDeskAnswer(ask: Pick<DeskAsk, 'number' | 'kind' | 'questions'>, text: string, options: { numbered?: boolean } = {}): ParsedAnswer {
  const { number, rest } = splitRequestNumber(text);
  if (number !== undefined && number !== ask.number) return { fits: false, other: number };
  if (number === undefined && options.numbered) return { fits: false, misfit: 'number_needed' };
  if (rest === '') return { fits: false, misfit: 'empty' };
  if (ask.kind === 'approval') {
    const said = normalisePhrase(rest);
    if (ALLOW.has(said)) return { fits: true, answer: { kind: 'approval', outcome: 'allowed-once' }, summary: rest };
    if (DENY.has(said)) return { fits: true, answer: { kind: 'approval', outcome: 'rejected' }, summary: rest };
    return { fits: false, misfit: 'approval_word' };
  }
  const questions = ask.questions ?? [];
  if (questions.length === 0) return { fits: false, misfit: 'empty' };
  // One question takes the whole comment; several take one line each, in order ("1. …" numbering allowed).
  let parts: string[];
  if (questions.length === 1) parts = [rest];
  else {
    const lines = rest.split(/\r?\n/u).map((l) => l.trim()).filter((l) => l !== '');
    if (lines.length !== questions.length) return { fits: false, misfit: 'lines', count: questions.length };
    parts = lines.map((line, i) => {
      const numbered = LINE_NUMBER.exec(line);
      return numbered && Number(numbered[1]) === i + 1 ? (numbered[2] as string) : line;
    });
  }
  const items: QuestionAnswerItem[] = [];
  const summaries: string[] = [];
  for (const [i, question] of questions.entries()) {
    const one = answerOne(question, parts[i] as string);
    if ('misfit' in one) return { fits: false, misfit: one.misfit, ...(one.count !== undefined ? { count: one.count } : {}) };
    items.push(one.item);
    summaries.push(one.summary);
  }
  return { fits: true, answer: { kind: 'question', answers: items }, summary: summaries.join('；') };
}
