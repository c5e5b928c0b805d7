// The poller's upkeep (src/runtime/polling/poll-upkeep.ts): a settle Dida refused is tried again for idle sessions only, and only
// when a Work the session touched is finalizing or open, not waiting and fully settled; at the background request
// priority; a failure is logged and the others still go; nothing more is tried once the process is shutting down.
import { describe, expect, it, vi } from 'vitest';
import type { WorkEngine } from '../../src/core/engine/work-engine';
import { emptyEngineState, type EngineState, type WorkRecord } from '../../src/core/work/work-state';
import { currentRequestPriority, withRequestPriority } from '../../src/dida/request-budget';
import type { AgentTrack } from '../../src/runtime/session/agent-tracker';
import { retrySettles } from '../../src/runtime/polling/poll-upkeep';
import { makeStep, makeWork } from '../helpers/work-fixtures';

function track(sessionId: string, status: 'idle' | 'running' = 'idle'): AgentTrack {
  return { sessionId, agent: { id: sessionId, status } } as unknown as AgentTrack;
}

const settledSteps = () => [makeStep({ id: '1', title: 'a', status: 'completed' }), makeStep({ id: '2', title: 'b', status: 'skipped' })];
const openSteps = () => [makeStep({ id: '1', title: 'a', status: 'completed' }), makeStep({ id: '2', title: 'b', status: 'pending' })];
const waitingFor: WorkRecord['waiting'] = { reason: 'which colour?', previousPriority: 3, applied: true, since: 1 };

/** State where each session touched the Works given for it (keyed by task id). */
function stateWith(sessions: Record<string, WorkRecord[]>): EngineState {
  const state = emptyEngineState();
  for (const [sessionId, works] of Object.entries(sessions)) {
    state.sessions[sessionId] = { touched: works.map((w) => w.taskId), autoAttempts: 0, updatedAt: Date.now() };
    for (const work of works) state.works[work.taskId] = work;
  }
  return state;
}

/** An engine whose settle records the session and the request priority it ran at. */
function recordingEngine(settle: (sessionId: string) => Promise<unknown> = async () => []) {
  const calls: Array<{ sessionId: string; priority: string }> = [];
  const engine = {
    settle: vi.fn(async (sessionId: string) => {
      calls.push({ sessionId, priority: currentRequestPriority() });
      return settle(sessionId);
    }),
  };
  return { calls, engine: async () => engine as unknown as WorkEngine };
}

async function settledSessions(state: EngineState, tracks: AgentTrack[] = Object.keys(state.sessions).map((id) => track(id))): Promise<string[]> {
  const { calls, engine } = recordingEngine();
  await retrySettles(tracks, state, engine, () => undefined, new AbortController().signal);
  return calls.map((c) => c.sessionId);
}

describe('retrySettles', () => {
  it('settles an idle session whose touched Work is still finalizing', async () => {
    const state = stateWith({ s1: [makeWork(openSteps(), { taskId: 'w1', phase: 'finalizing' })] });
    expect(await settledSessions(state)).toEqual(['s1']);
  });

  it('settles an idle session whose touched Work is open, not waiting, and has every step settled', async () => {
    const state = stateWith({ s1: [makeWork(settledSteps(), { taskId: 'w1' })] });
    expect(await settledSessions(state)).toEqual(['s1']);
  });

  it('leaves an open Work that still has an unsettled step, or no step at all', async () => {
    const state = stateWith({ s1: [makeWork(openSteps(), { taskId: 'w1' })], s2: [makeWork([], { taskId: 'w2' })] });
    expect(await settledSessions(state)).toEqual([]);
  });

  it('leaves a settled Work that is waiting for the person', async () => {
    const state = stateWith({ s1: [makeWork(settledSteps(), { taskId: 'w1', waiting: waitingFor })] });
    expect(await settledSessions(state)).toEqual([]);
  });

  it('leaves settled Works already sent for review or closed', async () => {
    const state = stateWith({
      s1: [makeWork(settledSteps(), { taskId: 'w1', phase: 'accepting' })],
      s2: [makeWork(settledSteps(), { taskId: 'w2', phase: 'closed' })],
    });
    expect(await settledSessions(state)).toEqual([]);
  });

  it('settles when any one of the touched Works is due', async () => {
    const state = stateWith({ s1: [makeWork(openSteps(), { taskId: 'w1' }), makeWork(settledSteps(), { taskId: 'w2', phase: 'closed' }), makeWork(openSteps(), { taskId: 'w3', phase: 'finalizing' })] });
    expect(await settledSessions(state)).toEqual(['s1']);
  });

  it('skips touched keys whose Work is gone from the state, and sessions the state does not know', async () => {
    const state = stateWith({ s1: [] });
    state.sessions.s1!.touched = ['gone'];
    expect(await settledSessions(state, [track('s1'), track('unknown')])).toEqual([]);
  });

  it('leaves a session whose turn is running', async () => {
    const state = stateWith({ s1: [makeWork(settledSteps(), { taskId: 'w1' })], s2: [makeWork(settledSteps(), { taskId: 'w2' })] });
    expect(await settledSessions(state, [track('s1', 'running'), track('s2')])).toEqual(['s2']);
  });

  it('settles at the background priority, also when called from a poll', async () => {
    const state = stateWith({ s1: [makeWork(settledSteps(), { taskId: 'w1' })] });
    const { calls, engine } = recordingEngine();
    await withRequestPriority('poll', () => retrySettles([track('s1')], state, engine, () => undefined, new AbortController().signal));
    expect(calls).toEqual([{ sessionId: 's1', priority: 'background' }]);
  });

  it('logs a failed settle and goes on with the next session', async () => {
    const state = stateWith({ s1: [makeWork(settledSteps(), { taskId: 'w1' })], s2: [makeWork(settledSteps(), { taskId: 'w2' })] });
    const { calls, engine } = recordingEngine(async (sessionId) => {
      if (sessionId === 's1') throw new Error('rate limited');
      return [];
    });
    const logs: string[] = [];
    await expect(retrySettles([track('s1'), track('s2')], state, engine, (line) => logs.push(line), new AbortController().signal)).resolves.toBeUndefined();
    expect(calls.map((c) => c.sessionId)).toEqual(['s1', 's2']);
    expect(logs).toEqual(['sending a settled Work of session s1 for review failed (will retry): rate limited']);
  });

  it('tries nothing once the lifetime is aborted, and stops in the middle when it is aborted then', async () => {
    const state = stateWith({ s1: [makeWork(settledSteps(), { taskId: 'w1' })], s2: [makeWork(settledSteps(), { taskId: 'w2' })] });
    const done = new AbortController();
    done.abort();
    const before = recordingEngine();
    await retrySettles([track('s1'), track('s2')], state, before.engine, () => undefined, done.signal);
    expect(before.calls).toEqual([]);

    const lifetime = new AbortController();
    const during = recordingEngine(async () => lifetime.abort());
    await retrySettles([track('s1'), track('s2')], state, during.engine, () => undefined, lifetime.signal);
    expect(during.calls.map((c) => c.sessionId)).toEqual(['s1']);
  });
});
