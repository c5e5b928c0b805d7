// Idle settle in a one-shot run (src/runtime/turns/idle-settle.ts: claims released with a word, the live mark dropped, the
// usage written first) and the phone hooks' failure handling (src/runtime/phone/phone-control.ts: logged, never thrown).
import { describe, expect, it, vi } from 'vitest';
import { emptyEngineState } from '../../src/core/work/work-state';
import { IdleSettle } from '../../src/runtime/turns/idle-settle';
import { LiveBinding } from '../../src/runtime/session/live-binding';
import { PhoneControl } from '../../src/runtime/phone/phone-control';
import { StretchCounter } from '../../src/runtime/session/stretch-counter';
import { TurnMarkers } from '../../src/runtime/turns/turn-markers';
import { bound, createHarness, fakeAgent, flush } from '../helpers/dsh-fakes';

const CWD = '/p';

function settleSetup(options: { oneShot?: boolean; usage?: () => Promise<void> } = {}) {
  const state = emptyEngineState();
  state.sessions.s1 = { touched: [], autoAttempts: 0, updatedAt: 0, turnOpenSince: 5, livePid: process.pid } as never;
  const h = createHarness({ config: bound(CWD), state, services: options.oneShot ? { headlessStartup: {} } : {} });
  const order: string[] = [];
  h.engine.settle.mockImplementation(async () => (order.push('settle'), []));
  const usage = vi.fn(options.usage ?? (async () => void order.push('usage')));
  const settle = new IdleSettle(h.deps, new LiveBinding(h.deps), new TurnMarkers(h.deps, process.pid), usage);
  const agent = fakeAgent('s1', { cwd: CWD });
  const track = h.deps.tracker.add(agent);
  return { ...h, settle, agent, track, usage, order };
}

describe('IdleSettle', () => {
  it("writes the session's usage before it settles", async () => {
    const t = settleSetup();
    await t.settle.settle(t.track);
    expect(t.order).toEqual(['usage', 'settle']);
    expect(t.usage).toHaveBeenCalledWith(t.track);
    expect(t.engine.releaseSession).not.toHaveBeenCalled();
  });

  it('a one-shot run releases what it leaves open, says so, and drops its live mark', async () => {
    const t = settleSetup({ oneShot: true });
    t.engine.releaseSession.mockResolvedValue(['w1']);
    await t.settle.settle(t.track);
    expect(t.engine.releaseSession).toHaveBeenCalledWith('s1');
    expect(t.logs).toEqual(['the run ended with steps open: released w1 for other sessions']);
    expect((t.state.value.sessions.s1 as Record<string, unknown> | undefined)?.livePid).toBeUndefined();
  });

  it('a one-shot with nothing open says nothing; one whose next turn already runs releases nothing', async () => {
    const t = settleSetup({ oneShot: true });
    await t.settle.settle(t.track);
    expect(t.engine.releaseSession).toHaveBeenCalledTimes(1);
    expect(t.logs).toEqual([]);
    const running = settleSetup({ oneShot: true });
    running.agent.status = 'running';
    await running.settle.settle(running.track);
    expect(running.engine.releaseSession).not.toHaveBeenCalled();
  });

  it('nothing is settled once the plugin is unloading (the marker is still closed)', async () => {
    const t = settleSetup();
    t.lifetime.abort();
    await t.settle.settle(t.track);
    expect(t.engine.settle).not.toHaveBeenCalled();
    expect(t.state.value.sessions.s1?.turnOpenSince).toBeUndefined();
  });

  it('an agent without a maintenance slot settles in the background; a failure there is logged', async () => {
    const t = settleSetup();
    delete (t.agent as { runMaintenance?: unknown }).runMaintenance;
    t.engine.settle.mockRejectedValueOnce(new Error('lock lost'));
    t.settle.onIdle(t.track);
    await flush();
    expect(t.engine.settle).toHaveBeenCalledTimes(1);
    expect(t.logs).toEqual(['settling the session failed: lock lost']);
  });
});

function phoneSetup() {
  const h = createHarness();
  const agent = fakeAgent('s1', { cwd: CWD });
  const track = h.deps.tracker.add(agent);
  track.binding = { cwd: CWD, projectId: 'list-1' };
  const engine = vi.fn(async () => ({ deps: {} as never }));
  const phone = new PhoneControl(h.deps, engine, new StretchCounter(h.deps), () => undefined);
  return { ...h, agent, track, phone, engineCalls: engine };
}

describe('PhoneControl', () => {
  it('a failing look at the state is logged with where it is looked at again, not thrown', async () => {
    const t = phoneSetup();
    t.state.read = async () => Promise.reject(new Error('state locked'));
    // After a poll and after a Dida tool call the pause guard logs its own failed look, then the answers' look fails the same way.
    await expect(t.phone.afterPoll()).resolves.toBeUndefined();
    expect(t.logs).toEqual(['looking for a pause from Dida failed: state locked', 'answers and pauses from Dida: state locked (looked at again at the next step or poll)']);
    await t.phone.afterToolCall({ tool: 'todo_work', exec: { agent: t.agent } });
    expect(t.logs.slice(2)).toEqual(['looking for a pause from Dida failed: state locked', 'answers and pauses from Dida: state locked (looked at again at the next step or poll)']);
  });

  it('loads its parts once; unbound sessions, subagents and other tools never reach them', async () => {
    const t = phoneSetup();
    const first = t.phone.load();
    expect(t.phone.load()).toBe(first);
    t.track.binding = undefined;
    expect(await t.phone.lookForPause(t.track)).toBe(false);
    await t.phone.beforeStep(t.track, { agent: t.agent, turn: 1 });
    t.track.binding = { cwd: CWD, projectId: 'list-1' };
    t.track.subagent = true;
    expect(await t.phone.lookForPause(t.track)).toBe(false);
    await t.phone.beforeStep(t.track, { agent: t.agent, turn: 1 });
    await t.phone.afterToolCall({ tool: 'dida_todo_setup', exec: { agent: t.agent } });
    expect(t.engineCalls).not.toHaveBeenCalled();
    expect(t.logs).toEqual([]);
  });

  it("a bound session's look for a pause asks the guard (and may cancel); a failed load is logged as false", async () => {
    const t = phoneSetup();
    const parts = await t.phone.load();
    const look = vi.spyOn(parts.pause, 'atBoundary').mockResolvedValueOnce(true).mockResolvedValueOnce(false);
    expect(await t.phone.lookForPause(t.track)).toBe(true);
    expect(look).toHaveBeenLastCalledWith(t.track, true);
    expect(await t.phone.lookForPause(t.track)).toBe(false);
    expect(look).toHaveBeenCalledTimes(2);
    vi.spyOn(t.phone, 'load').mockRejectedValueOnce(new Error('import failed'));
    expect(await t.phone.lookForPause(t.track)).toBe(false);
    expect(t.logs).toEqual(['answers and pauses from Dida: import failed (looked at again later)']);
    expect(look).toHaveBeenCalledTimes(2);
  });

  it('idle writes nothing, before anything loaded or after', async () => {
    const t = phoneSetup();
    t.phone.onIdle(t.track);
    await flush();
    expect(t.state.writes).toBe(0);
    t.state.value.sessions.s1 = { touched: [], autoAttempts: 0, updatedAt: 0, pauseSeen: { key: 'w1', priority: 3 } } as never;
    await t.phone.load();
    t.phone.onIdle(t.track);
    await flush();
    expect((t.state.value.sessions.s1 as Record<string, unknown>).pauseSeen).toEqual({ key: 'w1', priority: 3 });
    expect(t.state.writes).toBe(0);
  });
});
