// The one door for task writes on its own: what counts as a pending change, the smallest update for a task as just
// read, refusals and lost locks, and the write itself over the real HTTP gateway against the simulator (a completed
// task, priority only from zero, the item cap, a service that ignores updates without a title).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { assertHeld, hasPendingWrite, isRefusal, LockLostError, MAX_CHECKLIST_ITEMS, minimalUpdate, writeWork } from '../../src/core/work/task-writer';
import type { EngineDeps } from '../../src/core/work/engine-context';
import type { StepRecord, WorkRecord } from '../../src/core/work/work-state';
import { createHttpGateway } from '../../src/dida/http-gateway';
import { DidaError } from '../../src/dida/dida-error';
import type { Task } from '../../src/dida/types';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';
import { makeStep, makeWork } from '../helpers/work-fixtures';

const seenStep = (id: string, title: string, extra: Partial<StepRecord> = {}): StepRecord =>
  makeStep({ id, title, itemId: `i-${id}`, seen: { title, done: false }, origin: 'agent', ...extra });

describe('what is a pending write', () => {
  it('a change of priority, a body to move, a new step, a tick, an agent rename, a deleted agent step', () => {
    const clean = makeWork([seenStep('a', '一'), makeStep({ id: 'h', title: '人的', origin: 'human', itemId: 'i-h', seen: { title: '人的', done: false } })]);
    expect(hasPendingWrite(clean)).toBe(false);
    expect(hasPendingWrite(clean, 3)).toBe(false);
    expect(hasPendingWrite(clean, 0)).toBe(true);
    expect(hasPendingWrite({ ...clean, pendingDesc: '正文' })).toBe(true);
    expect(hasPendingWrite(makeWork([makeStep({ id: 'n', title: '新' })]))).toBe(true);
    expect(hasPendingWrite(makeWork([makeStep({ id: 'n', title: '新', itemId: 'i-n' })]))).toBe(true);
    expect(hasPendingWrite(makeWork([seenStep('a', '一', { status: 'completed' })]))).toBe(true);
    expect(hasPendingWrite(makeWork([seenStep('a', '一', { status: 'in_progress' })]))).toBe(false);
    expect(hasPendingWrite(makeWork([{ ...seenStep('a', '一'), title: '改名' }]))).toBe(true);
    expect(hasPendingWrite(makeWork([seenStep('a', '一', { status: 'deleted' })]))).toBe(true);
    expect(hasPendingWrite(makeWork([seenStep('a', '一', { status: 'deleted', itemId: undefined })]))).toBe(false);
  });

  it('the person’s own items: their title as last seen is what Dida has; a deleted one is not ours to write', () => {
    const human = makeStep({ id: 'h', title: '模型看到的', origin: 'human', itemId: 'i-h', seen: { title: '人写的', done: false } });
    expect(hasPendingWrite(makeWork([human]))).toBe(false);
    expect(hasPendingWrite(makeWork([{ ...human, status: 'deleted' }]))).toBe(false);
  });

  it('a direct Work (no checklist) writes only its priority or body', () => {
    const direct = makeWork([makeStep({ id: 'n', title: '新' })], { mode: 'direct' });
    expect(hasPendingWrite(direct)).toBe(false);
    expect(hasPendingWrite(direct, 0)).toBe(true);
  });
});

describe('the smallest update', () => {
  const task = (extra: Partial<Task> = {}): Task => ({ id: 't1', projectId: 'p1', title: '任务', status: 0, priority: 3, ...extra }) as Task;

  it('nothing to change: no update at all', () => {
    const work = makeWork([seenStep('a', '一')]);
    expect(minimalUpdate(task({ items: [{ id: 'i-a', title: '一', status: 0 }] }), work, { withTitle: false, now: 0 })).toBeUndefined();
    expect(minimalUpdate(task(), makeWork([], { mode: 'direct' }), { priority: 3, withTitle: true, now: 0 })).toBeUndefined();
  });

  it('a tick sends the items only, with id and list; the title only for a service that needs it', () => {
    const work = makeWork([seenStep('a', '一', { status: 'completed' })]);
    const read = task({ items: [{ id: 'i-a', title: '一', status: 0 }], content: '正文', desc: '说明' });
    const update = minimalUpdate(read, work, { withTitle: false, now: 0 })!;
    expect(Object.keys(update.body).sort()).toEqual(['id', 'items', 'projectId']);
    expect(update.body.items).toHaveLength(1);
    expect(minimalUpdate(read, work, { withTitle: true, now: 0 })!.body.title).toBe('任务');
  });

  it('the first items of a text task move its body into the description once, after what the description has', () => {
    const work = makeWork([makeStep({ id: 'n', title: '新' })]);
    expect(minimalUpdate(task({ content: ' 正文 ' }), work, { withTitle: false, now: 0 })!.body.desc).toBe('正文');
    expect(minimalUpdate(task({ content: '正文', desc: '说明  ' }), work, { withTitle: false, now: 0 })!.body.desc).toBe('说明\n\n正文');
    expect(minimalUpdate(task({ content: '正文', desc: '说明 正文' }), work, { withTitle: false, now: 0 })!.body).not.toHaveProperty('desc');
    expect(minimalUpdate(task({ content: '正文', items: [{ id: 'x', title: '人的', status: 0 }] }), work, { withTitle: false, now: 0 })!.body).not.toHaveProperty('desc');
    expect(minimalUpdate(task({ content: '   ' }), work, { withTitle: false, now: 0 })!.body).not.toHaveProperty('desc');
  });

  it('a body waiting to be put back goes after the description unless the description has it', () => {
    const work = makeWork([], { pendingDesc: ' 旧正文 ', mode: 'direct' });
    expect(minimalUpdate(task(), work, { withTitle: false, now: 0 })!.body).toEqual({ id: 't1', projectId: 'p1', desc: '旧正文' });
    expect(minimalUpdate(task({ desc: '说明\n' }), work, { withTitle: false, now: 0 })!.body.desc).toBe('说明\n\n旧正文');
    expect(minimalUpdate(task({ desc: '说明 旧正文' }), work, { withTitle: false, now: 0 })).toBeUndefined();
    const both = makeWork([makeStep({ id: 'n', title: '新' })], { pendingDesc: '旧正文' });
    expect(minimalUpdate(task({ content: '正文' }), both, { withTitle: false, now: 0 })!.body.desc).toBe('正文\n\n旧正文');
  });

  it('a priority is sent only when Dida shows another one', () => {
    const work = makeWork([], { mode: 'direct' });
    expect(minimalUpdate(task({ priority: 3 }), work, { priority: 0, withTitle: false, now: 0 })!.body).toEqual({ id: 't1', projectId: 'p1', priority: 0 });
    expect(minimalUpdate(task({ priority: 0 }), work, { priority: 0, withTitle: false, now: 0 })).toBeUndefined();
  });
});

describe('refusals and locks', () => {
  it('a refusal is a 4xx answer, nothing else', () => {
    expect(isRefusal(new DidaError({ code: 'invalid_response', status: 400, message: 'x' }))).toBe(true);
    expect(isRefusal(new DidaError({ code: 'not_found', status: 404, message: 'x' }))).toBe(true);
    expect(isRefusal(new DidaError({ code: 'invalid_response', status: 499, message: 'x' }))).toBe(true);
    expect(isRefusal(new DidaError({ code: 'server', status: 500, message: 'x' }))).toBe(false);
    expect(isRefusal(new DidaError({ code: 'server', status: 399, message: 'x' }))).toBe(false);
    expect(isRefusal(new DidaError({ code: 'timeout', message: 'x' }))).toBe(false);
    expect(isRefusal(new Error('400'))).toBe(false);
  });

  it('a lock taken over, by its signal or by asking, stops the write; no lock or a held one does not', () => {
    const held = { compromised: new AbortController().signal, stillHeld: () => true };
    expect(() => assertHeld(undefined, { taskId: 't' })).not.toThrow();
    expect(() => assertHeld(held, { taskId: 't' })).not.toThrow();
    expect(() => assertHeld({ compromised: new AbortController().signal }, { taskId: 't' })).not.toThrow();
    expect(() => assertHeld({ ...held, stillHeld: () => false }, { taskId: 't' })).toThrow(LockLostError);
    expect(() => assertHeld({ compromised: AbortSignal.abort() }, { taskId: 't' })).toThrow(/lock of Work t/);
  });
});

describe('writing', () => {
  let h: EngineHarness;
  let projectId: string;

  beforeEach(async () => {
    h = await startEngineHarness();
    projectId = h.sim.seedProject({ name: '智能体工作' }).id;
  });
  afterEach(async () => {
    await h.close();
  });

  async function work(items: string[]): Promise<WorkRecord> {
    const task = h.sim.seedTask({ projectId, title: '部署', priority: 3, items: items.map((title) => ({ title })) });
    await h.engine.sync(projectId);
    return h.engine.getWork(task.id);
  }

  it('with nothing pending nothing is read, unless asked to look anyway', async () => {
    const w = await work(['一']);
    h.sim.resetCounters();
    expect(await writeWork(h.deps, w)).toEqual({ wrote: false, merge: undefined });
    expect(h.sim.totalRequests()).toBe(0);
    const looked = await writeWork(h.deps, w, { skipIfUnchanged: false });
    expect(looked.wrote).toBe(false);
    expect(looked.task?.id).toBe(w.taskId);
    expect(h.sim.totalRequests()).toBe(1);
  });

  it('a task the person completed meanwhile is not written (a write could re-open it)', async () => {
    const w = await work(['一']);
    h.sim.editTask(w.taskId, { status: 2 });
    w.steps[0]!.status = 'completed';
    const result = await writeWork(h.deps, w);
    expect(result.wrote).toBe(false);
    expect(h.sim.getTask(w.taskId)?.status).toBe(2);
  });

  it('a resume sets the priority only where Dida still shows none', async () => {
    const w = await work(['一']);
    h.sim.editTask(w.taskId, { priority: 1 });
    expect((await writeWork(h.deps, w, { priority: 5, onlyFromZero: true })).wrote).toBe(false);
    expect(h.sim.getTask(w.taskId)?.priority).toBe(1);
    h.sim.editTask(w.taskId, { priority: 0 });
    expect((await writeWork(h.deps, w, { priority: 5, onlyFromZero: true })).wrote).toBe(true);
    expect(h.sim.getTask(w.taskId)?.priority).toBe(5);
  });

  it('more items than Dida keeps are refused before anything is sent', async () => {
    const w = await work(Array.from({ length: MAX_CHECKLIST_ITEMS }, (_, i) => `第${i}项`));
    w.steps.push(makeStep({ id: 'extra', title: '再加一项' }));
    h.sim.resetCounters();
    await expect(writeWork(h.deps, w)).rejects.toMatchObject({ code: 'too_many_steps' });
    expect(h.sim.counters()['POST /task/{tid}'] ?? 0).toBe(0);
    const ok = await work(Array.from({ length: MAX_CHECKLIST_ITEMS - 1 }, (_, i) => `第${i}项`));
    ok.steps.push(makeStep({ id: 'extra', title: '最后一项' }));
    expect((await writeWork(h.deps, ok)).wrote).toBe(true);
  });

  it('a precheck that throws stops the write after the merge', async () => {
    const w = await work(['一']);
    w.steps[0]!.status = 'completed';
    h.sim.resetCounters();
    await expect(writeWork(h.deps, w, { precheck: () => { throw new Error('stop'); } })).rejects.toThrow('stop');
    expect(h.sim.counters()['POST /task/{tid}'] ?? 0).toBe(0);
  });

  it('after a write the steps know their items as sent: a new step gets its id, a deleted last step loses its item, a rename is sent', async () => {
    const w = await work(['一', '二']);
    const [one, two] = w.steps;
    one!.status = 'completed';
    w.steps.push(makeStep({ id: 'n', title: '新步骤' }));
    expect((await writeWork(h.deps, w)).wrote).toBe(true);
    const added = w.steps.find((s) => s.id === 'n')!;
    expect(added.itemId).toBe(h.sim.getTask(w.taskId)!.items!.at(-1)!.id);
    expect(added.seen).toEqual({ title: '新步骤', done: false });
    expect(one!.seen).toEqual({ title: '一', done: true });

    added.status = 'deleted';
    expect((await writeWork(h.deps, w)).wrote).toBe(true);
    expect(h.sim.getTask(w.taskId)!.items!.map((i) => i.title)).toEqual(['一', '二']);
    expect(added.itemId).toBeUndefined();

    const mine = makeStep({ id: 'm', title: '我的步骤' });
    w.steps.push(mine);
    await writeWork(h.deps, w);
    mine.title = '改过名的步骤';
    expect((await writeWork(h.deps, w)).wrote).toBe(true);
    expect(h.sim.getTask(w.taskId)!.items!.map((i) => i.title)).toEqual(['一', '二', '改过名的步骤']);
    expect(two!.seen).toEqual({ title: '二', done: false });
  });

  it('a priority-only write and a body-only write each find out that the title is needed; a body put back is then forgotten', async () => {
    h.sim.setQuirks({ updateWithoutTitle: 'ignore' });
    const fresh = (): EngineDeps => ({ ...h.deps, gateway: createHttpGateway({ token: h.sim.token, baseUrl: h.sim.baseUrl, timeoutMs: 2000, retry: { retries: 0, baseDelayMs: 1, maxDelayMs: 5 } }) });
    const w = await work(['一']);
    h.sim.resetCounters();
    const byPriority = fresh();
    expect((await writeWork(byPriority, w, { priority: 0 })).wrote).toBe(true);
    expect(h.sim.getTask(w.taskId)?.priority).toBe(0);
    expect(h.sim.counters()['POST /task/{tid}']).toBe(2);
    await byPriority.gateway.close();

    const w2 = await work(['二']);
    w2.pendingDesc = '原来的正文';
    h.sim.resetCounters();
    const byBody = fresh();
    expect((await writeWork(byBody, w2)).wrote).toBe(true);
    expect(h.sim.counters()['POST /task/{tid}']).toBe(2);
    expect(h.sim.getTask(w2.taskId)?.desc).toContain('原来的正文');
    expect(w2.pendingDesc).toBeUndefined();
    await byBody.gateway.close();
  });

  it('a service that ignores updates without a title gets the title from then on; learned once', async () => {
    h.sim.setQuirks({ updateWithoutTitle: 'ignore' });
    const logs: string[] = [];
    h.deps.log = (line) => logs.push(line);
    const w = await work(['一', '二']);
    w.steps[0]!.status = 'completed';
    expect((await writeWork(h.deps, w)).wrote).toBe(true);
    expect(h.sim.getTask(w.taskId)?.items?.[0]?.status).not.toBe(0);
    const w2 = await work(['三']);
    w2.steps[0]!.status = 'completed';
    h.sim.resetCounters();
    expect((await writeWork(h.deps, w2)).wrote).toBe(true);
    expect(h.sim.counters()['POST /task/{tid}']).toBe(1);

    expect(logs.filter((l) => l.includes('without a title'))).toHaveLength(1);
  });
});
