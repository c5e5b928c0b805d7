// What src/core/steps/step-ops.ts tells the model and the person: each refusal's words, the step named when it is not
// found, the times and counters a change moves, the started note once per spell, completion notes with their result
// and commits, and a resolution kept to its length.
import { describe, expect, it } from 'vitest';
import { applyStepChanges, findStep, progressComment, progressEntries } from '../../src/core/steps/step-ops';
import type { StepChange } from '../../src/core/work/step-change';
import { getLocale } from '../../src/core/text/locale';
import type { EngineDeps } from '../../src/core/work/engine-context';
import { WorkError } from '../../src/core/work/engine-context';
import type { StepRecord, WorkRecord } from '../../src/core/work/work-state';
import { makeStep, makeWork } from '../helpers/work-fixtures';

const NOW = 7_000;
const en = { locale: getLocale('en') } as EngineDeps;

function sample(): WorkRecord {
  return makeWork(
    [
      makeStep({ id: 'h1', title: 'human step', origin: 'human', updatedAt: 1 }),
      makeStep({ id: 'a1', title: 'agent step', updatedAt: 1 }),
      makeStep({ id: 'a2', title: 'done step', status: 'completed', resolution: 'was done', updatedAt: 1 }),
    ],
    { taskId: 'task9', occurrence: '' },
  );
}

function apply(work: WorkRecord, changes: StepChange[]) {
  let n = 0;
  return applyStepChanges(work, changes, NOW, () => `n${++n}`);
}

function refusal(work: WorkRecord, changes: StepChange[]): WorkError {
  try {
    apply(work, changes);
  } catch (error) {
    if (error instanceof WorkError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('the words of each refusal', () => {
  it('names the ambiguous step ids and the Work and the step it could not find', () => {
    const twins = makeWork([makeStep({ id: 'x1', title: 'Same' }), makeStep({ id: 'x2', title: 'same' })], { taskId: 'tw' });
    expect(() => findStep(twins, 'SAME')).toThrow('Several steps have that title (x1, x2); pass the step id instead.');
    expect(() => findStep(sample(), '  missing  ')).toThrow('Work task9 has no step "missing"; call todo list to see its step ids.');
    const long = 'y'.repeat(200);
    const error = (() => {
      try {
        findStep(sample(), long);
      } catch (e) {
        return e as WorkError;
      }
      return undefined;
    })();
    expect(error?.code).toBe('step_not_found');
    expect(error?.message).toContain(`"${'y'.repeat(79)}…"`);
  });

  it('says why a change is refused', () => {
    expect(refusal(sample(), [{ op: 'add', title: 'twin' }, { op: 'add', title: 'twin' }]).message).toBe(
      'Two of the steps you passed have the same title; give each step a distinct title.',
    );
    expect(refusal(sample(), [{ op: 'add', title: 'done step' }]).message).toBe('Step a2 already has that title; use a different title or update step a2.');
    expect(refusal(sample(), [{ op: 'add', title: 'human step' }]).message).toBe('Step h1 already has that title; use a different title or update step h1.');
    expect(refusal(sample(), [{ op: 'delete', step: 'h1' }]).message).toBe(
      'Step h1 was written by the person in Dida and cannot be deleted; mark it skipped with a reason instead.',
    );
    expect(refusal(sample(), [{ op: 'update', step: 'h1', title: 'new' }]).message).toBe('Step h1 was written by the person in Dida; only its status can change, not its title.');
    expect(refusal(sample(), [{ op: 'update', step: 'a1', title: 'done step' }]).message).toBe('Another step already has that title; choose another title for step a1.');
    expect(refusal(sample(), [{ op: 'update', step: 'a2', status: 'pending' }]).message).toBe('Step a2 is already completed, which is final; add a new step for further work.');
    expect(refusal(sample(), [{ op: 'update', step: 'a1', status: 'completed' }]).message).toBe(
      'Completing step a1 needs a resolution: one sentence on what changed and how it was verified.',
    );
    expect(refusal(sample(), [{ op: 'update', step: 'a1', status: 'skipped', resolution: '' }]).message).toBe('Skipping step a1 needs a resolution giving the reason it was not done.');
    const empty = refusal(sample(), [{ op: 'add', title: '\u200B' }]);
    expect(empty.code).toBe('invalid_text');
    expect(empty.message).toBe('The step title is empty after removing what is not for people; write a short plain-language title.');
    const emptyRename = refusal(sample(), [{ op: 'update', step: 'a1', title: '\u200B' }]);
    expect(emptyRename.code).toBe('invalid_text');
    expect(emptyRename.message).toBe('The step title is empty after removing what is not for people; write a short plain-language title.');
  });

  it('an agent step added again with another status is a duplicate; the same status is a repeated call', () => {
    expect(refusal(sample(), [{ op: 'add', title: 'agent step', status: 'in_progress' }]).code).toBe('duplicate_step');
    const w = sample();
    expect(apply(w, [{ op: 'add', title: 'agent step', status: 'pending' }])).toEqual([]);
    const started = makeWork([makeStep({ id: 'a', title: 'going', status: 'in_progress' })]);
    expect(apply(started, [{ op: 'add', title: 'going', status: 'in_progress' }])).toEqual([]);
    expect(refusal(makeWork([makeStep({ id: 'a', title: 'going', status: 'in_progress' })]), [{ op: 'add', title: 'going' }]).code).toBe('duplicate_step');
  });
});

describe('what a change moves', () => {
  it('an added step is numbered on, timed now, and only a started one is a transition', () => {
    const w = sample();
    const t = apply(w, [{ op: 'add', title: 'one' }, { op: 'add', title: 'two', status: 'in_progress' }]);
    expect(w.nextStepNumber).toBe(6);
    expect(w.steps.slice(-2)).toEqual([
      { id: 'n1', title: 'one', status: 'pending', origin: 'agent', updatedAt: NOW },
      { id: 'n2', title: 'two', status: 'in_progress', origin: 'agent', updatedAt: NOW },
    ]);
    expect(t).toEqual([{ step: w.steps[4], from: 'pending', to: 'in_progress' }]);
  });

  it('a rename, a delete and a clear are timed now; passing the same title touches nothing', () => {
    const w = sample();
    apply(w, [{ op: 'update', step: 'a1', title: 'agent step' }]);
    expect(w.steps[1]?.updatedAt).toBe(1);
    apply(w, [{ op: 'update', step: 'a1', title: 'renamed' }]);
    expect(w.steps[1]).toMatchObject({ title: 'renamed', updatedAt: NOW });
    const d = sample();
    expect(apply(d, [{ op: 'delete', step: 'a2' }])).toEqual([{ step: d.steps[2], from: 'completed', to: 'deleted' }]);
    expect(d.steps[2]?.updatedAt).toBe(NOW);
    const c = sample();
    apply(c, [{ op: 'clear' }]);
    expect(c.steps.map((s) => [s.id, s.status, s.updatedAt])).toEqual([
      ['h1', 'pending', 1],
      ['a1', 'deleted', NOW],
      ['a2', 'completed', 1],
    ]);
  });

  it('a resolution alone is kept without a transition; a status asked again is no transition', () => {
    const w = sample();
    expect(apply(w, [{ op: 'update', step: 'a1', resolution: 'notes so far' }])).toEqual([]);
    expect(w.steps[1]).toMatchObject({ status: 'pending', resolution: 'notes so far', updatedAt: 1 });
    expect(apply(w, [{ op: 'update', step: 'a1', status: 'pending' }])).toEqual([]);
    expect(w.steps[1]?.updatedAt).toBe(1);
    // A blank resolution keeps the one there.
    apply(w, [{ op: 'update', step: 'a1', resolution: '   ' }]);
    expect(w.steps[1]?.resolution).toBe('notes so far');
  });

  it('going in progress again starts a new spell, whose start is noted again', () => {
    const w = makeWork([makeStep({ id: 'a', title: 'work', status: 'pending', startedNoted: true })]);
    const t = apply(w, [{ op: 'update', step: 'a', status: 'in_progress' }]);
    expect(w.steps[0]).toMatchObject({ status: 'in_progress', startedNoted: false, updatedAt: NOW });
    expect(progressEntries(en, t)).toEqual([{ kind: 'started', stepId: 'a', text: 'Started: work' }]);
    expect(w.steps[0]?.startedNoted).toBe(true);
    // Noted once: the same transition read again says nothing more.
    expect(progressEntries(en, t)).toEqual([]);
  });

  it('keeps a long resolution to 1000 characters', () => {
    const w = sample();
    apply(w, [{ op: 'update', step: 'a1', status: 'completed', resolution: 'r'.repeat(3000) }]);
    expect(w.steps[1]?.resolution).toHaveLength(1000);
    expect(w.steps[1]?.resolution?.endsWith('…')).toBe(true);
  });
});

describe('progress notes', () => {
  const done = (fields: Partial<StepRecord>) => makeStep({ id: 's1', title: 'build', status: 'completed', ...fields });

  it('a completion without a resolution, with one, and with the commits under it', () => {
    expect(progressEntries(en, [{ step: done({}), from: 'in_progress', to: 'completed' }])).toEqual([{ kind: 'completed', stepId: 's1', text: 'Done: build' }]);
    expect(progressEntries(en, [{ step: done({ resolution: 'it builds' }), from: 'pending', to: 'completed' }])).toEqual([
      { kind: 'completed', stepId: 's1', text: 'Done: build\nResult: it builds' },
    ]);
    const evidence = { commits: [{ sha: 'abcdef1234567', subject: 'fix the build', files: ['a.ts'], moreFiles: 0 }], moreCommits: 0, branch: 'main' };
    const [entry] = progressEntries(en, [{ step: done({ resolution: 'it builds', evidence }), from: 'pending', to: 'completed' }]);
    expect(entry?.text.startsWith('Done: build\nResult: it builds\n')).toBe(true);
    expect(entry?.text).toContain('abcdef123456');
    expect(entry?.text).toContain('fix the build');
    expect(entry?.text).toContain('main');
  });

  it('a skip with its reason (or none), and nothing for deletes or pending moves', () => {
    expect(progressEntries(en, [{ step: makeStep({ id: 'k', title: 'docs', resolution: 'not needed' }), from: 'pending', to: 'skipped' }])).toEqual([
      { kind: 'skipped', stepId: 'k', text: 'Skipped: docs\nReason: not needed' },
    ]);
    expect(progressEntries(en, [{ step: makeStep({ id: 'k', title: 'docs' }), from: 'pending', to: 'skipped' }])[0]?.text).toBe('Skipped: docs\nReason:');
    expect(progressEntries(en, [{ step: makeStep({ id: 'k', title: 'docs' }), from: 'pending', to: 'deleted' }])).toEqual([]);
    expect(progressEntries(en, [{ step: makeStep({ id: 'k', title: 'docs' }), from: 'in_progress', to: 'pending' }])).toEqual([]);
  });

  it('one comment joins the notes of a call with a blank line', () => {
    const t = [
      { step: makeStep({ id: 'a', title: 'one' }), from: 'pending' as const, to: 'in_progress' as const },
      { step: makeStep({ id: 'b', title: 'two', resolution: 'ok' }), from: 'pending' as const, to: 'completed' as const },
    ];
    expect(progressComment(en, t)).toBe('Started: one\n\nDone: two\nResult: ok');
  });
});
