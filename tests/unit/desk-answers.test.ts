// What the person's comment means for a dsh question or approval waiting in Dida: options by number or label, free
// text, plan reviews, several questions line by line, 允许 / 拒绝 in both languages, request numbers, and misfits.
import { describe, expect, it } from 'vitest';
import { ALLOW_WORDS, DENY_WORDS, parseDeskAnswer, splitRequestNumber } from '../../src/core/phone/desk-answers';
import type { DeskAsk } from '../../src/core/work/work-state';

type Ask = Pick<DeskAsk, 'number' | 'kind' | 'questions'>;

const pick: Ask = {
  number: 1,
  kind: 'question',
  questions: [{ id: 'q1', question: 'Which one?', options: [{ label: 'Alpha' }, { label: 'Beta (Recommended)' }, { label: '方案 C' }] }],
};
const approval: Ask = { number: 2, kind: 'approval' };

describe('a question with options', () => {
  it('takes an option by its number or its label (case, width and a Recommended mark aside)', () => {
    expect(parseDeskAnswer(pick, '2')).toEqual({ fits: true, answer: { kind: 'question', answers: [{ id: 'q1', selected: ['Beta (Recommended)'] }] }, summary: 'Beta (Recommended)' });
    expect(parseDeskAnswer(pick, ' ２。')).toMatchObject({ fits: true, answer: { answers: [{ selected: ['Beta (Recommended)'] }] } });
    expect(parseDeskAnswer(pick, 'alpha')).toMatchObject({ fits: true, answer: { answers: [{ selected: ['Alpha'] }] } });
    expect(parseDeskAnswer(pick, 'beta')).toMatchObject({ fits: true, answer: { answers: [{ selected: ['Beta (Recommended)'] }] } });
    expect(parseDeskAnswer(pick, '方案 C！')).toMatchObject({ fits: true, answer: { answers: [{ selected: ['方案 C'] }] } });
  });

  it('takes anything else as the person’s own answer, whole', () => {
    expect(parseDeskAnswer(pick, '都不要，用 D\n理由：更便宜')).toEqual({
      fits: true,
      answer: { kind: 'question', answers: [{ id: 'q1', selected: [], custom: '都不要，用 D\n理由：更便宜' }] },
      summary: '都不要，用 D\n理由：更便宜',
    });
  });

  it('refuses a number out of range and several numbers for a single choice, saying how many there are', () => {
    expect(parseDeskAnswer(pick, '7')).toEqual({ fits: false, misfit: 'option_range', count: 3 });
    expect(parseDeskAnswer(pick, '0')).toEqual({ fits: false, misfit: 'option_range', count: 3 });
    expect(parseDeskAnswer(pick, '1,3')).toEqual({ fits: false, misfit: 'one_option' });
  });

  it('takes several numbers for a multiple choice, each once, in the order written', () => {
    const multi: Ask = { ...pick, questions: [{ ...pick.questions![0]!, multiSelect: true }] };
    expect(parseDeskAnswer(multi, '3、1 3')).toMatchObject({ fits: true, answer: { answers: [{ selected: ['方案 C', 'Alpha'] }] }, summary: '方案 C、Alpha' });
    expect(parseDeskAnswer(multi, '1 4')).toEqual({ fits: false, misfit: 'option_range', count: 3 });
  });
});

describe('other questions', () => {
  it('a question without options takes the text as it is', () => {
    const open: Ask = { number: 1, kind: 'question', questions: [{ id: 'name', question: '叫什么？', options: [] }] };
    expect(parseDeskAnswer(open, ' 2 ')).toMatchObject({ fits: true, answer: { answers: [{ id: 'name', selected: [], custom: '2' }] } });
  });

  it('a plan review: a grant word approves with the approving label, a refusal keeps planning, words are feedback', () => {
    const plan: Ask = {
      number: 1,
      kind: 'plan',
      questions: [{ id: 'review', question: 'Approve?', detail: '# Plan', options: [{ label: 'Keep planning' }, { label: 'Approve' }], approve: 'Approve' }],
    };
    expect(parseDeskAnswer(plan, '同意')).toMatchObject({ fits: true, answer: { answers: [{ selected: ['Approve'] }] } });
    expect(parseDeskAnswer(plan, 'yes')).toMatchObject({ fits: true, answer: { answers: [{ selected: ['Approve'] }] } });
    expect(parseDeskAnswer(plan, '拒绝')).toMatchObject({ fits: true, answer: { answers: [{ selected: ['Keep planning'] }] } });
    expect(parseDeskAnswer(plan, '1')).toMatchObject({ fits: true, answer: { answers: [{ selected: ['Keep planning'] }] } });
    expect(parseDeskAnswer(plan, '先加测试')).toMatchObject({ fits: true, answer: { answers: [{ selected: [], custom: '先加测试' }] } });
    // A grant word is only a grant for a plan review; for an ordinary question it is an answer in words.
    expect(parseDeskAnswer(pick, '同意')).toMatchObject({ fits: true, answer: { answers: [{ selected: [], custom: '同意' }] } });
  });

  it('several questions take one line each, in order, with or without “1.” numbering; a wrong count is a misfit', () => {
    const two: Ask = {
      number: 1,
      kind: 'question',
      questions: [
        { id: 'a', question: 'A?', options: [{ label: 'x' }, { label: 'y' }] },
        { id: 'b', question: 'B?', options: [] },
      ],
    };
    expect(parseDeskAnswer(two, '1. 2\n\n2. 随便')).toEqual({
      fits: true,
      answer: { kind: 'question', answers: [{ id: 'a', selected: ['y'] }, { id: 'b', selected: [], custom: '随便' }] },
      summary: 'y；随便',
    });
    expect(parseDeskAnswer(two, 'x\n3. later')).toMatchObject({ fits: true, answer: { answers: [{ selected: ['x'] }, { custom: '3. later' }] } });
    expect(parseDeskAnswer(two, 'x')).toEqual({ fits: false, misfit: 'lines', count: 2 });
    expect(parseDeskAnswer(two, '5\nok')).toEqual({ fits: false, misfit: 'option_range', count: 2 });
  });
});

describe('an approval', () => {
  it('is granted once or refused by the whole comment, in either language, whatever the locale', () => {
    for (const word of ALLOW_WORDS) expect(parseDeskAnswer(approval, ` ${word.toUpperCase()}！`), word).toMatchObject({ fits: true, answer: { kind: 'approval', outcome: 'allowed-once' } });
    for (const word of DENY_WORDS) expect(parseDeskAnswer(approval, word), word).toMatchObject({ fits: true, answer: { kind: 'approval', outcome: 'rejected' } });
  });

  it('never reads a grant inside other words: a refusal that contains a grant word, a sentence, a number', () => {
    expect(parseDeskAnswer(approval, '不允许')).toMatchObject({ answer: { outcome: 'rejected' } });
    for (const text of ['允许吗', '可以，但是先备份', 'allow it later', '1', '好吧不行']) {
      expect(parseDeskAnswer(approval, text), text).toEqual({ fits: false, misfit: 'approval_word' });
    }
  });
});

describe('request numbers', () => {
  it('are split off the front: #2, ＃2：, #2.', () => {
    expect(splitRequestNumber('#2 允许')).toEqual({ number: 2, rest: '允许' });
    expect(splitRequestNumber('＃12：1')).toEqual({ number: 12, rest: '1' });
    expect(splitRequestNumber('#3. no')).toEqual({ number: 3, rest: 'no' });
    expect(splitRequestNumber('#3')).toEqual({ number: 3, rest: '' });
    expect(splitRequestNumber('2 允许')).toEqual({ rest: '2 允许' });
    expect(splitRequestNumber('#x 1')).toEqual({ rest: '#x 1' });
  });

  it('a comment naming this request answers it; another number is that request’s; none is needed only where several wait', () => {
    expect(parseDeskAnswer(approval, '#2 允许', { numbered: true })).toMatchObject({ fits: true, answer: { outcome: 'allowed-once' } });
    expect(parseDeskAnswer(approval, '#1 允许', { numbered: true })).toEqual({ fits: false, other: 1 });
    expect(parseDeskAnswer(approval, '#1 允许')).toEqual({ fits: false, other: 1 });
    expect(parseDeskAnswer(approval, '允许', { numbered: true })).toEqual({ fits: false, misfit: 'number_needed' });
    expect(parseDeskAnswer(approval, '#2', { numbered: true })).toEqual({ fits: false, misfit: 'empty' });
    expect(parseDeskAnswer({ ...pick, number: 4 }, '#4 3')).toMatchObject({ fits: true, answer: { answers: [{ selected: ['方案 C'] }] } });
  });
});
