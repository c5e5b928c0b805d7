// `/dida` commands that write to Dida (src/dsh/slash-commands.ts) over the real engine and the simulator: pause stops
// a running turn (a turn that cannot be stopped is logged), resume wakes only an idle session, bind names the near
// lists or creates one with --create, unbind says which list it left.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AgentTrack } from '../../src/dsh/agent-tracker';
import { LiveBinding } from '../../src/dsh/live-binding';
import { PAUSE_CANCEL_REASON } from '../../src/dsh/pause-guard';
import { RESUME_NOTE, SlashCommands } from '../../src/dsh/slash-commands';
import { StretchCounter } from '../../src/dsh/stretch-counter';
import type { Runtime } from '../../src/wiring/runtime';
import { bound, createHarness, fakeAgent, type FakeAgent } from '../helpers/dsh-fakes';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';

const S = 'session-1';
const CWD = '/p';
let eh: EngineHarness;

beforeEach(async () => {
  eh = await startEngineHarness();
});
afterEach(async () => {
  await eh.close();
});

async function setup(options: { bindTo?: string } = {}) {
  const list = eh.sim.seedProject({ name: '产品迭代' });
  const task = eh.sim.seedTask({ projectId: list.id, title: '部署', priority: 5, items: [{ title: '申请权限' }, { title: '上线' }] });
  await eh.engine.sync(list.id);
  await eh.engine.switchTo(S, list.id, task.id);
  const h = createHarness({ config: options.bindTo === undefined ? { ...bound(CWD, list.id), bindings: [{ cwd: CWD, projectId: list.id, label: '产品迭代' }] } : bound('/elsewhere') });
  const deps = { ...h.deps, state: eh.deps.state };
  const agent: FakeAgent = fakeAgent(S, { cwd: CWD });
  const cancel = vi.fn();
  agent.cancel = cancel as never;
  const track: AgentTrack = deps.tracker.add(agent);
  const binding = new LiveBinding(deps);
  const slash = new SlashCommands({
    deps,
    runtime: { gateway: async () => eh.gateway, config: h.config } as unknown as Runtime,
    engine: async () => eh.engine,
    binding,
    counter: new StretchCounter(deps),
    track: async () => track,
  });
  const ask = (rawInput: string) => slash.answer({ agent, rawInput, signal: new AbortController().signal });
  return { h, list, task, agent, cancel, track, ask, logs: h.logs };
}

describe('/dida pause and resume', () => {
  it('pause stops a running turn with the hook cause and the Work waits; resume does not wake a running session', async () => {
    const t = await setup();
    t.agent.status = 'running';
    const paused = await t.ask('pause');
    expect(paused).toEqual({ kind: 'success', text: 'Paused "部署": it waits for you in Dida (priority none, and a comment saying where it stopped). /dida resume carries on.' });
    expect(t.cancel).toHaveBeenCalledWith({ kind: 'hook', reason: PAUSE_CANCEL_REASON }, { keepInbox: true });
    expect(eh.sim.getTask(t.task.id)?.priority).toBe(0);
    await eh.deps.state.update((s) => {
      s.sessions[S]!.autoAttempts = 2;
    });
    expect(await t.ask('resume')).toEqual({ kind: 'success', text: 'Resumed "部署"; the session carries on.' });
    expect(eh.sim.getTask(t.task.id)?.priority).toBe(5);
    expect((await eh.state()).sessions[S]!.autoAttempts).toBe(0);
    expect(t.agent.followup).not.toHaveBeenCalled();
  });

  it('pause of an idle session cancels nothing; resume wakes it with the note', async () => {
    const t = await setup();
    await t.ask('pause');
    expect(t.cancel).not.toHaveBeenCalled();
    await t.ask('resume');
    expect(t.agent.followup).toHaveBeenCalledTimes(1);
    expect(t.agent.followup.mock.calls[0]![0].content[0].text).toBe(RESUME_NOTE);
  });

  it('a running turn that cannot be stopped is logged; the pause still holds', async () => {
    const t = await setup();
    t.agent.status = 'running';
    t.cancel.mockImplementation(() => {
      throw new Error('turn already over');
    });
    expect((await t.ask('pause')).kind).toBe('success');
    expect(t.logs).toEqual([`could not stop the turn of ${S}: turn already over`]);
    expect((await eh.state()).works[t.task.id]!.waiting).toBeDefined();
  });
});

describe('/dida bind and unbind', () => {
  it('a name close to an open list is refused with the near names; --create makes the list; the exact name binds', async () => {
    const t = await setup({ bindTo: 'none' });
    eh.sim.seedProject({ name: '产品迭带' });
    const near = await t.ask('bind 产品迭');
    expect(near.kind).toBe('error');
    expect(near.text).toContain('No open list is named 「产品迭」; did you mean ');
    expect(near.text).toContain('「产品迭代」');
    expect(near.text).toContain('send /dida bind --create 产品迭. Nothing was changed.');
    expect(t.h.config.value.bindings.find((b) => b.cwd === CWD)).toBeUndefined();
    const created = await t.ask('bind --create 产品迭');
    expect(created).toEqual({ kind: 'success', text: 'Created the list "产品迭" and bound /p to it.' });
    const exact = await t.ask('bind 产品迭代');
    expect(exact).toEqual({ kind: 'success', text: 'Bound /p to "产品迭代".' });
    expect(t.h.config.value.bindings.find((b) => b.cwd === CWD)?.projectId).toBe(t.list.id);
    expect(t.track.binding?.projectId).toBe(t.list.id);
  });

  it('unbind says which list the directory left', async () => {
    const t = await setup();
    expect(await t.ask('unbind')).toEqual({ kind: 'success', text: 'Unbound /p from "产品迭代".' });
    expect(t.h.config.value.bindings).toEqual([]);
    expect(t.track.binding).toBeUndefined();
  });
});

describe('/dida edges over Dida', () => {
  it('--create counts only as the first word; the new list is named without the spaces around it', async () => {
    const t = await setup({ bindTo: 'none' });
    // Not a flag after the name: the whole argument is the list's name.
    expect(await t.ask('bind 产品迭代x --create')).toEqual({ kind: 'success', text: 'Created the list "产品迭代x --create" and bound /p to it.' });
    expect(eh.sim.listProjects().map((p) => p.name)).toContain('产品迭代x --create');
    expect((await t.ask('bind --create   新清单  ')).kind).toBe('success');
    expect(eh.sim.listProjects().map((p) => p.name)).toContain('新清单');
  });

  it('several near lists are named, joined by "or"', async () => {
    const t = await setup({ bindTo: 'none' });
    eh.sim.seedProject({ name: '产品迭带' });
    const near = await t.ask('bind 产品迭');
    expect(near.text).toMatch(/「产品迭[代带]」 or 「产品迭[代带]」/);
  });

  it('pausing a running turn of an agent that has no cancel logs nothing', async () => {
    const t = await setup();
    t.agent.status = 'running';
    delete t.agent.cancel;
    expect((await t.ask('pause')).kind).toBe('success');
    expect(t.logs).toEqual([]);
  });
});
