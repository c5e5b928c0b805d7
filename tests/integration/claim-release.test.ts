// The release side of claims over the simulator (src/core/queue/claim-release.ts): a session that stops releases its
// own claim with one comment on how far it got; an expired claim is reported once, a claim with progress since only
// moves its lease on, an ended claim is forgotten without a word, and nothing happens without a known owner.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { releaseClaim, reportExpiredClaim } from '../../src/core/queue/claim-release';
import { startSimulator } from '../../src/sim/simulator';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';

let h: EngineHarness;
const S = 'session-1';

beforeEach(async () => {
  h = await startEngineHarness();
  // Dida stamps comments with the real time: the engine's clock starts there.
  h.clock.now = Date.now();
});
afterEach(async () => {
  await h.close();
});

async function claimed() {
  const list = h.sim.seedProject({ name: 'l' });
  const task = h.sim.seedTask({ projectId: list.id, title: '修复登录', priority: 3, items: [{ title: '复现' }, { title: '修好' }] });
  await h.engine.sync(list.id);
  await h.engine.switchTo(S, list.id, task.id);
  return { list, task };
}

const titles = (taskId: string) => h.sim.listComments(taskId).map((c) => c.title);

describe('releaseClaim', () => {
  it('the holding session releases once, saying how far it got; the claim is forgotten', async () => {
    const { task } = await claimed();
    await h.engine.changeSteps(S, [{ op: 'update', step: '复现', status: 'completed', resolution: '复现了' }]);
    const before = titles(task.id).length;
    expect(await releaseClaim(h.deps, task.id, 'session-2')).toBe(false);
    expect(titles(task.id)).toHaveLength(before);
    expect(await releaseClaim(h.deps, task.id, S)).toBe(true);
    expect(titles(task.id).at(-1)).toBe('🤖 test-host 停止处理（会话 1）：已完成 1/2 步，最后完成的是「复现」。现在没有人在处理，其他会话可以接手。');
    expect((await h.state()).works[task.id]?.claim).toBeUndefined();
    expect(await releaseClaim(h.deps, task.id, S)).toBe(false);
    expect(titles(task.id)).toHaveLength(before + 1);
  });

  it('a Work no longer open is not released', async () => {
    const { task } = await claimed();
    await h.deps.state.update((s) => {
      s.works[task.id]!.phase = 'finalizing';
    });
    const before = titles(task.id).length;
    expect(await releaseClaim(h.deps, task.id, S)).toBe(false);
    expect(titles(task.id)).toHaveLength(before);
    expect((await h.state()).works[task.id]?.claim).toBeDefined();
  });
});

describe('reportExpiredClaim', () => {
  it('does nothing within the lease, for a waiting Work, or without a known owner', async () => {
    const { task } = await claimed();
    const at = (await h.state()).works[task.id]!.claim!.at;
    const before = titles(task.id).length;
    h.clock.now = at + 30 * 60_000;
    expect(await reportExpiredClaim(h.deps, task.id)).toBe(false);
    h.clock.now = at + 31 * 60_000;
    await h.deps.state.update((s) => {
      s.works[task.id]!.waiting = { reason: 'r', previousPriority: 3, applied: true, since: at };
    });
    expect(await reportExpiredClaim(h.deps, task.id)).toBe(false);
    await h.deps.state.update((s) => {
      delete s.works[task.id]!.waiting;
      s.owners = {};
    });
    expect(await reportExpiredClaim(h.deps, task.id)).toBe(false);
    expect(titles(task.id)).toHaveLength(before);
    expect((await h.state()).works[task.id]?.claim?.at).toBe(at);
  });

  it('a shorter configured lease applies', async () => {
    const { task } = await claimed();
    const at = (await h.state()).works[task.id]!.claim!.at;
    h.clock.now = at + 2 * 60_000;
    expect(await reportExpiredClaim({ ...h.deps, claimLeaseMs: 60_000 }, task.id)).toBe(true);
    expect(titles(task.id).at(-1)).toContain('2 分钟没有进展');
  });

  it('a claim whose record lapsed but whose owner commented since only moves the lease on', async () => {
    const { task } = await claimed();
    const at = (await h.state()).works[task.id]!.claim!.at;
    // The record says the claim is old, but the owner's progress in Dida is recent.
    await h.deps.state.update((s) => {
      s.works[task.id]!.claim!.at = at - 40 * 60_000;
    });
    const before = titles(task.id).length;
    expect(await reportExpiredClaim(h.deps, task.id)).toBe(false);
    expect(titles(task.id)).toHaveLength(before);
    const claim = (await h.state()).works[task.id]!.claim!;
    expect(claim.holder).toBe('test-host#1');
    expect(claim.at).toBeGreaterThan(at - 40 * 60_000);
  });

  it('a recorded claim with no claim comment in Dida is forgotten without a word', async () => {
    const list = h.sim.seedProject({ name: 'l' });
    const task = h.sim.seedTask({ projectId: list.id, title: '修复登录', priority: 3 });
    await h.engine.sync(list.id);
    const other = h.sim.seedTask({ projectId: list.id, title: '另一个', priority: 3 });
    await h.engine.sync(list.id);
    await h.engine.switchTo(S, list.id, other.id);
    const claim = (await h.state()).works[other.id]!.claim!;
    await h.deps.state.update((s) => {
      s.works[task.id]!.claim = claim;
    });
    h.clock.now = claim.at + 31 * 60_000;
    expect(await reportExpiredClaim(h.deps, task.id)).toBe(false);
    expect(titles(task.id)).toEqual([]);
    expect((await h.state()).works[task.id]?.claim).toBeUndefined();
  });

  it('a claim its holder already released is forgotten without a word', async () => {
    const { task } = await claimed();
    const at = (await h.state()).works[task.id]!.claim!.at;
    const claim = (await h.state()).works[task.id]!.claim!;
    await releaseClaim(h.deps, task.id, S);
    await h.deps.state.update((s) => {
      s.works[task.id]!.claim = claim;
    });
    const before = titles(task.id).length;
    h.clock.now = at + 31 * 60_000;
    expect(await reportExpiredClaim(h.deps, task.id)).toBe(false);
    expect(titles(task.id)).toHaveLength(before);
    expect((await h.state()).works[task.id]?.claim).toBeUndefined();
  });

  /**
   * The engine's deps with a gateway whose comment lists are reshaped: `times(i)` gives the i-th comment (oldest
   * first) its createdTime (undefined: none), and the list comes back newest first. The claim rules must not lean on
   * the order the gateway returns, and read equal or missing times as Dida may send them.
   */
  function reshaped(times: (i: number) => string | undefined) {
    const gateway = h.deps.gateway;
    const listComments: typeof gateway.listComments = async (projectId, taskId) => {
      const comments = await gateway.listComments(projectId, taskId);
      return comments.map((c, i) => ({ ...c, createdTime: times(i) })).reverse();
    };
    return { ...h.deps, gateway: Object.assign(Object.create(gateway) as typeof gateway, { listComments }) };
  }
  const iso = (ms: number) => new Date(ms).toISOString().replace('Z', '+0000');

  it('a claim taken again after its release is reported, whatever order Dida lists the comments in', async () => {
    const { list, task } = await claimed();
    await releaseClaim(h.deps, task.id, S);
    // Taken again by another session of the machine: the report names that one.
    await h.engine.switchTo('session-2', list.id, task.id);
    const claim = (await h.state()).works[task.id]!.claim!;
    const claims = titles(task.id);
    expect(claims).toHaveLength(3);
    h.clock.now = claim.at + 31 * 60_000;
    const start = claim.at - 60 * 60_000;
    // claim, release, claim again: one minute apart, an hour ago.
    expect(await reportExpiredClaim(reshaped((i) => iso(start + i * 60_000)), task.id)).toBe(true);
    expect(titles(task.id)).toHaveLength(4);
    expect(titles(task.id).at(-1)).toContain('31 分钟没有进展');
    expect(titles(task.id).at(-1)).toContain('会话 2');
    expect(titles(task.id).at(-1)).not.toContain('会话 1');
  });

  it('a release written by someone else does not end the claim', async () => {
    const { list, task } = await claimed();
    const other = h.sim.seedTask({ projectId: list.id, title: '别的', priority: 3 });
    await h.engine.sync(list.id);
    await h.engine.switchTo('session-3', list.id, other.id);
    await releaseClaim(h.deps, other.id, 'session-3');
    const releaseText = titles(other.id).at(-1)!;
    h.sim.addComment(list.id, task.id, releaseText.replace('会话 3', '会话 1'), { userId: 424242 });
    const claim = (await h.state()).works[task.id]!.claim!;
    h.clock.now = claim.at + 31 * 60_000;
    expect(await reportExpiredClaim(h.deps, task.id)).toBe(true);
    expect(titles(task.id)).toHaveLength(3);
    expect(titles(task.id).at(-1)).toContain('31 分钟没有进展');
  });

  it('a release stamped with the same time as its claim ends it', async () => {
    const { task } = await claimed();
    const claim = (await h.state()).works[task.id]!.claim!;
    await releaseClaim(h.deps, task.id, S);
    await h.deps.state.update((s) => {
      s.works[task.id]!.claim = claim;
    });
    h.clock.now = claim.at + 31 * 60_000;
    const same = iso(claim.at - 60 * 60_000);
    expect(await reportExpiredClaim(reshaped(() => same), task.id)).toBe(false);
    expect(titles(task.id)).toHaveLength(2);
    expect((await h.state()).works[task.id]?.claim).toBeUndefined();
  });

  it('a claim comment without a time still counts as the claim (reported once its lease ran out)', async () => {
    const { task } = await claimed();
    const claim = (await h.state()).works[task.id]!.claim!;
    h.clock.now = claim.at + 31 * 60_000;
    expect(await reportExpiredClaim(reshaped(() => undefined), task.id)).toBe(true);
    expect(titles(task.id)).toHaveLength(2);
    expect(titles(task.id).at(-1)).toContain('31 分钟没有进展');
  });

  it("a note of the owner's after the release (the outbox flushing late) does not make the released claim live again", async () => {
    const { list, task } = await claimed();
    const claim = (await h.state()).works[task.id]!.claim!;
    await releaseClaim(h.deps, task.id, S);
    const owner = (await h.state()).owners[list.id]!;
    h.sim.addComment(list.id, task.id, '已完成：复现', { userId: Number(owner) });
    await h.deps.state.update((s) => {
      s.works[task.id]!.claim = claim;
    });
    h.clock.now = claim.at + 31 * 60_000;
    const start = claim.at - 60 * 60_000;
    expect(await reportExpiredClaim(reshaped((i) => iso(start + i * 60_000)), task.id)).toBe(false);
    expect(titles(task.id)).toHaveLength(3);
    expect((await h.state()).works[task.id]?.claim).toBeUndefined();
  });

  it('an expired claim of a Work no longer open (in review) is not reported', async () => {
    const { task } = await claimed();
    const claim = (await h.state()).works[task.id]!.claim!;
    await h.deps.state.update((s) => {
      s.works[task.id]!.phase = 'accepting';
    });
    h.clock.now = claim.at + 31 * 60_000;
    expect(await reportExpiredClaim(h.deps, task.id)).toBe(false);
    expect(titles(task.id)).toHaveLength(1);
  });

  it("the person's questions on a Work whose machine went away do not keep it held: reported a lease after the bundle's last progress", async () => {
    // Dida stamps comments on the engine's clock here, so minutes pass without waiting.
    const clock = { now: Date.UTC(2026, 10, 30, 2, 0, 0) };
    const sim = await startSimulator({ now: () => clock.now });
    const own = await startEngineHarness({ sim });
    try {
      own.deps.now = () => clock.now;
      const list = sim.seedProject({ name: 'l' });
      const task = sim.seedTask({ projectId: list.id, title: '修复登录', priority: 3, items: [{ title: '复现' }, { title: '修好' }] });
      await own.engine.sync(list.id);
      await own.engine.switchTo(S, list.id, task.id);
      await own.engine.changeSteps(S, [{ op: 'update', step: '复现', status: 'in_progress' }]);
      await own.engine.flushComments();
      const owner = Number((await own.state()).owners[list.id]);
      // The machine goes away; the person asks at minutes 25 and 29, with the owner's own account.
      clock.now += 25 * 60_000;
      sim.addComment(list.id, task.id, '进展如何？', { userId: owner });
      clock.now += 4 * 60_000;
      sim.addComment(list.id, task.id, '还在做吗', { userId: owner });
      // Another machine reads the list at minute 31: the claim's record lapsed, and Dida shows no progress since.
      clock.now += 2 * 60_000;
      const other = { ...own.deps, hostLabel: 'other-host' };
      expect(await reportExpiredClaim(other, task.id)).toBe(true);
      const last = sim.listComments(task.id).at(-1)!.title;
      expect(last).toContain('🤖 test-host 上的会话 1 已停止：31 分钟没有进展');
      expect((await own.state()).works[task.id]?.claim).toBeUndefined();
    } finally {
      await own.close();
      await sim.close();
    }
  });
});
