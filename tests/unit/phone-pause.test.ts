// Which Work a step boundary looks at, and what the pause comment says about where it stopped
// (src/core/phone/phone-pause.ts): the pure parts, on hand-made records.
import { describe, expect, it } from 'vitest';
import { boundaryWork, pausedComment } from '../../src/core/phone/phone-pause';
import { getLocale } from '../../src/core/text/locale';
import { emptyEngineState, type EngineState, type WorkRecord } from '../../src/core/work/work-state';
import { makeStep, makeWork } from '../helpers/work-fixtures';

function stateWith(current: string | undefined, work?: WorkRecord): EngineState {
  const state = emptyEngineState();
  state.sessions.s1 = { touched: [], autoAttempts: 0, updatedAt: 0, ...(current ? { currentWork: current } : {}) };
  if (work) state.works[work.taskId] = work;
  return state;
}

describe('the Work a step boundary looks at', () => {
  it('the session’s current Work, only while it is open and not waiting', () => {
    const open = makeWork([]);
    expect(boundaryWork(stateWith('t1', open), 's1')).toEqual({ key: 't1', work: open });
    expect(boundaryWork(stateWith('t1', open), 'other-session')).toBeUndefined();
    expect(boundaryWork(stateWith(undefined, open), 's1')).toBeUndefined();
    expect(boundaryWork(stateWith('t2', open), 's1')).toBeUndefined();
    for (const phase of ['finalizing', 'accepting', 'closed'] as const) expect(boundaryWork(stateWith('t1', makeWork([], { phase })), 's1'), phase).toBeUndefined();
    expect(boundaryWork(stateWith('t1', makeWork([], { waiting: { reason: 'r', previousPriority: 3, applied: true, since: 0 } })), 's1')).toBeUndefined();
  });
});

describe('where a paused Work stopped', () => {
  const zh = { locale: getLocale('zh') };
  const steps = [
    makeStep({ id: 'a', title: '一', status: 'completed' }),
    makeStep({ id: 'b', title: '二', status: 'skipped' }),
    makeStep({ id: 'x', title: '删掉的', status: 'deleted' }),
  ];

  it('the steps in progress, else the next one, else only the count; completed and skipped steps are done, deleted ones not counted', () => {
    const howTo = getLocale('zh').t('dida.comment.pausedHowTo');
    expect(pausedComment(zh, makeWork([...steps, makeStep({ id: 'c', title: '三', status: 'in_progress' }), makeStep({ id: 'd', title: '四', status: 'in_progress' }), makeStep({ id: 'e', title: '五' })]))).toBe(
      `已暂停：停在「三」「四」（已完成 2/5 步）。\n${howTo}`,
    );
    expect(pausedComment(zh, makeWork([...steps, makeStep({ id: 'e', title: '五' }), makeStep({ id: 'f', title: '六' })]))).toBe(`已暂停：已完成 2/4 步，下一步是「五」。\n${howTo}`);
    expect(pausedComment(zh, makeWork(steps))).toBe(`已暂停（已完成 2/2 步）。\n${howTo}`);
  });
});
