// The progress-comment outbox on its own, over the real HTTP gateway and the simulator: how entries are coalesced,
// when a flush posts, and that each comment appears in Dida exactly once through lost answers, refusals and retries.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { coalesce, DEFAULT_PROGRESS_WINDOW_MS, dropComments, flushWorkOutbox, LONG_WAIT_MS, longWaiting, MAX_POST_ATTEMPTS, queueComment, retryDelayMs, RETRY_MAX_MS } from '../../src/core/work/outbox';
import { pruneState, PRUNE_AFTER_MS } from '../../src/core/engine/sync-prune';
import { MAX_COMMENT_LENGTH } from '../../src/core/text/text-guard';
import { emptyEngineState, type OutboxEntry } from '../../src/core/work/work-state';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';

const entry = (id: string, text: string, extra: Partial<OutboxEntry> = {}): OutboxEntry => ({
  id,
  projectId: 'p',
  taskId: 't',
  workKey: 't',
  text,
  createdAt: 0,
  uncertain: false,
  attempts: 0,
  kind: 'note',
  ...extra,
});

describe('coalescing', () => {
  it('a step’s start followed by its finish goes out as the finish; the start’s id rides on the first post', () => {
    const posts = coalesce([
      entry('a', '开始：迁移', { kind: 'started', stepId: 's1' }),
      entry('b', '开始：校验', { kind: 'started', stepId: 's2' }),
      entry('c', '已完成：迁移', { kind: 'completed', stepId: 's1' }),
      entry('d', '已跳过：上线', { kind: 'skipped', stepId: 's3' }),
    ]);
    expect(posts).toEqual([{ text: '开始：校验\n\n已完成：迁移\n\n已跳过：上线', ids: ['b', 'c', 'd', 'a'] }]);
  });

  it('a start whose step only went back is still posted; a note never covers a start', () => {
    const posts = coalesce([entry('a', '开始：迁移', { kind: 'started', stepId: 's1' }), entry('b', '说明', { kind: 'note', stepId: 's1' })]);
    expect(posts).toEqual([{ text: '开始：迁移\n\n说明', ids: ['a', 'b'] }]);
  });

  it('joins up to exactly Dida’s comment length and starts a new comment one character past it', () => {
    const half = 'x'.repeat((MAX_COMMENT_LENGTH - 2) / 2);
    expect(coalesce([entry('a', half), entry('b', half)])).toEqual([{ text: `${half}\n\n${half}`, ids: ['a', 'b'] }]);
    const over = coalesce([entry('a', half), entry('b', `${half}y`)]);
    expect(over.map((p) => p.ids)).toEqual([['a'], ['b']]);
    expect(over[1]!.text).toBe(`${half}y`);
  });

  it('a start covered by a finish in a later comment rides on the first one; nothing at all gives no comment', () => {
    const big = 'x'.repeat(MAX_COMMENT_LENGTH - 2);
    const posts = coalesce([entry('a', big), entry('s', '开始', { kind: 'started', stepId: 's1' }), entry('c', '完成', { kind: 'completed', stepId: 's1' })]);
    expect(posts.map((p) => p.ids)).toEqual([['a', 's'], ['c']]);
    expect(coalesce([])).toEqual([]);
  });
});

describe('queueing', () => {
  it('a queued comment is a note unless told otherwise, not in flight and not tried yet; dropping takes back only the named ones', () => {
    const state = emptyEngineState();
    const a = queueComment(state, { projectId: 'p', taskId: 't', workKey: 't', text: 'A', createdAt: 1 });
    const b = queueComment(state, { projectId: 'p', taskId: 't', workKey: 't', text: 'B', createdAt: 2, kind: 'completed', stepId: 's1' });
    expect(a).not.toBe(b);
    expect(state.outbox).toEqual([
      { kind: 'note', projectId: 'p', taskId: 't', workKey: 't', text: 'A', createdAt: 1, id: a, uncertain: false, attempts: 0 },
      { kind: 'completed', stepId: 's1', projectId: 'p', taskId: 't', workKey: 't', text: 'B', createdAt: 2, id: b, uncertain: false, attempts: 0 },
    ]);
    dropComments(state, new Set([a]));
    expect(state.outbox.map((e) => e.id)).toEqual([b]);
    dropComments(state, new Set());
    expect(state.outbox.map((e) => e.id)).toEqual([b]);
  });
});

describe('flushing', () => {
  let h: EngineHarness;
  let projectId: string;
  let taskId: string;
  let otherTaskId: string;
  let logs: string[];

  beforeEach(async () => {
    h = await startEngineHarness();
    projectId = h.sim.seedProject({ name: '智能体工作' }).id;
    taskId = h.sim.seedTask({ projectId, title: '任务' }).id;
    otherTaskId = h.sim.seedTask({ projectId, title: '另一个' }).id;
    logs = [];
    h.deps.log = (line) => logs.push(line);
  });
  afterEach(async () => {
    await h.close();
  });

  const queue = (text: string, extra: { createdAt?: number; task?: string; kind?: OutboxEntry['kind']; stepId?: string } = {}): Promise<unknown> =>
    h.deps.state.update((state) => {
      const task = extra.task ?? taskId;
      queueComment(state, { projectId, taskId: task, workKey: task, text, createdAt: extra.createdAt ?? h.clock.now, kind: extra.kind, stepId: extra.stepId });
    });
  const comments = (task = taskId): string[] => h.sim.listComments(task).map((c) => c.title);
  const waiting = async (task = taskId): Promise<OutboxEntry[]> => (await h.state()).outbox.filter((e) => e.workKey === task);

  it('nothing waiting: no request at all', async () => {
    h.sim.resetCounters();
    expect(await flushWorkOutbox(h.deps, taskId)).toBe(0);
    expect(h.sim.totalRequests()).toBe(0);
  });

  it('posts one Work’s comments as one comment and leaves the other Work’s waiting', async () => {
    await queue('开始：迁移', { kind: 'started', stepId: 's1' });
    await queue('已完成：迁移', { kind: 'completed', stepId: 's1' });
    await queue('别的工作', { task: otherTaskId });
    expect(await flushWorkOutbox(h.deps, taskId)).toBe(0);
    expect(comments()).toEqual(['已完成：迁移']);
    expect(comments(otherTaskId)).toEqual([]);
    expect((await waiting(otherTaskId)).map((e) => e.text)).toEqual(['别的工作']);
    expect(await waiting()).toEqual([]);
  });

  it('when only due ones go, it waits until the oldest comment has waited the window (the row’s, else one minute)', async () => {
    await queue('旧的', { createdAt: h.clock.now - DEFAULT_PROGRESS_WINDOW_MS + 1 });
    await queue('新的', { createdAt: h.clock.now });
    expect(await flushWorkOutbox(h.deps, taskId, { onlyDue: true })).toBe(2);
    expect(comments()).toEqual([]);
    h.clock.now += 1;
    expect(await flushWorkOutbox(h.deps, taskId, { onlyDue: true })).toBe(0);
    expect(comments()).toEqual(['旧的\n\n新的']);

    h.deps.progressWindowMs = 1_000;
    await queue('三', { createdAt: h.clock.now - 999 });
    expect(await flushWorkOutbox(h.deps, taskId, { onlyDue: true })).toBe(1);
    h.clock.now += 1;
    expect(await flushWorkOutbox(h.deps, taskId, { onlyDue: true })).toBe(0);
    expect(comments()).toHaveLength(2);
  });

  it('a post whose answer was lost after Dida took it is found by its text and not posted again', async () => {
    await queue('已完成：迁移');
    h.sim.injectFault({ route: 'POST /project/{pid}/task/{tid}/comment', kind: 'truncate' });
    expect(await flushWorkOutbox(h.deps, taskId)).toBe(1);
    expect(comments()).toEqual(['已完成：迁移']);
    const [inFlight] = await waiting();
    expect(inFlight).toMatchObject({ sentAs: '已完成：迁移', uncertain: true, attempts: 0, failures: 1 });
    expect(logs.some((l) => l.startsWith('progress comments will be posted later'))).toBe(true);
    expect(await flushWorkOutbox(h.deps, taskId)).toBe(0);
    expect(comments()).toEqual(['已完成：迁移']);
  });

  it('a post that failed before Dida took it is posted again, once, as it was first sent (a later comment is not joined in)', async () => {
    await queue('已完成：迁移');
    h.sim.injectFault({ route: 'POST /project/{pid}/task/{tid}/comment', kind: 'status', status: 503 });
    expect(await flushWorkOutbox(h.deps, taskId)).toBe(1);
    await queue('已完成：校验');
    expect(await flushWorkOutbox(h.deps, taskId)).toBe(0);
    expect(comments()).toEqual(['已完成：迁移', '已完成：校验']);
  });

  it('an older comment with the same text does not count as this post (beyond the clock skew); one inside it does', async () => {
    h.sim.addComment(projectId, taskId, '同样的话');
    const dida = Date.parse(h.sim.listComments(taskId)[0]!.createdTime);
    await h.deps.state.update((state) => {
      state.outbox.push({ ...entry('far', '同样的话'), projectId, taskId, workKey: taskId, createdAt: dida + 5 * 60_000 + 1_000, sentAs: '同样的话', uncertain: true });
    });
    expect(await flushWorkOutbox(h.deps, taskId)).toBe(0);
    expect(comments()).toEqual(['同样的话', '同样的话']);
    h.sim.addComment(projectId, otherTaskId, '又一句');
    const other = Date.parse(h.sim.listComments(otherTaskId)[0]!.createdTime);
    await h.deps.state.update((state) => {
      state.outbox.push({ ...entry('near', '又一句'), projectId, taskId: otherTaskId, workKey: otherTaskId, createdAt: other + 4 * 60_000, sentAs: '又一句', uncertain: true });
    });
    expect(await flushWorkOutbox(h.deps, otherTaskId)).toBe(0);
    expect(comments(otherTaskId)).toEqual(['又一句']);
  });

  it('a refused post is tried again from scratch and dropped, with a log line, after the last attempt', async () => {
    await queue('被拒绝');
    h.sim.injectFault({ route: 'POST /project/{pid}/task/{tid}/comment', kind: 'status', status: 400, times: Infinity });
    for (let attempt = 1; attempt < MAX_POST_ATTEMPTS; attempt++) {
      expect(await flushWorkOutbox(h.deps, taskId)).toBe(1);
      const [kept] = await waiting();
      expect(kept).toMatchObject({ attempts: attempt, uncertain: false });
      expect(kept!.sentAs).toBeUndefined();
    }
    expect(await flushWorkOutbox(h.deps, taskId)).toBe(0);
    expect(logs).toContain(`a progress comment was dropped after Dida refused it ${MAX_POST_ATTEMPTS} times`);
    expect(comments()).toEqual([]);
  });

  for (const fault of [
    { name: '429 with Retry-After', status: 429, retryAfter: 1 },
    { name: '429 without Retry-After', status: 429 },
    { name: '503', status: 503 },
    { name: '500', status: 500 },
  ] as const) {
    it(`transient failures (${fault.name}) never drop a comment: it waits a growing delay and is posted once they stop`, async () => {
      await queue('已完成：迁移', { kind: 'completed', stepId: 's1', createdAt: h.clock.now - DEFAULT_PROGRESS_WINDOW_MS });
      const failures = MAX_POST_ATTEMPTS * 3;
      h.sim.injectFault({ route: 'POST /project/{pid}/task/{tid}/comment', kind: 'status', status: fault.status, ...('retryAfter' in fault ? { retryAfter: fault.retryAfter } : {}), times: failures });
      let posts = 0;
      const delays: number[] = [];
      for (let i = 1; i <= failures; i++) {
        h.sim.resetCounters();
        // The background flush does not try again before the delay is over…
        expect(await flushWorkOutbox(h.deps, taskId, { onlyDue: true })).toBe(1);
        posts += (h.sim.counters()['POST /project/{pid}/task/{tid}/comment'] ?? 0);
        const [kept] = await waiting();
        expect(kept).toMatchObject({ failures: i, attempts: 0 });
        delays.push(kept!.retryAt! - h.clock.now);
        h.clock.now = kept!.retryAt! - 1;
        h.sim.resetCounters();
        expect(await flushWorkOutbox(h.deps, taskId, { onlyDue: true })).toBe(1);
        expect((h.sim.counters()['POST /project/{pid}/task/{tid}/comment'] ?? 0)).toBe(0);
        h.clock.now += 1;
      }
      // Every failure was a real post that Dida turned away (the attack reached the server each time).
      expect(posts).toBe(failures);
      expect(delays.slice(0, 4)).toEqual([retryDelayMs(1), retryDelayMs(2), retryDelayMs(3), retryDelayMs(4)]);
      expect(delays[1]! > delays[0]!).toBe(true);
      expect(Math.max(...delays)).toBe(RETRY_MAX_MS);
      expect(await flushWorkOutbox(h.deps, taskId, { onlyDue: true })).toBe(0);
      expect(comments()).toEqual(['已完成：迁移']);
      expect(logs.some((l) => l.includes('dropped'))).toBe(false);
    });
  }

  it('an explicit flush (settle, waiting, finalize) tries at once even while the delay runs', async () => {
    await queue('已完成：测试');
    h.sim.injectFault({ route: 'POST /project/{pid}/task/{tid}/comment', kind: 'status', status: 503 });
    expect(await flushWorkOutbox(h.deps, taskId)).toBe(1);
    expect((await waiting())[0]!.retryAt! > h.clock.now).toBe(true);
    expect(await flushWorkOutbox(h.deps, taskId)).toBe(0);
    expect(comments()).toEqual(['已完成：测试']);
  });

  it('a comment that waited long is reported; pruning a closed Work drops what is left of its comments, and only its', async () => {
    await queue('旧的', { createdAt: h.clock.now - LONG_WAIT_MS });
    await queue('新的', { createdAt: h.clock.now - 1000, task: otherTaskId });
    expect(longWaiting(await h.state(), h.clock.now).map((e) => e.text)).toEqual(['旧的']);
    const state = await h.state();
    state.works[taskId] = { taskId, projectId, occurrence: '', title: '任务', origin: 'human', mode: 'checklist', priority: 3, phase: 'closed', steps: [], nextStepNumber: 1, keepOpen: false, humanFingerprint: '', body: '', createdAt: 0, updatedAt: 0, rev: 0 };
    pruneState(state, PRUNE_AFTER_MS + 1);
    expect(state.outbox.map((e) => e.text)).toEqual(['新的']);
  });

  it('a failure stops the flush: comments before it are done, the failed one counts an attempt, later ones are untouched', async () => {
    const big = (c: string): string => c.repeat(MAX_COMMENT_LENGTH - 100);
    await queue(big('a'));
    await queue(big('b'));
    await queue(big('c'));
    h.sim.injectFault({ route: 'POST /project/{pid}/task/{tid}/comment', kind: 'status', status: 503, skip: 1 });
    expect(await flushWorkOutbox(h.deps, taskId)).toBe(2);
    expect(comments()).toEqual([big('a')]);
    const [b, c] = await waiting();
    expect(b).toMatchObject({ text: big('b'), attempts: 0, failures: 1, uncertain: true, sentAs: big('b') });
    expect(c).toMatchObject({ text: big('c'), attempts: 0, uncertain: true, sentAs: big('c') });
    expect(await flushWorkOutbox(h.deps, taskId)).toBe(0);
    expect(comments()).toEqual([big('a'), big('b'), big('c')]);
  });

  it('a token Dida no longer accepts stops the flush with the error and keeps every comment', async () => {
    await queue('需要令牌');
    h.sim.injectFault({ route: 'POST /project/{pid}/task/{tid}/comment', kind: 'status', status: 401 });
    await expect(flushWorkOutbox(h.deps, taskId)).rejects.toMatchObject({ code: 'auth' });
    expect((await waiting()).map((e) => e.text)).toEqual(['需要令牌']);
    expect(await flushWorkOutbox(h.deps, taskId)).toBe(0);
    expect(comments()).toEqual(['需要令牌']);
  });
});
