// The `/dida` answers (src/dsh/slash-commands.ts) over the dsh fakes and a scripted engine queue: every reason a
// Work waits, the queue's cap and places, the status line, Dida text made plain, the language, run and the
// pause/resume outcomes that need no Dida write, and failures answered (and logged) rather than thrown.
import { describe, expect, it, vi } from 'vitest';
import { WorkError } from '../../src/core/work/engine-context';
import type { QueueView } from '../../src/core/engine/work-engine';
import type { WorkRecord } from '../../src/core/work/work-state';
import type { AgentTrack } from '../../src/runtime/session/agent-tracker';
import { LiveBinding } from '../../src/runtime/session/live-binding';
import { parseSlash, RUN_NOTE, SLASH_QUEUE_SHOWN, SlashCommands } from '../../src/dsh/slash-commands';
import { StretchCounter } from '../../src/runtime/session/stretch-counter';
import type { DidaTodoConfig } from '../../src/store/config-schema';
import type { Runtime } from '../../src/wiring/runtime';
import { bound, createHarness, fakeAgent, work, type FakeAgent } from '../helpers/dsh-fakes';

const CWD = '/p';

type Skip = { taskId: string; title?: string; priority?: number; reason: string; gate?: { day?: string; reason?: string }; routedTo?: string };

function view(ranked: string[], skipped: Skip[] = []): QueueView {
  const candidate = (taskId: string, title = `Work ${taskId}`, priority = 3) => ({ taskId, title, priority, tags: [] });
  return {
    ranked: ranked.map((key, i) => ({ position: i + 1, candidate: candidate(key) })),
    skipped: skipped.map((s) => ({ candidate: candidate(s.taskId, s.title, s.priority), reason: s.reason, ...(s.gate ? { gate: s.gate } : {}), ...(s.routedTo ? { routedTo: s.routedTo } : {}) })),
    report: { tasks: [] },
  } as unknown as QueueView;
}

function setup(options: { config?: DidaTodoConfig; works?: WorkRecord[]; current?: string; queue?: QueueView; row?: Record<string, unknown> } = {}) {
  const h = createHarness({ config: options.config ?? bound(CWD), ...(options.row ? { row: options.row } : {}) });
  for (const w of options.works ?? []) h.state.value.works[w.taskId] = w;
  if (options.current) h.state.value.sessions.s1 = { touched: [options.current], currentWork: options.current, autoAttempts: 2, updatedAt: 0 };
  else h.state.value.sessions.s1 = { touched: [], autoAttempts: 2, updatedAt: 0 };
  const queue = vi.fn(async (..._args: unknown[]) => options.queue ?? view([]));
  const currentWork = vi.fn(async (sessionId: string) => {
    const key = h.state.value.sessions[sessionId]?.currentWork;
    return key ? h.state.value.works[key] : undefined;
  });
  const engine = { queue, currentWork, deps: { state: h.state, now: () => h.clock.now() } };
  const binding = new LiveBinding(h.deps);
  const counter = new StretchCounter(h.deps);
  const agent: FakeAgent = fakeAgent('s1', { cwd: CWD });
  let track: AgentTrack | undefined = h.deps.tracker.add(agent);
  const slash = new SlashCommands({
    deps: h.deps,
    runtime: {} as Runtime,
    engine: async () => engine as never,
    binding,
    counter,
    track: async () => track,
  });
  const ask = async (rawInput: string) => slash.answer({ agent, rawInput, signal: new AbortController().signal });
  return { ...h, engine, agent, ask, slash, setTrack: (t: AgentTrack | undefined) => (track = t), track: () => track! };
}

const lines = async (t: ReturnType<typeof setup>, input: string) => ((await t.ask(input)).text ?? '').split('\n');

describe('parseSlash', () => {
  it('every subcommand is known; an unknown word keeps its case', () => {
    for (const sub of ['help', 'status', 'queue', 'bind', 'unbind', 'pause', 'resume', 'run']) expect(parseSlash(sub)).toEqual({ sub, argument: '' });
    expect(parseSlash('Run now')).toEqual({ sub: 'run', argument: 'now' });
    expect(parseSlash('\tqueue\n')).toEqual({ sub: 'queue', argument: '' });
    expect(parseSlash('Nope x')).toEqual({ unknown: 'Nope' });
    expect(parseSlash('   ')).toEqual({ sub: 'help', argument: '' });
  });
});

describe('/dida help and unknown commands', () => {
  it('help names the first trigger phrase; an unknown subcommand is an error followed by the help', async () => {
    const t = setup({ row: { queueTriggers: ['go go', 'other'] } });
    const help = await t.ask('help');
    expect(help.kind).toBe('success');
    expect(help.text).toContain('(the same as sending "go go")');
    const unknown = await t.ask('frobnicate');
    expect(unknown.kind).toBe('error');
    expect(unknown.text).toBe(`There is no /dida frobnicate.\n\n${help.text}`);
  });

  it('an unknown word is made plain and cut at 40 characters', async () => {
    const t = setup();
    const answer = await t.ask(`x\u202e${'y'.repeat(60)}`);
    const first = (answer.text ?? '').split('\n')[0]!;
    expect(first).not.toContain('\u202e');
    expect(first.startsWith('There is no /dida x y')).toBe(true);
    expect(first.length).toBeLessThan('There is no /dida .'.length + 42);
  });

  it('answers in the language config.yaml names, else the row locale', async () => {
    const t = setup({ config: { ...bound(CWD), locale: 'zh' } as DidaTodoConfig });
    await t.ask('status');
    expect((await t.ask('help')).text).not.toContain('/dida commands are answered');
    const u = setup();
    expect((await u.ask('help')).text).toContain('/dida commands are answered');
  });
});

describe('/dida queue', () => {
  it('shows executable Works by place and every other Work with its reason', async () => {
    const skipped: Skip[] = [
      { taskId: 'd', title: 'idea', priority: 0, reason: 'draft' },
      { taskId: 'l', reason: 'time_gate', gate: { day: '2026-12-02', reason: 'before_start' } },
      { taskId: 'm', reason: 'time_gate', gate: { day: '2026-11-30', reason: 'missed' } },
      { taskId: 's', reason: 'time_gate', gate: { day: '2026-12-09', reason: 'scheduled' } },
      { taskId: 'n', reason: 'time_gate' },
      { taskId: 'w', reason: 'waiting_for_human' },
      { taskId: 'p', reason: 'waiting_for_human' },
      { taskId: 'c1', reason: 'claimed' },
      { taskId: 'c2', reason: 'claimed' },
      { taskId: 'c3', reason: 'claimed' },
      { taskId: 'r1', reason: 'routed', routedTo: 'backend' },
      { taskId: 'r2', reason: 'routed' },
      { taskId: 'st', reason: 'settled' },
      { taskId: 'cl', reason: 'closed' },
    ];
    const works = [
      work('a', ['completed', 'skipped', 'pending']),
      work('p', ['pending'], { waiting: { reason: 'paused', previousPriority: 3, applied: true, since: 0, pausedBy: 'priority' } as never }),
      work('w', ['pending'], { waiting: { reason: 'a question', previousPriority: 3, applied: true, since: 0 } as never }),
      work('c1', ['pending'], { claim: { holder: 'laptop#abc123', since: 0 } as never }),
      work('c2', ['pending'], { claim: { holder: 'desktop', since: 0 } as never }),
    ];
    const t = setup({ works, queue: view(['a', 'b'], skipped) });
    const out = await lines(t, 'queue');
    expect(out[0]).toBe('Queue of "list": 2 executable of 16 open');
    expect(out.slice(1)).toEqual([
      '1. [medium] Work a 2/3',
      '2. [medium] Work b',
      '– [none] idea — draft (priority none): never picked up by itself',
      '– [medium] Work l — scheduled later today',
      '– [medium] Work m — was scheduled for 2026-11-30 (a missed day is not made up)',
      '– [medium] Work s — scheduled for 2026-12-09',
      '– [medium] Work n — scheduled for ',
      '– [medium] Work w 0/1 — waiting for you',
      '– [medium] Work p 0/1 — paused by you',
      '– [medium] Work c1 0/1 — held by session abc123 on laptop',
      '– [medium] Work c2 0/1 — held by desktop',
      '– [medium] Work c3 — held by another machine or session',
      '– [medium] Work r1 — routed to #backend',
      '– [medium] Work r2 — for a directory with another route tag',
      '– [medium] Work st — every step settled (review pending)',
      '– [medium] Work cl — closed',
    ]);
    expect(t.engine.queue).toHaveBeenCalledWith('list-1', 's1', undefined);
  });

  it(`shows at most ${SLASH_QUEUE_SHOWN} Works, then how many more; an empty list says so`, async () => {
    const keys = Array.from({ length: SLASH_QUEUE_SHOWN + 2 }, (_, i) => `k${i}`);
    const t = setup({ queue: view(keys) });
    const out = await lines(t, 'queue');
    expect(out).toHaveLength(1 + SLASH_QUEUE_SHOWN + 1);
    expect(out[SLASH_QUEUE_SHOWN]).toBe(`${SLASH_QUEUE_SHOWN}. [medium] Work k${SLASH_QUEUE_SHOWN - 1}`);
    expect(out.at(-1)).toBe('… 2 more (dida-todo queue lists them all)');
    const exact = setup({ queue: view(keys.slice(0, SLASH_QUEUE_SHOWN)) });
    expect((await lines(exact, 'queue')).at(-1)).toBe(`${SLASH_QUEUE_SHOWN}. [medium] Work k${SLASH_QUEUE_SHOWN - 1}`);
    const empty = setup();
    expect(await lines(empty, 'queue')).toEqual(['Queue of "list": 0 executable of 0 open', 'The list has no open Works.']);
  });

  it('titles are one plain line, cut at 80 characters; the list label falls back to its id', async () => {
    const long = `a\u0000b\u0007c\u200f${'x'.repeat(100)}`;
    const config = { ...bound(CWD), bindings: [{ cwd: CWD, projectId: 'list-9' }] } as DidaTodoConfig;
    const t = setup({ config, queue: view([], [{ taskId: 'z', title: `line one\nline two`, reason: 'closed' }, { taskId: 'y', title: long, reason: 'closed' }]) });
    const out = await lines(t, 'queue');
    expect(out[0]).toBe('Queue of "list-9": 0 executable of 2 open');
    expect(out[1]).toBe('– [medium] line one line two — closed');
    const shown = out[2]!.slice('– [medium] '.length, -' — closed'.length);
    expect(shown.startsWith('a b c x')).toBe(true);
    expect([...shown].length).toBeLessThanOrEqual(80);
    expect([...shown].length).toBeGreaterThan(70);
  });

  it('a directory with a route tag asks for its routed queue', async () => {
    const config = { ...bound(CWD), bindings: [{ cwd: CWD, projectId: 'list-1', tag: 'web' }, { cwd: '/q', projectId: 'list-1', tag: 'api' }] } as DidaTodoConfig;
    const t = setup({ config });
    await t.ask('queue');
    expect(t.engine.queue.mock.calls[0]![2]).toBeDefined();
    const status = await lines(t, 'status');
    expect(status[0]).toBe('Bound to "list-1" #web: 0 executable of 0 open');
  });

  it('an unbound directory is told how to bind', async () => {
    const t = setup({ config: bound('/elsewhere') });
    for (const sub of ['queue', 'status', 'pause', 'resume', 'run']) {
      const answer = await t.ask(sub);
      expect(answer).toEqual({ kind: 'success', text: '/p is not bound to a Dida list: bind it with /dida bind <list name>.' });
    }
    expect(t.engine.queue).not.toHaveBeenCalled();
  });
});

describe('/dida status', () => {
  it('names the list, the directory, the current Work and how far it got, and what else to ask', async () => {
    const t = setup({ current: 'a', works: [work('a', ['completed', 'skipped', 'pending', 'deleted'], { title: 'Fix login' })], queue: view(['a']) });
    expect(await lines(t, 'status')).toEqual([
      // Its own current Work is not counted as one it would take.
      'Bound to "list": 0 executable of 1 open',
      'Directory: /p',
      'Current Work: "Fix login", 2/3 steps settled',
      '/dida queue shows the queue; /dida run takes work from it.',
    ]);
  });

  it('a waiting or paused current Work says so; a Work not open is no current Work', async () => {
    const waiting = setup({ current: 'a', works: [work('a', ['pending'], { waiting: { reason: 'q', previousPriority: 3, applied: true, since: 0 } as never })] });
    expect((await lines(waiting, 'status'))[2]).toBe('Current Work: "Work a", 0/1 steps settled, waiting for you');
    const paused = setup({ current: 'a', works: [work('a', ['pending'], { waiting: { reason: 'q', previousPriority: 3, applied: true, since: 0, pausedBy: 'command' } as never })] });
    expect((await lines(paused, 'status'))[2]).toBe('Current Work: "Work a", 0/1 steps settled, paused');
    const finalizing = setup({ current: 'a', works: [work('a', ['completed'], { phase: 'finalizing' })] });
    expect((await lines(finalizing, 'status'))[2]).toBe('Current Work: none');
    const none = setup();
    expect((await lines(none, 'status'))[2]).toBe('Current Work: none');
  });
});

describe('/dida run', () => {
  it('grants the idle session the queue, ends the failure stretch, and starts a turn with the note', async () => {
    const t = setup({ row: { queueTriggers: ['check it'] } });
    const answer = await t.ask('run');
    expect(answer).toEqual({ kind: 'success', text: 'On it: the session takes work from the queue now (the same as sending "check it").' });
    expect(t.track().queueGranted).toBe(true);
    expect(t.track().grantPending).toBe(true);
    expect(t.state.value.sessions.s1!.autoAttempts).toBe(0);
    expect(t.agent.followup).toHaveBeenCalledTimes(1);
    expect(t.agent.followup.mock.calls[0]![0].content[0].text).toBe(RUN_NOTE);
    expect(t.agent.followup.mock.calls[0]![0].source).toMatchObject({ kind: 'dida-todo', plugin: 'dida-todo' });
  });

  it('a working session is told to wait, and nothing is granted', async () => {
    const t = setup();
    t.agent.status = 'running';
    expect(await t.ask('run')).toEqual({ kind: 'error', text: 'The session is working; use /dida run once it stops.' });
    expect(t.track().queueGranted).toBe(false);
    expect(t.agent.followup).not.toHaveBeenCalled();
    expect(t.state.value.sessions.s1!.autoAttempts).toBe(2);
  });
});

describe('/dida pause and resume without a Work to change', () => {
  it('no current Work: both are errors; an already waiting Work is said so; a Work not waiting cannot be resumed', async () => {
    const t = setup();
    expect(await t.ask('pause')).toEqual({ kind: 'error', text: 'This session has no current Work to pause.' });
    expect(await t.ask('resume')).toEqual({ kind: 'error', text: 'This session has no current Work.' });
    const waiting = setup({ current: 'a', works: [work('a', ['pending'], { title: 'Fix\nlogin', waiting: { reason: 'q', previousPriority: 3, applied: true, since: 0 } as never })] });
    waiting.agent.status = 'running';
    const cancel = vi.fn();
    waiting.agent.cancel = cancel as never;
    expect(await waiting.ask('pause')).toEqual({ kind: 'success', text: '"Fix login" is already waiting for you; /dida resume carries on.' });
    expect(cancel).not.toHaveBeenCalled();
    const open = setup({ current: 'a', works: [work('a', ['pending'])] });
    expect(await open.ask('resume')).toEqual({ kind: 'error', text: '"Work a" is neither paused nor waiting for you.' });
    expect(open.state.value.sessions.s1!.autoAttempts).toBe(2);
    expect(open.agent.followup).not.toHaveBeenCalled();
  });
});

describe('/dida failures', () => {
  it('a session the host cannot track, or a subagent, has no current Work', async () => {
    const t = setup();
    t.setTrack(undefined);
    expect(await t.ask('status')).toEqual({ kind: 'error', text: 'This session has no current Work.' });
    const u = setup();
    u.track().subagent = true;
    expect(await u.ask('queue')).toEqual({ kind: 'error', text: 'This session has no current Work.' });
    expect(u.engine.queue).not.toHaveBeenCalled();
  });

  it('a failure is logged and answered with its message; a Work error with its words for people', async () => {
    const t = setup();
    t.engine.queue.mockRejectedValueOnce(new Error('Dida answered 503'));
    expect(await t.ask('queue')).toEqual({ kind: 'error', text: 'Not done: Dida answered 503' });
    expect(t.logs).toEqual(['/dida queue failed: Dida answered 503']);
    t.engine.queue.mockRejectedValueOnce(new WorkError('dida_unavailable' as never, 'for the model', 'for people'));
    expect(await t.ask('status')).toEqual({ kind: 'error', text: 'Not done: for people' });
    t.engine.queue.mockRejectedValueOnce(new WorkError('dida_unavailable' as never, 'only for the model'));
    expect(await t.ask('status')).toEqual({ kind: 'error', text: 'Not done: only for the model' });
    expect(t.logs).toHaveLength(3);
  });
});

describe('/dida bind and unbind without Dida', () => {
  it('bind without a name asks for one (also after --create)', async () => {
    const t = setup();
    expect(await t.ask('bind')).toEqual({ kind: 'error', text: 'Which list? Use /dida bind <list name>.' });
    expect(await t.ask('bind --create ')).toEqual({ kind: 'error', text: 'Which list? Use /dida bind <list name>.' });
  });

  it('unbind of an unbound directory, and of one bound through its parent', async () => {
    const t = setup({ config: bound('/elsewhere') });
    expect(await t.ask('unbind')).toEqual({ kind: 'success', text: '/p is not bound.' });
    const child = setup({ config: bound('/') });
    expect(await child.ask('unbind')).toEqual({ kind: 'error', text: '/p is bound through its parent /; unbind it there: dida-todo unbind --cwd /' });
  });
});

describe('/dida answers, exactly', () => {
  it('status and queue answers are successes of several lines', async () => {
    const t = setup({ queue: view(['a']) });
    const status = await t.ask('status');
    expect(status.kind).toBe('success');
    expect(status.text!.split('\n')).toHaveLength(4);
    const queue = await t.ask('queue');
    expect(queue.kind).toBe('success');
    expect(queue.text).toBe('Queue of "list": 1 executable of 1 open\n1. [medium] Work a');
  });

  it('a run of control characters becomes one space, and the ends are trimmed', async () => {
    const t = setup({ queue: view([], [{ taskId: 'z', title: '\u0007 a\u0000\u0007\u200e\u202eb \u0001', reason: 'closed' }]) });
    expect((await lines(t, 'queue'))[1]).toBe('– [medium] a b — closed');
  });

  it('a failure to reach Dida while binding is answered with its own message', async () => {
    const t = setup({ config: bound('/elsewhere') });
    (t.slash as unknown as { parts: { runtime: unknown } }).parts.runtime = { gateway: async () => Promise.reject(new Error('no token configured')), config: t.config };
    expect(await t.ask('bind 工作')).toEqual({ kind: 'error', text: 'Not done: no token configured' });
    expect(t.logs).toEqual(['/dida bind failed: no token configured']);
  });
});
