// Crash recovery (src/runtime/turns/crash-recovery.ts) with a fake clock: markers, the bundle's own resume at dsh start through
// the agents service, once, with the backoff and the counter, 0 = off, the person's message winning, goal re-arm, and
// the headless take-over of the interrupted Work.
import { describe, expect, it, vi } from 'vitest';
import { RECOVERY_MESSAGE } from '../../src/core/continuation/continuation-policy';
import { emptyEngineState, type EngineState } from '../../src/core/work/work-state';
import { processAlive } from '../../src/common/process-alive';
import { CrashRecovery } from '../../src/runtime/turns/crash-recovery';
import { resumePending, turnPending, TurnMarkers } from '../../src/runtime/turns/turn-markers';
import { bound, createHarness, fakeAgent, flush, work, type FakeAgent, type HarnessOptions } from '../helpers/dsh-fakes';

const CWD = '/work/project';
const DEAD = 4242;

/** State with one session whose turn a crash left open a minute ago, in CWD, on an unfinished Work. */
function crashed(extra: Record<string, unknown> = {}): EngineState {
  const state = emptyEngineState();
  state.works.w1 = work('w1', ['in_progress', 'pending']);
  state.sessions['session-old'] = { touched: ['w1'], currentWork: 'w1', autoAttempts: 0, updatedAt: 0, turnOpenSince: 1_000_000 - 60_000, turnOpenPid: DEAD, cwd: CWD, ...extra } as never;
  return state;
}

function setup(options: HarnessOptions & { alive?: readonly number[] } = {}) {
  const agents = options.agents ?? new Map<string, FakeAgent>();
  const resume = vi.fn(async ({ resumeSessionId }: { resumeSessionId: string }) => {
    const agent = fakeAgent(resumeSessionId, { cwd: CWD });
    agents.set(resumeSessionId, agent);
    return { agent };
  });
  const h = createHarness({
    row: { maxAutoContinue: 3, backoff: [5, 30] },
    config: bound(CWD),
    state: crashed(),
    services: { agentDefaultModel: { currentSelection: () => ({ provider: 'deepseek-official', model: 'deepseek-v4-flash', reasoningEffort: 'high' }) } },
    resume,
    agents,
    ...options,
  });
  const alive = new Set(options.alive ?? []);
  const recovery = new CrashRecovery(h.deps, { pid: 1, isAlive: (pid) => alive.has(pid), config: () => h.config.value });
  return { ...h, recovery, resume };
}

const marker = (t: ReturnType<typeof setup>, id = 'session-old') => (t.state.value.sessions[id] as Record<string, unknown> | undefined)?.turnOpenSince;

describe('turn markers', () => {
  it('markOpen records when, in which process and directory; the first mark of a turn wins; markClosed clears it', async () => {
    const t = setup({ state: emptyEngineState() });
    const markers = new TurnMarkers(t.deps, 1);
    const track = t.deps.tracker.add(fakeAgent('s1', { cwd: CWD }));
    await markers.markOpen(track);
    const first = t.clock.now();
    await t.clock.advance(1_000);
    await markers.markOpen(track);
    expect(t.state.value.sessions.s1).toMatchObject({ turnOpenSince: first, turnOpenPid: 1, cwd: CWD });
    t.state.value.sessions.s1!.touched = ['w1'];
    await markers.markClosed('s1');
    expect(t.state.value.sessions.s1!.turnOpenSince).toBeUndefined();
    expect((t.state.value.sessions.s1 as Record<string, unknown>).turnOpenPid).toBeUndefined();
    expect(t.state.value.sessions.s1!.touched).toEqual(['w1']);
    const writes = t.state.writes;
    await markers.markClosed('s1');
    await markers.markClosed('nobody');
    expect(t.state.writes).toBe(writes);
  });

  it('a session that only talked leaves no record once its turn closes; one holding anything keeps it', async () => {
    const t = setup({ state: emptyEngineState() });
    const markers = new TurnMarkers(t.deps, 1);
    const tracks = ['talk', 'current', 'counted', 'other'].map((id) => t.deps.tracker.add(fakeAgent(id, { cwd: CWD })));
    for (const track of tracks) await markers.markOpen(track);
    const sessions = t.state.value.sessions as Record<string, Record<string, unknown>>;
    sessions.current!.currentWork = 'w1';
    sessions.counted!.autoAttempts = 2;
    sessions.other!.answeredAt = 5;
    for (const track of tracks) await markers.markClosed(track.sessionId);
    expect(Object.keys(t.state.value.sessions).sort()).toEqual(['counted', 'current', 'other']);
    expect(t.state.value.sessions.current).not.toHaveProperty('turnOpenSince');
    expect(t.state.value.sessions.current!.currentWork).toBe('w1');
  });
});

describe('resume at dsh start', () => {
  it('leaves alone a turn this very process opened (a session that started while the scan ran), even with no work yet', async () => {
    const t = setup({ state: emptyEngineState() });
    // The new session's turn is marked open by this process just before the start scan reads the state.
    await new TurnMarkers(t.deps, 1, 'this-process').markOpen(t.deps.tracker.add(fakeAgent('session-new', { cwd: CWD })));
    const recovery = new CrashRecovery(t.deps, { pid: 1, isAlive: () => false, mark: 'this-process', config: () => t.config.value });
    await recovery.scanAtStart();
    expect(marker(t, 'session-new')).toEqual(expect.any(Number));
    expect(t.resume).not.toHaveBeenCalled();
    expect(t.logs.join('\n')).not.toContain('session-new');
  });

  it('a marker left with this process id by another process (the id reused after a crash) is still recovered', async () => {
    const t = setup({ state: crashed({ turnOpenPid: 1, turnOpenBy: 'the-crashed-process' }) });
    const recovery = new CrashRecovery(t.deps, { pid: 1, isAlive: () => true, mark: 'this-process', config: () => t.config.value });
    const scan = recovery.scanAtStart();
    await flush();
    expect(marker(t)).toBeUndefined();
    await t.clock.advance(5_000);
    await scan;
    expect(t.resume).toHaveBeenCalledTimes(1);
  });

  it('waits the backoff, resumes the session through the agents service with the default model, and sends the note once', async () => {
    const t = setup();
    const scan = t.recovery.scanAtStart();
    await flush();
    // The recovery is taken (marker gone, attempt counted) before the wait.
    expect(marker(t)).toBeUndefined();
    expect(t.state.value.sessions['session-old']!.autoAttempts).toBe(1);
    await t.clock.advance(4_999);
    expect(t.resume).not.toHaveBeenCalled();
    await t.clock.advance(1);
    await scan;
    expect(t.resume).toHaveBeenCalledTimes(1);
    expect(t.resume.mock.calls[0]![0]).toEqual({ resumeSessionId: 'session-old', agentOptions: { provider: 'deepseek-official', model: 'deepseek-v4-flash' } });
    const agent = t.agents.get('session-old')!;
    expect(agent.followup).toHaveBeenCalledTimes(1);
    expect(agent.followup.mock.calls[0]![0].content[0].text).toBe(RECOVERY_MESSAGE);
    expect(agent.followup.mock.calls[0]![0].source).toMatchObject({ kind: 'dida-todo', plugin: 'dida-todo' });
    expect(t.logs).toContain('resuming the interrupted turn of session-old in 5 s (attempt 1/3)');
    expect(t.logs).toContain('resumed the interrupted turn of session-old');
    // The resume is an automatic continuation of the session's current Work: it counts toward what the Work cost.
    expect(Object.values(t.state.value.usage.w1?.rounds ?? {}).map((u) => u.continuations)).toEqual([1]);
    // Once: a second scan finds nothing to do.
    await t.recovery.scanAtStart();
    expect(t.resume).toHaveBeenCalledTimes(1);
  });

  it('between the take and the resumed turn the session is marked as about to be resumed; the resumed turn replaces the mark', async () => {
    const t = setup();
    const due = () => (t.state.value.sessions['session-old'] as { resumeDue?: { pid: number; until: number } }).resumeDue;
    const scan = t.recovery.scanAtStart();
    await flush();
    // The backoff (5 s) plus the patience for the agent (30 s), by this process.
    expect(due()).toEqual({ pid: 1, until: t.clock.now() + 5_000 + 30_000 });
    await t.clock.advance(5_000);
    await scan;
    expect(t.agents.get('session-old')!.followup).toHaveBeenCalledTimes(1);
    // Sent: the mark stays until the resumed turn's marker replaces it.
    expect(due()).toBeDefined();
    await new TurnMarkers(t.deps, 1, 'here').markOpen(t.deps.tracker.add(t.agents.get('session-old')!));
    expect(due()).toBeUndefined();
    expect(marker(t)).toBeDefined();
  });

  it('a resume mark counts while it is due and its process lives; an open turn counts as pending too', () => {
    const alive = (pid: number) => pid === 7;
    expect(resumePending({ resumeDue: { pid: 7, until: 100 } }, 99, alive)).toBe(true);
    expect(resumePending({ resumeDue: { pid: 7, until: 100 } }, 100, alive)).toBe(false);
    expect(resumePending({ resumeDue: { pid: 8, until: 100 } }, 99, alive)).toBe(false);
    expect(resumePending({}, 99, alive)).toBe(false);
    expect(resumePending(undefined, 99, alive)).toBe(false);
    expect(turnPending({ turnOpenSince: 0 }, 99, alive)).toBe(true);
    expect(turnPending({ resumeDue: { pid: 7, until: 100 } }, 99, alive)).toBe(true);
    expect(turnPending({ resumeDue: { pid: 8, until: 100 } }, 99, alive)).toBe(false);
  });

  it('a resume that does not happen (the person wrote first) drops its mark at once', async () => {
    const t = setup();
    const scan = t.recovery.scanAtStart();
    await flush();
    expect((t.state.value.sessions['session-old'] as { resumeDue?: unknown }).resumeDue).toBeDefined();
    const agent = fakeAgent('session-old', { cwd: CWD });
    t.agents.set('session-old', agent);
    t.deps.tracker.add(agent).humanAt = t.clock.now();
    t.recovery.onHumanMessage('session-old');
    await scan;
    expect(agent.followup).not.toHaveBeenCalled();
    expect((t.state.value.sessions['session-old'] as { resumeDue?: unknown }).resumeDue).toBeUndefined();
  });

  it('a skipped recovery marks no resume', async () => {
    const skipped = setup({ state: crashed({ autoAttempts: 3 }) });
    await skipped.recovery.scanAtStart();
    expect(marker(skipped)).toBeUndefined();
    expect((skipped.state.value.sessions['session-old'] as { resumeDue?: unknown }).resumeDue).toBeUndefined();
  });

  it('the backoff follows the attempts already made in the stretch', async () => {
    const t = setup({ state: crashed({ autoAttempts: 1 }) });
    const scan = t.recovery.scanAtStart();
    await flush();
    expect(t.clock.waits).toEqual([30_000]);
    expect(t.state.value.sessions['session-old']!.autoAttempts).toBe(2);
    await t.clock.advance(30_000);
    await scan;
    expect(t.resume).toHaveBeenCalledTimes(1);
  });

  it('two scans at once (start and a session attach) resume it only once', async () => {
    const t = setup();
    const both = Promise.all([t.recovery.scanAtStart(), t.recovery.scanAtStart()]);
    await flush();
    await t.clock.advance(5_000);
    await both;
    expect(t.resume).toHaveBeenCalledTimes(1);
    expect(t.agents.get('session-old')!.followup).toHaveBeenCalledTimes(1);
  });

  it('two processes: the one that loses the race for the marker does nothing', async () => {
    const t = setup();
    const other = new CrashRecovery(t.deps, { pid: 2, isAlive: () => false, config: () => t.config.value });
    const both = Promise.all([t.recovery.scanAtStart(), other.scanAtStart()]);
    await flush();
    await t.clock.advance(5_000);
    await both;
    expect(t.resume).toHaveBeenCalledTimes(1);
    expect(t.state.value.sessions['session-old']!.autoAttempts).toBe(1);
  });

  it('maxAutoContinue 0: nothing is read, resumed or sent', async () => {
    const t = setup({ row: { maxAutoContinue: 0, backoff: [5] } });
    await t.recovery.scanAtStart();
    await t.clock.advance(60_000);
    expect(t.resume).not.toHaveBeenCalled();
    expect(t.clock.waits).toEqual([]);
    expect(t.state.value.sessions['session-old']!.autoAttempts).toBe(0);
  });

  it('a one-shot headless run never resumes other sessions', async () => {
    const t = setup({ services: { headlessStartup: { task: 'x' } } });
    await t.recovery.scanAtStart();
    await t.clock.advance(60_000);
    expect(t.resume).not.toHaveBeenCalled();
    expect(marker(t)).toBeDefined();
  });

  it.each([
    ['its turn opened more than 30 minutes ago', { turnOpenSince: 1_000_000 - 31 * 60_000 }, 'stale'],
    ['it has no unfinished work', { touched: [] }, 'no_work'],
    ['the stretch used every attempt', { autoAttempts: 3 }, 'exhausted'],
  ])('does not resume when %s, and clears the marker', async (_label, extra, reason) => {
    const t = setup({ state: crashed(extra) });
    await t.recovery.scanAtStart();
    await t.clock.advance(60_000);
    expect(t.resume).not.toHaveBeenCalled();
    expect(marker(t)).toBeUndefined();
    expect(t.logs.some((l) => l.includes(`(${reason})`))).toBe(true);
  });

  it('does not touch a session whose process still runs (its turn was not interrupted)', async () => {
    const t = setup({ alive: [DEAD] });
    await t.recovery.scanAtStart();
    await t.clock.advance(60_000);
    expect(t.resume).not.toHaveBeenCalled();
    expect(marker(t)).toBeDefined();
    expect(t.logs).toContain('not resuming the interrupted turn of session-old (owner_alive)');
  });

  it('does not resume a session whose directory is no longer bound', async () => {
    const t = setup({ config: bound('/somewhere/else') });
    await t.recovery.scanAtStart();
    await t.clock.advance(60_000);
    expect(t.resume).not.toHaveBeenCalled();
    expect(marker(t)).toBeUndefined();
  });

  it('a person writing in the session during the backoff wins: no note', async () => {
    const t = setup();
    const scan = t.recovery.scanAtStart();
    await flush();
    // The person opens the session and writes (the web host resumes it for them).
    const agent = fakeAgent('session-old', { cwd: CWD });
    t.agents.set('session-old', agent);
    const track = t.deps.tracker.add(agent);
    track.humanAt = t.clock.now();
    t.recovery.onHumanMessage('session-old');
    await scan;
    expect(t.resume).not.toHaveBeenCalled();
    expect(agent.followup).not.toHaveBeenCalled();
  });

  it('a person who wrote before the backoff ended (without the abort reaching it) still wins', async () => {
    const t = setup();
    const scan = t.recovery.scanAtStart();
    await flush();
    const agent = fakeAgent('session-old', { cwd: CWD });
    t.agents.set('session-old', agent);
    t.deps.tracker.add(agent).humanAt = t.clock.now();
    await t.clock.advance(5_000);
    await scan;
    expect(agent.followup).not.toHaveBeenCalled();
  });

  it('an already live session is not resumed again; a busy one gets the note once it is idle', async () => {
    const t = setup();
    const agent = fakeAgent('session-old', { cwd: CWD });
    agent.status = 'running';
    t.agents.set('session-old', agent);
    const scan = t.recovery.scanAtStart();
    await flush();
    await t.clock.advance(5_000);
    await t.clock.advance(200);
    expect(agent.followup).not.toHaveBeenCalled();
    agent.status = 'idle';
    await t.clock.advance(100);
    await scan;
    expect(t.resume).not.toHaveBeenCalled();
    expect(agent.followup).toHaveBeenCalledTimes(1);
  });

  it('re-arms an active goal the restart disarmed instead of sending a note', async () => {
    const goals = { get: vi.fn(() => ({ id: 'g1', revision: 4, phase: 'active' as const, activation: 'disarmed' as const })), resume: vi.fn() };
    const t = setup({ goals });
    const scan = t.recovery.scanAtStart();
    await t.clock.advance(5_000);
    await scan;
    const agent = t.agents.get('session-old')!;
    expect(goals.resume).toHaveBeenCalledWith(agent, { id: 'g1', revision: 4 });
    expect(agent.followup).not.toHaveBeenCalled();
  });

  it('a session whose only unfinished work is its goal (or its todo_write items) is resumed too: one rule on every path', async () => {
    const disarmed = { id: 'g1', revision: 4, phase: 'active' as const, activation: 'disarmed' as const };
    for (const [name, facts, expectResume] of [
      ['goal', { goalPhase: 'active', modelTodosOpen: 0 }, true],
      ['todos', { modelTodosOpen: 2 }, true],
      ['paused goal', { goalPhase: 'paused', modelTodosOpen: 0 }, false],
      ['nothing recorded', undefined, false],
    ] as const) {
      const state = crashed({ touched: [], currentWork: undefined, ...(facts ? { turnFacts: facts } : {}) });
      delete state.works.w1;
      const goals = { get: vi.fn(() => (name === 'goal' ? disarmed : undefined)), resume: vi.fn() };
      const t = setup({ state, goals });
      const scan = t.recovery.scanAtStart();
      await t.clock.advance(5_000);
      await scan;
      expect([name, t.resume.mock.calls.length > 0]).toEqual([name, expectResume]);
      if (name === 'goal') expect(goals.resume).toHaveBeenCalledWith(t.agents.get('session-old'), { id: 'g1', revision: 4 });
      if (name === 'todos') expect(t.agents.get('session-old')!.followup).toHaveBeenCalledTimes(1);
      if (!expectResume) expect(t.logs.some((l) => l.includes('(no_work)'))).toBe(true);
    }
  });

  it('the turn marker records the session’s goal and open todo items, keeps them current, and drops them when the turn closes', async () => {
    const t = setup({ state: emptyEngineState() });
    const markers = new TurnMarkers(t.deps, 1);
    const track = t.deps.tracker.add(fakeAgent('s1', { cwd: CWD }));
    await markers.markOpen(track, { goalPhase: 'active', modelTodosOpen: 0 });
    expect(t.state.value.sessions.s1).toMatchObject({ turnFacts: { goalPhase: 'active', modelTodosOpen: 0 } });
    const writes = t.state.writes;
    await markers.noteFacts('s1', { goalPhase: 'active', modelTodosOpen: 0 });
    expect(t.state.writes).toBe(writes);
    await markers.noteFacts('s1', { goalPhase: 'complete', modelTodosOpen: 3 });
    expect(t.state.value.sessions.s1).toMatchObject({ turnFacts: { goalPhase: 'complete', modelTodosOpen: 3 } });
    await markers.markClosed('s1');
    expect(t.state.value.sessions.s1).toBeUndefined();
    await markers.noteFacts('s1', { modelTodosOpen: 1 });
    expect(t.state.value.sessions.s1).toBeUndefined();
  });

  it('keeps trying while dsh has no agent factory yet, then gives up on other errors', async () => {
    let calls = 0;
    const agents = new Map<string, FakeAgent>();
    const resume = vi.fn(async ({ resumeSessionId }: { resumeSessionId: string }) => {
      calls++;
      if (calls < 3) throw new Error('no agent factory registered');
      const agent = fakeAgent(resumeSessionId, { cwd: CWD });
      agents.set(resumeSessionId, agent);
      return { agent };
    });
    const t = setup({ resume, agents });
    const scan = t.recovery.scanAtStart();
    await t.clock.advance(5_000);
    await t.clock.advance(300);
    await scan;
    expect(resume).toHaveBeenCalledTimes(3);
    expect(agents.get('session-old')!.followup).toHaveBeenCalledTimes(1);

    const failing = setup({ resume: vi.fn(async () => Promise.reject(new Error('persistence is broken'))) });
    const second = failing.recovery.scanAtStart();
    await failing.clock.advance(5_000);
    await second;
    expect(failing.logs.some((l) => l.includes('persistence is broken'))).toBe(true);
  });

  it('disposal during the backoff ends it: nothing is resumed', async () => {
    const t = setup();
    const scan = t.recovery.scanAtStart();
    await flush();
    t.lifetime.abort();
    await scan;
    await t.clock.advance(60_000);
    expect(t.resume).not.toHaveBeenCalled();
  });
});

describe('a session coming back in this process', () => {
  it('is resumed when its own turn was interrupted (the same rules and the same single attempt)', async () => {
    const agents = new Map<string, FakeAgent>();
    const t = setup({ agents });
    const agent = fakeAgent('session-old', { cwd: CWD });
    agents.set('session-old', agent);
    const track = t.deps.tracker.add(agent);
    track.binding = { cwd: CWD, projectId: 'list-1' };
    const attached = t.recovery.onAttached(track);
    await flush();
    await t.clock.advance(5_000);
    await attached;
    expect(agent.followup).toHaveBeenCalledTimes(1);
    expect(t.resume).not.toHaveBeenCalled();
  });

  it('unbound or subagent sessions are never looked at', async () => {
    const t = setup();
    const track = t.deps.tracker.add(fakeAgent('session-old', { cwd: CWD }));
    await t.recovery.onAttached(track);
    const child = t.deps.tracker.add(fakeAgent('child', { cwd: CWD, delegationDepth: 1 }));
    child.binding = { cwd: CWD, projectId: 'list-1' };
    await t.recovery.onAttached(child);
    expect(marker(t)).toBeDefined();
  });
});

describe('headless take-over', () => {
  it('a new one-shot session in the directory takes the interrupted Work as current, with a fenced note, once', async () => {
    const t = setup({ services: { headlessStartup: { task: 'continue' } } });
    const track = t.deps.tracker.add(fakeAgent('session-new', { cwd: CWD }));
    track.binding = { cwd: CWD, projectId: 'list-1' };
    await t.recovery.onAttached(track);
    expect(t.engine.switchTo).toHaveBeenCalledWith('session-new', 'list-1', 'w1', { inheritFrom: ['session-old'] });
    expect(track.pendingNotes).toHaveLength(1);
    const note = track.pendingNotes[0]!.content[0]!.text;
    expect(note).toContain('An interrupted session');
    expect(note).toContain('Work w1');
    expect(marker(t)).toBeUndefined();
    expect(t.state.value.sessions['session-old']!.autoAttempts).toBe(1);
    // The old session is not resumed (the new one took its Work): no resume is marked for it.
    expect((t.state.value.sessions['session-old'] as { resumeDue?: unknown }).resumeDue).toBeUndefined();
    expect(t.logs).toContain('took over the interrupted Work of session-old');
    // A second new session finds nothing left to take over.
    const again = t.deps.tracker.add(fakeAgent('session-3', { cwd: CWD }));
    again.binding = track.binding;
    await t.recovery.onAttached(again);
    expect(t.engine.switchTo).toHaveBeenCalledTimes(1);
  });

  it('takes nothing over with maxAutoContinue 0, from another directory, or from a live process', async () => {
    for (const [options, cwd] of [
      [{ row: { maxAutoContinue: 0, backoff: [5] } }, CWD],
      [{}, '/other/dir'],
      [{ alive: [DEAD] }, CWD],
    ] as const) {
      const t = setup({ services: { headlessStartup: { task: 'continue' } }, ...options });
      const track = t.deps.tracker.add(fakeAgent('session-new', { cwd }));
      track.binding = { cwd, projectId: 'list-1' };
      await t.recovery.onAttached(track);
      expect(t.engine.switchTo).not.toHaveBeenCalled();
      expect(track.pendingNotes).toEqual([]);
    }
  });

  it('a long-lived profile does not take Works over for new sessions', async () => {
    const t = setup();
    const track = t.deps.tracker.add(fakeAgent('session-new', { cwd: CWD }));
    track.binding = { cwd: CWD, projectId: 'list-1' };
    await t.recovery.onAttached(track);
    expect(t.engine.switchTo).not.toHaveBeenCalled();
  });
});

describe('processAlive', () => {
  it('is true for this process and false for a pid that cannot exist', () => {
    expect(processAlive(process.pid)).toBe(true);
    expect(processAlive(2 ** 22 + 12345)).toBe(false);
  });
});


describe('crash recovery edges', () => {
  it('maxAutoContinue 0 at start reads and logs nothing, and leaves the marker for nobody to act on', async () => {
    const t = setup({ row: { maxAutoContinue: 0, backoff: [5] } });
    await t.recovery.scanAtStart();
    expect(t.logs).toEqual([]);
    expect(marker(t)).toBeDefined();
  });

  it('a marker from this very process id counts as interrupted; a record without a process id too', async () => {
    for (const extra of [{ turnOpenPid: 1 }, { turnOpenPid: undefined }]) {
      const t = setup({ state: crashed(extra), alive: [1] });
      const alwaysAlive = new CrashRecovery(t.deps, { pid: 1, isAlive: () => true, config: () => t.config.value });
      const scan = alwaysAlive.scanAtStart();
      await flush();
      await t.clock.advance(5_000);
      await scan;
      expect(t.resume).toHaveBeenCalledTimes(1);
    }
  });

  it('a record without a directory and no live session has no binding: not resumed, marker cleared', async () => {
    const t = setup({ state: crashed({ cwd: undefined }) });
    await t.recovery.scanAtStart();
    expect(t.resume).not.toHaveBeenCalled();
    expect(marker(t)).toBeUndefined();
  });

  it('a marker that changed between the decision and the take is left alone', async () => {
    const t = setup();
    const update = t.state.update;
    t.state.update = (fn) => {
      (t.state.value.sessions['session-old'] as Record<string, unknown>).turnOpenSince = 999_999;
      return update(fn);
    };
    await t.recovery.scanAtStart();
    await t.clock.advance(60_000);
    expect(t.resume).not.toHaveBeenCalled();
    expect(marker(t)).toBe(999_999);
  });

  it('a skip clears the marker without touching the count', async () => {
    const t = setup({ state: crashed({ turnOpenSince: 1_000_000 - 31 * 60_000, autoAttempts: 2 }) });
    await t.recovery.scanAtStart();
    expect(marker(t)).toBeUndefined();
    expect(t.state.value.sessions['session-old']!.autoAttempts).toBe(2);
  });

  it('after disposal nothing is looked at', async () => {
    const t = setup();
    t.lifetime.abort();
    await t.recovery.scanAtStart();
    expect(marker(t)).toBeDefined();
    expect(t.logs).toEqual([]);
  });

  it('a later crash of the same session is resumed again (counted as the next attempt)', async () => {
    const t = setup();
    let scan = t.recovery.scanAtStart();
    await t.clock.advance(5_000);
    await scan;
    (t.state.value.sessions['session-old'] as Record<string, unknown>).turnOpenSince = t.clock.now();
    (t.state.value.sessions['session-old'] as Record<string, unknown>).turnOpenPid = DEAD;
    t.agents.delete('session-old');
    scan = t.recovery.scanAtStart();
    await flush();
    expect(t.state.value.sessions['session-old']!.autoAttempts).toBe(2);
    await t.clock.advance(30_000);
    await scan;
    expect(t.resume).toHaveBeenCalledTimes(2);
  });

  it('a person\'s message already queued in the live session, or one arriving while it is busy, wins', async () => {
    const t = setup();
    const agent = fakeAgent('session-old', { cwd: CWD });
    agent.inbox.nextTurn.push({ id: 'h', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } });
    t.agents.set('session-old', agent);
    const scan = t.recovery.scanAtStart();
    await t.clock.advance(5_000);
    await scan;
    expect(agent.followup).not.toHaveBeenCalled();

    const busy = setup();
    const running = fakeAgent('session-old', { cwd: CWD });
    running.status = 'running';
    busy.agents.set('session-old', running);
    const second = busy.recovery.scanAtStart();
    await busy.clock.advance(5_000);
    await busy.clock.advance(100);
    busy.recovery.onHumanMessage('session-old');
    running.status = 'idle';
    await busy.clock.advance(200);
    await second;
    expect(running.followup).not.toHaveBeenCalled();
  });

  it('without a resume service or a default model the session is still handled sensibly', async () => {
    const noResume = setup();
    delete (noResume.deps.ctx.agents as { resume?: unknown }).resume;
    const scan = noResume.recovery.scanAtStart();
    await noResume.clock.advance(5_000);
    await scan;
    expect(noResume.resume).not.toHaveBeenCalled();

    const noModel = setup({ services: {} });
    const second = noModel.recovery.scanAtStart();
    await noModel.clock.advance(5_000);
    await second;
    expect(noModel.resume).toHaveBeenCalledWith({ resumeSessionId: 'session-old' });
  });

  it('an armed or paused goal gets the note, not a re-arm', async () => {
    for (const goal of [
      { id: 'g', revision: 1, phase: 'active' as const, activation: 'armed' as const },
      { id: 'g', revision: 1, phase: 'paused' as const, activation: 'disarmed' as const },
    ]) {
      const goals = { get: vi.fn(() => goal), resume: vi.fn() };
      const t = setup({ goals });
      const scan = t.recovery.scanAtStart();
      await t.clock.advance(5_000);
      await scan;
      expect(goals.resume).not.toHaveBeenCalled();
      expect(t.agents.get('session-old')!.followup).toHaveBeenCalledTimes(1);
    }
  });

  it('the headless take-over picks the latest interrupted session, and skips one without a Work or on another list', async () => {
    const state = crashed();
    state.works.w2 = work('w2', ['pending']);
    state.sessions['session-newer'] = { touched: ['w2'], currentWork: 'w2', autoAttempts: 0, updatedAt: 0, turnOpenSince: 1_000_000 - 10_000, turnOpenPid: DEAD, cwd: CWD } as never;
    const t = setup({ state, services: { headlessStartup: { task: 'go' } } });
    const track = t.deps.tracker.add(fakeAgent('session-new', { cwd: CWD }));
    track.binding = { cwd: CWD, projectId: 'list-1' };
    await t.recovery.onAttached(track);
    expect(t.engine.switchTo).toHaveBeenCalledWith('session-new', 'list-1', 'w2', { inheritFrom: ['session-newer'] });
    expect(marker(t)).toBeDefined();

    for (const extra of [{ currentWork: undefined }, { currentWork: 'w9' }]) {
      const other = crashed(extra);
      other.works.w9 = work('w9', ['pending'], { projectId: 'list-9' });
      const s = setup({ state: other, services: { headlessStartup: { task: 'go' } } });
      const fresh = s.deps.tracker.add(fakeAgent('session-new', { cwd: CWD }));
      fresh.binding = { cwd: CWD, projectId: 'list-1' };
      await s.recovery.onAttached(fresh);
      expect(s.engine.switchTo).not.toHaveBeenCalled();
      expect(marker(s)).toBeDefined();
    }
  });

  it('the take-over leaves a live process\'s session marked', async () => {
    const t = setup({ services: { headlessStartup: { task: 'go' } }, alive: [DEAD] });
    const track = t.deps.tracker.add(fakeAgent('session-new', { cwd: CWD }));
    track.binding = { cwd: CWD, projectId: 'list-1' };
    await t.recovery.onAttached(track);
    expect(marker(t)).toBeDefined();
  });
});
