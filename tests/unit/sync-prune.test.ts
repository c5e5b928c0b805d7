// The state file does not grow without end: old closed Works and idle sessions are dropped, live ones never.
import { describe, expect, it } from 'vitest';
import { PRUNE_AFTER_MS, pruneState } from '../../src/core/engine/sync';
import { emptyEngineState, type WorkRecord } from '../../src/core/work/work-state';

const NOW = Date.UTC(2026, 10, 30);
const OLD = NOW - PRUNE_AFTER_MS - 1;
const RECENT = NOW - PRUNE_AFTER_MS + 60_000;

function work(taskId: string, phase: WorkRecord['phase'], updatedAt: number, extra: Partial<WorkRecord> = {}): WorkRecord {
  return {
    taskId,
    projectId: 'p',
    occurrence: '',
    title: taskId,
    origin: 'human',
    mode: 'checklist',
    priority: 3,
    phase,
    steps: [],
    nextStepNumber: 1,
    keepOpen: false,
    humanFingerprint: 'f',
    body: '',
    createdAt: updatedAt,
    updatedAt,
    rev: 1,
    ...extra,
  };
}

describe('pruneState', () => {
  it('drops closed Works and idle sessions older than the cutoff, with the bundle tasks only they referenced', () => {
    const state = emptyEngineState();
    state.works.oldClosed = work('oldClosed', 'closed', OLD, { acceptance: { taskId: 'acc1', handledCommentIds: [], closed: true } });
    state.works.recentClosed = work('recentClosed', 'closed', RECENT);
    state.works.oldOpen = work('oldOpen', 'open', OLD);
    state.works.oldAccepting = work('oldAccepting', 'accepting', OLD, { acceptance: { taskId: 'acc2', handledCommentIds: [], closed: false } });
    state.ownTasks.acc1 = 'acceptance';
    state.ownTasks.acc2 = 'acceptance';
    state.sessions.idle = { touched: ['oldClosed'], autoAttempts: 0, updatedAt: OLD };
    state.sessions.crashed = { touched: [], autoAttempts: 0, updatedAt: OLD, turnOpenSince: OLD };
    state.sessions.live = { touched: [], autoAttempts: 0, updatedAt: RECENT };

    pruneState(state, NOW);

    expect(Object.keys(state.works).sort()).toEqual(['oldAccepting', 'oldOpen', 'recentClosed']);
    expect(state.ownTasks).toEqual({ acc2: 'acceptance' });
    expect(Object.keys(state.sessions).sort()).toEqual(['live']);
  });
});
