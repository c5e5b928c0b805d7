// What `dida-todo status` says of a list's open Works (src/core/engine/work-overview.ts): which Works are listed, the
// holder's host, session and liveness (here by its process, elsewhere by its lease), why a Work waits, the usage and
// the oldest progress comment that has waited long.
import { describe, expect, it } from 'vitest';
import { DEFAULT_CLAIM_LEASE_MS } from '../../src/core/queue/claims';
import { LONG_WAIT_MS } from '../../src/core/work/outbox';
import { workOverview } from '../../src/core/engine/work-overview';
import { emptyEngineState, type EngineState, type OutboxEntry, type WorkRecord } from '../../src/core/work/work-state';
import { makeStep, makeWork } from '../helpers/work-fixtures';

const NOW = 10_000_000;
const HOST = 'laptop';

function stateOf(...works: WorkRecord[]): EngineState {
  const state = emptyEngineState();
  for (const work of works) state.works[work.occurrence ? `${work.taskId}#${work.occurrence}` : work.taskId] = work;
  return state;
}

function entry(workKey: string, createdAt: number, id = `o-${workKey}-${createdAt}`): OutboxEntry {
  return { id, projectId: 'p1', taskId: workKey, workKey, text: 'progress', createdAt, uncertain: false, attempts: 0, kind: 'note' };
}

const waitingFor = (fields: Partial<NonNullable<WorkRecord['waiting']>> = {}): WorkRecord['waiting'] => ({ reason: 'r', previousPriority: 3, applied: true, since: 42, ...fields });

describe('workOverview', () => {
  it('lists the open and finalizing Works of the list only, in the state order, with their settled and total steps', () => {
    const steps = [
      makeStep({ id: 'a', title: 'a', status: 'completed' }),
      makeStep({ id: 'b', title: 'b', status: 'skipped' }),
      makeStep({ id: 'c', title: 'c', status: 'in_progress' }),
      makeStep({ id: 'd', title: 'd', status: 'deleted' }),
    ];
    const state = stateOf(
      makeWork(steps, { taskId: 'open', title: 'Open one' }),
      makeWork([], { taskId: 'fin', phase: 'finalizing' }),
      makeWork([], { taskId: 'acc', phase: 'accepting' }),
      makeWork([], { taskId: 'closed', phase: 'closed' }),
      makeWork([], { taskId: 'other', projectId: 'p2' }),
    );
    const out = workOverview(state, 'p1', NOW, HOST);
    expect(out.map((w) => w.key)).toEqual(['open', 'fin']);
    expect(out[0]).toEqual({ key: 'open', title: 'Open one', phase: 'open', steps: { done: 2, total: 3 } });
    expect(out[1]).toEqual({ key: 'fin', title: 'Work', phase: 'finalizing', steps: { done: 0, total: 0 } });
  });

  it('a holder of this machine is alive only while its session has a live process here', () => {
    const state = stateOf(
      makeWork([], { taskId: 'live', claim: { holder: `${HOST}#abc`, at: NOW - 1 } }),
      makeWork([], { taskId: 'gone', claim: { holder: `${HOST}#dead`, at: NOW - 1 } }),
    );
    state.sessions['session-abc'] = { touched: [], autoAttempts: 0, updatedAt: 0, livePid: 111 } as EngineState['sessions'][string];
    state.sessions['session-dead'] = { touched: [], autoAttempts: 0, updatedAt: 0, livePid: 222 } as EngineState['sessions'][string];
    const out = workOverview(state, 'p1', NOW, HOST, { isAlive: (pid) => pid === 111 });
    expect(out[0]?.holder).toEqual({ host: HOST, session: 'abc', since: NOW - 1, alive: true });
    expect(out[1]?.holder).toEqual({ host: HOST, session: 'dead', since: NOW - 1, alive: false });
  });

  it('a holder of another machine is trusted within its lease (alive unknown) and dead after it; the lease can be set', () => {
    const within = makeWork([], { taskId: 'within', claim: { holder: 'desktop#s1', at: NOW - DEFAULT_CLAIM_LEASE_MS } });
    const after = makeWork([], { taskId: 'after', claim: { holder: 'desktop#s2', at: NOW - DEFAULT_CLAIM_LEASE_MS - 1 } });
    const out = workOverview(stateOf(within, after), 'p1', NOW, HOST);
    expect(out[0]?.holder).toEqual({ host: 'desktop', session: 's1', since: NOW - DEFAULT_CLAIM_LEASE_MS, alive: null });
    expect(out[1]?.holder?.alive).toBe(false);
    const short = workOverview(stateOf(within), 'p1', NOW, HOST, { leaseMs: 1000 });
    expect(short[0]?.holder?.alive).toBe(false);
  });

  it('a holder without a session tag is a host alone; a claim known only as elsewhere names no holder', () => {
    const state = stateOf(
      makeWork([], { taskId: 'bare', claim: { holder: 'desktop', at: NOW } }),
      makeWork([], { taskId: 'lead', claim: { holder: '#s1', at: NOW } }),
      makeWork([], { taskId: 'else', claim: { holder: 'elsewhere', at: NOW } }),
    );
    const out = workOverview(state, 'p1', NOW, HOST);
    expect(out[0]?.holder).toEqual({ host: 'desktop', session: '', since: NOW, alive: null });
    expect(out[1]?.holder).toEqual({ host: '#s1', session: '', since: NOW, alive: null });
    expect(out[2]).not.toHaveProperty('holder');
  });

  it('why a Work waits: the person paused it, a known cause, else the agent asked', () => {
    const state = stateOf(
      makeWork([], { taskId: 'paused', waiting: waitingFor({ pausedBy: 'comment', cause: 'quota' }) }),
      makeWork([], { taskId: 'quota', waiting: waitingFor({ cause: 'quota' }) }),
      makeWork([], { taskId: 'spend', waiting: waitingFor({ cause: 'spend', since: 7 }) }),
      makeWork([], { taskId: 'odd', waiting: waitingFor({ cause: 'something-new' }) }),
      makeWork([], { taskId: 'old', waiting: waitingFor() }),
      makeWork([], { taskId: 'running' }),
    );
    const out = workOverview(state, 'p1', NOW, HOST);
    expect(out.map((w) => w.waiting)).toEqual([
      { reason: 'paused', since: 42 },
      { reason: 'quota', since: 42 },
      { reason: 'spend', since: 7 },
      { reason: 'asked', since: 42 },
      { reason: 'asked', since: 42 },
      undefined,
    ]);
    expect(out[5]).not.toHaveProperty('waiting');
  });

  it('every cause status knows is kept as it is', () => {
    const causes = ['asked', 'exhausted', 'auth', 'quota', 'invalid_request', 'limit', 'unknown', 'spend'];
    const state = stateOf(...causes.map((cause) => makeWork([], { taskId: cause, waiting: waitingFor({ cause }) })));
    expect(workOverview(state, 'p1', NOW, HOST).map((w) => w.waiting?.reason)).toEqual(causes);
  });

  it('the usage of all rounds, and the oldest progress comment that has waited long', () => {
    const state = stateOf(makeWork([], { taskId: 'used' }), makeWork([], { taskId: 'quiet' }), makeWork([], { taskId: 'fresh' }));
    const round = { requests: 2, inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, ms: 100, continuations: 0, continuedRequests: 0, continuedTokens: 0, models: {} };
    state.usage.used = { rounds: { '1': round, '2': { ...round, requests: 1 } } };
    state.outbox = [entry('used', NOW - LONG_WAIT_MS - 5), entry('used', NOW - LONG_WAIT_MS - 50), entry('fresh', NOW - LONG_WAIT_MS + 1), entry('quiet', NOW - LONG_WAIT_MS)];
    const out = workOverview(state, 'p1', NOW, HOST);
    expect(out[0]?.usage).toMatchObject({ requests: 3, inputTokens: 20, outputTokens: 10, ms: 200 });
    expect(out[0]?.commentsWaitingSince).toBe(NOW - LONG_WAIT_MS - 50);
    expect(out[1]).not.toHaveProperty('usage');
    expect(out[1]?.commentsWaitingSince).toBe(NOW - LONG_WAIT_MS);
    expect(out[2]).not.toHaveProperty('commentsWaitingSince');
  });
});

describe('workOverview of dsh’s own questions', () => {
  it('a Work whose session waits on a question or an approval says what is asked, oldest first, each with its number', () => {
    const ask = (number: number, fields: Partial<NonNullable<WorkRecord['asks']>[number]>) => ({ id: `a${number}`, number, kind: 'question' as const, sessionId: 's', since: number * 1000, comment: 'c', ...fields });
    const state = stateOf(
      makeWork([], {
        taskId: 'w',
        asks: [
          ask(1, { questions: [{ id: 'q', question: '用哪个？', header: '数据库', options: [] }] }),
          ask(2, { kind: 'approval', approval: { tool: 'bash', subject: 'rm -rf build' } }),
          ask(3, { kind: 'approval', approval: { tool: 'write' } }),
          ask(4, { kind: 'plan', questions: [{ id: 'r', question: 'Approve this plan?', options: [] }] }),
        ],
      }),
      makeWork([], { taskId: 'quiet' }),
    );
    const [asking, quiet] = workOverview(state, 'p1', NOW, HOST);
    expect(asking?.asking).toEqual([
      { number: 1, kind: 'question', text: '数据库: 用哪个？', since: 1000 },
      { number: 2, kind: 'approval', text: 'bash: rm -rf build', since: 2000 },
      { number: 3, kind: 'approval', text: 'write', since: 3000 },
      { number: 4, kind: 'plan', text: 'Approve this plan?', since: 4000 },
    ]);
    expect(quiet?.asking).toBeUndefined();
  });
});
