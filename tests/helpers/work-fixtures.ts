// Hand-made Work and step records for unit tests of the engine's pure functions.
import type { StepRecord, WorkRecord } from '../../src/core/work/work-state';

export function makeStep(fields: Partial<StepRecord> & { id: string; title: string }): StepRecord {
  return { status: 'pending', origin: 'agent', updatedAt: 0, ...fields };
}

/** An open human checklist Work in list p1 with the given steps; `fields` override any default. */
export function makeWork(steps: StepRecord[], fields: Partial<WorkRecord> = {}): WorkRecord {
  return {
    taskId: 't1',
    projectId: 'p1',
    occurrence: '',
    title: 'Work',
    origin: 'human',
    mode: 'checklist',
    priority: 3,
    phase: 'open',
    steps,
    nextStepNumber: steps.length + 1,
    keepOpen: false,
    humanFingerprint: '',
    body: '',
    createdAt: 0,
    updatedAt: 0,
    rev: 0,
    ...fields,
  };
}
