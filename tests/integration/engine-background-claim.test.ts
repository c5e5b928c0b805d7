// The claim comment of a Work created with claimInBackground (src/core/engine/work-engine.ts, postInBackground): posted
// after createWork resolves, retried after 1 s, 5 s and 20 s (or Dida's Retry-After when longer) for faults Dida may
// recover from, given up with a log line after the third retry or at once for a refusal; settle waits for it.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { parseClaim } from '../../src/core/queue/claims';
import { claimsPosted } from '../../src/core/engine/work-engine';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';

const COMMENT = 'POST /project/{pid}/task/{tid}/comment';

describe('a claim posted in the background', () => {
  let h: EngineHarness;
  let projectId: string;
  let logs: string[];
  /** The waits the engine asked for between attempts; they run at once (the other timers run as asked). */
  let waits: number[];

  beforeEach(async () => {
    h = await startEngineHarness();
    projectId = h.sim.seedProject({ name: 'bg' }).id;
    logs = [];
    h.deps.log = (line) => logs.push(line);
    waits = [];
    const real = globalThis.setTimeout as unknown as (fn: () => void, ms?: number, ...args: unknown[]) => ReturnType<typeof setTimeout>;
    vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms?: number, ...args: unknown[]) => {
      // Only a wait asked for by the engine itself (the nearest caller outside this file and the test runner).
      const caller = (new Error().stack ?? '').split('\n').slice(1).find((line) => !line.includes('engine-background-claim') && !line.includes('node_modules'));
      if (caller?.includes('work-engine')) {
        waits.push(ms ?? 0);
        return real(fn, 0, ...args);
      }
      return real(fn, ms, ...args);
    }) as typeof setTimeout);
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await claimsPosted();
    await h.close();
  });

  /** Comment posts that reached the simulator, refused ones included. */
  const posts = () => h.sim.counters()[COMMENT] ?? 0;
  const claims = (taskId: string) => h.sim.listComments(taskId).filter((c) => parseClaim(c.title));

  it('retried after 1 s and then 5 s, and posted once; the owner is learned from it', async () => {
    h.sim.injectFault({ route: COMMENT, kind: 'status', status: 503, times: 2 });
    const work = await h.engine.createWork('session-1', projectId, { title: '后台认领' }, { claimInBackground: true });
    await claimsPosted();
    expect(waits).toEqual([1000, 5000]);
    expect(posts()).toBe(3);
    expect(claims(work.taskId)).toHaveLength(1);
    expect((await h.state()).owners[projectId]).toBe(h.sim.userId);
    expect(logs).toEqual([]);
  });

  it("waits Dida's Retry-After when it is longer than the planned wait, else the planned wait", async () => {
    h.sim.injectFault({ route: COMMENT, kind: 'status', status: 429, retryAfter: 3 });
    h.sim.injectFault({ route: COMMENT, kind: 'status', status: 429, retryAfter: 2 });
    const work = await h.engine.createWork('session-1', projectId, { title: '限流' }, { claimInBackground: true });
    await claimsPosted();
    expect(waits).toEqual([3000, 5000]);
    expect(claims(work.taskId)).toHaveLength(1);
  });

  it('given up after the third retry (20 s), with a log line; the Work stays recorded as this session’s', async () => {
    h.sim.injectFault({ route: COMMENT, kind: 'status', status: 500, times: 4 });
    const work = await h.engine.createWork('session-1', projectId, { title: '放弃' }, { claimInBackground: true });
    await claimsPosted();
    expect(waits).toEqual([1000, 5000, 20_000]);
    expect(posts()).toBe(4);
    expect(claims(work.taskId)).toEqual([]);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatch(/^the claim comment of a new Work could not be posted \(other machines may take it\): \S/);
    expect((await h.state()).works[work.taskId]?.claim?.holder).toBe('test-host#1');
  });

  it('a refusal is not retried; settle waits for the background post before it looks at the Works', async () => {
    h.sim.injectFault({ route: COMMENT, kind: 'status', status: 400 });
    const work = await h.engine.createWork('session-1', projectId, { title: '拒绝' }, { claimInBackground: true });
    expect(await h.engine.settle('session-1')).toEqual([]);
    expect(posts()).toBe(1);
    expect(waits).toEqual([]);
    expect(logs.filter((l) => l.startsWith('the claim comment of a new Work could not be posted'))).toHaveLength(1);
    expect(claims(work.taskId)).toEqual([]);
  });
});
