// What creating the bundle's own tasks does on a Dida that does not keep the sortOrder a create sends (the live-d
// variant): the marker cannot find a create whose answer was lost, so it is made again — and a person's task is never
// taken. The same file runs the kind simulator as the control case.
import { afterEach, describe, expect, it } from 'vitest';
import { createOwnTask } from '../../src/core/work/own-creates';
import { simVariantQuirks, type SimVariantName } from '../../src/sim/sim-variants';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';

let sim: Simulator;
let h: EngineHarness;
afterEach(async () => {
  await h.close();
  await sim.close();
});

async function world(variant: SimVariantName): Promise<string> {
  sim = await startSimulator({ quirks: simVariantQuirks(variant) });
  h = await startEngineHarness({ sim });
  return sim.seedProject({ name: '智能体工作' }).id;
}

const titled = (projectId: string, title: string): string[] => sim.listTasks(projectId).filter((t) => t.title === title).map((t) => t.id);

describe('own creates when Dida does not keep sortOrder', () => {
  for (const variant of ['kind', 'live-d'] as const) {
    it(`${variant}: a create whose answer was lost ${variant === 'kind' ? 'is found by its marker' : 'is not found; the next attempt makes a second task'}`, async () => {
      const projectId = await world(variant);
      const create = () => createOwnTask(h.deps, { projectId, title: '🧑‍🔬 待验收' }, { kind: 'acceptance', forKey: 'w1' });
      sim.injectFault({ route: 'POST /task', kind: 'truncate' });
      if (variant === 'kind') {
        const { task } = await create();
        expect(titled(projectId, '🧑‍🔬 待验收')).toEqual([task.id]);
        return;
      }
      await expect(create()).rejects.toMatchObject({ code: 'network' });
      // The list was read to look for the lost create, and the pending record stays for the next attempt.
      expect(sim.counters()['GET /project/{pid}/data']).toBe(1);
      expect(Object.keys((await h.state()).pendingCreates)).toHaveLength(1);
      const [lost] = titled(projectId, '🧑‍🔬 待验收');
      h.clock.now += 1_000;
      const { task, pendingId } = await create();
      expect(task.id).not.toBe(lost);
      expect(titled(projectId, '🧑‍🔬 待验收').sort()).toEqual([lost, task.id].sort());
      expect(Object.keys((await h.state()).pendingCreates)).toEqual([pendingId]);
    });
  }

  it('live-d: never takes a person’s task of the same title, whatever its sortOrder', async () => {
    const projectId = await world('live-d');
    const person = sim.seedTask({ projectId, title: '写文档' });
    sim.injectFault({ route: 'POST /task', kind: 'truncate' });
    const create = () => createOwnTask(h.deps, { projectId, title: '写文档' }, { kind: 'work' });
    await expect(create()).rejects.toBeDefined();
    const mine = await create();
    expect(mine.task.id).not.toBe(person.id);
    expect(titled(projectId, '写文档')).toHaveLength(3);
    expect(sim.getTask(person.id)?.title).toBe('写文档');
  });

  it('live-d: a create whose answer arrives is recorded as usual, although the task does not carry the marker', async () => {
    const projectId = await world('live-d');
    const { task, pendingId } = await createOwnTask(h.deps, { projectId, title: '🙋 等你回答' }, { kind: 'reminder', forKey: 'w1' });
    const pending = (await h.state()).pendingCreates[pendingId];
    expect(pending).toBeDefined();
    expect(task.sortOrder).not.toBe(pending!.marker);
    expect(titled(projectId, '🙋 等你回答')).toEqual([task.id]);
  });
});
