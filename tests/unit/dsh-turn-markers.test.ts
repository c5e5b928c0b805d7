// Turn markers (src/runtime/turns/turn-markers.ts) over an in-memory state and a fake clock: what markOpen, noteFacts, markLive,
// markGone and markClosed write to a session record and when they leave the state alone, which closed records are
// dropped as holding nothing (each thing a record may hold on its own keeps it), and resumePending / turnPending for a
// session with no record or a resume due right now.
import { describe, expect, it, vi } from 'vitest';
import type { EngineState } from '../../src/core/work/work-state';
import { emptyEngineState } from '../../src/core/work/work-state';
import type { AdapterDeps } from '../../src/dsh/adapter-deps';
import { resumePending, turnPending, TurnMarkers } from '../../src/runtime/turns/turn-markers';
import { createHarness, fakeAgent } from '../helpers/dsh-fakes';

const CWD = '/work/project';
const PID = 7;
const MARK = 'mark-of-this-process';

type Harness = ReturnType<typeof createHarness>;
type Record_ = Record<string, unknown>;

/** A harness whose state holds `sessions` (records as given, nothing filled in). */
function setup(sessions: Record<string, Record_> = {}) {
  const state = emptyEngineState();
  for (const [id, record] of Object.entries(sessions)) state.sessions[id] = record as never;
  const t = createHarness({ state });
  const markers = new TurnMarkers(t.deps, PID, MARK);
  const track = (id: string, cwd = CWD) => t.deps.tracker.add(fakeAgent(id, { cwd }));
  const record = (id: string) => t.state.value.sessions[id] as Record_ | undefined;
  return { ...t, markers, track, record };
}

/** The harness's deps, but the state changes by `change` right after the markers read it (before their update). */
function changedAfterRead(t: Harness, change: (state: EngineState) => void): Pick<AdapterDeps, 'state' | 'clock'> {
  return {
    clock: t.deps.clock,
    state: {
      read: async () => {
        const seen = await t.state.read();
        change(t.state.value);
        return seen;
      },
      update: (fn) => t.state.update(fn),
    },
  };
}

/** A session whose turn is open in this process, with the given recorded facts. */
function openRecord(facts?: Record_): Record_ {
  return { touched: [], autoAttempts: 0, updatedAt: 0, turnOpenSince: 500, turnOpenPid: PID, turnOpenBy: MARK, cwd: CWD, ...(facts ? { turnFacts: facts } : {}) };
}

describe('resumePending and turnPending', () => {
  it('a session with no record has no resume pending and no turn pending', () => {
    expect(resumePending(undefined, 1_000, () => true)).toBe(false);
    expect(turnPending(undefined, 1_000, () => true)).toBe(false);
  });

  it('a resume due exactly now is no longer pending; one due a moment later is', () => {
    expect(resumePending({ resumeDue: { pid: 3, until: 1_000 } }, 1_000, () => true)).toBe(false);
    expect(resumePending({ resumeDue: { pid: 3, until: 1_001 } }, 1_000, () => true)).toBe(true);
  });
});

describe('markOpen', () => {
  it('creates the record with when, which process (by id and mark) and which directory, and no facts when none are known', async () => {
    const t = setup();
    await t.markers.markOpen(t.track('s1'));
    const now = t.clock.now();
    expect(t.record('s1')).toStrictEqual({ touched: [], autoAttempts: 0, updatedAt: now, turnOpenSince: now, turnOpenPid: PID, turnOpenBy: MARK, cwd: CWD });
  });

  it('keeps the first mark of a turn but rewrites process, mark, directory, time and facts each time', async () => {
    const t = setup({ s1: { ...openRecord({ modelTodosOpen: 3 }), turnOpenPid: 99, turnOpenBy: 'an-older-process', cwd: '/old', updatedAt: 1 } });
    await t.markers.markOpen(t.track('s1'), { modelTodosOpen: 1, goalPhase: 'active' });
    expect(t.record('s1')).toMatchObject({ turnOpenSince: 500, turnOpenPid: PID, turnOpenBy: MARK, cwd: CWD, updatedAt: t.clock.now(), turnFacts: { modelTodosOpen: 1, goalPhase: 'active' } });
  });

  it('records the facts without a goal phase when the session has no goal', async () => {
    const t = setup();
    await t.markers.markOpen(t.track('s1'), { modelTodosOpen: 2 });
    expect(t.record('s1')!.turnFacts).toStrictEqual({ modelTodosOpen: 2 });
  });

  it('drops facts recorded earlier when none are known now, and a resume that was due', async () => {
    const t = setup({ s1: { ...openRecord({ modelTodosOpen: 3, goalPhase: 'active' }), resumeDue: { pid: PID, until: 2_000_000 } } });
    await t.markers.markOpen(t.track('s1'));
    expect(t.record('s1')).not.toHaveProperty('turnFacts');
    expect(t.record('s1')).not.toHaveProperty('resumeDue');
  });
});

describe('noteFacts', () => {
  it('writes nothing for a session with no record or no open turn', async () => {
    const t = setup({ idle: { touched: ['w1'], autoAttempts: 0, updatedAt: 0 } });
    await t.markers.noteFacts('nobody', { modelTodosOpen: 2 });
    await t.markers.noteFacts('idle', { modelTodosOpen: 2 });
    expect(t.state.writes).toBe(0);
    expect(t.state.value.sessions).not.toHaveProperty('nobody');
    expect(t.record('idle')).not.toHaveProperty('turnFacts');
  });

  it('records the facts of an open turn that has none yet, even when they ask for no work', async () => {
    const t = setup({ s1: openRecord() });
    await t.markers.noteFacts('s1', { modelTodosOpen: 0 });
    expect(t.record('s1')!.turnFacts).toStrictEqual({ modelTodosOpen: 0 });
  });

  it('writes when todo items open where there were none, and when the last one closes', async () => {
    const t = setup({ s1: openRecord({ modelTodosOpen: 0 }) });
    await t.markers.noteFacts('s1', { modelTodosOpen: 2 });
    expect(t.record('s1')!.turnFacts).toStrictEqual({ modelTodosOpen: 2 });
    await t.markers.noteFacts('s1', { modelTodosOpen: 0 });
    expect(t.record('s1')!.turnFacts).toStrictEqual({ modelTodosOpen: 0 });
  });

  it('does not write when only the number of open todo items changed', async () => {
    const t = setup({ s1: openRecord({ modelTodosOpen: 2, goalPhase: 'active' }) });
    await t.markers.noteFacts('s1', { modelTodosOpen: 5, goalPhase: 'active' });
    expect(t.state.writes).toBe(0);
    expect(t.record('s1')!.turnFacts).toStrictEqual({ modelTodosOpen: 2, goalPhase: 'active' });
  });

  it('writes when the goal phase changed, even between two phases that ask for no work', async () => {
    const t = setup({ s1: openRecord({ modelTodosOpen: 1, goalPhase: 'paused' }) });
    await t.markers.noteFacts('s1', { modelTodosOpen: 1, goalPhase: 'done' });
    expect(t.record('s1')!.turnFacts).toStrictEqual({ modelTodosOpen: 1, goalPhase: 'done' });
    await t.markers.noteFacts('s1', { modelTodosOpen: 1 });
    expect(t.record('s1')!.turnFacts).toStrictEqual({ modelTodosOpen: 1 });
  });

  it('leaves a turn that closed after the look alone', async () => {
    const t = setup({ s1: { ...openRecord({ modelTodosOpen: 0 }), touched: ['w1'] } });
    const markers = new TurnMarkers(changedAfterRead(t, (state) => void delete (state.sessions.s1 as Record_).turnOpenSince), PID, MARK);
    await markers.noteFacts('s1', { modelTodosOpen: 2 });
    expect(t.record('s1')!.turnFacts).toStrictEqual({ modelTodosOpen: 0 });
  });

  it('does not bring back a record dropped after the look', async () => {
    const t = setup({ s1: openRecord({ modelTodosOpen: 0 }) });
    const markers = new TurnMarkers(changedAfterRead(t, (state) => void delete state.sessions.s1), PID, MARK);
    await markers.noteFacts('s1', { modelTodosOpen: 2 });
    expect(t.state.value.sessions).not.toHaveProperty('s1');
  });
});

describe('markLive', () => {
  it('names this process and the directory on a new record', async () => {
    const t = setup();
    await t.markers.markLive(t.track('s1'));
    expect(t.record('s1')).toStrictEqual({ touched: [], autoAttempts: 0, updatedAt: 0, livePid: PID, cwd: CWD });
  });

  it('rewrites a record that names another process', async () => {
    const t = setup({ s1: { touched: ['w1'], autoAttempts: 0, updatedAt: 0, livePid: 99, cwd: '/old' } });
    await t.markers.markLive(t.track('s1'));
    expect(t.record('s1')).toMatchObject({ touched: ['w1'], livePid: PID, cwd: CWD });
  });

  it('writes nothing when the record already names this process', async () => {
    const t = setup({ s1: { touched: [], autoAttempts: 0, updatedAt: 0, livePid: PID, cwd: '/old' } });
    await t.markers.markLive(t.track('s1'));
    expect(t.state.writes).toBe(0);
    expect(t.record('s1')!.cwd).toBe('/old');
  });
});

describe('markGone', () => {
  it('drops a live record that holds nothing and has no open turn', async () => {
    const t = setup({ s1: { touched: [], autoAttempts: 0, updatedAt: 3, cwd: CWD, lastAutoAt: 4, livePid: PID } });
    await t.markers.markGone('s1');
    expect(t.state.value.sessions).not.toHaveProperty('s1');
  });

  it('keeps a record that holds Work touched, without the live process', async () => {
    const t = setup({ s1: { touched: ['w1'], autoAttempts: 0, updatedAt: 0, livePid: PID } });
    await t.markers.markGone('s1');
    expect(t.record('s1')).toStrictEqual({ touched: ['w1'], autoAttempts: 0, updatedAt: 0 });
  });

  it('keeps a record whose turn is open, without the live process', async () => {
    const t = setup({ s1: { ...openRecord(), livePid: PID } });
    await t.markers.markGone('s1');
    expect(t.record('s1')).toStrictEqual(openRecord());
  });

  it('writes nothing for a session with no record or no live process', async () => {
    const t = setup({ s1: { touched: [], autoAttempts: 0, updatedAt: 0 } });
    await t.markers.markGone('nobody');
    await t.markers.markGone('s1');
    expect(t.state.writes).toBe(0);
    expect(t.record('s1')).toStrictEqual({ touched: [], autoAttempts: 0, updatedAt: 0 });
  });

  it('does nothing to a record dropped after the look', async () => {
    const t = setup({ s1: { touched: [], autoAttempts: 0, updatedAt: 0, livePid: PID }, s2: { touched: ['w1'], autoAttempts: 0, updatedAt: 0 } });
    const markers = new TurnMarkers(changedAfterRead(t, (state) => void delete state.sessions.s1), PID, MARK);
    await markers.markGone('s1');
    expect(t.state.value.sessions).toStrictEqual({ s2: { touched: ['w1'], autoAttempts: 0, updatedAt: 0 } });
  });
});

describe('markClosed', () => {
  it('deletes the turn fields and refreshes the time, keeping what the record holds', async () => {
    const t = setup({ s1: { ...openRecord({ modelTodosOpen: 1 }), touched: ['w1'] } });
    await t.clock.advance(1_000);
    await t.markers.markClosed('s1');
    expect(t.record('s1')).toStrictEqual({ touched: ['w1'], autoAttempts: 0, updatedAt: t.clock.now(), cwd: CWD });
  });

  it('writes nothing for a session with no record or no open turn', async () => {
    const t = setup({ s1: { touched: ['w1'], autoAttempts: 0, updatedAt: 0 } });
    await t.markers.markClosed('nobody');
    await t.markers.markClosed('s1');
    expect(t.state.writes).toBe(0);
  });

  it('does nothing to a record dropped after the look', async () => {
    const t = setup({ s1: openRecord() });
    const markers = new TurnMarkers(changedAfterRead(t, (state) => void delete state.sessions.s1), PID, MARK);
    await markers.markClosed('s1');
    expect(t.state.value.sessions).toStrictEqual({});
  });

  it('drops a record left holding nothing, even with a directory, an attempt time and a live process on it', async () => {
    // The module is loaded afresh inside the test: its list of such keys is built when it loads, and mutation testing
    // only credits the tests during which that happens.
    vi.resetModules();
    const fresh = await import('../../src/runtime/turns/turn-markers');
    const t = setup({ s1: { ...openRecord({ modelTodosOpen: 0 }), lastAutoAt: 4, livePid: PID } });
    await new fresh.TurnMarkers(t.deps, PID, MARK).markClosed('s1');
    expect(t.state.value.sessions).toStrictEqual({});
  });

  it.each([
    ['Work touched', { touched: ['w1'] }],
    ['automatic attempts counted', { autoAttempts: 1 }],
    ['a current Work', { currentWork: 'w1' }],
    ['a key nothing here knows', { answeredAt: 5 }],
  ])('keeps a record holding only %s', async (_what, held) => {
    const t = setup({ s1: { ...openRecord(), ...held } });
    await t.markers.markClosed('s1');
    expect(t.record('s1')).toStrictEqual({ touched: [], autoAttempts: 0, updatedAt: t.clock.now(), cwd: CWD, ...held });
  });
});
