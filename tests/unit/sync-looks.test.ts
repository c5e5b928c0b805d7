// Which comment lists a sync reads (src/core/engine/sync-looks.ts), on hand-made state: the Works watched (a review
// not yet closed, a wait already written), the version of the tasks that carry their comments, the look a person's
// priority set back forces, a look at an earlier review or wait that does not count, and the record of each look.
import { describe, expect, it } from 'vitest';
import type { Task } from '../../src/dida/types';
import { nextPacedLook, noteLooks, planLooks } from '../../src/core/engine/sync-looks';
import type { EngineDeps } from '../../src/core/work/engine-context';
import { emptyEngineState, type EngineState, type WorkRecord } from '../../src/core/work/work-state';
import { makeWork } from '../helpers/work-fixtures';

const NOW = 10_000_000;
const MINUTE = 60_000;

function depsOver(state: EngineState): EngineDeps {
  return {
    now: () => NOW,
    state: {
      read: async () => state,
      update: async (fn: (state: EngineState) => unknown) => {
        await fn(state);
        return state;
      },
    },
  } as unknown as EngineDeps;
}

const task = (id: string, fields: Partial<Task> = {}): Task => ({ id, projectId: 'p1', title: id, priority: 0, status: 0, etag: `e-${id}`, ...fields }) as Task;

function stateOf(...works: WorkRecord[]): EngineState {
  const state = emptyEngineState();
  for (const w of works) state.works[w.taskId] = w;
  return state;
}

const review = (taskId: string, reviewId: string, fields: Partial<WorkRecord> = {}) =>
  makeWork([], { taskId, phase: 'accepting', acceptance: { taskId: reviewId, handledCommentIds: [], closed: false }, ...fields });
const waiting = (taskId: string, fields: Partial<NonNullable<WorkRecord['waiting']>> = {}, work: Partial<WorkRecord> = {}) =>
  makeWork([], { taskId, waiting: { reason: 'r', previousPriority: 3, applied: true, since: 42, ...fields }, ...work });

describe('planLooks, reading every list', () => {
  it('reads each review not yet closed and each wait already written, with the versions of their tasks', () => {
    const state = stateOf(
      review('w-review', 'r1'),
      review('w-closed', 'r2', { acceptance: { taskId: 'r2', handledCommentIds: [], closed: true } }),
      makeWork([], { taskId: 'w-accepting-bare', phase: 'accepting' }),
      review('w-elsewhere', 'r3', { projectId: 'p2' }),
      waiting('w-wait', { reminderTaskId: 'rem' }),
      waiting('w-wait-gone-reminder', { reminderTaskId: 'rem-gone' }),
      waiting('w-not-written', { applied: false }),
      waiting('w-task-gone'),
      makeWork([], { taskId: 'w-open' }),
      waiting('w-no-version'),
      // A review record kept while the Work is open again, and a wait of a Work being finalized: neither is watched.
      makeWork([], { taskId: 'w-open-old-review', acceptance: { taskId: 'r4', handledCommentIds: [], closed: false } }),
      waiting('w-finalizing', {}, { phase: 'finalizing' }),
    );
    const tasks = [task('r1'), task('r2'), task('r3'), task('w-wait'), task('rem', { etag: '', modifiedTime: 'm-rem' }), task('w-wait-gone-reminder'), task('w-not-written'), task('w-open'), task('w-no-version', { etag: '' }), task('r4'), task('w-open-old-review'), task('w-finalizing')];
    const plan = planLooks(depsOver(state), state, 'p1', tasks, 'all');
    expect(Object.fromEntries(plan.looked)).toEqual({
      'w-review': { version: 'e-r1', scope: 'review r1' },
      'w-wait': { version: 'e-w-wait/m-rem', scope: 'wait 42' },
      'w-wait-gone-reminder': { version: 'e-w-wait-gone-reminder/-', scope: 'wait 42' },
      'w-no-version': { version: '/-', scope: 'wait 42' },
    });
    expect([...plan.skip]).toEqual([]);
  });

  it('a review todo Dida no longer shows reads as "-"', () => {
    const state = stateOf(review('w', 'r-gone'));
    expect(planLooks(depsOver(state), state, 'p1', [], 'all').looked.get('w')).toEqual({ version: '-', scope: 'review r-gone' });
  });
});

describe('planLooks, paced', () => {
  const recent = (scope: string, version: string) => ({ first: NOW - 20 * MINUTE, at: NOW - 30_000, version, scope });

  it('a wait looked at moments ago with nothing changed is skipped; a priority set back is read at once', () => {
    const state = stateOf(
      waiting('w-quiet', {}, { commentLook: recent('wait 42', 'e-w-quiet/-') }),
      waiting('w-resumed', {}, { commentLook: recent('wait 42', 'e-w-resumed/-') }),
    );
    const plan = planLooks(depsOver(state), state, 'p1', [task('w-quiet'), task('w-resumed', { priority: 3 })], 'paced');
    expect(Object.fromEntries(plan.looked)).toEqual({ 'w-resumed': { version: 'e-w-resumed/-', scope: 'wait 42' } });
    expect([...plan.skip]).toEqual(['w-quiet']);
  });

  it('a look at an earlier wait or review of the Work does not count: the first look of this one is due', () => {
    const state = stateOf(
      waiting('w-new-wait', {}, { commentLook: recent('wait 7', 'e-w-new-wait/-') }),
      review('w-new-review', 'r-new', { commentLook: recent('review r-old', 'e-r-new') }),
      review('w-same-review', 'r-same', { commentLook: recent('review r-same', 'e-r-same') }),
    );
    const plan = planLooks(depsOver(state), state, 'p1', [task('w-new-wait'), task('r-new'), task('r-same')], 'paced');
    expect([...plan.looked.keys()].sort()).toEqual(['w-new-review', 'w-new-wait']);
    expect([...plan.skip]).toEqual(['w-same-review']);
  });

  it('a review whose todo changed is read; of two reviews due by time only the one looked at longest ago', () => {
    const old = { first: NOW - 60 * MINUTE, version: 'e-r', scope: '' };
    const state = stateOf(
      review('w-a', 'ra', { commentLook: { ...old, at: NOW - 11 * MINUTE, version: 'e-ra', scope: 'review ra' } }),
      review('w-b', 'rb', { commentLook: { ...old, at: NOW - 20 * MINUTE, version: 'e-rb', scope: 'review rb' } }),
      review('w-c', 'rc', { commentLook: { ...old, at: NOW - 1 * MINUTE, version: 'before', scope: 'review rc' } }),
    );
    const plan = planLooks(depsOver(state), state, 'p1', [task('ra'), task('rb'), task('rc')], 'paced');
    expect([...plan.looked.keys()].sort()).toEqual(['w-b', 'w-c']);
    expect([...plan.skip]).toEqual(['w-a']);
  });
});

describe('noteLooks', () => {
  it('records each look, keeps the first look of the same scope, drops the record of a Work no longer watched, and passes over one gone', async () => {
    const state = stateOf(
      waiting('w-again', {}, { commentLook: { first: NOW - 5 * MINUTE, at: NOW - MINUTE, version: 'v0', scope: 'wait 42' } }),
      waiting('w-fresh', {}, { commentLook: { first: NOW - 5 * MINUTE, at: NOW - MINUTE, version: 'v0', scope: 'wait 7' } }),
      review('w-closed', 'r', { acceptance: { taskId: 'r', handledCommentIds: [], closed: true }, commentLook: { first: 1, at: 2 } }),
      makeWork([], { taskId: 'w-resumed', commentLook: { first: 1, at: 2 } }),
      review('w-review', 'r2'),
      makeWork([], { taskId: 'w-open-old-review', acceptance: { taskId: 'r4', handledCommentIds: [], closed: false }, commentLook: { first: 1, at: 2 } }),
      makeWork([], { taskId: 'w-accepting-bare', phase: 'accepting', commentLook: { first: 1, at: 2 } }),
      waiting('w-finalizing', {}, { phase: 'finalizing', commentLook: { first: 1, at: 2 } }),
    );
    const looked = new Map([
      ['w-open-old-review', { version: 'v1', scope: 'review r4' }],
      ['w-accepting-bare', { version: 'v1', scope: 'review r5' }],
      ['w-finalizing', { version: 'v1', scope: 'wait 42' }],
      ['w-gone', { version: 'v', scope: 'wait 1' }],
      ['w-again', { version: 'v1', scope: 'wait 42' }],
      ['w-fresh', { version: 'v1', scope: 'wait 42' }],
      ['w-closed', { version: 'v1', scope: 'review r' }],
      ['w-resumed', { version: 'v1', scope: 'wait 42' }],
      ['w-review', { version: 'v2', scope: 'review r2' }],
    ]);
    await noteLooks(depsOver(state), looked);
    expect(state.works['w-again']!.commentLook).toEqual({ first: NOW - 5 * MINUTE, at: NOW, version: 'v1', scope: 'wait 42' });
    expect(state.works['w-fresh']!.commentLook).toEqual({ first: NOW, at: NOW, version: 'v1', scope: 'wait 42' });
    expect(state.works['w-closed']!.commentLook).toBeUndefined();
    expect(state.works['w-resumed']!.commentLook).toBeUndefined();
    expect(state.works['w-review']!.commentLook).toEqual({ first: NOW, at: NOW, version: 'v2', scope: 'review r2' });
    expect(state.works['w-gone']).toBeUndefined();
    expect(state.works['w-open-old-review']!.commentLook).toBeUndefined();
    expect(state.works['w-accepting-bare']!.commentLook).toBeUndefined();
    expect(state.works['w-finalizing']!.commentLook).toBeUndefined();
  });

  it('writes nothing when nothing was looked at', async () => {
    let updates = 0;
    const deps = { now: () => NOW, state: { update: async () => (updates++, emptyEngineState()) } } as unknown as EngineDeps;
    await noteLooks(deps, new Map());
    expect(updates).toBe(0);
  });
});

describe('nextPacedLook', () => {
  const BASE = 20_000;
  it('nothing watched: no look to poll for; a wait or a review without a look yet: as soon as the base allows', () => {
    expect(nextPacedLook(stateOf(makeWork([], { taskId: 'plain' })), 'p1', NOW, BASE)).toBeUndefined();
    expect(nextPacedLook(stateOf(waiting('w1', { applied: false })), 'p1', NOW, BASE)).toBeUndefined();
    expect(nextPacedLook(stateOf(waiting('w1')), 'p1', NOW, BASE)).toBe(NOW + BASE);
    expect(nextPacedLook(stateOf(review('r1', 'a1')), 'p1', NOW, BASE)).toBe(NOW + BASE);
    // Another list's Works are that list's.
    expect(nextPacedLook(stateOf(waiting('w1', {}, { projectId: 'p2' })), 'p1', NOW, BASE)).toBeUndefined();
    expect(nextPacedLook(stateOf(review('r1', 'a1', { acceptance: { taskId: 'a1', handledCommentIds: [], closed: true } })), 'p1', NOW, BASE)).toBeUndefined();
  });

  it('a wait looked at 45 minutes in: a minute after that look; a look of an earlier wait does not count', () => {
    const look = { first: NOW - 45 * MINUTE, at: NOW, scope: 'wait 42' };
    expect(nextPacedLook(stateOf(waiting('w1', {}, { commentLook: look })), 'p1', NOW, BASE)).toBe(NOW + MINUTE);
    expect(nextPacedLook(stateOf(waiting('w1', {}, { commentLook: { ...look, scope: 'wait 7' } })), 'p1', NOW, BASE)).toBe(NOW + BASE);
    // In the first ten minutes a look is due at every sync: still no sooner than the base after the last poll.
    const fresh = { first: NOW - MINUTE, at: NOW, scope: 'wait 42' };
    expect(nextPacedLook(stateOf(waiting('w1', {}, { commentLook: fresh })), 'p1', NOW, BASE)).toBe(NOW + BASE);
  });

  it('reviews: each when due, but never sooner than its gap after the last look at any review', () => {
    const looked = (reviewId: string, at: number) => ({ first: NOW - 40 * MINUTE, at, scope: `review ${reviewId}` });
    const one = stateOf(review('r1', 'a1', { commentLook: looked('a1', NOW - 9 * MINUTE) }));
    expect(nextPacedLook(one, 'p1', NOW, BASE)).toBe(NOW + MINUTE);
    // A second review looked at just now: the first one waits for that look's gap too.
    const two = stateOf(review('r1', 'a1', { commentLook: looked('a1', NOW - 9 * MINUTE) }), review('r2', 'a2', { commentLook: looked('a2', NOW) }));
    expect(nextPacedLook(two, 'p1', NOW, BASE)).toBe(NOW + 10 * MINUTE);
    // A waiting Work is not held back by reviews.
    const mixed = stateOf(review('r2', 'a2', { commentLook: looked('a2', NOW) }), waiting('w1', {}, { commentLook: { first: NOW - 45 * MINUTE, at: NOW - 30_000, scope: 'wait 42' } }));
    expect(nextPacedLook(mixed, 'p1', NOW, BASE)).toBe(NOW + 30_000);
  });
});
