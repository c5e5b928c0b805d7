// The composition (src/dsh/dsh-host.ts) over a fake host, fake runtime, fake engine and fake clock: which dsh event
// reaches which module, and what does not.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { emptyEngineState } from '../../src/core/work/work-state';
import type { DidaTodoConfig } from '../../src/store/config-schema';
import { bound, eventually, fakeAgent, flush, personSays, queueOf, work, type FakeAgent } from '../helpers/dsh-fakes';
import { HOST_CWD as CWD, hostHarness, type HostHarnessOptions } from '../helpers/dsh-host-harness';


/** The host harness, and a flush to let its background work run. */
function setup(options: HostHarnessOptions = {}) {
  return { ...hostHarness(options), ready: flush };
}

describe('DshHost.start', () => {
  it('registers the three tools, one listener per event, the prompt section, and disposes once', async () => {
    const t = setup();
    expect(t.host.tools.map((tool) => tool.name).sort()).toEqual(['dida_todo_setup', 'todo', 'todo_work']);
    expect([...t.host.listeners.keys()].sort()).toEqual(
      ['agent/created', 'agent/disposed', 'agent/inbox/inserted', 'agent/pre-step', 'agent/request-error', 'agent/status', 'approval/request', 'session/event'].sort(),
    );
    expect(t.host.sections.map((s) => s.name)).toEqual(['dida-todo']);
    await t.host.dispose();
    expect(t.runtime.close).toHaveBeenCalledTimes(1);
  });

  it("takes part in the machine's polling by default; the row or config.yaml turns it off (config.yaml wins), config.yaml's intervals win", async () => {
    const byDefault = setup();
    await eventually(() => byDefault.plugin.machinePoller !== undefined);
    // One look at the shared state a second; polls every 20 s while someone is idle, slowing to 10 minutes in quiet;
    // config.yaml is looked at again every 20 s (a stat when it did not change).
    expect(byDefault.clock.intervals.sort()).toEqual([1_000, 20_000]);
    expect(byDefault.plugin.machinePoller!.pacing).toEqual({ baseMs: 20_000, ceilingMs: 10 * 60_000 });
    const rowOff = setup({ row: { poll: false } });
    await flush();
    expect(rowOff.plugin.machinePoller).toBeUndefined();
    const fileOff = setup({ config: { ...bound(CWD), poll: { enabled: false, intervalMinutes: 10 } } as DidaTodoConfig });
    await flush();
    expect(fileOff.plugin.machinePoller).toBeUndefined();
    const fileOn = setup({ row: { poll: false }, config: { ...bound(CWD), poll: { enabled: true, intervalMinutes: 3, intervalSeconds: 9 } } as DidaTodoConfig });
    await eventually(() => fileOn.plugin.machinePoller !== undefined);
    expect(fileOn.plugin.machinePoller!.pacing).toEqual({ baseMs: 9_000, ceilingMs: 3 * 60_000 });
    // Intervals alone set the pace of the default polling.
    const paced = setup({ row: { pollIntervalMinutes: 7 }, config: { ...bound(CWD), poll: { intervalMinutes: 4 } } as DidaTodoConfig });
    await eventually(() => paced.plugin.machinePoller !== undefined);
    expect(paced.plugin.machinePoller!.pacing).toEqual({ baseMs: 20_000, ceilingMs: 4 * 60_000 });
    await fileOn.host.dispose();
    expect(fileOn.clock.pending()).toBe(0);
  });

  it('config.yaml turning polling off or on, or changing its pace, takes effect while dsh runs, within one poll interval', async () => {
    const t = setup();
    await eventually(() => t.plugin.machinePoller !== undefined);
    const first = t.plugin.machinePoller;
    t.config.value = { ...t.config.value, poll: { enabled: false, intervalMinutes: 10 } };
    await t.clock.advance(20_000);
    await eventually(() => t.plugin.machinePoller === undefined);
    t.config.value = { ...t.config.value, poll: { enabled: true, intervalMinutes: 2 } };
    await t.clock.advance(20_000);
    await eventually(() => t.plugin.machinePoller !== undefined);
    expect(t.plugin.machinePoller).not.toBe(first);
    expect(t.plugin.machinePoller!.pacing).toEqual({ baseMs: 20_000, ceilingMs: 2 * 60_000 });
    const same = t.plugin.machinePoller;
    t.config.value = { ...t.config.value, poll: { enabled: true, intervalMinutes: 5, intervalSeconds: 30 } };
    await t.clock.advance(20_000);
    await eventually(() => t.plugin.machinePoller?.pacing.ceilingMs === 5 * 60_000);
    // A new pace goes to the same poller.
    expect(t.plugin.machinePoller).toBe(same);
    expect(t.plugin.machinePoller!.pacing.baseMs).toBe(30_000);
    await t.host.dispose();
  });

  it('a one-shot run never takes part in polling', async () => {
    const t = setup({ row: { poll: true }, services: { headlessStartup: {} } });
    await flush();
    await flush();
    expect(t.plugin.machinePoller).toBeUndefined();
    expect(t.clock.intervals.filter((ms) => ms === 1_000)).toEqual([]);
  });

  it('resumes an interrupted session by itself at start', async () => {
    const state = emptyEngineState();
    state.works.w1 = work('w1', ['in_progress']);
    state.sessions.old = { touched: ['w1'], currentWork: 'w1', autoAttempts: 0, updatedAt: 0, turnOpenSince: 1_000_000 - 1_000, turnOpenPid: 99, cwd: CWD } as never;
    const t = setup({ state });
    // The scan waits its backoff on the fake clock (once its modules have loaded).
    await eventually(() => t.clock.pending() > 0);
    await t.clock.advance(1_000);
    await eventually(() => t.resume.mock.calls.length > 0);
    expect(t.resume).toHaveBeenCalledTimes(1);
    expect((t.host.agents.get('old') as unknown as FakeAgent).followup).toHaveBeenCalledTimes(1);
  });
});

describe('the process facts handed in', () => {
  it("crash recovery asks the host's liveness check: a turn whose process lives is left alone", async () => {
    const state = emptyEngineState();
    state.works.w1 = work('w1', ['in_progress']);
    state.works.w2 = work('w2', ['in_progress']);
    state.sessions.alive = { touched: ['w1'], currentWork: 'w1', autoAttempts: 0, updatedAt: 0, turnOpenSince: 1_000_000 - 1_000, turnOpenPid: 99, cwd: CWD } as never;
    state.sessions.dead = { touched: ['w2'], currentWork: 'w2', autoAttempts: 0, updatedAt: 0, turnOpenSince: 1_000_000 - 1_000, turnOpenPid: 98, cwd: CWD } as never;
    // Neither pid runs on this machine: only the check handed in can say 99 is alive.
    const t = setup({ state, isAlive: (pid) => pid === 99 });
    await eventually(() => t.clock.pending() > 0);
    await t.clock.advance(1_000);
    await eventually(() => t.resume.mock.calls.length > 0);
    await t.clock.advance(5_000);
    await flush();
    expect(t.resume.mock.calls.map(([args]) => args.resumeSessionId)).toEqual(['dead']);
  });

  it("the machine's poller marks sessions with the pid handed in", async () => {
    const lockDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dida-host-pid-'));
    try {
      const t = setup({ row: { poll: true }, runtime: { account: vi.fn(async () => 'account-1'), paths: { lockDir } } });
      await eventually(() => t.plugin.machinePoller !== undefined);
      await t.create('s1');
      await t.clock.advance(1_000);
      await eventually(() => (t.state.value.sessions.s1 as { livePid?: number } | undefined)?.livePid !== undefined, 200, 5_000);
      expect(t.state.value.sessions.s1).toMatchObject({ livePid: 1, pollReady: 1 });
      await t.host.dispose();
    } finally {
      fs.rmSync(lockDir, { recursive: true, force: true });
    }
  });
});

describe('agent/created and agent/disposed', () => {
  it('a bound session reads its list; an unbound one is shown only the setup tool; a subagent nothing', async () => {
    const t = setup();
    await t.ready();
    const top = await t.create('s1');
    expect(t.engine.sync).toHaveBeenCalledWith('list-1', { looks: 'paced' });
    expect(top.restrict).not.toHaveBeenCalled();
    const loose = await t.create('s2', { cwd: '/elsewhere' });
    expect(loose.restrict).toHaveBeenCalledWith({ deny: ['todo', 'todo_work'] });
    const child = await t.create('c1', { cwd: CWD, delegationDepth: 1 });
    expect(child.restrict).toHaveBeenCalledWith({ deny: ['todo', 'todo_work', 'dida_todo_setup'] });
    expect(t.engine.sync).toHaveBeenCalledTimes(1);
    expect(t.plugin.tracker.get('c1')!.binding).toBeUndefined();
  });

  it('disposal of an agent forgets it and lifts its restriction', async () => {
    const t = setup({ config: bound('/elsewhere') });
    const agent = await t.create('s1');
    t.host.emit('agent/disposed', { agent });
    await flush();
    expect(t.plugin.tracker.get('s1')).toBeUndefined();
    expect(agent.lift).toHaveBeenCalledTimes(1);
  });

  it('a session first seen through its status is tracked then', async () => {
    const t = setup();
    const agent = fakeAgent('late', { cwd: CWD });
    t.host.emit('agent/status', { agent, status: 'running' });
    await eventually(() => (t.state.value.sessions.late as Record<string, unknown> | undefined)?.turnOpenSince !== undefined);
    expect(t.plugin.tracker.get('late')).toBeDefined();
    expect((t.state.value.sessions.late as Record<string, unknown>).turnOpenSince).toBeDefined();
  });
});

describe('agent/status', () => {
  it('running marks the turn open (bound only); idle clears the grant, settles and closes the marker', async () => {
    const t = setup();
    const agent = await t.create('s1');
    t.host.emit('agent/status', { agent, status: 'running' });
    await eventually(() => (t.state.value.sessions.s1 as Record<string, unknown> | undefined)?.turnOpenSince !== undefined);
    expect((t.state.value.sessions.s1 as Record<string, unknown> | undefined)?.turnOpenSince).toBe(t.clock.now());
    const track = t.plugin.tracker.get('s1')!;
    track.queueGranted = true;
    track.grantPending = true;
    t.host.emit('agent/status', { agent, status: 'idle' });
    expect(track.queueGranted).toBe(false);
    expect(track.grantPending).toBe(false);
    await eventually(() => t.engine.settle.mock.calls.length > 0);
    expect(t.engine.settle).toHaveBeenCalledWith('s1');
    expect(agent.runMaintenance).toHaveBeenCalledTimes(1);
    expect((t.state.value.sessions.s1 as Record<string, unknown> | undefined)?.turnOpenSince).toBeUndefined();

    const loose = await t.create('s2', { cwd: '/elsewhere' });
    t.host.emit('agent/status', { agent: loose, status: 'running' });
    await flush();
    expect(t.state.value.sessions.s2).toBeUndefined();
  });

  it('other statuses and subagents change nothing', async () => {
    const t = setup();
    const agent = await t.create('s1');
    const track = t.plugin.tracker.get('s1')!;
    track.queueGranted = true;
    t.host.emit('agent/status', { agent, status: 'compacting' });
    await flush();
    expect(track.queueGranted).toBe(true);
    expect(t.engine.settle).not.toHaveBeenCalled();
    const child = await t.create('c1', { cwd: CWD, parentSession: 's1' });
    t.host.emit('agent/status', { agent: child, status: 'running' });
    t.host.emit('agent/status', { agent: child, status: 'idle' });
    await flush();
    expect(child.runMaintenance).not.toHaveBeenCalled();
    expect(t.state.value.sessions.c1).toBeUndefined();
  });
});

describe('agent/inbox/inserted', () => {
  it('a person\'s message: ends waits, resets the count, reads the list, and the trigger phrase grants the queue', async () => {
    const t = setup();
    const agent = await t.create('s1');
    const track = t.plugin.tracker.get('s1')!;
    t.state.value.sessions.s1 = { touched: [], autoAttempts: 2, updatedAt: 0 };
    const before = track.humanSignal;
    await t.clock.advance(10_000);
    t.host.emit('agent/inbox/inserted', { agent, message: personSays('检查todo') });
    expect(before.signal.aborted).toBe(true);
    expect(track.humanSignal.signal.aborted).toBe(false);
    expect(track.humanAt).toBe(t.clock.now());
    expect(track.queueGranted).toBe(true);
    expect(track.grantPending).toBe(true);
    expect(track.syncing).toBeDefined();
    await flush();
    expect(t.state.value.sessions.s1!.autoAttempts).toBe(0);
  });

  it("the row's own trigger phrases decide, not the default", async () => {
    const t = setup({ row: { queueTriggers: ['开工'] } });
    const agent = await t.create('s1');
    const track = t.plugin.tracker.get('s1')!;
    t.host.emit('agent/inbox/inserted', { agent, message: personSays('检查todo') });
    expect(track.queueGranted).toBe(false);
    t.host.emit('agent/inbox/inserted', { agent, message: personSays('开工') });
    expect(track.queueGranted).toBe(true);
  });

  it('plugin messages and subagents are not a person', async () => {
    const t = setup();
    const agent = await t.create('s1');
    const track = t.plugin.tracker.get('s1')!;
    t.host.emit('agent/inbox/inserted', { agent, message: { ...personSays('检查todo'), source: { kind: 'plugin', plugin: 'x' } } });
    expect(track.humanAt).toBeUndefined();
    expect(track.queueGranted).toBe(false);
    const child = await t.create('c1', { cwd: CWD, origin: 'subagent' });
    t.host.emit('agent/inbox/inserted', { agent: child, message: personSays('检查todo') });
    expect(t.plugin.tracker.get('c1')!.humanAt).toBeUndefined();
    expect(t.plugin.tracker.get('c1')!.queueGranted).toBe(false);
  });
});

describe('session/event', () => {
  it('a completed turn ends the stretch; a failed one does not; the model\'s todo_write is counted', async () => {
    const t = setup();
    const agent = await t.create('s1');
    t.state.value.sessions.s1 = { touched: [], autoAttempts: 2, updatedAt: 0 };
    t.host.emit('session/event', agent.session, { type: 'turn/end', data: { turn: 1, reason: { kind: 'error' } } });
    await flush();
    expect(t.state.value.sessions.s1!.autoAttempts).toBe(2);
    t.host.emit('session/event', agent.session, { type: 'turn/end', data: { turn: 2, reason: { kind: 'completed' } } });
    await flush();
    expect(t.state.value.sessions.s1!.autoAttempts).toBe(0);
    t.host.emit('session/event', agent.session, { type: 'todo/write', data: { todos: [{ content: 'x', status: 'pending' }] } });
    expect(t.plugin.tracker.get('s1')!.modelTodosOpen).toBe(1);
  });

  it('events of unknown sessions and subagents are ignored', async () => {
    const t = setup();
    const child = await t.create('c1', { cwd: CWD, delegationDepth: 2 });
    t.host.emit('session/event', child.session, { type: 'todo/write', data: { todos: [{ content: 'x', status: 'pending' }] } });
    t.host.emit('session/event', { id: 'nobody' }, { type: 'turn/end', data: { reason: { kind: 'completed' } } });
    expect(t.plugin.tracker.get('c1')!.modelTodosOpen).toBe(0);
  });
});

describe('agent/pre-step', () => {
  it('adds the queue after a grant and pending notes, once, to a step that has messages', async () => {
    const t = setup();
    t.engine.queue.mockResolvedValue(queueOf(['w1'], { w1: '修复登录' }));
    const agent = await t.create('s1');
    t.host.emit('agent/inbox/inserted', { agent, message: personSays('检查todo') });
    const track = t.plugin.tracker.get('s1')!;
    track.pendingNotes.push({ id: 'n1', role: 'user', content: [{ type: 'text', text: 'NOTE' }], source: { kind: 'plugin' } });
    const mine = personSays('检查todo');
    const decision = await t.host.waterfall('agent/pre-step', { agent, turn: 1, step: 1, messages: [mine] }, async () => ({ kind: 'enter', messages: [mine] }));
    expect(decision.messages).toHaveLength(3);
    expect(decision.messages[1].content[0].text).toContain('修复登录');
    expect(decision.messages[2].content[0].text).toBe('NOTE');
    const again = await t.host.waterfall('agent/pre-step', { agent, turn: 1, step: 2, messages: [mine] }, async () => ({ kind: 'enter', messages: [mine] }));
    expect(again.messages).toEqual([mine]);
  });

  it('leaves a rejected or empty step, a subagent\'s and an unknown agent\'s step alone', async () => {
    const t = setup();
    const agent = await t.create('s1');
    t.plugin.tracker.get('s1')!.pendingNotes.push({ id: 'n1', role: 'user', content: [{ type: 'text', text: 'NOTE' }], source: { kind: 'plugin' } });
    const reject = { kind: 'reject' };
    expect(await t.host.waterfall('agent/pre-step', { agent, turn: 1 }, async () => reject)).toBe(reject);
    const empty = { kind: 'enter', messages: [] };
    expect(await t.host.waterfall('agent/pre-step', { agent, turn: 1 }, async () => empty)).toBe(empty);
    // A rejected step that carries messages, and a step entered without a message list, are left alone too.
    const rejectWith = { kind: 'reject', messages: [personSays('x')] };
    expect(await t.host.waterfall('agent/pre-step', { agent, turn: 1 }, async () => rejectWith)).toBe(rejectWith);
    const bare = { kind: 'enter' };
    expect(await t.host.waterfall('agent/pre-step', { agent, turn: 1 }, async () => bare)).toBe(bare);
    expect(t.plugin.tracker.get('s1')!.pendingNotes).toHaveLength(1);
    const child = await t.create('c1', { cwd: CWD, delegationDepth: 1 });
    const next = vi.fn(async () => ({ kind: 'enter', messages: [personSays('x')] }));
    expect((await t.host.waterfall('agent/pre-step', { agent: child, turn: 1 }, next)).messages).toHaveLength(1);
    const stranger = fakeAgent('x');
    expect((await t.host.waterfall('agent/pre-step', { agent: stranger, turn: 1 }, next)).messages).toHaveLength(1);
    expect(next).toHaveBeenCalledTimes(2);
  });

  it('publishes the panel of the current Work in the step', async () => {
    const state = emptyEngineState();
    state.works.w1 = work('w1', ['in_progress']);
    state.sessions.s1 = { touched: ['w1'], currentWork: 'w1', autoAttempts: 0, updatedAt: 0 };
    const t = setup({ state });
    const agent = await t.create('s1');
    await t.host.waterfall('agent/pre-step', { agent, turn: 1 }, async () => ({ kind: 'enter', messages: [] }));
    expect(agent.session.append).toHaveBeenCalledWith('todo/write', { todos: [{ content: 'step 0', status: 'in_progress' }] });
  });
});

describe('agent/request-error', () => {
  it('an upstream retry wins; otherwise the continuation decides', async () => {
    const state = emptyEngineState();
    state.works.w1 = work('w1', ['in_progress']);
    state.sessions.s1 = { touched: ['w1'], currentWork: 'w1', autoAttempts: 0, updatedAt: 0 };
    const t = setup({ state });
    const agent = await t.create('s1');
    const upstream = { kind: 'retry', from: 'llm-retry' };
    expect(await t.host.waterfall('agent/request-error', { agent, failure: { code: 'SERVER' } }, async () => upstream)).toBe(upstream);
    expect(t.state.value.sessions.s1!.autoAttempts).toBe(0);
    const pending = t.host.waterfall('agent/request-error', { agent, failure: { code: 'SERVER' }, signal: new AbortController().signal });
    await flush();
    await t.clock.advance(1_000);
    expect(await pending).toEqual({ kind: 'retry' });
  });
});

describe('after a tool call', () => {
  it('an unbind through the setup tool is followed before the call returns', async () => {
    const t = setup();
    await t.ready();
    const agent = await t.create('s1');
    const track = t.plugin.tracker.get('s1')!;
    expect(track.binding?.projectId).toBe('list-1');
    const result = await t.host.tools.find((x) => x.name === 'dida_todo_setup').execute({ action: 'unbind' }, { agent });
    expect(result.code).toBe('ok');
    expect(track.binding).toBeUndefined();
    expect(agent.restrict).toHaveBeenCalledWith({ deny: ['todo', 'todo_work'] });
    expect(t.host.sections[0]!.text).toBeInstanceOf(Function);
  });

  it('a successful todo update ends the failure stretch; a failed one does not; a call without an agent changes nothing', async () => {
    const t = setup();
    const current = work('w1', ['pending']);
    t.engine.currentWork.mockResolvedValue(current);
    (t.engine as Record<string, unknown>).changeSteps = vi.fn(async () => ({ work: current }));
    const agent = await t.create('s1');
    const todo = t.host.tools.find((x) => x.name === 'todo');
    t.state.value.sessions.s1 = { touched: [], autoAttempts: 2, updatedAt: 0 };
    expect((await todo.execute({ action: 'update', updates: [] }, { agent })).code).toBe('invalid_argument');
    expect(t.state.value.sessions.s1!.autoAttempts).toBe(2);
    expect((await todo.execute({ action: 'update', updates: [{ step: 'step 0', status: 'in_progress' }] }, { agent })).code).toBe('ok');
    expect(t.state.value.sessions.s1!.autoAttempts).toBe(0);
    expect((await todo.execute({ action: 'list' }, {})).code).toBe('invalid_argument');
  });
});
