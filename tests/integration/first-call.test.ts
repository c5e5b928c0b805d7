// The first tool call of a one-shot waits only for what it needs: a Work the model creates is returned before its claim
// comment is posted (which follows at once, is retried after a transient failure, and is waited for before the session
// settles or is released), also when the turn is stopped right after the create.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseClaim } from '../../src/core/queue/claims';
import { claimsPosted } from '../../src/core/engine/work-engine';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';

let h: EngineHarness;
let list: { id: string };
beforeEach(async () => {
  h = await startEngineHarness();
  list = h.sim.seedProject({ name: 'Work' });
});
afterEach(async () => {
  await h.close();
});

const claims = (taskId: string) => h.sim.listComments(taskId).filter((c) => parseClaim(c.title));

describe('a Work created by the model', () => {
  it('is returned before its claim comment is posted; settle waits for the claim first', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const off = h.sim.onRequest(async (info) => {
      if (info.route === 'POST /project/{pid}/task/{tid}/comment') await held;
    });
    const work = await h.engine.createWork('session-1', list.id, { title: '写周报', steps: ['收集'] }, { claimInBackground: true });
    expect(h.sim.getTask(work.taskId)?.title).toBe('写周报');
    expect(claims(work.taskId)).toHaveLength(0);
    // Recorded as this session's at once, so no session of this machine takes it meanwhile.
    expect((await h.state()).works[work.taskId]?.claim?.holder).toBe('test-host#1');
    let settled = false;
    const settling = h.engine.settle('session-1').then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(settled).toBe(false);
    release();
    await settling;
    off();
    expect(claims(work.taskId)).toHaveLength(1);
    expect((await h.state()).owners[list.id]).toBe(h.sim.userId);
  });

  it('control: without claimInBackground the claim is posted before createWork resolves', async () => {
    const work = await h.engine.createWork('session-1', list.id, { title: '写周报' });
    expect(claims(work.taskId)).toHaveLength(1);
  });

  it('a claim Dida refused with 429 is posted again shortly after', async () => {
    h.sim.injectFault({ route: 'POST /project/{pid}/task/{tid}/comment', kind: 'status', status: 429 });
    const work = await h.engine.createWork('session-1', list.id, { title: '写周报' }, { claimInBackground: true });
    await claimsPosted();
    expect(claims(work.taskId)).toHaveLength(1);
    expect(h.sim.counters()['POST /project/{pid}/task/{tid}/comment']).toBe(2);
  });

  it('the claim is posted even when the turn is stopped right after the create', async () => {
    const stop = new AbortController();
    const turn = h.engine.withSignal(stop.signal);
    const work = await turn.createWork('session-1', list.id, { title: '写周报' }, { claimInBackground: true });
    stop.abort(new Error('the person stopped the turn'));
    await claimsPosted();
    expect(claims(work.taskId)).toHaveLength(1);
  });
});
