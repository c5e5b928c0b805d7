// The domain outcome of the engine (src/core/work/engine-context.ts), from a fresh import so the module-level list
// counts: the closed set of codes the tools and adapters see, and what a WorkError carries.
import { describe, expect, it, vi } from 'vitest';

async function fresh(): Promise<typeof import('../../src/core/work/engine-context')> {
  vi.resetModules();
  return import('../../src/core/work/engine-context');
}

describe('outcome codes', () => {
  it('the closed set, in order, each code once', async () => {
    const { OUTCOME_CODES } = await fresh();
    expect([...OUTCOME_CODES]).toEqual([
      'ok',
      'not_bound',
      'list_missing',
      'list_closed',
      'list_ambiguous',
      'list_near_miss',
      'work_not_found',
      'no_current_work',
      'step_not_found',
      'step_ambiguous',
      'invalid_transition',
      'human_item_readonly',
      'duplicate_step',
      'invalid_text',
      'missing_resolution',
      'work_closed',
      'work_completed_remotely',
      'work_deleted_remotely',
      'not_settled',
      'waiting_for_human',
      'not_waiting',
      'draft',
      'keep_open',
      'queue_not_granted',
      'queue_empty',
      'claimed_elsewhere',
      'invalid_argument',
      'too_many_steps',
      'dida_unavailable',
    ]);
    expect(new Set(OUTCOME_CODES).size).toBe(OUTCOME_CODES.length);
  });

  it('a WorkError is an Error named WorkError with its code, its sentence for the model and the one for people', async () => {
    const { WorkError, isWorkError } = await fresh();
    const error = new WorkError('work_closed', 'for the model', 'for people');
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('WorkError');
    expect(error.code).toBe('work_closed');
    expect(error.message).toBe('for the model');
    expect(error.forPeople).toBe('for people');
    expect(new WorkError('draft', 'x').forPeople).toBeUndefined();
    expect(isWorkError(error)).toBe(true);
    const lookalike = Object.assign(new Error('x'), { name: 'WorkError', code: 'draft' });
    expect(isWorkError(lookalike)).toBe(false);
    expect(isWorkError(undefined)).toBe(false);
  });
});
