// The pure rules of src/core/queue/claim-release.ts: how far a Work got (settled steps in time order, deleted ones
// not counted), whether a claim's holder is a session live on this machine, when a claim has lapsed, whose claim it is.
import { describe, expect, it } from 'vitest';
import { claimLapsed, heldBySession, holderLiveHere, whereItStopped } from '../../src/core/queue/claim-release';
import { DEFAULT_CLAIM_LEASE_MS } from '../../src/core/queue/claims';
import { getLocale } from '../../src/core/text/locale';
import type { EngineDeps } from '../../src/core/work/engine-context';
import { emptyEngineState, type EngineState } from '../../src/core/work/work-state';
import { makeStep, makeWork } from '../helpers/work-fixtures';

const en = { locale: getLocale('en') };
const NOW = 100 * 60_000;

function deps(fields: Partial<EngineDeps> = {}): EngineDeps {
  return { now: () => NOW, hostLabel: 'box', locale: getLocale('en'), ...fields } as EngineDeps;
}

function stateWith(sessions: Record<string, { livePid?: number }>): EngineState {
  const state = emptyEngineState();
  for (const [id, mark] of Object.entries(sessions)) state.sessions[id] = { touched: [], autoAttempts: 0, updatedAt: 0, ...mark };
  return state;
}

describe('whereItStopped', () => {
  it('counts settled visible steps and names the one settled last', () => {
    const work = makeWork([
      makeStep({ id: '1', title: 'late', status: 'completed', updatedAt: 30 }),
      makeStep({ id: '2', title: 'early', status: 'skipped', updatedAt: 10 }),
      makeStep({ id: '3', title: 'open', status: 'in_progress', updatedAt: 99 }),
      makeStep({ id: '4', title: 'gone', status: 'deleted', updatedAt: 50 }),
    ]);
    expect(whereItStopped(en, work)).toBe('2/3 steps done, the last one was “late”. ');
    work.steps[1]!.updatedAt = 40;
    expect(whereItStopped(en, work)).toBe('2/3 steps done, the last one was “early”. ');
  });

  it('says only the counts when nothing is settled', () => {
    expect(whereItStopped(en, makeWork([makeStep({ id: '1', title: 'a' }), makeStep({ id: '2', title: 'b', status: 'in_progress' })]))).toBe('0/2 steps done. ');
    expect(whereItStopped(en, makeWork([]))).toBe('0/0 steps done. ');
  });
});

describe('holderLiveHere', () => {
  const alive = (pid: number) => pid === 42;

  it('is a session of this host whose recorded process still runs', () => {
    const state = stateWith({ 'session-abc123': { livePid: 42 }, 'session-dead99': { livePid: 7 }, 'session-nopid1': {} });
    expect(holderLiveHere(state, 'box#abc123', 'box', alive)).toBe(true);
    expect(holderLiveHere(state, 'box#dead99', 'box', alive)).toBe(false);
    expect(holderLiveHere(state, 'box#nopid1', 'box', () => true)).toBe(false);
    expect(holderLiveHere(state, 'box#other', 'box', () => true)).toBe(false);
  });

  it('another host’s holder, even with the same session tag, is never live here', () => {
    const state = stateWith({ 'session-abc123': { livePid: 42 } });
    expect(holderLiveHere(state, 'laptop#abc123', 'box', alive)).toBe(false);
    expect(holderLiveHere(state, 'boxy#abc123', 'box', alive)).toBe(false);
    expect(holderLiveHere(state, 'abc123', 'box', alive)).toBe(false);
    // A host label of the same length is still another host.
    expect(holderLiveHere(state, 'lap#abc123', 'box', alive)).toBe(false);
  });
});

describe('claimLapsed', () => {
  const claimed = (at: number, fields = {}) => makeWork([], { claim: { holder: 'laptop#abc', at }, ...fields });

  it('after the lease, for an open Work not waiting', () => {
    expect(claimLapsed(deps(), emptyEngineState(), claimed(NOW - DEFAULT_CLAIM_LEASE_MS))).toBe(false);
    expect(claimLapsed(deps(), emptyEngineState(), claimed(NOW - DEFAULT_CLAIM_LEASE_MS - 1))).toBe(true);
    expect(claimLapsed(deps({ claimLeaseMs: 1000 }), emptyEngineState(), claimed(NOW - 1001))).toBe(true);
    expect(claimLapsed(deps({ claimLeaseMs: 1000 }), emptyEngineState(), claimed(NOW - 1000))).toBe(false);
  });

  it('never without a claim, when the Work is not open, or while it waits for the person', () => {
    const old = NOW - DEFAULT_CLAIM_LEASE_MS * 2;
    expect(claimLapsed(deps(), emptyEngineState(), makeWork([]))).toBe(false);
    expect(claimLapsed(deps(), emptyEngineState(), claimed(old, { phase: 'finalizing' }))).toBe(false);
    expect(claimLapsed(deps(), emptyEngineState(), claimed(old, { waiting: { reason: 'q', previousPriority: 3, applied: true, since: 1 } }))).toBe(false);
  });

  it('never while its holder is a session live on this machine', () => {
    const state = stateWith({ 'session-abc': { livePid: process.pid } });
    const work = makeWork([], { claim: { holder: 'box#abc', at: 0 } });
    expect(claimLapsed(deps(), state, work)).toBe(false);
    expect(claimLapsed(deps({ hostLabel: 'other' }), state, makeWork([], { claim: { holder: 'other#abc', at: 0 } }))).toBe(false);
    expect(claimLapsed(deps(), stateWith({}), work)).toBe(true);
  });
});

describe('heldBySession', () => {
  it('compares the claim’s holder with this host and the session’s tag', () => {
    const work = makeWork([], { claim: { holder: 'box#abc12345', at: 0 } });
    expect(heldBySession(deps(), work, 'session-abc12345')).toBe(true);
    expect(heldBySession(deps(), work, 'session-abc12346')).toBe(false);
    expect(heldBySession(deps({ hostLabel: 'laptop' }), work, 'session-abc12345')).toBe(false);
    expect(heldBySession(deps(), makeWork([]), 'session-abc12345')).toBe(false);
  });
});
