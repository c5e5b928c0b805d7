// The shape of the engine's state file (src/core/work/work-state.ts), from a fresh import before each test: the
// schemas are built when the module loads. A record with every field set reads back whole (no field is dropped), a
// short one gets its defaults, and every enum takes its values and nothing else.
import { beforeEach, describe, expect, it, vi } from 'vitest';

let ws: typeof import('../../src/core/work/work-state');
beforeEach(async () => {
  vi.resetModules();
  ws = await import('../../src/core/work/work-state');
});

const FULL_STEP = {
  id: 's1',
  itemId: 'i1',
  title: '第一步',
  status: 'completed',
  origin: 'agent',
  resolution: '做好了',
  startedNoted: true,
  seen: { title: '第一步', done: true },
  head: 'abc123',
  evidence: { commits: [{ sha: 'a'.repeat(40), subject: '修好', files: ['a.ts'], moreFiles: 2 }], moreCommits: 1, branch: 'main', web: { kind: 'gitlab', base: 'https://example.invalid/x' } },
  updatedAt: 5,
};

const FULL_WORK = {
  taskId: 't1',
  projectId: 'p1',
  occurrence: '2026-12-03',
  title: '部署',
  origin: 'human',
  mode: 'direct',
  priority: 3,
  phase: 'accepting',
  steps: [FULL_STEP],
  nextStepNumber: 4,
  keepOpen: true,
  humanFingerprint: 'fp',
  body: '说明',
  finalize: { acceptanceTaskId: 'r1', anchorCommentId: 'c1', summaryPosted: true, itemsTicked: true, workCompleted: true, lastError: 'x', attempts: 2 },
  waiting: { reason: '要密码', previousPriority: 3, reminderTaskId: 'm1', applied: true, since: 1, pausedBy: 'comment', comment: '需要你帮忙', anchorCommentId: 'c2', anchorAt: 2, cause: 'asked', answered: true },
  acceptance: { taskId: 'r1', ownerUserId: 'u1', anchorCommentId: 'c1', handledCommentIds: ['c3'], reworkTaskId: 't2', closed: true },
  commentLook: { first: 1, at: 2, version: 'v', scope: 'work' },
  claim: { holder: 'box#s1', at: 3 },
  reworkOf: 't0',
  outcome: 'superseded',
  createdAt: 1,
  updatedAt: 2,
  seenVersion: 'e1',
  rev: 7,
  round: 2,
  rebuilt: true,
  reopened: true,
  pendingDesc: '补充',
  repoHead: 'def456',
  dir: '/code/web',
  pendingAnswer: { text: '用这个', commentIds: ['c4'], at: 4, question: '用哪个？', paused: true },
  tags: ['web'],
  phoneHandled: ['c5'],
  claimPosting: 5,
  pendingSince: 6,
  writeFailure: { refused: false, message: 'server (HTTP 503)', at: 7, failures: 2, retryAt: 8 },
  news: { imported: ['s2'], completedByHuman: ['s3'], reopenedByHuman: ['s4'], removed: ['s5'], humanEdited: true, failure: { refused: true, message: 'forbidden (HTTP 403)' }, closed: 'deleted' },
};

describe('the state file, read back', () => {
  it('an empty file is the empty state, every section present', () => {
    const empty = { works: {}, usage: {}, ownTasks: {}, owners: {}, sessions: {}, pendingCreates: {}, outbox: [], rebuilt: [], strayTasks: [], peers: {} };
    expect(ws.EngineStateSchema.parse({})).toEqual(empty);
    expect(ws.emptyEngineState()).toEqual(empty);
    expect([...ws.SETTLED]).toEqual(['completed', 'skipped']);
    expect(Object.keys(ws.ENGINE_STATE_SECTIONS).sort()).toEqual(['outbox', 'ownTasks', 'owners', 'peers', 'pendingCreates', 'rebuilt', 'sessions', 'strayTasks']);
  });

  it('a state with every field set reads back whole', () => {
    const state = {
      works: { t1: FULL_WORK },
      usage: {},
      ownTasks: { r1: 'acceptance', m1: 'reminder' },
      owners: { p1: 'u1' },
      sessions: { s1: { currentWork: 't1', touched: ['t1'], autoAttempts: 1, lastAutoAt: 2, turnOpenSince: 3, updatedAt: 4, extra: 'kept' } },
      pendingCreates: { k1: { kind: 'rework', projectId: 'p1', title: '返工', marker: 9, startedAt: 1, forKey: 't1' } },
      outbox: [{ id: 'o1', projectId: 'p1', taskId: 't1', workKey: 't1', text: '已完成：第一步', createdAt: 1, uncertain: true, attempts: 2, failures: 1, retryAt: 5, kind: 'completed', stepId: 's1', sentAs: '已完成：第一步' }],
      rebuilt: [{ at: 1, what: 'review todo' }],
      strayTasks: [{ projectId: 'p1', taskId: 'r9', since: 1 }],
      peers: { p1: 9 },
    };
    expect(ws.EngineStateSchema.parse(state)).toEqual(state);
  });

  it('a short record gets its defaults', () => {
    const short = { taskId: 't1', projectId: 'p1', title: '部署', origin: 'agent', mode: 'checklist', priority: 0, phase: 'open', steps: [], humanFingerprint: '', createdAt: 1, updatedAt: 1 };
    expect(ws.WorkRecordSchema.parse(short)).toEqual({ ...short, occurrence: '', nextStepNumber: 1, keepOpen: false, body: '', rev: 0 });
    expect(ws.WorkRecordSchema.parse({ ...short, acceptance: { taskId: 'r1' }, pendingAnswer: { text: 'x', at: 1 }, waiting: { reason: 'r', previousPriority: 1, since: 1 }, finalize: {} })).toMatchObject({
      acceptance: { taskId: 'r1', handledCommentIds: [], closed: false },
      pendingAnswer: { text: 'x', at: 1, commentIds: [] },
      waiting: { applied: false },
      finalize: { attempts: 0 },
    });
    expect(ws.StepEvidenceSchema.parse({ commits: [{ sha: 'a', subject: 's', files: [] }] })).toEqual({ commits: [{ sha: 'a', subject: 's', files: [], moreFiles: 0 }], moreCommits: 0 });
    expect(ws.SessionRecordSchema.parse({})).toEqual({ touched: [], autoAttempts: 0, updatedAt: 0 });
    const entry = { id: 'o1', projectId: 'p1', taskId: 't1', workKey: 't1', text: 'x', createdAt: 1 };
    expect(ws.OutboxEntrySchema.parse(entry)).toEqual({ ...entry, uncertain: false, attempts: 0, kind: 'note' });
  });

  it('every enum takes its values and nothing else', () => {
    const work = (fields: Record<string, unknown>) => ws.WorkRecordSchema.safeParse({ ...FULL_WORK, ...fields }).success;
    for (const origin of ['human', 'agent']) expect(work({ origin }), origin).toBe(true);
    for (const mode of ['checklist', 'direct']) expect(work({ mode }), mode).toBe(true);
    for (const phase of ['open', 'finalizing', 'accepting', 'closed']) expect(work({ phase }), phase).toBe(true);
    for (const outcome of ['accepted', 'rework', 'completed_by_human', 'deleted', 'superseded']) expect(work({ outcome }), outcome).toBe(true);
    for (const pausedBy of ['priority', 'comment']) expect(work({ waiting: { ...FULL_WORK.waiting, pausedBy } }), pausedBy).toBe(true);
    for (const kind of ['github', 'gitlab', 'gitee']) expect(work({ steps: [{ ...FULL_STEP, evidence: { ...FULL_STEP.evidence, web: { kind, base: 'b' } } }] }), kind).toBe(true);
    for (const bad of [{ origin: 'robot' }, { mode: 'x' }, { phase: 'done' }, { outcome: 'lost' }, { waiting: { ...FULL_WORK.waiting, pausedBy: 'x' } }, { steps: [{ ...FULL_STEP, evidence: { ...FULL_STEP.evidence, web: { kind: 'bitbucket', base: 'b' } } }] }, { steps: [{ ...FULL_STEP, origin: '' }] }]) {
      expect(work(bad), JSON.stringify(bad)).toBe(false);
    }
    const create = (kind: string) => ws.PendingCreateSchema.safeParse({ kind, projectId: 'p', title: 't', marker: 1, startedAt: 1 }).success;
    for (const kind of ['work', 'acceptance', 'reminder', 'rework']) expect(create(kind), kind).toBe(true);
    expect(create('note')).toBe(false);
    const entry = (kind: string) => ws.OutboxEntrySchema.safeParse({ id: 'o', projectId: 'p', taskId: 't', workKey: 't', text: 'x', createdAt: 1, kind }).success;
    for (const kind of ['started', 'completed', 'skipped', 'note']) expect(entry(kind), kind).toBe(true);
    expect(entry('deleted')).toBe(false);
    const own = (kind: string) => ws.EngineStateSchema.safeParse({ ownTasks: { x: kind } }).success;
    for (const kind of ['acceptance', 'reminder']) expect(own(kind), kind).toBe(true);
    expect(own('work')).toBe(false);
  });
});
