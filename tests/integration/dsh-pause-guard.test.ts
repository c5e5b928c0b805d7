// The pause guard (src/runtime/phone/pause-guard.ts) over the engine and the Dida simulator: what it logs when the person pauses
// from the phone (and whether the turn is stopped), the spend limit, a turn that cannot be cancelled, the stretch's
// priority written only when it changes, a Work the session just created or claimed, and failures that are logged.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { StatePort } from '../../src/core/work/engine-context';
import { PAUSE_CHECK_INTERVAL_MS } from '../../src/core/phone/phone-signals';
import type { AdapterDeps } from '../../src/dsh/adapter-deps';
import { AgentTracker, type AgentTrack } from '../../src/runtime/session/agent-tracker';
import { PAUSE_CANCEL_REASON, PauseGuard } from '../../src/runtime/phone/pause-guard';
import { createHarness, FakeClock, fakeAgent, personSays, type FakeAgent } from '../helpers/dsh-fakes';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';

const S = 'session-1';
let eh: EngineHarness;

beforeEach(async () => {
  eh = await startEngineHarness();
});
afterEach(async () => {
  await eh.close();
});

/** A person's Work the session runs (first step started), and a guard over the same state. */
async function setup(options: { spend?: boolean } = {}) {
  const list = eh.sim.seedProject({ name: 'l' });
  const task = eh.sim.seedTask({ projectId: list.id, title: '部署', priority: 5, items: [{ title: '申请权限' }, { title: '上线' }] });
  await eh.engine.sync(list.id);
  await eh.engine.switchTo(S, list.id, task.id);
  await eh.engine.changeSteps(S, [{ op: 'update', step: '申请权限', status: 'in_progress' }]);
  const h = createHarness();
  const clock = new FakeClock(eh.clock.now);
  let updates = 0;
  const state: StatePort = {
    read: () => eh.deps.state.read(),
    update: (fn) => {
      updates++;
      return eh.deps.state.update(fn);
    },
  };
  const lifetime = new AbortController();
  const deps: AdapterDeps = { ...h.deps, state, clock, tracker: new AgentTracker(), lifetime: lifetime.signal };
  const agent: FakeAgent = fakeAgent(S, { cwd: '/p' });
  agent.status = 'running';
  const cancel = vi.fn();
  agent.cancel = cancel as never;
  const track: AgentTrack = deps.tracker.add(agent);
  track.binding = { cwd: '/p', projectId: list.id };
  const engineDeps = options.spend ? { ...eh.deps, spendSettings: async () => ({ limits: { maxTokensPerWork: 100, maxMinutesPerWork: 0, maxTokensPerRound: 0, maxMinutesPerRound: 0 } }) } : eh.deps;
  const guard = new PauseGuard(deps, async () => engineDeps, () => ['stop']);
  const call = { tool: 'todo', exec: { agent } };
  return { list, task, h, clock, deps, agent, cancel, track, guard, call, lifetime, updates: () => updates, logs: h.logs };
}

describe('a pause from the phone', () => {
  it('a priority set to none: logged with the Work and the session, and the turn stopped with the hook cause', async () => {
    const t = await setup();
    expect(await t.guard.atBoundary(t.track, true)).toBe(false);
    eh.sim.editTask(t.task.id, { priority: 0 });
    await t.clock.advance(PAUSE_CHECK_INTERVAL_MS);
    await t.guard.afterToolCall(t.call);
    expect(t.cancel).toHaveBeenCalledWith({ kind: 'hook', reason: PAUSE_CANCEL_REASON }, { keepInbox: true });
    expect(t.logs).toEqual([`the person set its priority to none in Dida: Work ${t.task.id} is paused and the turn of ${S} is stopped`]);
  });

  it("at the first step of a turn the person's message opened, the pause is logged without stopping the turn", async () => {
    const t = await setup();
    await t.guard.atBoundary(t.track, true);
    eh.sim.addComment(t.list.id, t.task.id, 'stop');
    await t.clock.advance(PAUSE_CHECK_INTERVAL_MS);
    await t.guard.beforeStep(t.track, { step: 1, messages: [personSays('how far are you?')] });
    expect(t.cancel).not.toHaveBeenCalled();
    expect(t.logs).toEqual([`the person commented a stop phrase in Dida: Work ${t.task.id} is paused`]);
  });

  it('a later step of the same turn is stopped even though the person opened it', async () => {
    const t = await setup();
    await t.guard.atBoundary(t.track, true);
    eh.sim.addComment(t.list.id, t.task.id, 'stop');
    await t.clock.advance(PAUSE_CHECK_INTERVAL_MS);
    await t.guard.beforeStep(t.track, { step: 2, messages: [personSays('how far are you?')] });
    expect(t.cancel).toHaveBeenCalledTimes(1);
  });

  it('a turn that cannot be cancelled is logged; the Work still waits', async () => {
    const t = await setup();
    t.cancel.mockImplementation(() => {
      throw new Error('already ending');
    });
    await t.guard.atBoundary(t.track, true);
    eh.sim.editTask(t.task.id, { priority: 0 });
    await t.clock.advance(PAUSE_CHECK_INTERVAL_MS);
    expect(await t.guard.atBoundary(t.track, true)).toBe(true);
    expect(t.logs).toContain(`could not stop the turn of ${S}: already ending`);
    expect((await eh.state()).works[t.task.id]!.waiting?.pausedBy).toBe('priority');
  });

  it('an agent without cancel is tolerated', async () => {
    const t = await setup();
    delete t.agent.cancel;
    await t.guard.atBoundary(t.track, true);
    eh.sim.editTask(t.task.id, { priority: 0 });
    await t.clock.advance(PAUSE_CHECK_INTERVAL_MS);
    expect(await t.guard.atBoundary(t.track, true)).toBe(true);
    expect(t.logs.filter((l) => l.startsWith('could not stop'))).toEqual([]);
  });
});

describe('the spend limit', () => {
  it('a Work past its limit waits for the person and the turn is stopped, said in the log', async () => {
    const t = await setup({ spend: true });
    await eh.deps.state.update((s) => {
      s.usage[t.task.id] = { rounds: { '1': { requests: 3, inputTokens: 150, outputTokens: 20, cacheReadTokens: 0, ms: 0, continuations: 0, continuedRequests: 0, continuedTokens: 0, models: {} } } };
    });
    expect(await t.guard.atBoundary(t.track, true)).toBe(true);
    expect(t.cancel).toHaveBeenCalledWith({ kind: 'hook', reason: PAUSE_CANCEL_REASON }, { keepInbox: true });
    expect(t.logs).toEqual([`Work ${t.task.id} passed its spend limit (tokens: 170 of 100): it waits for the person and the turn of ${S} is stopped`]);
    expect((await eh.state()).works[t.task.id]!.waiting).toBeDefined();
  });

  it('without leave to cancel, the Work waits and the turn goes on', async () => {
    const t = await setup({ spend: true });
    await eh.deps.state.update((s) => {
      s.usage[t.task.id] = { rounds: { '1': { requests: 1, inputTokens: 500, outputTokens: 0, cacheReadTokens: 0, ms: 0, continuations: 0, continuedRequests: 0, continuedTokens: 0, models: {} } } };
    });
    expect(await t.guard.atBoundary(t.track, false)).toBe(true);
    expect(t.cancel).not.toHaveBeenCalled();
    expect(t.logs).toEqual([`Work ${t.task.id} passed its spend limit (tokens: 500 of 100): it waits for the person`]);
  });
});

describe("the stretch's priority", () => {
  it('is written to the session record once, and again only when it changes', async () => {
    const t = await setup();
    await t.guard.atBoundary(t.track, true);
    expect((await eh.state()).sessions[S]).toMatchObject({ pauseSeen: { key: t.task.id, priority: 5 } });
    const written = t.updates();
    await t.clock.advance(PAUSE_CHECK_INTERVAL_MS);
    await t.guard.atBoundary(t.track, true);
    expect(t.updates()).toBe(written);
    eh.sim.editTask(t.task.id, { priority: 3 });
    await t.clock.advance(PAUSE_CHECK_INTERVAL_MS);
    await t.guard.atBoundary(t.track, true);
    expect((await eh.state()).sessions[S]).toMatchObject({ pauseSeen: { key: t.task.id, priority: 3 } });
    expect(t.cancel).not.toHaveBeenCalled();
  });

  it('idle keeps it and writes nothing: a priority set to none between turns pauses at the next look, which reads Dida afresh', async () => {
    const t = await setup();
    await t.guard.atBoundary(t.track, true);
    const written = t.updates();
    t.guard.onIdle(t.track);
    await new Promise((resolve) => setImmediate(resolve));
    expect((await eh.state()).sessions[S]).toMatchObject({ pauseSeen: { key: t.task.id, priority: 5 } });
    expect(t.updates()).toBe(written);
    // Between turns, well within 30 s of the last read: the person sets it to none; the next look reads it at once.
    eh.sim.editTask(t.task.id, { priority: 0 });
    const reads = eh.sim.counters()['GET /project/{pid}/task/{tid}'] ?? 0;
    await t.clock.advance(1_000);
    expect(await t.guard.atBoundary(t.track, false)).toBe(true);
    expect(eh.sim.counters()['GET /project/{pid}/task/{tid}']).toBe(reads + 1);
    expect((await eh.state()).works[t.task.id]!.waiting).toMatchObject({ pausedBy: 'priority', previousPriority: 5 });
    expect(eh.sim.listComments(t.task.id).map((c) => c.title).filter((c) => c.includes('已暂停：停在「'))).toHaveLength(1);
    expect(t.cancel).not.toHaveBeenCalled();
  });

  it("another session's kept priority counts only when its turn was cut off", async () => {
    const t = await setup();
    await eh.deps.state.update((s) => {
      s.sessions.old = { touched: [t.task.id], autoAttempts: 0, updatedAt: 0, pauseSeen: { key: t.task.id, priority: 4 } } as never;
    });
    eh.sim.editTask(t.task.id, { priority: 0 });
    // The old session's turn is closed: none at the first look is not a pause.
    expect(await t.guard.atBoundary(t.track, true)).toBe(false);
    expect(t.cancel).not.toHaveBeenCalled();
  });
});

describe('after a restart, and who opened the turn', () => {
  it('a pause set while dsh was down: the priority the session kept before the restart counts at the first look', async () => {
    const t = await setup();
    await t.guard.atBoundary(t.track, true);
    expect((await eh.state()).sessions[S]).toMatchObject({ pauseSeen: { key: t.task.id, priority: 5 } });
    eh.sim.editTask(t.task.id, { priority: 0 });
    // A new process: a guard that has seen nothing itself; the session's turn is not open in the record.
    const restarted = new PauseGuard(t.deps, async () => eh.deps, () => ['stop']);
    expect((await eh.state()).sessions[S]?.turnOpenSince).toBeUndefined();
    expect(await restarted.atBoundary(t.track, true)).toBe(true);
    expect((await eh.state()).works[t.task.id]!.waiting?.pausedBy).toBe('priority');
    expect(t.cancel).toHaveBeenCalledTimes(1);
  });

  it('a first step opened by a plugin message (a resume, a note), not by the person, is stopped by a pause', async () => {
    const t = await setup();
    await t.guard.atBoundary(t.track, true);
    eh.sim.editTask(t.task.id, { priority: 0 });
    await t.clock.advance(PAUSE_CHECK_INTERVAL_MS);
    const note = { id: 'n1', role: 'user', content: [{ type: 'text', text: 'continue' }], source: { kind: 'plugin', plugin: 'dida-todo' } };
    // An entry without a source (not built by dsh) breaks nothing and opens nothing either.
    await t.guard.beforeStep(t.track, { step: 1, messages: [null, { id: 'x', role: 'user', content: [] }, note] as never });
    expect(t.cancel).toHaveBeenCalledTimes(1);
  });

  it('no current Work, or a state that cannot be read: no pause, and the failure is logged', async () => {
    const t = await setup();
    await eh.deps.state.update((s) => {
      delete s.sessions[S]!.currentWork;
    });
    expect(await t.guard.atBoundary(t.track, true)).toBe(false);
    t.deps.state.read = async () => Promise.reject(new Error('state locked'));
    expect(await t.guard.atBoundary(t.track, true)).toBe(false);
    expect(t.logs).toEqual(['looking for a pause from Dida failed: state locked']);
    expect(t.cancel).not.toHaveBeenCalled();
  });

  it('the reason a stopped turn is given, from a fresh import', async () => {
    vi.resetModules();
    const fresh = await import('../../src/runtime/phone/pause-guard');
    expect(fresh.PAUSE_CANCEL_REASON).toBe('dida-todo: the person paused the Work in Dida');
  });
});

describe('what is not looked at', () => {
  it('a Work the session created moments ago is not read from Dida until the interval has passed', async () => {
    const t = await setup();
    await eh.deps.state.update((s) => {
      const w = s.works[t.task.id]!;
      w.origin = 'agent';
      w.createdAt = t.clock.now();
    });
    eh.sim.resetCounters();
    await t.guard.atBoundary(t.track, true);
    expect(eh.sim.totalRequests()).toBe(0);
    await t.clock.advance(PAUSE_CHECK_INTERVAL_MS - 1);
    await t.guard.atBoundary(t.track, true);
    expect(eh.sim.totalRequests()).toBe(0);
    await t.clock.advance(1);
    await t.guard.atBoundary(t.track, true);
    expect(eh.sim.totalRequests()).toBeGreaterThan(0);
  });

  it('nothing is read once the plugin is unloading', async () => {
    const t = await setup();
    t.lifetime.abort();
    eh.sim.resetCounters();
    eh.sim.editTask(t.task.id, { priority: 0 });
    expect(await t.guard.atBoundary(t.track, true)).toBe(false);
    expect(eh.sim.totalRequests()).toBe(0);
  });

  it('a Work the session claimed moments ago is not read at its first boundaries (the claim just read it); 30 s after the claim it is', async () => {
    const t = await setup();
    eh.sim.resetCounters();
    expect(await t.guard.atBoundary(t.track, true)).toBe(false);
    // The next steps, seconds later: the claim's read still counts as the last look.
    await t.clock.advance(2_000);
    expect(await t.guard.atBoundary(t.track, true)).toBe(false);
    await t.clock.advance(PAUSE_CHECK_INTERVAL_MS - 4_000);
    expect(await t.guard.atBoundary(t.track, true)).toBe(false);
    expect(eh.sim.totalRequests()).toBe(0);
    await t.clock.advance(2_000);
    await t.guard.atBoundary(t.track, true);
    expect(eh.sim.counters()).toEqual({ 'GET /project/{pid}/task/{tid}': 1, 'GET /project/{pid}/task/{tid}/comments': 1 });
  });

  it('a Work handed to the session after it went idle is not read at its first boundary either; the Work it held before the idle is', async () => {
    const t = await setup();
    await t.clock.advance(PAUSE_CHECK_INTERVAL_MS);
    await t.guard.atBoundary(t.track, true);
    t.guard.onIdle(t.track);
    // The session is handed another Work after the idle (its claim read the list a moment ago).
    await t.clock.advance(5_000);
    eh.clock.now = t.clock.now();
    const next = eh.sim.seedTask({ projectId: t.list.id, title: '写文档', priority: 3, items: [{ title: '初稿' }] });
    await eh.engine.sync(t.list.id);
    await eh.engine.switchTo(S, t.list.id, next.id);
    eh.sim.resetCounters();
    expect(await t.guard.atBoundary(t.track, true)).toBe(false);
    expect(eh.sim.totalRequests()).toBe(0);
    // Control: the Work held before the idle, taken up again after it, is read at once (a pause between turns).
    await eh.engine.switchTo(S, t.list.id, t.task.id);
    t.guard.onIdle(t.track);
    await t.clock.advance(1_000);
    eh.sim.resetCounters();
    await t.guard.atBoundary(t.track, true);
    expect(eh.sim.counters()).toEqual({ 'GET /project/{pid}/task/{tid}': 1, 'GET /project/{pid}/task/{tid}/comments': 1 });
  });

  it('todo_work calls are boundaries too; a call without an agent or of an unknown agent is not', async () => {
    const t = await setup();
    await t.clock.advance(PAUSE_CHECK_INTERVAL_MS);
    eh.sim.resetCounters();
    await t.guard.afterToolCall({ tool: 'todo_work', exec: { agent: t.agent } });
    const after = eh.sim.totalRequests();
    expect(after).toBeGreaterThan(0);
    await t.clock.advance(PAUSE_CHECK_INTERVAL_MS);
    await t.guard.afterToolCall({ tool: 'todo', exec: {} });
    await t.guard.afterToolCall({ tool: 'todo', exec: { agent: fakeAgent('stranger') } });
    await t.guard.afterToolCall({ tool: 'dida_todo_setup', exec: { agent: t.agent } });
    expect(eh.sim.totalRequests()).toBe(after);
  });
});
