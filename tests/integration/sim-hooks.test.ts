// Request hooks: a test can make a person's edit land before or after a given request is applied.
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpGateway } from '../../src/dida/http-gateway';
import { startSimulator, type Simulator } from '../../src/sim/simulator';

let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

describe('simulator request hooks', () => {
  it('runs a before-hook ahead of the request and an after-hook ahead of the answer', async () => {
    sim = await startSimulator();
    const s = sim;
    const list = s.seedProject({ name: 'L' });
    const task = s.seedTask({ projectId: list.id, title: 'T' });
    const gateway = createHttpGateway({ token: s.token, baseUrl: s.baseUrl });
    const seen: string[] = [];
    const removeBefore = s.onRequest((info) => {
      seen.push(`before ${info.route} #${info.index}`);
      if (info.route === 'GET /project/{pid}/task/{tid}') s.editTask(task.id, { title: 'renamed before the read' });
    });
    const removeAfter = s.onRequest((info) => {
      seen.push(`after ${info.route} #${info.index}`);
      if (info.route === 'POST /task/{tid}') s.editTask(task.id, { content: 'written after the update landed' });
    }, 'after');
    const read = await gateway.getTask(list.id, task.id);
    expect(read.title).toBe('renamed before the read');
    const answered = await gateway.updateTask({ id: task.id, projectId: list.id, title: read.title, priority: 3 });
    expect(answered.content ?? '').toBe('');
    expect(s.getTask(task.id)?.content).toBe('written after the update landed');
    removeBefore();
    removeAfter();
    await gateway.getTask(list.id, task.id);
    expect(seen).toEqual(['before GET /project/{pid}/task/{tid} #1', 'after GET /project/{pid}/task/{tid} #1', 'before POST /task/{tid} #2', 'after POST /task/{tid} #2']);
  });
});
