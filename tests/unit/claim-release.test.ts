// The pure rules of src/core/queue/claim-release.ts: how far a Work got (settled steps in time order, deleted ones
// not counted), whether a claim's holder is a session live on this machine, when a claim has lapsed, whose claim it is.
import { describe, expect, it } from 'vitest';
import { claimLapsed, heldBySession } from '../../src/core/queue/claim-release';
import { holderGoneHere, holderLiveHere, whereItStopped } from '../../src/core/queue/claim-holders';
import { heldElsewhere } from '../../src/core/queue/claims';
import { heldByOtherSession } from '../../src/core/phone/phone-answers';
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

function stateWith(sessions: Record<string, { livePid?: number; goneAt?: number; turnOpenSince?: number; currentWork?: string; updatedAt?: number }>): EngineState {
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

describe('holderGoneHere', () => {
  const alive = (pid: number) => pid === 42;

  it('a session of this host that ended, or whose process died between turns, is gone; a live one, a turn a crash left open, an unknown one are not', () => {
    const state = stateWith({
      'session-ended1': { goneAt: 5 },
      'session-died22': { livePid: 7 },
      'session-live33': { livePid: 42 },
      'session-back44': { livePid: 42, goneAt: 5 },
      'session-crash5': { livePid: 7, turnOpenSince: 3 },
      'session-never6': {},
    });
    expect(holderGoneHere(state, 'box#ended1', 'box', alive)).toBe(true);
    expect(holderGoneHere(state, 'box#died22', 'box', alive)).toBe(true);
    expect(holderGoneHere(state, 'box#live33', 'box', alive)).toBe(false);
    // Live again in a process that runs: not gone, whatever an earlier end said.
    expect(holderGoneHere(state, 'box#back44', 'box', alive)).toBe(false);
    // Crash recovery resumes that session itself: its claim is still its own.
    expect(holderGoneHere(state, 'box#crash5', 'box', alive)).toBe(false);
    expect(holderGoneHere(state, 'box#never6', 'box', alive)).toBe(false);
    expect(holderGoneHere(state, 'box#nobody', 'box', alive)).toBe(false);
    // Another host's session with the same tag is never judged here.
    expect(holderGoneHere(state, 'laptop#ended1', 'box', alive)).toBe(false);
    expect(holderGoneHere(state, 'ended1', 'box', alive)).toBe(false);
  });

  it('a gone holder holds nothing for this machine’s sessions; the same claim of a live one does', () => {
    const gone = stateWith({ 'session-ended1': { goneAt: 5 } });
    const live = stateWith({ 'session-ended1': { livePid: process.pid } });
    const work = makeWork([], { claim: { holder: 'box#ended1', at: NOW } });
    expect(heldElsewhere(deps(), work, 'session-other', gone)).toBe(false);
    expect(heldElsewhere(deps(), work, 'session-other', live)).toBe(true);
    expect(heldElsewhere(deps(), work, 'session-other')).toBe(true);
    // The answer relay does not leave a person's answer to a session that ended.
    const asked = stateWith({ 'session-ended1': { goneAt: 5, currentWork: 'w1', updatedAt: NOW } });
    expect(heldByOtherSession(asked, 'w1', 'session-other', NOW)).toBe(false);
    expect(heldByOtherSession(stateWith({ 'session-ended1': { currentWork: 'w1', updatedAt: NOW } }), 'w1', 'session-other', NOW)).toBe(true);
  });
});

describe('claimLapsed for a gone holder', () => {
  const gone = stateWith({ 'session-ended1': { goneAt: 5 } });
  const held = (fields = {}) => makeWork([makeStep({ id: '1', title: 'a', status: 'in_progress', updatedAt: 1 })], { claim: { holder: 'box#ended1', at: NOW }, ...fields });

  it('its release is owed at once, within the lease and while the Work waits; never for a settled Work or one not open', () => {
    expect(claimLapsed(deps(), gone, held())).toBe(true);
    expect(claimLapsed(deps(), gone, held({ waiting: { reason: 'q', previousPriority: 3, applied: true, since: 1 } }))).toBe(true);
    expect(claimLapsed(deps(), gone, makeWork([makeStep({ id: '1', title: 'a', status: 'completed', updatedAt: 1 })], { claim: { holder: 'box#ended1', at: NOW } }))).toBe(false);
    expect(claimLapsed(deps(), gone, held({ phase: 'accepting' }))).toBe(false);
    // Control: the same claim of a session still live is within its lease.
    expect(claimLapsed(deps(), stateWith({ 'session-ended1': { livePid: process.pid } }), held())).toBe(false);
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
