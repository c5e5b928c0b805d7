// Claims on their own, over the real HTTP gateway and the simulator: how a claim comment reads in every locale and
// form, which claim is live and earliest, and what one session's claim does when others of this or another host exist.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claimText, claimWork, DEFAULT_CLAIM_LEASE_MS, earliestLiveClaim, heldElsewhere, parseClaim, requireClaim } from '../../src/core/queue/claims';
import { holderOf, hostLabelOf, sessionTag } from '../../src/core/queue/claim-holders';
import type { EngineDeps } from '../../src/core/work/engine-context';
import { getLocale } from '../../src/core/text/locale';
import type { Comment } from '../../src/dida/types';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';
import { makeWork } from '../helpers/work-fixtures';

const STRANGER = 990011;

describe('reading claims', () => {
  it('reads the current and the older forms in both languages, with host, session and occurrence', () => {
    expect(parseClaim('🤖 my laptop 开始处理（会话 ab12CD34）')).toEqual({ host: 'my laptop', session: 'ab12CD34', occurrence: '' });
    expect(parseClaim('  🤖 box 开始处理 2026-11-30（会话 x1）  ')).toEqual({ host: 'box', session: 'x1', occurrence: '2026-11-30' });
    expect(parseClaim('🤖 box 开始处理')).toEqual({ host: 'box', session: '', occurrence: '' });
    expect(parseClaim('🤖 box 开始处理（2026-11-30）')).toEqual({ host: 'box', session: '', occurrence: '2026-11-30' });
    expect(parseClaim('🤖 box started working on this (session s9)')).toEqual({ host: 'box', session: 's9', occurrence: '' });
    expect(parseClaim('🤖 box started working on this 2026-11-30 (session s9)')).toEqual({ host: 'box', session: 's9', occurrence: '2026-11-30' });
    expect(parseClaim('🤖 box started working on this')).toEqual({ host: 'box', session: '', occurrence: '' });
  });

  it('anything else is not a claim', () => {
    for (const text of ['开始处理', '🤖  开始处理x', '我觉得 🤖 box 开始处理', '🤖 box 开始处理（会话 有空格 的）', '🤖 box 开始处理（会话 0123456789abcdefg）', '']) {
      expect(parseClaim(text), text).toBeUndefined();
    }
  });

  it('a session is tagged by up to 8 letters and digits of its id; a host by its sanitized one-line label', () => {
    expect(sessionTag('session-ab12-CD34-ef56')).toBe('ab12CD34');
    expect(sessionTag('Session_xyz')).toBe('xyz');
    expect(sessionTag('sessionq')).toBe('q');
    expect(sessionTag('---')).toBe('main');
    const deps = (hostLabel?: string) => ({ hostLabel }) as EngineDeps;
    expect(hostLabelOf(deps('build box'))).toBe('build box');
    expect(hostLabelOf(deps(undefined))).toBe('dsh');
    expect(hostLabelOf(deps('\u0007\u0008'))).toBe('dsh');
    expect(hostLabelOf(deps('a\nb'))).not.toContain('\n');
    expect(hostLabelOf(deps('x'.repeat(100))).length).toBeLessThanOrEqual(60);
    expect(holderOf(deps('box'), 'session-42')).toBe('box#42');
  });
});

describe('the earliest live claim', () => {
  const t0 = Date.UTC(2026, 10, 30, 2, 0, 0);
  const at = (ms: number): string => new Date(ms).toISOString().replace('Z', '+0000');
  const c = (id: string, title: string, ms: number, userId = 'owner'): Comment => ({ id, title, userId, createdTime: at(ms) });
  const lease = 10 * 60_000;

  it('goes by the time each comment was written, never by list position; equal times by id', () => {
    const comments = [c('2', '🤖 b 开始处理（会话 s2）', t0 + 1000), c('1', '🤖 a 开始处理（会话 s1）', t0), c('0', '🤖 z 开始处理（会话 s0）', t0)];
    expect(earliestLiveClaim(comments, 'owner', '', lease, t0 + 2000)?.holder).toBe('z#s0');
    expect(earliestLiveClaim(comments.slice(0, 2), 'owner', '', lease, t0 + 2000)?.holder).toBe('a#s1');
  });

  it('counts only the owner’s claims for this occurrence', () => {
    const comments = [c('1', '🤖 a 开始处理（会话 s1）', t0, 'someone'), c('2', '🤖 b 开始处理 2026-11-29（会话 s2）', t0 + 1), c('3', '🤖 c 开始处理 2026-11-30（会话 s3）', t0 + 2)];
    expect(earliestLiveClaim(comments, 'owner', '2026-11-30', lease, t0 + 5)?.holder).toBe('c#s3');
    expect(earliestLiveClaim(comments, 'owner', '', lease, t0 + 5)).toBeUndefined();
  });

  it('a claim lives for the lease after it or the owner’s last progress after it; a later claim is no progress', () => {
    const claim = c('1', '🤖 a 开始处理', t0);
    expect(earliestLiveClaim([claim], 'owner', '', lease, t0 + lease)?.holder).toBe('a');
    expect(earliestLiveClaim([claim], 'owner', '', lease, t0 + lease + 1)).toBeUndefined();
    const progress = c('2', '已完成：第一步', t0 + 5 * 60_000);
    expect(earliestLiveClaim([claim, progress], 'owner', '', lease, t0 + lease + 1)?.holder).toBe('a');
    expect(earliestLiveClaim([claim, progress], 'owner', '', lease, t0 + 5 * 60_000 + lease + 1)).toBeUndefined();
    const rival = c('3', '🤖 b 开始处理（会话 s2）', t0 + 6 * 60_000);
    expect(earliestLiveClaim([claim, rival], 'owner', '', lease, t0 + lease + 1)?.holder).toBe('b#s2');
    const stranger = c('4', '已完成：第一步', t0 + 5 * 60_000, 'someone');
    expect(earliestLiveClaim([claim, stranger], 'owner', '', lease, t0 + lease + 1)).toBeUndefined();
  });

  it('the person writes with the owner’s account: their questions never keep a claim alive, only the bundle’s own progress does', () => {
    const claim = c('1', '🤖 a 开始处理（会话 s1）', t0);
    // The person checks on a stuck Work, again and again: the claim still lapses a lease after the claim.
    const asks = [c('2', '进展如何？', t0 + 5 * 60_000), c('3', 'How is it going?', t0 + 9 * 60_000), c('4', '开始了吗', t0 + 9 * 60_000 + 1)];
    expect(earliestLiveClaim([claim, ...asks], 'owner', '', lease, t0 + lease)?.activity).toBe(t0);
    expect(earliestLiveClaim([claim, ...asks], 'owner', '', lease, t0 + lease + 1)).toBeUndefined();
    // Each of the bundle's own texts, in both languages (a coalesced post starts with one), is progress.
    const own = [
      '开始处理：复现',
      '已完成：复现\n结果：能复现\n\n开始处理：修好',
      '已跳过：旧接口\n原因：没人用',
      '需要你帮忙：要哪个账号？\n在这里或「🙋」提醒下留言回答',
      '已恢复处理。',
      '已暂停：停在「修好」（已完成 1/2 步）。',
      '模型服务暂时达到用量限制，10:30 会自动接着做。',
      'Started: reproduce',
      'Done: reproduce',
      'Skipped: old API\nReason: unused',
      'I need your help: which account?',
      'Resumed.',
      'Paused (1/2 steps done).',
      'The model service reached a usage limit for now; the work carries on by itself at 10:30.',
    ];
    for (const text of own) {
      expect(earliestLiveClaim([claim, c('5', text, t0 + 5 * 60_000)], 'owner', '', lease, t0 + lease + 1)?.activity, text).toBe(t0 + 5 * 60_000);
    }
  });
});

describe('claiming a Work', () => {
  let h: EngineHarness;
  let projectId: string;
  let taskId: string;
  let logs: string[];
  const A = 'session-aaaa1111';
  const B = 'session-bbbb2222';

  beforeEach(async () => {
    h = await startEngineHarness();
    projectId = h.sim.seedProject({ name: '智能体工作' }).id;
    taskId = h.sim.seedTask({ projectId, title: '部署', items: [{ title: '第一步' }] }).id;
    await h.engine.sync(projectId);
    logs = [];
    h.deps.log = (line) => logs.push(line);
  });
  afterEach(async () => {
    await h.close();
  });

  const comments = (): string[] => h.sim.listComments(taskId).map((x) => x.title);
  const requests = async <T>(run: () => Promise<T>): Promise<{ result: T; count: number }> => {
    h.sim.resetCounters();
    const result = await run();
    return { result, count: h.sim.totalRequests() };
  };

  it('the first claim posts, learns the owner from its answer, confirms with one look, and is remembered: 2 requests', async () => {
    const { result, count } = await requests(() => claimWork(h.deps, taskId, A));
    expect(result).toEqual({ status: 'won', posted: true });
    expect(count).toBe(2);
    expect(Object.keys(h.sim.counters()).sort()).toEqual(['GET /project/{pid}/task/{tid}/comments', 'POST /project/{pid}/task/{tid}/comment']);
    expect(comments()).toEqual(['🤖 test-host 开始处理（会话 aaaa1111）']);
    const state = await h.state();
    expect(state.owners[projectId]).toBe(String(h.sim.listComments(taskId)[0]!.userId));
    expect(state.works[taskId]!.claim).toEqual({ holder: 'test-host#aaaa1111', at: h.clock.now });
  });

  it('the holder claiming again needs one read and posts nothing; another session of the same host loses and takes its claim back', async () => {
    await claimWork(h.deps, taskId, A);
    const again = await requests(() => claimWork(h.deps, taskId, A));
    expect(again).toEqual({ result: { status: 'won', posted: false }, count: 1 });
    expect(await claimWork(h.deps, taskId, B)).toEqual({ status: 'lost' });
    expect(comments()).toEqual(['🤖 test-host 开始处理（会话 aaaa1111）']);
    // The record names who holds it (for status and for the lease), not only that someone else does.
    expect((await h.state()).works[taskId]!.claim?.holder).toBe('test-host#aaaa1111');
    await expect(requireClaim(h.deps, taskId, B)).rejects.toMatchObject({ code: 'claimed_elsewhere' });
  });

  it('a session taking over a crashed one of this machine posts its own claim and wins', async () => {
    await claimWork(h.deps, taskId, A);
    expect(await claimWork(h.deps, taskId, B, { inheritFrom: [A] })).toEqual({ status: 'won', posted: true });
    expect(comments()).toEqual(['🤖 test-host 开始处理（会话 aaaa1111）', '🤖 test-host 开始处理（会话 bbbb2222）']);
  });

  it('after the lease with no progress, another session wins; a rival claim that races in first wins over ours, which is taken back', async () => {
    await claimWork(h.deps, taskId, A);
    h.clock.now = Date.now() + DEFAULT_CLAIM_LEASE_MS + 60_000;
    expect(await claimWork(h.deps, taskId, B)).toEqual({ status: 'won', posted: true });

    const other = h.sim.seedTask({ projectId, title: '另一个', items: [{ title: '一' }] }).id;
    await h.engine.sync(projectId);
    h.clock.now = Date.now();
    // Another machine's claim lands just before ours (the owner is known now, so ours is decided by a second read).
    const off = h.sim.onRequest((req) => {
      if (req.route === 'POST /project/{pid}/task/{tid}/comment') {
        off();
        h.sim.addComment(projectId, other, '🤖 far-away 开始处理（会话 zz99）');
      }
    });
    expect(await claimWork(h.deps, other, A)).toEqual({ status: 'lost' });
    expect(h.sim.listComments(other).map((x) => x.title)).toEqual(['🤖 far-away 开始处理（会话 zz99）']);
  });

  it('a claim posted whose check read is refused is recorded as the session\'s: taken up again, nothing is posted twice', async () => {
    const other = h.sim.seedTask({ projectId, title: '别的', items: [{ title: '一步' }] }).id;
    await h.engine.sync(projectId);
    await claimWork(h.deps, other, B);
    expect((await h.state()).owners[projectId]).toBeDefined();
    // No live claim is known, so the claim is posted first; the read after it (the check) is answered 429.
    h.sim.injectFault({ route: 'GET /project/{pid}/task/{tid}/comments', kind: 'status', status: 429, times: Infinity });
    await expect(claimWork(h.deps, taskId, A)).rejects.toMatchObject({ code: 'rate_limited' });
    expect(comments()).toEqual(['🤖 test-host 开始处理（会话 aaaa1111）']);
    expect((await h.state()).works[taskId]?.claim?.holder).toBe('test-host#aaaa1111');
    h.sim.clearFaults();
    expect(await claimWork(h.deps, taskId, A)).toEqual({ status: 'won', posted: false });
    expect(comments()).toHaveLength(1);
  });

  it('a claim posted first whose answer was lost is looked for before the next post: it is found and kept, never posted twice', async () => {
    h.sim.injectFault({ route: 'POST /project/{pid}/task/{tid}/comment', kind: 'truncate' });
    await expect(claimWork(h.deps, taskId, A)).rejects.toBeDefined();
    expect(comments()).toEqual(['🤖 test-host 开始处理（会话 aaaa1111）']);
    expect((await h.state()).works[taskId]?.claimPosting).toBeDefined();
    const { result, count } = await requests(() => claimWork(h.deps, taskId, A));
    expect(result).toEqual({ status: 'won', posted: false });
    expect(count).toBe(1);
    expect(comments()).toHaveLength(1);
    expect((await h.state()).works[taskId]?.claimPosting).toBeUndefined();
  });

  it('a losing claim that cannot be taken back is logged and still loses', async () => {
    await claimWork(h.deps, taskId, A);
    await h.deps.state.update((s) => {
      delete s.owners[projectId];
    });
    h.sim.injectFault({ route: 'DELETE /project/{pid}/task/{tid}/comment/{cid}', kind: 'status', status: 500, times: Infinity });
    // Not knowing the owner, B posts first; the second read shows A's earlier claim.
    expect(await claimWork(h.deps, taskId, B)).toEqual({ status: 'lost' });
    expect(logs.some((l) => l.startsWith('a losing claim comment could not be removed'))).toBe(true);
  });

  it('a claim this session posted before its process died teaches the owner and is kept: nothing is posted again', async () => {
    await claimWork(h.deps, taskId, A);
    await h.deps.state.update((s) => {
      delete s.owners[projectId];
    });
    const { result, count } = await requests(() => claimWork(h.deps, taskId, A));
    expect(result).toEqual({ status: 'won', posted: false });
    expect(count).toBe(1);
    expect((await h.state()).owners[projectId]).toBeDefined();
  });

  it('claims of other accounts never block the owner’s agents', async () => {
    h.sim.addComment(projectId, taskId, '🤖 intruder 开始处理（会话 evil）', { userId: STRANGER });
    expect(await claimWork(h.deps, taskId, A)).toEqual({ status: 'won', posted: true });
  });

  /** The same gateway, over the same HTTP, but the answer to a posted comment names no author (a shorter answer). */
  const authorless = (): EngineDeps => ({
    ...h.deps,
    gateway: Object.assign(Object.create(h.deps.gateway) as EngineDeps['gateway'], {
      addComment: async (...args: Parameters<EngineDeps['gateway']['addComment']>) => ({ ...(await h.deps.gateway.addComment(...args)), userId: undefined }),
    }),
  });

  it('a claim whose answer names no author, the owner unknown: it is taken as won and recorded, without a read', async () => {
    const { result, count } = await requests(() => claimWork(authorless(), taskId, A));
    expect(result).toEqual({ status: 'won', posted: true });
    expect(count).toBe(1);
    const state = await h.state();
    expect(state.owners[projectId]).toBeUndefined();
    expect(state.works[taskId]!.claim).toEqual({ holder: 'test-host#aaaa1111', at: h.clock.now });
  });

  it('a claim whose answer names no author, the owner known: the check read still decides against a rival that raced in', async () => {
    const other = h.sim.seedTask({ projectId, title: '另一个', items: [{ title: '一' }] }).id;
    await h.engine.sync(projectId);
    await claimWork(h.deps, other, B);
    const owner = (await h.state()).owners[projectId];
    expect(owner).toBeDefined();
    const off = h.sim.onRequest((req) => {
      if (req.route === 'POST /project/{pid}/task/{tid}/comment') {
        off();
        h.sim.addComment(projectId, taskId, '🤖 far-away 开始处理（会话 zz99）');
      }
    });
    expect(await claimWork(authorless(), taskId, A)).toEqual({ status: 'lost' });
    expect(comments()).toEqual(['🤖 far-away 开始处理（会话 zz99）']);
    expect((await h.state()).owners[projectId]).toBe(owner);
  });

  it('a losing claim that cannot be taken back, with no log to say so, still loses', async () => {
    await claimWork(h.deps, taskId, A);
    await h.deps.state.update((s) => {
      delete s.owners[projectId];
    });
    h.sim.injectFault({ route: 'DELETE /project/{pid}/task/{tid}/comment/{cid}', kind: 'status', status: 500, times: Infinity });
    expect(await claimWork({ ...h.deps, log: undefined }, taskId, B)).toEqual({ status: 'lost' });
  });

  it('a lost claim records the holder’s last activity in Dida, not the time it was looked at', async () => {
    h.clock.now = Date.now();
    await claimWork(h.deps, taskId, A);
    const claimedAt = (await h.state()).works[taskId]!.claim!.at;
    h.clock.now += 5 * 60_000;
    expect(await claimWork(h.deps, taskId, B)).toEqual({ status: 'lost' });
    const claim = (await h.state()).works[taskId]!.claim!;
    expect(claim.holder).toBe('test-host#aaaa1111');
    expect(claim.at).toBeLessThan(h.clock.now - 60_000);
    expect(Math.abs(claim.at - claimedAt)).toBeLessThanOrEqual(60_000);
    // The holder itself claiming again is activity now (its lease runs from this call, not from its claim comment).
    expect(await claimWork(h.deps, taskId, A)).toEqual({ status: 'won', posted: false });
    expect((await h.state()).works[taskId]!.claim).toEqual({ holder: 'test-host#aaaa1111', at: h.clock.now });
  });

  it('the claim seen last is refreshed when its holder changes or after a minute, not on every call', async () => {
    await claimWork(h.deps, taskId, A);
    const first = (await h.state()).works[taskId]!.claim!.at;
    h.clock.now += 60_000;
    await claimWork(h.deps, taskId, A);
    expect((await h.state()).works[taskId]!.claim!.at).toBe(first);
    h.clock.now += 1;
    await claimWork(h.deps, taskId, A);
    expect((await h.state()).works[taskId]!.claim!.at).toBe(h.clock.now);
  });
});

describe('held elsewhere', () => {
  const deps = { hostLabel: 'box', now: () => 1_000_000, claimLeaseMs: 1_000 } as EngineDeps;
  const work = (holder?: string, at = 1_000_000) => makeWork([], holder ? { claim: { holder, at } } : {});

  it('is another session’s claim within the lease', () => {
    expect(heldElsewhere(deps, work(), 'session-a')).toBe(false);
    expect(heldElsewhere(deps, work('box#a'), 'session-a')).toBe(false);
    expect(heldElsewhere(deps, work('box#b'), 'session-a')).toBe(true);
    expect(heldElsewhere(deps, work('box#b'), undefined)).toBe(false);
    expect(heldElsewhere(deps, work('far#b'), undefined)).toBe(true);
    expect(heldElsewhere(deps, work('elsewhere', 999_000), 'session-a')).toBe(true);
    expect(heldElsewhere(deps, work('elsewhere', 998_999), 'session-a')).toBe(false);
    expect(heldElsewhere({ ...deps, claimLeaseMs: undefined }, work('elsewhere', 1_000_000 - DEFAULT_CLAIM_LEASE_MS), 'session-a')).toBe(true);
  });

  it('a claim text reads back as the claim it is', () => {
    const h = { hostLabel: 'box', locale: getLocale('zh') } as EngineDeps;
    expect(parseClaim(claimText(h, '2026-11-30', 'session-abc'))).toEqual({ host: 'box', session: 'abc', occurrence: '2026-11-30' });
    expect(parseClaim(claimText(h, '', 'session-abc'))).toEqual({ host: 'box', session: 'abc', occurrence: '' });
  });
});
