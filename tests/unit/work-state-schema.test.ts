// The state file's schema (src/core/work/work-state.ts): every enumerated value it must keep, the defaults a short
// record is completed with, unknown session keys kept, values it must refuse, and the small accessors.
import { describe, expect, it } from 'vitest';
import { EngineStateSchema, emptyEngineState, isSettled, SETTLED, STEP_STATUSES, visibleSteps, workKey, type EngineState } from '../../src/core/work/work-state';
import { makeStep, makeWork } from '../helpers/work-fixtures';

const parse = (value: unknown) => EngineStateSchema.safeParse(value);

function minimalWork(fields: Record<string, unknown> = {}) {
  return { taskId: 't', projectId: 'p', title: 'w', origin: 'human', mode: 'checklist', priority: 3, phase: 'open', steps: [], humanFingerprint: '', createdAt: 1, updatedAt: 2, ...fields };
}

describe('EngineStateSchema', () => {
  it('an empty object is the empty state', () => {
    expect(EngineStateSchema.parse({})).toEqual(emptyEngineState());
  });

  it('completes a short Work record with its defaults', () => {
    const state = EngineStateSchema.parse({ works: { t: minimalWork() } });
    expect(state.works.t).toEqual({ ...minimalWork(), occurrence: '', nextStepNumber: 1, keepOpen: false, body: '', rev: 0 });
  });

  it.each([
    ['origin', ['human', 'agent']],
    ['mode', ['checklist', 'direct']],
    ['phase', ['open', 'finalizing', 'accepting', 'closed']],
    ['outcome', ['accepted', 'rework', 'completed_by_human', 'deleted', 'superseded']],
  ])('keeps every %s a Work may have, and refuses another', (field, values) => {
    for (const value of values) expect(parse({ works: { t: minimalWork({ [field]: value }) } }).success).toBe(true);
    expect(parse({ works: { t: minimalWork({ [field]: 'other' }) } }).success).toBe(false);
  });

  it('keeps every step status and origin, the evidence and its web kinds', () => {
    for (const status of STEP_STATUSES) {
      for (const origin of ['human', 'agent']) {
        const step = { id: 's', title: 'a', status, origin, updatedAt: 1 };
        expect(parse({ works: { t: minimalWork({ steps: [step] }) } }).success).toBe(true);
      }
    }
    expect(parse({ works: { t: minimalWork({ steps: [{ id: 's', title: 'a', status: 'done', origin: 'agent', updatedAt: 1 }] }) } }).success).toBe(false);
    for (const kind of ['github', 'gitlab', 'gitee']) {
      const evidence = { commits: [{ sha: 'abc1234', subject: 's', files: [] }], web: { kind, base: 'https://x/o/r' } };
      const state = EngineStateSchema.parse({ works: { t: minimalWork({ steps: [{ id: 's', title: 'a', status: 'completed', origin: 'agent', updatedAt: 1, evidence }] }) } });
      expect(state.works.t?.steps[0]?.evidence).toEqual({ commits: [{ sha: 'abc1234', subject: 's', files: [], moreFiles: 0 }], moreCommits: 0, web: { kind, base: 'https://x/o/r' } });
    }
    const bad = { commits: [], web: { kind: 'bitbucket', base: 'x' } };
    expect(parse({ works: { t: minimalWork({ steps: [{ id: 's', title: 'a', status: 'completed', origin: 'agent', updatedAt: 1, evidence: bad }] }) } }).success).toBe(false);
  });

  it('completes waiting, finalize, acceptance and answers with their defaults, and keeps the pause sources', () => {
    const state = EngineStateSchema.parse({
      works: {
        t: minimalWork({
          waiting: { reason: 'r', previousPriority: 3, since: 1, pausedBy: 'priority' },
          finalize: {},
          acceptance: { taskId: 'a' },
          pendingAnswer: { text: 'x', at: 1 },
        }),
        u: minimalWork({ waiting: { reason: 'r', previousPriority: 3, since: 1, pausedBy: 'comment' } }),
      },
    });
    expect(state.works.t?.waiting).toEqual({ reason: 'r', previousPriority: 3, since: 1, pausedBy: 'priority', applied: false });
    expect(state.works.t?.finalize).toEqual({ attempts: 0 });
    expect(state.works.t?.acceptance).toEqual({ taskId: 'a', handledCommentIds: [], closed: false });
    expect(state.works.t?.pendingAnswer).toEqual({ text: 'x', at: 1, commentIds: [] });
    expect(parse({ works: { t: minimalWork({ waiting: { reason: 'r', previousPriority: 3, since: 1, pausedBy: 'phone' } }) } }).success).toBe(false);
  });

  it('keeps the bundle’s own task kinds, pending creates and progress comments with their defaults', () => {
    const state = EngineStateSchema.parse({
      ownTasks: { a: 'acceptance', r: 'reminder' },
      pendingCreates: Object.fromEntries(['work', 'acceptance', 'reminder', 'rework'].map((kind) => [kind, { kind, projectId: 'p', title: 't', marker: 1, startedAt: 2 }])),
      outbox: [
        { id: 'o1', projectId: 'p', taskId: 't', workKey: 't', text: 'x', createdAt: 1 },
        ...['started', 'completed', 'skipped', 'note'].map((kind, i) => ({ id: `k${i}`, projectId: 'p', taskId: 't', workKey: 't', text: 'x', createdAt: 1, kind })),
      ],
    });
    expect(state.ownTasks).toEqual({ a: 'acceptance', r: 'reminder' });
    expect(Object.keys(state.pendingCreates)).toEqual(['work', 'acceptance', 'reminder', 'rework']);
    expect(state.outbox[0]).toEqual({ id: 'o1', projectId: 'p', taskId: 't', workKey: 't', text: 'x', createdAt: 1, uncertain: false, attempts: 0, kind: 'note' });
    expect(state.outbox.slice(1).map((e) => e.kind)).toEqual(['started', 'completed', 'skipped', 'note']);
    expect(parse({ ownTasks: { a: 'work' } }).success).toBe(false);
    expect(parse({ pendingCreates: { x: { kind: 'note', projectId: 'p', title: 't', marker: 1, startedAt: 2 } } }).success).toBe(false);
    expect(parse({ outbox: [{ id: 'o', projectId: 'p', taskId: 't', workKey: 't', text: 'x', createdAt: 1, kind: 'other' }] }).success).toBe(false);
  });

  it('keeps what a later version added to a Work, its steps, its wait, its finalization and a pending create (two versions share one state folder)', () => {
    const later = {
      works: {
        w1: {
          taskId: 'w1', projectId: 'p', title: 'T', origin: 'human', mode: 'checklist', priority: 3, phase: 'open', humanFingerprint: 'f', createdAt: 1, updatedAt: 1,
          laterField: { asks: [1] },
          steps: [{ id: 's1', title: 'a', status: 'pending', origin: 'human', updatedAt: 1, laterStep: true }],
          waiting: { reason: 'r', previousPriority: 3, since: 1, laterWait: 'x' },
          finalize: { laterFinalize: 2 },
        },
      },
      pendingCreates: { c1: { kind: 'work', projectId: 'p', title: 't', marker: 1, startedAt: 2, laterCreate: 'y' } },
    };
    const state = EngineStateSchema.parse(later) as unknown as typeof later;
    expect(state.works.w1.laterField).toEqual({ asks: [1] });
    expect(state.works.w1.steps[0]!.laterStep).toBe(true);
    expect(state.works.w1.waiting.laterWait).toBe('x');
    expect(state.works.w1.finalize.laterFinalize).toBe(2);
    expect(state.pendingCreates.c1.laterCreate).toBe('y');
  });

  it('completes a session record and keeps keys it does not know', () => {
    const state: EngineState = EngineStateSchema.parse({ sessions: { s: { livePid: 42 } } });
    expect(state.sessions.s).toEqual({ livePid: 42, touched: [], autoAttempts: 0, updatedAt: 0 });
  });
});

describe('accessors', () => {
  it('a Work key is the task id, with the occurrence after # for a recurring task', () => {
    expect(workKey('t1', '')).toBe('t1');
    expect(workKey('t1', '2026-12-02')).toBe('t1#2026-12-02');
  });

  it('deleted steps are not visible; a Work is settled when it has steps and all are completed or skipped', () => {
    const steps = [makeStep({ id: '1', title: 'a', status: 'completed' }), makeStep({ id: '2', title: 'b', status: 'deleted' }), makeStep({ id: '3', title: 'c', status: 'skipped' })];
    expect(visibleSteps(makeWork(steps)).map((s) => s.id)).toEqual(['1', '3']);
    expect(isSettled(makeWork(steps))).toBe(true);
    expect(isSettled(makeWork([]))).toBe(false);
    expect(isSettled(makeWork([makeStep({ id: '1', title: 'a', status: 'deleted' })]))).toBe(false);
    expect(isSettled(makeWork([...steps, makeStep({ id: '4', title: 'd', status: 'in_progress' })]))).toBe(false);
    expect(isSettled(makeWork([makeStep({ id: '4', title: 'd', status: 'pending' })]))).toBe(false);
    expect([...SETTLED].sort()).toEqual(['completed', 'skipped']);
  });
});
