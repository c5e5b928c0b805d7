// The state file does not grow without end: old closed Works and idle sessions are dropped, live ones never.
import { describe, expect, it, vi } from 'vitest';
import { PRUNE_AFTER_MS, pruneState } from '../../src/core/engine/sync-prune';
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

describe('pruneState at its edges', () => {
  it('keeps what is exactly at the cutoff; takes a pruned Work’s comments, usage and every bundle task it named', () => {
    const state = emptyEngineState();
    const cutoff = NOW - PRUNE_AFTER_MS;
    state.works.edge = work('edge', 'closed', cutoff);
    state.works.gone = work('gone', 'closed', cutoff - 1, {
      acceptance: { taskId: 'acc', handledCommentIds: [], closed: true },
      finalize: { attempts: 1, acceptanceTaskId: 'fin' },
      waiting: { reason: 'r', previousPriority: 3, applied: true, since: 0, reminderTaskId: 'rem' },
    });
    state.works.bare = work('bare', 'closed', cutoff - 1);
    state.ownTasks = { acc: 'acceptance', fin: 'acceptance', rem: 'reminder', other: 'reminder' };
    const entry = (workKey: string) => ({ id: `o-${workKey}`, kind: 'note' as const, projectId: 'p', taskId: workKey, workKey, text: 't', createdAt: 0, uncertain: false, attempts: 0 });
    state.outbox = [entry('gone'), entry('edge')];
    state.usage.gone = { rounds: {} };
    state.usage.edge = { rounds: {} };
    state.sessions.edge = { touched: [], autoAttempts: 0, updatedAt: cutoff };
    state.sessions.old = { touched: [], autoAttempts: 0, updatedAt: cutoff - 1 };

    pruneState(state, NOW);

    expect(Object.keys(state.works).sort()).toEqual(['edge']);
    expect(state.outbox.map((e) => e.workKey)).toEqual(['edge']);
    expect(Object.keys(state.usage)).toEqual(['edge']);
    expect(state.ownTasks).toEqual({ other: 'reminder' });
    expect(Object.keys(state.sessions)).toEqual(['edge']);
  });

  it('drops a create of unknown outcome once it is older than its time to live, and only then', async () => {
    const { PENDING_CREATE_TTL_MS } = await import('../../src/core/work/own-creates');
    const state = emptyEngineState();
    state.pendingCreates = {
      fresh: { marker: 1, startedAt: NOW - PENDING_CREATE_TTL_MS, kind: 'work', projectId: 'p', title: 'a' },
      stale: { marker: 2, startedAt: NOW - PENDING_CREATE_TTL_MS - 1, kind: 'work', projectId: 'p', title: 'b' },
    };
    pruneState(state, NOW);
    expect(Object.keys(state.pendingCreates)).toEqual(['fresh']);
  });

  it('a fresh import keeps state for 30 days', async () => {
    vi.resetModules();
    const fresh = await import('../../src/core/engine/sync-prune');
    expect(fresh.PRUNE_AFTER_MS).toBe(30 * 24 * 60 * 60_000);
  });
});
