// Why a Work may not be sent for review yet (src/core/review/finalize.ts), each reason with its words for the model,
// and the review todo's reminders from a fresh import (built at load).
import { describe, expect, it, vi } from 'vitest';
import { finalizeBlocker } from '../../src/core/review/finalize';
import { makeStep, makeWork } from '../helpers/work-fixtures';

const steps = (...statuses: Array<'pending' | 'in_progress' | 'completed' | 'skipped' | 'deleted'>) => statuses.map((status, i) => makeStep({ id: `s${i}`, title: `t${i}`, status }));

describe('finalizeBlocker', () => {
  it('names each reason in order, with the Work', () => {
    expect(finalizeBlocker(makeWork(steps('completed'), { phase: 'closed' }))).toEqual({ status: 'not_ready', code: 'work_closed', message: 'Work t1 is closed.' });
    expect(finalizeBlocker(makeWork(steps('completed'), { waiting: { reason: 'r', previousPriority: 3, applied: true, since: 0 } }))).toEqual({ status: 'not_ready', code: 'waiting_for_human', message: 'Work t1 is waiting for a person.' });
    expect(finalizeBlocker(makeWork(steps('completed'), { priority: 0 }))).toEqual({ status: 'not_ready', code: 'draft', message: 'Work t1 is a draft (priority none in Dida).' });
    expect(finalizeBlocker(makeWork(steps('completed'), { keepOpen: true }))).toEqual({ status: 'not_ready', code: 'keep_open', message: "Work t1 is kept open at the person's request." });
    expect(finalizeBlocker(makeWork(steps('completed'), { reopened: true }))).toEqual({ status: 'not_ready', code: 'keep_open', message: 'The person re-opened Work t1 in Dida; it is sent for review again once its steps change in this round.' });
  });

  it('counts only the steps neither completed nor skipped (deleted ones are not shown)', () => {
    expect(finalizeBlocker(makeWork(steps('completed', 'skipped', 'pending', 'in_progress', 'deleted')))).toEqual({ status: 'not_ready', code: 'not_settled', message: 'Work t1 still has 2 unsettled step(s).' });
    expect(finalizeBlocker(makeWork(steps('completed', 'skipped', 'deleted')))).toBeUndefined();
    expect(finalizeBlocker(makeWork(steps('skipped')))).toBeUndefined();
  });

  it('the review todo reminds at once and three minutes later (from a fresh import)', async () => {
    vi.resetModules();
    const fresh = await import('../../src/core/review/finalize');
    expect(fresh.ACCEPTANCE_REMINDERS).toEqual(['TRIGGER:PT0S', 'TRIGGER:PT3M']);
  });
});
