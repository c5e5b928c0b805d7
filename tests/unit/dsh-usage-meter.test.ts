// The usage meter (src/runtime/turns/usage-meter.ts) over fake deps: which session events count, the turn's time, usage before
// a Work goes to the Work the turn takes (and is dropped otherwise), subagents counting toward their root, a
// continuation's share, writes only when there is something to add, and a failed write logged.
import { describe, expect, it } from 'vitest';
import { emptyEngineState } from '../../src/core/work/work-state';
import type { AgentTrack } from '../../src/runtime/session/agent-tracker';
import { UsageMeter } from '../../src/runtime/turns/usage-meter';
import { createHarness, fakeAgent, flush, work } from '../helpers/dsh-fakes';

function setup(options: { current?: string | undefined; closed?: boolean } = {}) {
  const state = emptyEngineState();
  state.works.w1 = work('w1', ['in_progress'], options.closed ? { phase: 'closed' } : {});
  state.works.w2 = work('w2', ['in_progress']);
  state.sessions.s1 = { touched: ['w1'], autoAttempts: 0, updatedAt: 0, ...('current' in options ? (options.current ? { currentWork: options.current } : {}) : { currentWork: 'w1' }) };
  const h = createHarness({ state });
  const meter = new UsageMeter(h.deps);
  const track = h.deps.tracker.add(fakeAgent('s1', { cwd: '/p' }));
  const child = (id: string, parent: string | undefined): AgentTrack => h.deps.tracker.add(fakeAgent(id, { cwd: '/p', ...(parent ? { parentSession: parent } : { delegationDepth: 1 }) }));
  const usage = (key = 'w1') => h.state.value.usage[key]?.rounds['1'];
  return { ...h, meter, track, child, usage };
}

const answer = (inputTokens: number, outputTokens = 0, model = 'deepseek-chat') => ({
  type: 'assistant/message',
  data: { usage: { inputTokens, outputTokens, cacheReadTokens: 0 }, message: { source: { model } } },
});

async function settled(t: ReturnType<typeof setup>, track: AgentTrack = t.track): Promise<void> {
  await t.meter.flushed(track);
  await flush();
}

describe('UsageMeter.observe', () => {
  it("counts each answer's usage and the turn's time toward the session's current Work", async () => {
    const t = setup();
    t.meter.observe(t.track, { type: 'turn/start' });
    await t.clock.advance(2_000);
    t.meter.observe(t.track, answer(100, 20));
    await t.clock.advance(3_000);
    t.meter.observe(t.track, answer(50, 5, 'deepseek-reasoner'));
    await t.clock.advance(1_000);
    t.meter.observe(t.track, { type: 'turn/end' });
    await settled(t);
    expect(t.usage()).toMatchObject({ requests: 2, inputTokens: 150, outputTokens: 25, ms: 6_000, continuations: 0, continuedRequests: 0 });
    expect(t.usage()!.models).toEqual({
      'deepseek-chat': { requests: 1, inputTokens: 100, outputTokens: 20, cacheReadTokens: 0 },
      'deepseek-reasoner': { requests: 1, inputTokens: 50, outputTokens: 5, cacheReadTokens: 0 },
    });
    // After the turn ended its time is no longer counted.
    await t.clock.advance(10_000);
    t.meter.observe(t.track, answer(1));
    await settled(t);
    expect(t.usage()).toMatchObject({ requests: 3, ms: 6_000 });
  });

  it('ignores other events, answers without usage, and an answer whose usage is not an object', async () => {
    const t = setup();
    t.meter.observe(t.track, { type: 'turn/start' });
    const writes = t.state.writes;
    t.meter.observe(t.track, { type: 'todo/write', data: { usage: { inputTokens: 5 } } });
    t.meter.observe(t.track, { type: 'assistant/message', data: {} });
    t.meter.observe(t.track, { type: 'assistant/message', data: { usage: 7 } });
    t.meter.observe(t.track, undefined as never);
    await settled(t);
    expect(t.state.writes).toBe(writes);
    expect(t.usage()).toBeUndefined();
  });

  it('writes nothing for a turn that took no time and made no request', async () => {
    const t = setup();
    t.meter.observe(t.track, { type: 'turn/start' });
    t.meter.observe(t.track, { type: 'turn/end' });
    await settled(t);
    expect(t.state.writes).toBe(0);
    expect(t.usage()).toBeUndefined();
  });

  it("a turn's time is counted only from its start (no turn open, no time)", async () => {
    const t = setup();
    await t.clock.advance(5_000);
    t.meter.observe(t.track, answer(10));
    t.meter.observe(t.track, { type: 'turn/end' });
    await settled(t);
    expect(t.usage()).toMatchObject({ requests: 1, ms: 0 });
  });

  it('usage before the session has a current Work goes to the Work it takes in the same turn', async () => {
    const t = setup({ current: undefined });
    t.meter.observe(t.track, { type: 'turn/start' });
    await t.clock.advance(1_000);
    t.meter.observe(t.track, answer(40));
    await settled(t);
    expect(t.state.value.usage).toEqual({});
    await t.state.update((s) => {
      s.sessions.s1!.currentWork = 'w2';
    });
    await t.clock.advance(500);
    t.meter.observe(t.track, answer(2));
    await settled(t);
    expect(t.usage('w2')).toMatchObject({ requests: 2, inputTokens: 42, ms: 1_500 });
  });

  it('a continuation before the session has a current Work counts toward the Work it takes in the same turn', async () => {
    const t = setup({ current: undefined });
    t.meter.observe(t.track, { type: 'turn/start' });
    t.meter.noteContinuation(t.track);
    await settled(t);
    expect(t.state.value.usage).toEqual({});
    await t.state.update((s) => {
      s.sessions.s1!.currentWork = 'w2';
    });
    t.meter.observe(t.track, answer(7));
    await settled(t);
    expect(t.usage('w2')).toMatchObject({ requests: 1, continuations: 1, continuedRequests: 1, continuedTokens: 7 });
  });

  it('usage of a turn that took no Work is dropped at its end, and what a turn left is dropped at the next start', async () => {
    const t = setup({ current: undefined });
    t.meter.observe(t.track, { type: 'turn/start' });
    t.meter.observe(t.track, answer(40));
    t.meter.observe(t.track, { type: 'turn/end' });
    await settled(t);
    // A later answer outside a turn with a Work present carries only its own usage.
    await t.state.update((s) => {
      s.sessions.s1!.currentWork = 'w1';
    });
    t.meter.observe(t.track, answer(3));
    await settled(t);
    expect(t.usage()).toMatchObject({ requests: 1, inputTokens: 3 });

    const u = setup({ current: undefined });
    u.meter.observe(u.track, answer(40));
    await settled(u);
    u.meter.observe(u.track, { type: 'turn/start' });
    await u.state.update((s) => {
      s.sessions.s1!.currentWork = 'w1';
    });
    u.meter.observe(u.track, answer(5));
    await settled(u);
    expect(u.usage()).toMatchObject({ requests: 1, inputTokens: 5 });
  });

  it('a closed current Work receives nothing', async () => {
    const t = setup({ closed: true });
    t.meter.observe(t.track, { type: 'turn/start' });
    t.meter.observe(t.track, answer(9));
    await settled(t);
    expect(t.state.value.usage).toEqual({});
  });
});

describe('UsageMeter and subagents', () => {
  it("a subagent's answers count toward its root session's Work, its own time does not", async () => {
    const t = setup();
    const child = t.child('c1', 's1');
    const grandchild = t.child('g1', 'c1');
    t.meter.observe(child, { type: 'turn/start' });
    await t.clock.advance(4_000);
    t.meter.observe(child, answer(70));
    t.meter.observe(grandchild, answer(30));
    t.meter.observe(child, { type: 'turn/end' });
    await settled(t);
    expect(t.usage()).toMatchObject({ requests: 2, inputTokens: 100, ms: 0 });
  });

  it('a subagent whose root is not tracked, or that names no parent, records nothing', async () => {
    const t = setup();
    const orphan = t.child('c2', 'gone');
    const loose = t.child('c3', undefined);
    t.meter.observe(orphan, answer(70));
    t.meter.observe(loose, answer(70));
    t.meter.noteContinuation(orphan);
    await settled(t, orphan);
    await settled(t, loose);
    expect(t.state.value.usage).toEqual({});
    expect(t.state.writes).toBe(0);
  });

  it('a chain of subagents deeper than 16 records nothing', async () => {
    const t = setup();
    let parent = 's1';
    let last: AgentTrack = t.track;
    for (let i = 0; i < 17; i++) {
      last = t.child(`d${i}`, parent);
      parent = `d${i}`;
    }
    t.meter.observe(last, answer(5));
    await settled(t);
    expect(t.state.value.usage).toEqual({});
    // One level less still reaches the root.
    const t2 = setup();
    parent = 's1';
    for (let i = 0; i < 16; i++) {
      last = t2.child(`d${i}`, parent);
      parent = `d${i}`;
    }
    t2.meter.observe(last, answer(5));
    await settled(t2);
    expect(t2.usage()).toMatchObject({ requests: 1 });
  });

  it("a subagent's turn/start neither opens the root's time nor drops its pending usage", async () => {
    const t = setup({ current: undefined });
    t.meter.observe(t.track, { type: 'turn/start' });
    await t.clock.advance(1_000);
    t.meter.observe(t.track, answer(10));
    const child = t.child('c1', 's1');
    t.meter.observe(child, { type: 'turn/start' });
    await t.state.update((s) => {
      s.sessions.s1!.currentWork = 'w1';
    });
    t.meter.observe(t.track, { type: 'turn/end' });
    await settled(t);
    expect(t.usage()).toMatchObject({ requests: 1, inputTokens: 10, ms: 1_000 });
  });
});

describe('UsageMeter.noteContinuation', () => {
  it('counts the continuation, and later answers of the turn (and of its subagents) as its share, until the next turn', async () => {
    const t = setup();
    t.meter.observe(t.track, { type: 'turn/start' });
    t.meter.observe(t.track, answer(10));
    t.meter.noteContinuation(t.track);
    t.meter.observe(t.track, answer(20, 2));
    const child = t.child('c1', 's1');
    t.meter.observe(child, answer(5));
    await settled(t);
    expect(t.usage()).toMatchObject({ requests: 3, continuations: 1, continuedRequests: 2, continuedTokens: 27 });
    t.meter.observe(t.track, { type: 'turn/start' });
    t.meter.observe(t.track, answer(1));
    await settled(t);
    expect(t.usage()).toMatchObject({ requests: 4, continuations: 1, continuedRequests: 2 });
  });
});

describe('UsageMeter writes', () => {
  it('a failed write is logged and the next one still goes', async () => {
    const t = setup();
    const update = t.state.update;
    let fail = true;
    t.state.update = ((fn: Parameters<typeof update>[0]) => (fail ? ((fail = false), Promise.reject(new Error('disk full'))) : update(fn))) as typeof update;
    t.meter.observe(t.track, answer(1));
    await settled(t);
    expect(t.logs).toEqual(["could not record the Work's usage: disk full"]);
    t.meter.observe(t.track, answer(2));
    await settled(t);
    expect(t.usage()).toMatchObject({ requests: 1, inputTokens: 2 });
  });

  it('writes go one at a time in event order, held in the track until done; flushed waits for them', async () => {
    const t = setup();
    let release!: () => void;
    const read = t.state.read;
    let held = true;
    t.state.read = (async () => {
      if (held) {
        held = false;
        await new Promise<void>((resolve) => (release = resolve));
      }
      return read();
    }) as typeof read;
    t.meter.observe(t.track, answer(1));
    t.meter.observe(t.track, answer(2));
    await flush();
    expect(t.track.background.size).toBeGreaterThan(0);
    let done = false;
    const flushed = t.meter.flushed(t.track).then(() => (done = true));
    await flush();
    expect(done).toBe(false);
    expect(t.state.writes).toBe(0);
    release();
    await flushed;
    await flush();
    expect(t.usage()).toMatchObject({ requests: 2, inputTokens: 3 });
    expect(t.track.background.size).toBe(0);
    // A track never metered is flushed at once.
    await expect(t.meter.flushed(t.child('c9', 's1'))).resolves.toBeUndefined();
  });
});

