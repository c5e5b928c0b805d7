// `/dida` commands that write to Dida (src/dsh/slash-commands.ts) over the real engine and the simulator: pause stops
// a running turn (a turn that cannot be stopped is logged), resume wakes only an idle session, bind names the near
// lists or creates one with --create, unbind says which list it left.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AgentTrack } from '../../src/runtime/session/agent-tracker';
import { LiveBinding } from '../../src/runtime/session/live-binding';
import { PAUSE_CANCEL_REASON } from '../../src/runtime/phone/pause-guard';
import { RESUME_NOTE, SlashCommands } from '../../src/dsh/slash-commands';
import { StretchCounter } from '../../src/runtime/session/stretch-counter';
import type { Runtime } from '../../src/wiring/runtime';
import { bound, createHarness, fakeAgent, type FakeAgent } from '../helpers/dsh-fakes';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';
import { pauseForPerson } from '../../src/core/phone/waiting';
import { personQueue } from '../../src/core/engine/queue-view';
import { whyText } from '../../src/cli/commands/queue';
import { cliText } from '../../src/cli/cli-locale';

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

describe('the queue as the CLI and /dida say it', () => {
  it('the session’s own Work is its current one (no place); paused, waiting, answered and held-draft Works say so, alike in both', async () => {
    const t = await setup();
    const paused = eh.sim.seedTask({ projectId: t.list.id, title: '暂停的', priority: 3 });
    const asked = eh.sim.seedTask({ projectId: t.list.id, title: '问了的', priority: 3 });
    const answered = eh.sim.seedTask({ projectId: t.list.id, title: '答了的', priority: 3 });
    const heldDraft = eh.sim.seedTask({ projectId: t.list.id, title: '拿走的草稿', priority: 0 });
    eh.sim.seedTask({ projectId: t.list.id, title: '下一个', priority: 1 });
    await eh.engine.sync(t.list.id);
    await pauseForPerson(eh.deps, paused.id, { by: 'command' }, () => '已暂停');
    await eh.engine.waitForHuman('session-x', '用哪个颜色？', asked.id);
    await eh.engine.waitForHuman('session-y', '要不要上线？', answered.id);
    eh.sim.addComment(t.list.id, (await eh.state()).works[answered.id]!.waiting!.reminderTaskId!, '要');
    await eh.engine.sync(t.list.id);
    expect((await eh.state()).works[answered.id]?.pendingAnswer).toBeDefined();
    await eh.engine.switchTo('session-z', t.list.id, heldDraft.id);

    // /dida queue in the session holding 部署.
    const slash = await t.ask('queue');
    expect(slash.kind).toBe('success');
    const lines = (slash as { text: string }).text.split('\n');
    expect(lines.find((l) => l.includes('部署'))).toMatch(/^– .*部署 0\/2 — the current Work of this session$/);
    // The answered Work is taken first (its priority came back), then the next one.
    expect(lines.find((l) => l.includes('答了的'))).toMatch(/^1\. /);
    expect(lines.find((l) => l.includes('下一个'))).toMatch(/^2\. /);
    expect(lines.find((l) => l.includes('暂停的'))).toMatch(/paused by you$/);
    expect(lines.find((l) => l.includes('问了的'))).toMatch(/waiting for you$/);
    expect(lines.find((l) => l.includes('拿走的草稿'))).toMatch(/held by session/);

    // The person's CLI view: the same words for the same Works (部署 is held by the session, as the CLI sees it).
    const en = cliText('en');
    const queue = await personQueue(eh.engine, t.list.id);
    const cli = new Map(queue.entries.map((e) => [e.title, whyText(e, en)]));
    expect(cli.get('部署')).toMatch(/^held by session /);
    expect(cli.get('下一个')).toBe('');
    expect(cli.get('暂停的')).toBe('paused by you');
    expect(cli.get('问了的')).toBe('waiting for you (answer in Dida)');
    expect(cli.get('拿走的草稿')).toMatch(/^held by session /);
    expect(queue.entries.find((e) => e.title === '答了的')).toMatchObject({ answered: true, position: expect.any(Number) });
    expect(queue.executable).toBe(2);
    // In the holding session the current Work takes no place: one fewer executable.
    const mine = await personQueue(eh.engine, t.list.id, { sessionId: S });
    expect(mine.entries[0]).toMatchObject({ title: '部署', current: true });
    expect(mine.entries[0]).not.toHaveProperty('position');
    expect(mine.executable).toBe(2);
    expect(mine.entries.filter((e) => e.position !== undefined).map((e) => e.position)).toEqual([1, 2]);
  });
});
