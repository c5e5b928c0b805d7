// The tool bridge's rate-limit answer and request priority (src/dsh/tool-bridge.ts), the task panel's publish and
// count rules (src/dsh/panel.ts), and which reads of the list a session and a turn start (src/runtime/session/list-sync.ts).
import { describe, expect, it, vi } from 'vitest';
import type { ToolDefinition } from '../../src/core/tools';
import { DidaError } from '../../src/dida/dida-error';
import { currentRequestPriority } from '../../src/dida/request-budget';
import { ListSync, SESSION_SYNC_REUSE_MS } from '../../src/runtime/session/list-sync';
import { Panel, PANEL_SYNC_WAIT_MS } from '../../src/dsh/panel';
import { bridgeTool, RATE_LIMIT_RETRY_HINT_MS, rateLimitedResult } from '../../src/dsh/tool-bridge';
import { createHarness, fakeAgent, flush, work } from '../helpers/dsh-fakes';

const limited = (retryAfterMs?: number) => new DidaError({ code: 'rate_limited', message: '429', status: 429, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });

describe('rateLimitedResult', () => {
  it('tells the model when to call again, in whole seconds (at least 1), with a default when Dida gave no hint', () => {
    expect(rateLimitedResult(limited(12_001))).toEqual({
      code: 'dida_unavailable',
      message: 'Dida is rate-limited on this machine right now, so this call did not finish. Call it again in 13 seconds; a change it already recorded is carried out then.',
    });
    expect(rateLimitedResult(limited(10))?.message).toContain('again in 1 seconds');
    expect(rateLimitedResult(limited(0))?.message).toContain('again in 1 seconds');
    expect(rateLimitedResult(limited())?.message).toContain(`again in ${RATE_LIMIT_RETRY_HINT_MS / 1000} seconds`);
    expect(RATE_LIMIT_RETRY_HINT_MS).toBe(30_000);
  });

  it('is nothing for other failures', () => {
    expect(rateLimitedResult(new DidaError({ code: 'server', message: '503', status: 503 }))).toBeUndefined();
    expect(rateLimitedResult(new Error('rate_limited'))).toBeUndefined();
    expect(rateLimitedResult(undefined)).toBeUndefined();
  });
});

describe('bridgeTool', () => {
  const context = { sessionId: 's', cwd: '/', queueGranted: false } as never;

  it('runs the tool at foreground priority; a rate-limited call is answered and the after-hook still runs', async () => {
    const seen: string[] = [];
    const tool: ToolDefinition = {
      name: 'probe',
      description: 'Probes.',
      parameters: {},
      execute: async () => {
        seen.push(currentRequestPriority());
        throw limited(2_000);
      },
    };
    const after = vi.fn();
    const bridged = bridgeTool(tool, () => context, after);
    const result = await bridged.execute({}, { agent: fakeAgent('s') });
    expect(seen).toEqual(['foreground']);
    expect(result).toEqual({ code: 'dida_unavailable', message: expect.stringContaining('again in 2 seconds') });
    expect(after).toHaveBeenCalledWith(expect.objectContaining({ tool: 'probe', result }));
  });

  it('other failures are thrown, with no after-hook', async () => {
    const tool: ToolDefinition = { name: 'boom', description: 'x', parameters: {}, execute: async () => Promise.reject(new Error('bug')) };
    const after = vi.fn();
    await expect(bridgeTool(tool, () => context, after).execute({}, { agent: fakeAgent('s') })).rejects.toThrow('bug');
    expect(after).not.toHaveBeenCalled();
    // Without an after-hook a call still answers.
    const ok: ToolDefinition = { name: 'ok', description: 'x', parameters: {}, execute: async () => ({ code: 'ok', message: 'fine' }) };
    expect(await bridgeTool(ok, () => context).execute({}, { agent: fakeAgent('s') })).toEqual({ code: 'ok', message: 'fine' });
  });
});

function panelSetup() {
  const h = createHarness();
  h.state.value.works.w1 = work('w1', ['completed', 'in_progress']);
  h.state.value.sessions.s1 = { touched: ['w1'], currentWork: 'w1', autoAttempts: 0, updatedAt: 0 };
  const agent = fakeAgent('s1', { cwd: '/p' });
  const track = h.deps.tracker.add(agent);
  track.binding = { cwd: '/p', projectId: 'list-1' };
  return { ...h, agent, track, panel: new Panel(h.deps) };
}

const published = (agent: ReturnType<typeof fakeAgent>) => agent.session.append.mock.calls.filter((c) => c[0] === 'todo/write');

describe('Panel', () => {
  it('publishes once per turn while unchanged, again in the next turn or when the steps change', async () => {
    const t = panelSetup();
    await t.panel.publish(t.track, 1);
    await t.panel.publish(t.track, 1);
    expect(published(t.agent)).toHaveLength(1);
    expect(published(t.agent)[0]![1]).toEqual({ todos: [{ content: 'step 0', status: 'completed' }, { content: 'step 1', status: 'in_progress' }] });
    await t.panel.publish(t.track, 2);
    expect(published(t.agent)).toHaveLength(2);
    t.state.value.works.w1!.steps[1]!.status = 'completed';
    await t.panel.publish(t.track, 2);
    expect(published(t.agent)).toHaveLength(3);
    expect(t.track.lastPanelTurn).toBe(2);
  });

  it("waits for the person's read at most 5 s, once", async () => {
    const t = panelSetup();
    t.track.syncing = new Promise(() => undefined);
    let done = false;
    const publishing = t.panel.publish(t.track, 1).then(() => (done = true));
    await t.clock.advance(PANEL_SYNC_WAIT_MS - 1);
    expect(done).toBe(false);
    await t.clock.advance(1);
    await publishing;
    expect(t.track.syncing).toBeUndefined();
    expect(published(t.agent)).toHaveLength(1);
    // A read that failed is waited for just the same, without a log.
    t.track.syncing = Promise.reject(new Error('offline'));
    await t.panel.publish(t.track, 2);
    expect(t.logs).toEqual([]);
  });

  it("counts the model's open items; its own mirror and non-lists count nothing; other events are ignored", async () => {
    const t = panelSetup();
    t.panel.observe(t.track, { type: 'todo/write', data: { todos: [{ status: 'pending' }, { status: 'completed' }, { status: 'in_progress' }, {}] } });
    expect(t.track.modelTodosOpen).toBe(3);
    await t.panel.publish(t.track, 1);
    const mirror = published(t.agent)[0]![1];
    t.panel.observe(t.track, { type: 'todo/write', data: mirror });
    expect(t.track.modelTodosOpen).toBe(3);
    t.panel.observe(t.track, { type: 'turn/end', data: { todos: [] } });
    expect(t.track.modelTodosOpen).toBe(3);
    t.panel.observe(t.track, { type: 'todo/write', data: { todos: 'x' } });
    expect(t.track.modelTodosOpen).toBe(0);
  });
});

function syncSetup() {
  const h = createHarness();
  const agent = fakeAgent('s1', { cwd: '/p' });
  const track = h.deps.tracker.add(agent);
  track.binding = { cwd: '/p', projectId: 'list-1' };
  return { ...h, track, sync: new ListSync(h.deps) };
}

describe('ListSync', () => {
  it("the session's read serves a turn that starts before 5 s have passed, not one at 5 s", async () => {
    const t = syncSetup();
    t.sync.start(t.track, 'session');
    const first = t.track.sessionSync!.promise;
    await t.clock.advance(SESSION_SYNC_REUSE_MS - 1);
    t.sync.start(t.track, 'turn');
    expect(t.track.syncing).toBe(first);
    expect(t.track.sessionSync).toBeUndefined();
    expect(t.engine.sync).toHaveBeenCalledTimes(1);

    const u = syncSetup();
    u.sync.start(u.track, 'session');
    await u.clock.advance(SESSION_SYNC_REUSE_MS);
    u.sync.start(u.track, 'turn');
    await flush();
    expect(u.engine.sync).toHaveBeenCalledTimes(2);
    expect(u.engine.sync).toHaveBeenLastCalledWith('list-1', { looks: 'paced' });
    expect(u.track.turnSyncStarted).toBe(true);
  });

  it("a session read after a person's turn read is skipped; a failed read is logged", async () => {
    const t = syncSetup();
    t.engine.sync.mockRejectedValueOnce(new Error('503'));
    t.track.humanAt = t.clock.now();
    t.sync.start(t.track, 'turn');
    t.sync.start(t.track, 'session');
    await flush();
    expect(t.engine.sync).toHaveBeenCalledTimes(1);
    expect(t.logs).toEqual(['syncing the bound Dida list (will retry later) failed: 503']);
  });
});
