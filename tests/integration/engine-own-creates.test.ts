// Creating the bundle's own tasks exactly once, over the real HTTP gateway and the simulator: the marker, the pending
// record written before the create, the look-up after a lost answer, and never taking a person's task by its title.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createOwnTask, madeBy, newMarker, pendingFor } from '../../src/core/work/own-creates';
import { emptyEngineState, type PendingCreate } from '../../src/core/work/work-state';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';

const pending = (extra: Partial<PendingCreate> = {}): PendingCreate => ({ kind: 'acceptance', projectId: 'p', title: '🧑‍🔬 待验收', marker: -5, startedAt: 0, ...extra });

describe('markers and pending records', () => {
  it('a marker is negative, from the clock with a random tail below 1024, and later markers are lower', () => {
    for (let i = 0; i < 50; i++) {
      const m = newMarker(1_000.7);
      expect(m).toBeLessThanOrEqual(-1_000 * 1024);
      expect(m).toBeGreaterThan(-1_001 * 1024);
    }
    expect(newMarker(2_000)).toBeLessThan(newMarker(1_999));
  });

  it('one process never hands out the same marker twice within a millisecond (else a lost create could take another’s task)', () => {
    const markers = Array.from({ length: 1_000 }, () => newMarker(7_000));
    expect(new Set(markers).size).toBe(1_000);
    for (const m of markers) expect(Math.floor(-m / 1024)).toBe(7_000);
  });

  it('a task is the pending create’s only when marker, title and list all match', () => {
    const p = pending();
    expect(madeBy({ sortOrder: -5, title: '🧑‍🔬 待验收', projectId: 'p' }, p)).toBe(true);
    expect(madeBy({ sortOrder: -6, title: '🧑‍🔬 待验收', projectId: 'p' }, p)).toBe(false);
    expect(madeBy({ sortOrder: -5, title: '待验收', projectId: 'p' }, p)).toBe(false);
    expect(madeBy({ sortOrder: -5, title: '🧑‍🔬 待验收', projectId: 'q' }, p)).toBe(false);
  });

  it('pending creates are found by kind and list, then by the Work they are for, or by title', () => {
    const state = emptyEngineState();
    state.pendingCreates = {
      a: pending({ forKey: 'w1' }),
      b: pending({ forKey: 'w2' }),
      c: pending({ kind: 'reminder', forKey: 'w1' }),
      d: pending({ projectId: 'q', forKey: 'w1' }),
      e: pending({ kind: 'work', title: '写文档' }),
      f: pending({ kind: 'work', title: '别的' }),
    };
    const ids = (found: Array<[string, PendingCreate]>): string[] => found.map(([id]) => id);
    expect(ids(pendingFor(state, 'acceptance', 'p', { forKey: 'w1' }))).toEqual(['a']);
    expect(ids(pendingFor(state, 'acceptance', 'p', {}))).toEqual(['a', 'b']);
    expect(ids(pendingFor(state, 'reminder', 'p', { forKey: 'w1' }))).toEqual(['c']);
    expect(ids(pendingFor(state, 'work', 'p', { title: '写文档' }))).toEqual(['e']);
    expect(ids(pendingFor(state, 'work', 'q', { title: '写文档' }))).toEqual([]);
  });
});

describe('creating once', () => {
  let h: EngineHarness;
  let projectId: string;

  beforeEach(async () => {
    h = await startEngineHarness();
    projectId = h.sim.seedProject({ name: '智能体工作' }).id;
  });
  afterEach(async () => {
    await h.close();
  });

  const titled = (title: string): string[] => h.sim.listTasks(projectId).filter((t) => t.title === title).map((t) => t.id);
  const create = (title: string, forKey?: string) => createOwnTask(h.deps, { projectId, title }, { kind: 'acceptance', ...(forKey !== undefined ? { forKey } : {}) });

  it('records the create with its marker before sending it, and the task carries the marker', async () => {
    let seen: PendingCreate[] | undefined;
    h.sim.onRequest(async (req) => {
      if (req.route === 'POST /task') seen = Object.values((await h.state()).pendingCreates);
    });
    const { task, pendingId } = await create('🧑‍🔬 待验收', 'w1');
    expect(seen).toHaveLength(1);
    expect(seen![0]).toEqual({ kind: 'acceptance', projectId, title: '🧑‍🔬 待验收', marker: task.sortOrder, startedAt: h.clock.now, forKey: 'w1' });
    expect((await h.state()).pendingCreates[pendingId]).toEqual(seen![0]);
    expect(pendingId).toBe(`acceptance:${-task.sortOrder!}`);
    const plain = await create('不为哪个工作');
    expect((await h.state()).pendingCreates[plain.pendingId]).not.toHaveProperty('forKey');
  });

  it('a create whose answer was lost is found by its marker: one task', async () => {
    h.sim.injectFault({ route: 'POST /task', kind: 'truncate' });
    const { task } = await create('🧑‍🔬 待验收', 'w1');
    expect(titled('🧑‍🔬 待验收')).toEqual([task.id]);
  });

  it('when the list cannot be read either, the failure is thrown and the next attempt takes the task the first one made', async () => {
    h.sim.injectFault({ route: 'POST /task', kind: 'truncate' });
    h.sim.injectFault({ route: 'GET /project/{pid}/data', kind: 'status', status: 500 });
    await expect(create('🧑‍🔬 待验收', 'w1')).rejects.toMatchObject({ code: expect.any(String) });
    expect(Object.keys((await h.state()).pendingCreates)).toHaveLength(1);
    h.sim.resetCounters();
    const { task, pendingId } = await create('🧑‍🔬 待验收', 'w1');
    expect(titled('🧑‍🔬 待验收')).toEqual([task.id]);
    expect(h.sim.counters()['POST /task'] ?? 0).toBe(0);
    expect(Object.keys((await h.state()).pendingCreates)).toEqual([pendingId]);
  });

  it('a create Dida never made (503) is looked for, thrown, and made once by the next attempt under a new marker', async () => {
    h.sim.injectFault({ route: 'POST /task', kind: 'status', status: 503 });
    await expect(create('🧑‍🔬 待验收', 'w1')).rejects.toMatchObject({ code: 'server' });
    const [first] = Object.values((await h.state()).pendingCreates);
    h.clock.now += 1_000;
    const { task, pendingId } = await create('🧑‍🔬 待验收', 'w1');
    expect(titled('🧑‍🔬 待验收')).toEqual([task.id]);
    expect(task.sortOrder).not.toBe(first!.marker);
    expect(Object.keys((await h.state()).pendingCreates)).toEqual([pendingId]);
  });

  it('a refused create leaves no pending record', async () => {
    h.sim.injectFault({ route: 'POST /task', kind: 'status', status: 400 });
    await expect(create('🧑‍🔬 待验收', 'w1')).rejects.toMatchObject({ code: expect.any(String) });
    expect((await h.state()).pendingCreates).toEqual({});
    expect(titled('🧑‍🔬 待验收')).toEqual([]);
  });

  it('never takes a person’s task of the same title, nor the task made for another Work', async () => {
    h.sim.injectFault({ route: 'POST /task', kind: 'status', status: 503 });
    await expect(create('写文档')).rejects.toBeDefined();
    const person = h.sim.seedTask({ projectId, title: '写文档' });
    const mine = await create('写文档');
    expect(mine.task.id).not.toBe(person.id);
    expect(titled('写文档').sort()).toEqual([person.id, mine.task.id].sort());

    const forW1 = await create('🧑‍🔬 待验收', 'w1');
    h.sim.injectFault({ route: 'POST /task', kind: 'status', status: 503 });
    await expect(create('🧑‍🔬 待验收', 'w2')).rejects.toBeDefined();
    const forW2 = await create('🧑‍🔬 待验收', 'w2');
    expect(forW2.task.id).not.toBe(forW1.task.id);
    expect(titled('🧑‍🔬 待验收')).toHaveLength(2);
  });
});
