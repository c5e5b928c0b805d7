// Sync (src/core/engine/sync.ts) and finalize from a fresh import of the engine: their locale list, the outcomes a
// person may re-open, the review todo's reminders and time constants are built when the modules load, so this suite
// loads its own copy. It checks a review todo rebuilt from Dida in either language (the whole record, and the bounded
// list of what was rebuilt), a Work the person re-opened after review, and the review todo as filed.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { EngineHarness } from '../helpers/engine-harness';

let start: typeof import('../helpers/engine-harness').startEngineHarness;
let sync: typeof import('../../src/core/engine/sync');
let prune: typeof import('../../src/core/engine/sync-prune');
let zh: ReturnType<typeof import('../../src/core/text/locale').getLocale>;
// Loaded afresh before each test (not once for the file), so what the load builds counts for that test.
beforeEach(async () => {
  vi.resetModules();
  start = (await import('../helpers/engine-harness')).startEngineHarness;
  sync = await import('../../src/core/engine/sync');
  prune = await import('../../src/core/engine/sync-prune');
  zh = (await import('../../src/core/text/locale')).getLocale('zh');
});

describe('sync from a fresh import', () => {
  let h: EngineHarness;
  let projectId: string;
  beforeEach(async () => {
    h = await start();
    projectId = h.sim.seedProject({ name: '新' }).id;
  });
  afterEach(async () => {
    await h.close();
  });

  it('keeps state for 30 days and gives a left Work 10 minutes', () => {
    expect(prune.PRUNE_AFTER_MS).toBe(30 * 86_400_000);
    expect(sync.ORPHANED_SETTLE_MS).toBe(600_000);
  });

  it('rebuilds a review todo in either language as a whole review record, and keeps the 50 latest notes of it', async () => {
    await h.deps.state.update((s) => {
      for (let i = 0; i < 50; i++) s.rebuilt.push({ at: i, what: `old ${i}` });
    });
    const review = h.sim.seedTask({ projectId, title: '🧑‍🔬 待验收：旧工作', priority: 5 });
    const anchor = h.sim.addComment(projectId, review.id, zh.t('dida.acceptance.anchor'), { userId: 7007 });
    const en = h.sim.seedTask({ projectId, title: '🧑‍🔬 To review: old work', priority: 1 });
    const report = await h.engine.sync(projectId);
    expect(report.rebuilt.sort()).toEqual(['review todo "old work"', 'review todo "旧工作"']);
    const state = await h.state();
    // The look at its comments the same sync made is noted beside it (sync-looks).
    const { commentLook: _look, ...record } = state.works[review.id]!;
    expect(record).toEqual({
      taskId: review.id,
      projectId,
      occurrence: '',
      title: '旧工作',
      origin: 'human',
      mode: 'direct',
      priority: 5,
      phase: 'accepting',
      steps: [],
      nextStepNumber: 1,
      keepOpen: false,
      humanFingerprint: '',
      body: '',
      acceptance: { taskId: review.id, ownerUserId: '7007', anchorCommentId: anchor.id, handledCommentIds: [], closed: false },
      createdAt: h.clock.now,
      updatedAt: h.clock.now,
      rev: 1,
      rebuilt: true,
    });
    expect(state.works[en.id]).toMatchObject({ title: 'old work', phase: 'accepting' });
    expect(state.rebuilt).toHaveLength(50);
    expect(state.rebuilt[0]!.what).toBe('old 2');
    expect(state.rebuilt.slice(-2).map((r) => r.what).sort()).toEqual(['review todo "old work"', 'review todo "旧工作"']);
  });

  it('files the review todo due three minutes from now, reminding then and at once, in the account zone; notes the owner', async () => {
    const { formatDidaDate } = await import('../../src/dida/dida-date');
    const S = 'session-r';
    const work = await h.engine.createWork(S, projectId, { title: '复查', steps: ['查'] });
    await h.engine.changeSteps(S, [{ op: 'update', step: '查', status: 'completed', resolution: '查过了' }]);
    await h.engine.settle(S);
    const state = await h.state();
    const review = h.sim.getTask(state.works[work.taskId]!.acceptance!.taskId)!;
    expect(review).toMatchObject({ title: '🧑‍🔬 待验收：复查', reminders: ['TRIGGER:PT0S', 'TRIGGER:PT3M'], isAllDay: false, priority: 3 });
    expect(review.dueDate).toBe(formatDidaDate(h.clock.now + 3 * 60_000));
    expect(review.startDate).toBe(review.dueDate);
    expect(review.timeZone).toBe(h.deps.timeZone);
    expect(h.deps.timeZone).toBeTruthy();
    expect(state.owners[projectId]).toBe(state.works[work.taskId]!.acceptance!.ownerUserId);
    expect(state.owners[projectId]).toBeTruthy();
  });

  it('a Work the person re-opens after it was accepted becomes open again, its review todo closed', async () => {
    const S = 'session-f';
    const work = await h.engine.createWork(S, projectId, { title: '加日志', steps: ['加'] });
    await h.engine.changeSteps(S, [{ op: 'update', step: '加', status: 'completed', resolution: '加好了' }]);
    await h.engine.settle(S);
    const reviewId = (await h.state()).works[work.taskId]!.acceptance!.taskId;
    h.sim.editTask(reviewId, { status: 2 });
    expect((await h.engine.sync(projectId)).accepted).toEqual([work.taskId]);
    expect((await h.state()).works[work.taskId]).toMatchObject({ phase: 'closed', outcome: 'accepted' });
    h.sim.editTask(work.taskId, { status: 0 });
    const report = await h.engine.sync(projectId);
    expect(report.reopened).toEqual([work.taskId]);
    expect((await h.state()).works[work.taskId]).toMatchObject({ phase: 'open', round: 2 });
  });
});
