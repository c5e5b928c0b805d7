// The adapter's smaller modules with fakes: the panel mapping and publishing, the queue grant and its bounded payload,
// the live binding and tool set, settle at idle, list reads, the prompt section and what tool calls mean.
import { describe, expect, it, vi } from 'vitest';
import { panelItems } from '../../src/core/tools';
import { emptyEngineState } from '../../src/core/work/work-state';
import { TurnMarkers } from '../../src/runtime/turns/turn-markers';
import { IdleSettle, SETTLE_BUDGET_MS } from '../../src/runtime/turns/idle-settle';
import { ListSync, SESSION_SYNC_REUSE_MS } from '../../src/runtime/session/list-sync';
import { ALL_TOOLS, BOUND_ONLY_TOOLS, LiveBinding } from '../../src/runtime/session/live-binding';
import { Panel, PANEL_SYNC_WAIT_MS } from '../../src/dsh/panel';
import { promptFor, registerPrompt } from '../../src/dsh/prompt';
import { SYSTEM_PROMPT_SECTION } from '../../src/dsh/prompt-text';
import { boundedQueuePayload, GRANT_HEAD, GRANT_WAIT_MS, QUEUE_PAYLOAD_MAX, QUEUE_TITLE_MAX, QueueGrant } from '../../src/runtime/turns/queue-grant';
import { changesBinding, stretchEventOf } from '../../src/dsh/tool-effects';
import { bound, createHarness, fakeAgent, fakeEngine, flush, queueOf, work } from '../helpers/dsh-fakes';

const CWD = '/work/p';

function boundTrack(h: ReturnType<typeof createHarness>, id = 's1') {
  const agent = fakeAgent(id, { cwd: CWD });
  const track = h.deps.tracker.add(agent);
  track.binding = { cwd: CWD, projectId: 'list-1' };
  return { agent, track };
}

describe('panel mapping (panelItems)', () => {
  it('shows skipped as completed, keeps pending/in_progress/completed, hides deleted, and makes names unique', () => {
    const w = work('w', ['pending', 'in_progress', 'completed', 'skipped', 'deleted']);
    w.steps[1]!.title = 'step 0';
    w.steps[4]!.title = '   ';
    expect(panelItems(w)).toEqual([
      { content: 'step 0', status: 'pending' },
      { content: 'step 0 (2)', status: 'in_progress' },
      { content: 'step 2', status: 'completed' },
      { content: 'step 3', status: 'completed' },
    ]);
    expect(panelItems(undefined)).toEqual([]);
  });
});

describe('Panel', () => {
  it('publishes the current Work once per turn and again when it changes', async () => {
    const state = emptyEngineState();
    state.works.w1 = work('w1', ['pending', 'skipped']);
    state.sessions.s1 = { touched: ['w1'], currentWork: 'w1', autoAttempts: 0, updatedAt: 0 };
    const h = createHarness({ state });
    const { agent, track } = boundTrack(h);
    const panel = new Panel(h.deps);
    await panel.publish(track, 1);
    await panel.publish(track, 1);
    expect(agent.session.append).toHaveBeenCalledTimes(1);
    expect(agent.session.append.mock.calls[0]).toEqual(['todo/write', { todos: [{ content: 'step 0', status: 'pending' }, { content: 'step 1', status: 'completed' }] }]);
    await panel.publish(track, 2);
    expect(agent.session.append).toHaveBeenCalledTimes(2);
    h.state.value.works.w1!.steps[0]!.status = 'in_progress';
    await panel.publish(track, 2);
    expect(agent.session.append).toHaveBeenCalledTimes(3);
  });

  it('publishes nothing for unbound or subagent sessions or without a current Work', async () => {
    const h = createHarness();
    const { agent, track } = boundTrack(h);
    const panel = new Panel(h.deps);
    await panel.publish(track, 1);
    track.binding = undefined;
    await panel.publish(track, 1);
    expect(agent.session.append).not.toHaveBeenCalled();
  });

  it('waits (bounded) for the read a person\'s message started', async () => {
    const state = emptyEngineState();
    state.works.w1 = work('w1', ['pending']);
    state.sessions.s1 = { touched: ['w1'], currentWork: 'w1', autoAttempts: 0, updatedAt: 0 };
    const h = createHarness({ state });
    const { agent, track } = boundTrack(h);
    track.syncing = new Promise(() => undefined);
    const done = new Panel(h.deps).publish(track, 1);
    await flush();
    expect(agent.session.append).not.toHaveBeenCalled();
    await h.clock.advance(PANEL_SYNC_WAIT_MS);
    await done;
    expect(agent.session.append).toHaveBeenCalledTimes(1);
    expect(track.syncing).toBeUndefined();
  });

  it('counts the model\'s own open todo_write items and ignores its own mirror', () => {
    const h = createHarness();
    const { track } = boundTrack(h);
    const panel = new Panel(h.deps);
    panel.observe(track, { type: 'todo/write', data: { todos: [{ content: 'a', status: 'pending' }, { content: 'b', status: 'completed' }, { content: 'c', status: 'in_progress' }] } });
    expect(track.modelTodosOpen).toBe(2);
    track.lastPanel = JSON.stringify([{ content: 'x', status: 'pending' }]);
    panel.observe(track, { type: 'todo/write', data: { todos: [{ content: 'x', status: 'pending' }] } });
    expect(track.modelTodosOpen).toBe(2);
    panel.observe(track, { type: 'tool/result', data: {} });
    expect(track.modelTodosOpen).toBe(2);
    panel.observe(track, { type: 'todo/write', data: { todos: [] } });
    expect(track.modelTodosOpen).toBe(0);
  });
});

describe('boundedQueuePayload', () => {
  it('lists the Works in rank order with their ids, fenced', () => {
    const text = boundedQueuePayload(queueOf(['w1', 'w2'], { w1: 'First', w2: 'Second' }).ranked, new Date(0));
    expect(text.indexOf('First')).toBeLessThan(text.indexOf('Second'));
    expect(text).toContain('id w1');
    expect(text.match(/<<<DIDA_DATA label=title/g)).toHaveLength(2);
    expect(text).not.toContain('more executable');
  });

  it('stays within the budget: titles capped, as many Works as fit, then a visible "… (N more)" line', () => {
    const keys = Array.from({ length: 60 }, (_, i) => `w${i}`);
    const titles = Object.fromEntries(keys.map((k) => [k, `${k} ${'标题'.repeat(400)}`]));
    const text = boundedQueuePayload(queueOf(keys, titles).ranked, new Date(0));
    expect(text.length).toBeLessThanOrEqual(QUEUE_PAYLOAD_MAX);
    const shown = (text.match(/<<<DIDA_DATA label=title/g) ?? []).length;
    expect(shown).toBeGreaterThan(5);
    expect(shown).toBeLessThan(60);
    expect(text).toContain(`… (${60 - shown} more executable Works`);
    // Each title is cut to the cap.
    expect(text).not.toContain('标题'.repeat(QUEUE_TITLE_MAX));
    // One more Work would not have fitted.
    expect(boundedQueuePayload(queueOf(keys.slice(0, shown + 1), titles).ranked, new Date(0), 1_000_000).length).toBeGreaterThan(QUEUE_PAYLOAD_MAX - 200);
  });

  it('names one left-out Work in the singular, and says so when nothing is executable', () => {
    const titles = { a: 'x'.repeat(100), b: 'y'.repeat(100) };
    const one = boundedQueuePayload(queueOf(['a', 'b'], titles).ranked, new Date(0), 700);
    expect(one).toContain('… (1 more executable Work:');
    expect(boundedQueuePayload([], new Date(0))).toContain('Nothing is executable right now.');
  });

  it('a budget too small for anything still returns at most the budget', () => {
    expect(boundedQueuePayload(queueOf(['a']).ranked, new Date(0), 50).length).toBeLessThanOrEqual(50);
  });
});

describe('QueueGrant', () => {
  it('only the exact trigger phrase grants, and the next pre-step gets the queue once', async () => {
    const engine = fakeEngine({ queue: vi.fn(async () => queueOf(['w1'], { w1: '写周报' })) });
    const h = createHarness({ engine });
    const { track } = boundTrack(h);
    const grant = new QueueGrant(h.deps, () => ['检查todo']);
    expect(grant.onHumanMessage(track, '请检查todo并修复')).toBe(false);
    expect(track.queueGranted).toBe(false);
    expect(await grant.messages(track)).toEqual([]);
    expect(grant.onHumanMessage(track, ' 检查TODO ')).toBe(true);
    expect(track.queueGranted).toBe(true);
    const [message] = await grant.messages(track);
    expect(message!.source).toMatchObject({ kind: 'dida-todo', plugin: 'dida-todo' });
    const text = message!.content[0]!.text;
    expect(text.startsWith(GRANT_HEAD)).toBe(true);
    expect(text).toContain('写周报');
    expect(engine.queue).toHaveBeenCalledWith('list-1', undefined, undefined);
    expect(await grant.messages(track)).toEqual([]);
  });

  it('asks for the queue as routed to the directory when the list has tagged bindings', async () => {
    const engine = fakeEngine({ queue: vi.fn(async () => queueOf(['w1'])) });
    const h = createHarness({ engine });
    const { track } = boundTrack(h);
    track.binding = { cwd: CWD, projectId: 'list-1', tag: 'web' };
    h.config.value = { ...h.config.value, bindings: [track.binding, { cwd: '/elsewhere', projectId: 'list-1', tag: 'api' }] };
    const grant = new QueueGrant(h.deps, () => ['go']);
    grant.onHumanMessage(track, 'go');
    await grant.messages(track);
    expect(engine.queue).toHaveBeenCalledWith('list-1', undefined, { own: 'web', others: ['api'] });
  });

  it('falls back to a bare note when the queue cannot be read in time or at all', async () => {
    const engine = fakeEngine({ queue: vi.fn(() => new Promise(() => undefined)) });
    const h = createHarness({ engine });
    const { track } = boundTrack(h);
    const grant = new QueueGrant(h.deps, () => ['go']);
    grant.onHumanMessage(track, 'go');
    const pending = grant.messages(track);
    await flush();
    await h.clock.advance(GRANT_WAIT_MS);
    const [slow] = await pending;
    expect(slow!.content[0]!.text).toContain('could not be read');

    engine.queue.mockImplementation(() => Promise.reject(new Error('offline')));
    grant.onHumanMessage(track, 'go');
    const [failed] = await grant.messages(track);
    expect(failed!.content[0]!.text).toContain('could not be read');
  });
});

describe('LiveBinding', () => {
  it('follows config.yaml: bind shows the tools and starts a read, unbind hides them again', async () => {
    const h = createHarness();
    const onBound = vi.fn();
    const binding = new LiveBinding(h.deps, onBound);
    const agent = fakeAgent('s1', { cwd: CWD });
    const track = h.deps.tracker.add(agent);
    binding.apply(track);
    expect(track.binding).toBeUndefined();
    expect(agent.restrict).toHaveBeenCalledWith({ deny: [...BOUND_ONLY_TOOLS] });
    h.config.value = bound(CWD);
    await binding.refresh();
    expect(track.binding?.projectId).toBe('list-1');
    expect(agent.lift).toHaveBeenCalledTimes(1);
    expect(onBound).toHaveBeenCalledTimes(1);
    await binding.refresh();
    expect(onBound).toHaveBeenCalledTimes(1);
    expect(agent.restrict).toHaveBeenCalledTimes(1);
    h.config.value = bound(CWD, 'list-2');
    await binding.refresh();
    expect(onBound).toHaveBeenCalledTimes(2);
    h.config.value = bound('/elsewhere');
    await binding.refresh();
    expect(track.binding).toBeUndefined();
    expect(agent.restrict).toHaveBeenCalledTimes(2);
  });

  it('hides all three tools from a subagent, and keeps the last bindings when config.yaml cannot be read', async () => {
    const h = createHarness({ config: bound(CWD) });
    const binding = new LiveBinding(h.deps);
    const child = fakeAgent('child', { cwd: CWD, parentSession: 's1' });
    const track = h.deps.tracker.add(child);
    await binding.refresh();
    expect(track.binding).toBeUndefined();
    expect(child.restrict).toHaveBeenCalledWith({ deny: [...ALL_TOOLS] });
    const top = h.deps.tracker.add(fakeAgent('s1', { cwd: CWD }));
    await binding.refresh();
    expect(top.binding).toBeDefined();
    h.config.read = async () => Promise.reject(new Error('config.yaml: bad'));
    expect(await binding.refresh()).toBeUndefined();
    expect(top.binding).toBeDefined();
    expect(h.logs).toContain('config.yaml: bad');
  });

  it('a host without per-agent tool restriction is tolerated, and a failing restrict is logged', async () => {
    const h = createHarness();
    const binding = new LiveBinding(h.deps);
    const plain = fakeAgent('s1', { cwd: CWD });
    delete plain.ctx;
    binding.apply(h.deps.tracker.add(plain));
    const broken = fakeAgent('s2', { cwd: CWD });
    broken.restrict.mockImplementation(() => {
      throw new Error('unknown global tool');
    });
    binding.apply(h.deps.tracker.add(broken));
    expect(h.logs.some((l) => l.includes('unknown global tool'))).toBe(true);
  });
});

describe('IdleSettle', () => {
  function setup(config = bound(CWD)) {
    const state = emptyEngineState();
    state.sessions.s1 = { touched: [], autoAttempts: 0, updatedAt: 0, turnOpenSince: 5 } as never;
    const h = createHarness({ config, state });
    const binding = new LiveBinding(h.deps);
    const settle = new IdleSettle(h.deps, binding, new TurnMarkers(h.deps));
    const agent = fakeAgent('s1', { cwd: CWD });
    const track = h.deps.tracker.add(agent);
    return { ...h, settle, agent, track };
  }

  it('settles the session\'s Works in its maintenance slot and closes the turn marker', async () => {
    const t = setup();
    t.settle.onIdle(t.track);
    await flush();
    expect(t.agent.runMaintenance).toHaveBeenCalledTimes(1);
    expect(t.engine.settle).toHaveBeenCalledWith('s1');
    expect(t.state.value.sessions.s1?.turnOpenSince).toBeUndefined();
  });

  it('a settle that gets to the marker after the next turn started leaves that turn’s marker alone', async () => {
    const t = setup();
    // The session went idle, and a person's message started the next turn before the settle ran.
    t.agent.status = 'running';
    await t.settle.settle(t.track);
    expect(t.state.value.sessions.s1?.turnOpenSince).toBe(5);
    t.agent.status = 'idle';
    await t.settle.settle(t.track);
    expect(t.state.value.sessions.s1?.turnOpenSince).toBeUndefined();
  });

  it('uses the live binding: bound since the session started → settles; unbound → only closes the marker', async () => {
    const t = setup(bound('/elsewhere'));
    await t.settle.settle(t.track);
    expect(t.engine.settle).not.toHaveBeenCalled();
    expect(t.state.value.sessions.s1?.turnOpenSince).toBeUndefined();
    t.config.value = bound(CWD);
    await t.settle.settle(t.track);
    expect(t.engine.settle).toHaveBeenCalledTimes(1);
  });

  it('logs a failed finalization, settles in the background when the maintenance slot is taken, and is bounded', async () => {
    const t = setup();
    t.engine.settle.mockResolvedValue([{ key: 'w', outcome: { status: 'failed', message: 'Dida 503' } }] as never);
    t.agent.runMaintenance.mockImplementation(() => {
      throw new Error('busy');
    });
    t.settle.onIdle(t.track);
    await flush();
    expect(t.engine.settle).toHaveBeenCalledTimes(1);
    expect(t.logs.some((l) => l.includes('Dida 503'))).toBe(true);
    const slow = setup();
    slow.engine.settle.mockImplementation(() => new Promise(() => undefined));
    slow.settle.onIdle(slow.track);
    await flush();
    const job = slow.agent.runMaintenance.mock.results[0]!.value as Promise<unknown>;
    let finished = false;
    void job.then(() => (finished = true));
    await slow.clock.advance(SETTLE_BUDGET_MS - 1);
    expect(finished).toBe(false);
    await slow.clock.advance(1);
    expect(finished).toBe(true);
  });
});

describe('ListSync', () => {
  it('the session\'s read serves a turn starting within 5 s; later turns read again; unbound reads nothing', async () => {
    const h = createHarness();
    const { track } = boundTrack(h);
    const sync = new ListSync(h.deps);
    sync.start(track, 'session');
    expect(h.engine.sync).toHaveBeenCalledTimes(0);
    await flush();
    expect(h.engine.sync).toHaveBeenCalledTimes(1);
    await h.clock.advance(SESSION_SYNC_REUSE_MS - 1);
    sync.start(track, 'turn');
    await flush();
    expect(h.engine.sync).toHaveBeenCalledTimes(1);
    expect(track.syncing).toBeDefined();
    sync.start(track, 'turn');
    await flush();
    expect(h.engine.sync).toHaveBeenCalledTimes(2);
    expect(h.engine.sync).toHaveBeenCalledWith('list-1', { looks: 'paced' });
    // A session read after a turn's read is not needed.
    sync.start(track, 'session');
    await flush();
    expect(h.engine.sync).toHaveBeenCalledTimes(2);
    track.binding = undefined;
    sync.start(track, 'turn');
    await flush();
    expect(h.engine.sync).toHaveBeenCalledTimes(2);
  });

  it('a read that starts once the binding is known, after a person already wrote, is their turn\'s: the next message reads again', async () => {
    const h = createHarness();
    const { track } = boundTrack(h);
    const binding = track.binding;
    const sync = new ListSync(h.deps);
    // The first prompt arrives before config.yaml is read (no binding yet): its turn cannot read.
    track.binding = undefined;
    track.humanAt = h.clock.now();
    sync.start(track, 'turn');
    track.binding = binding;
    sync.start(track, 'session');
    await flush();
    expect(h.engine.sync).toHaveBeenCalledTimes(1);
    expect(track.sessionSync).toBeUndefined();
    expect(track.syncing).toBeDefined();
    // The person's next message, a second later, reads the list again (it may have changed since).
    await h.clock.advance(1_000);
    sync.start(track, 'turn');
    await flush();
    expect(h.engine.sync).toHaveBeenCalledTimes(2);
  });

  it('a stale session read is not reused', async () => {
    const h = createHarness();
    const { track } = boundTrack(h);
    const sync = new ListSync(h.deps);
    sync.start(track, 'session');
    await h.clock.advance(SESSION_SYNC_REUSE_MS);
    sync.start(track, 'turn');
    await flush();
    expect(h.engine.sync).toHaveBeenCalledTimes(2);
  });
});

describe('prompt section', () => {
  it('is the Dida rules for a bound top-level session and empty otherwise; registered once', () => {
    const h = createHarness();
    const { track } = boundTrack(h);
    expect(promptFor(h.deps.tracker, 's1')).toBe(SYSTEM_PROMPT_SECTION);
    expect(promptFor(h.deps.tracker, undefined)).toBe('');
    expect(promptFor(h.deps.tracker, 'unknown')).toBe('');
    track.subagent = true;
    expect(promptFor(h.deps.tracker, 's1')).toBe('');
    track.subagent = false;
    track.binding = undefined;
    expect(promptFor(h.deps.tracker, 's1')).toBe('');
    const section = vi.fn(() => () => undefined);
    registerPrompt({ section }, h.deps.tracker);
    expect(section).toHaveBeenCalledTimes(1);
    expect((section.mock.calls[0] as unknown[])[0]).toMatchObject({ name: 'dida-todo', order: 450 });
    registerPrompt(undefined, h.deps.tracker);
  });
});

describe('tool effects', () => {
  it('a successful bind or unbind changes the binding; status and failures do not', () => {
    expect(changesBinding({ tool: 'dida_todo_setup', args: { action: 'bind' }, result: { code: 'ok', message: '' } })).toBe(true);
    expect(changesBinding({ tool: 'dida_todo_setup', args: { action: 'unbind' }, result: { code: 'ok', message: '' } })).toBe(true);
    expect(changesBinding({ tool: 'dida_todo_setup', args: { action: 'status' }, result: { code: 'ok', message: '' } })).toBe(false);
    expect(changesBinding({ tool: 'dida_todo_setup', args: { action: 'bind' }, result: { code: 'list_missing', message: '' } })).toBe(false);
    expect(changesBinding({ tool: 'todo', args: { action: 'bind' }, result: { code: 'ok', message: '' } })).toBe(false);
  });

  it('a successful todo create or update is progress; reads and failures are not', () => {
    expect(stretchEventOf({ tool: 'todo', args: { action: 'update' }, result: { code: 'ok', message: '' } })).toEqual({ kind: 'step_changed' });
    expect(stretchEventOf({ tool: 'todo', args: { action: 'create' }, result: { code: 'ok', message: '' } })).toEqual({ kind: 'step_changed' });
    expect(stretchEventOf({ tool: 'todo', args: { action: 'list' }, result: { code: 'ok', message: '' } })).toBeUndefined();
    expect(stretchEventOf({ tool: 'todo', args: { action: 'update' }, result: { code: 'missing_resolution', message: '' } })).toBeUndefined();
    expect(stretchEventOf({ tool: 'todo_work', args: { action: 'update' }, result: { code: 'ok', message: '' } })).toBeUndefined();
  });
});

describe('module edges', () => {
  it('the panel: a subagent is never published, a session without a record logs nothing, odd events count nothing', async () => {
    const state = emptyEngineState();
    state.works.w1 = work('w1', ['pending']);
    state.sessions.s1 = { touched: ['w1'], currentWork: 'w1', autoAttempts: 0, updatedAt: 0 };
    const h = createHarness({ state });
    const { agent, track } = boundTrack(h);
    track.subagent = true;
    const panel = new Panel(h.deps);
    await panel.publish(track, 1);
    expect(agent.session.append).not.toHaveBeenCalled();
    const other = boundTrack(h, 'no-record');
    await panel.publish(other.track, 1);
    expect(h.logs).toEqual([]);
    track.modelTodosOpen = 3;
    track.lastPanel = '[]';
    panel.observe(track, { type: 'todo/write' });
    expect(track.modelTodosOpen).toBe(0);
    panel.observe(track, undefined as never);
    expect(track.modelTodosOpen).toBe(0);
    agent.session.append.mockImplementation(() => {
      throw new Error('closed');
    });
    track.subagent = false;
    await panel.publish(track, 2);
    expect(h.logs).toContain('could not update the task panel: closed');
  });

  it('the live binding: no spurious lift errors, no log without a tool registry, and a move to a deeper binding re-reads', async () => {
    const h = createHarness({ config: bound('/work') });
    const onBound = vi.fn();
    const binding = new LiveBinding(h.deps, onBound);
    const agent = fakeAgent('s1', { cwd: CWD });
    const track = h.deps.tracker.add(agent);
    binding.apply(track);
    await binding.refresh();
    expect(track.binding?.cwd).toBe('/work');
    expect(onBound).toHaveBeenCalledTimes(1);
    h.config.value = bound(CWD);
    await binding.refresh();
    expect(track.binding?.cwd).toBe(CWD);
    expect(onBound).toHaveBeenCalledTimes(2);
    expect(binding.config).toEqual(h.config.value);
    const plain = fakeAgent('s2', { cwd: '/nowhere' });
    delete plain.ctx;
    binding.apply(h.deps.tracker.add(plain));
    expect(h.logs).toEqual([]);
    const stuck = fakeAgent('s3', { cwd: '/nowhere' });
    stuck.restrict.mockImplementation(() => () => {
      throw new Error('gone');
    });
    const stuckTrack = h.deps.tracker.add(stuck);
    binding.apply(stuckTrack);
    h.config.value = bound('/nowhere');
    await binding.refresh();
    expect(h.logs).toContain('could not lift the tool restriction: gone');
    expect(stuckTrack.restriction).toBeUndefined();
  });

  it('the queue grant: an unbound session gets the bare note without reading, and a failed read is logged', async () => {
    const engine = fakeEngine({ queue: vi.fn(async () => Promise.reject(new Error('offline'))) });
    const h = createHarness({ engine });
    const { track } = boundTrack(h);
    const grant = new QueueGrant(h.deps, () => ['go']);
    grant.onHumanMessage(track, 'go');
    await grant.messages(track);
    expect(h.logs).toContain('could not read the queue for the person\'s request: offline');
    track.binding = undefined;
    grant.onHumanMessage(track, 'go');
    const [bare] = await grant.messages(track);
    expect(bare!.content[0]!.text).toContain('could not be read');
    expect(engine.queue).toHaveBeenCalledTimes(1);
  });

  it('settle logs only failed finalizations', async () => {
    const state = emptyEngineState();
    const h = createHarness({ config: bound(CWD), state });
    h.engine.settle.mockResolvedValue([{ key: 'w', outcome: { status: 'accepted' } }] as never);
    const settle = new IdleSettle(h.deps, new LiveBinding(h.deps), new TurnMarkers(h.deps));
    const track = h.deps.tracker.add(fakeAgent('s1', { cwd: CWD }));
    await settle.settle(track);
    expect(h.engine.settle).toHaveBeenCalledTimes(1);
    expect(h.logs).toEqual([]);
    h.lifetime.abort();
    await settle.settle(track);
    expect(h.engine.settle).toHaveBeenCalledTimes(1);
  });

  it('list reads: an unbound start logs nothing and leaves the track as it was', async () => {
    const h = createHarness();
    const { track } = boundTrack(h);
    track.binding = undefined;
    new ListSync(h.deps).start(track, 'session');
    await flush();
    expect(h.logs).toEqual([]);
    expect(track.sessionSync).toBeUndefined();
  });
});
