// How claims are read back from Dida (src/core/queue/claims.ts), from a fresh import before each test: the patterns
// for claim comments and for the notices that end a claim are built from the locale catalogs when the module loads,
// so a test of a module imported once would never see them change. Every template of both locales is read back.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Comment } from '../../src/dida/types';

let claims: typeof import('../../src/core/queue/claims');
let holders: typeof import('../../src/core/queue/claim-holders');
let locale: typeof import('../../src/core/text/locale');
beforeEach(async () => {
  vi.resetModules();
  claims = await import('../../src/core/queue/claims');
  holders = await import('../../src/core/queue/claim-holders');
  locale = await import('../../src/core/text/locale');
});

const LOCALE_IDS = ['zh', 'en'] as const;
const at = (ms: number) => new Date(ms).toISOString().replace('Z', '+0000');
const comment = (id: string, title: string, ms: number, userId = 'owner'): Comment => ({ id, title, createdTime: at(ms), userId }) as Comment;

describe('claim comments, read back', () => {
  it('every claim template of both locales gives back its host, session and occurrence, also a host with pattern characters', () => {
    for (const id of LOCALE_IDS) {
      const l = locale.getLocale(id);
      for (const host of ['box', 'my.host (1)+[a]*?', '$^{x}|\\']) {
        const vars = { host, session: 'ab12CD34', occurrence: '2026-12-03' };
        expect(claims.parseClaim(l.t('dida.comment.claimOccurrence', vars)), id).toEqual({ host, session: 'ab12CD34', occurrence: '2026-12-03' });
        expect(claims.parseClaim(l.t('dida.comment.claim', vars)), id).toEqual({ host, session: 'ab12CD34', occurrence: '' });
        expect(claims.parseClaim(l.t('dida.comment.claimOccurrenceLegacy', vars)), id).toEqual({ host, session: '', occurrence: '2026-12-03' });
        expect(claims.parseClaim(l.t('dida.comment.claimLegacy', vars)), id).toEqual({ host, session: '', occurrence: '' });
        // Spaces around are trimmed; a claim with text after it is not a claim.
        expect(claims.parseClaim(`  ${l.t('dida.comment.claim', vars)}\n`), id).toEqual({ host, session: 'ab12CD34', occurrence: '' });
        expect(claims.parseClaim(`${l.t('dida.comment.claim', vars)} 还有话`), id).toBeUndefined();
      }
    }
  });

  it('a session tag is 1 to 16 letters or digits, an occurrence digits and dashes', () => {
    const zh = locale.getLocale('zh');
    expect(claims.parseClaim(zh.t('dida.comment.claim', { host: 'box', session: 'a-b' }))).toBeUndefined();
    expect(claims.parseClaim(zh.t('dida.comment.claim', { host: 'box', session: '' }))).toBeUndefined();
    expect(claims.parseClaim(zh.t('dida.comment.claim', { host: 'box', session: 'x'.repeat(17) }))).toBeUndefined();
    expect(claims.parseClaim(zh.t('dida.comment.claim', { host: 'box', session: 'x'.repeat(16) }))?.session).toBe('x'.repeat(16));
    expect(claims.parseClaim(zh.t('dida.comment.claimOccurrence', { host: 'box', session: 's1', occurrence: 'tomorrow' }))).toBeUndefined();
    expect(claims.parseClaim('进度：做完了第一步')).toBeUndefined();
  });
});

describe('notices that end a claim, read back', () => {
  it('a release and a lease report of both locales name the claim they end, whatever free text follows', () => {
    for (const id of LOCALE_IDS) {
      const l = locale.getLocale(id);
      for (const host of ['box', 'my.host (1)+[a]*?']) {
        const where = id === 'zh' ? '做到第二步，' : 'It got to step two. ';
        expect(claims.parseClaimEnd(l.t('dida.comment.released', { host, session: 's1', where })), id).toEqual({ host, session: 's1' });
        expect(claims.parseClaimEnd(l.t('dida.comment.released', { host, session: 's1', where: '' })), id).toEqual({ host, session: 's1' });
        expect(claims.parseClaimEnd(l.t('dida.comment.claimExpired', { host, session: 's1', minutes: 31, where })), id).toEqual({ host, session: 's1' });
        expect(claims.parseClaimEnd(`  ${l.t('dida.comment.claimExpired', { host, session: 'main', minutes: 90, where: '' })}`), id).toEqual({ host, session: 'main' });
      }
      // A claim is not a notice that ends one, and a notice is not a claim.
      expect(claims.parseClaimEnd(l.t('dida.comment.claim', { host: 'box', session: 's1' })), id).toBeUndefined();
      expect(claims.parseClaim(l.t('dida.comment.released', { host: 'box', session: 's1', where: '' })), id).toBeUndefined();
    }
    expect(claims.parseClaimEnd('🤖 box 停止处理（会话 a-b）：现在没有人在处理，其他会话可以接手。')).toBeUndefined();
    expect(claims.parseClaimEnd('随便写的评论')).toBeUndefined();
  });
});

describe('the earliest live claim, with notices and progress', () => {
  const zh = () => locale.getLocale('zh');
  const claim = (host: string, session: string) => zh().t('dida.comment.claim', { host, session });
  const released = (host: string, session: string) => zh().t('dida.comment.released', { host, session, where: '' });

  it('a release ends the claim of its own host and session only; a claim of an older version (no session) ends with any session of its host', () => {
    const lease = claims.DEFAULT_CLAIM_LEASE_MS;
    expect(lease).toBe(30 * 60_000);
    const now = 10 * 60_000;
    const list = [comment('1', claim('box', 's1'), 1000), comment('2', claim('box', 's2'), 2000), comment('3', released('box', 's2'), 3000)];
    expect(claims.earliestLiveClaim(list, 'owner', '', lease, now)?.holder).toBe('box#s1');
    // The release of s1 by another host does not end it; by its own host it does, and s2 (released too) is not next.
    expect(claims.earliestLiveClaim([...list, comment('4', released('other', 's1'), 4000)], 'owner', '', lease, now)?.holder).toBe('box#s1');
    expect(claims.earliestLiveClaim([...list, comment('4', released('box', 's1'), 4000)], 'owner', '', lease, now)).toBeUndefined();
    // A release written before the claim does not end it.
    expect(claims.earliestLiveClaim([comment('0', released('box', 's1'), 500), ...list], 'owner', '', lease, now)?.holder).toBe('box#s1');
    const legacy = [comment('1', zh().t('dida.comment.claimLegacy', { host: 'box' }), 1000)];
    expect(claims.earliestLiveClaim(legacy, 'owner', '', lease, now)?.holder).toBe('box');
    expect(claims.earliestLiveClaim([...legacy, comment('2', released('box', 'zz'), 2000)], 'owner', '', lease, now)).toBeUndefined();
    expect(claims.earliestLiveClaim([...legacy, comment('2', released('other', 'zz'), 2000)], 'owner', '', lease, now)?.holder).toBe('box');
  });

  it('a lease runs from the last progress after the claim; notices and other claims are not progress', () => {
    const lease = 60_000;
    const list = [comment('1', claim('box', 's1'), 0), comment('2', claim('box', 's2'), 10_000), comment('3', released('other', 's9'), 50_000)];
    expect(claims.earliestLiveClaim(list, 'owner', '', lease, 61_000)).toMatchObject({ holder: 'box#s2', activity: 10_000 });
    const progressed = [...list, comment('4', '已完成：第一步', 40_000)];
    expect(claims.earliestLiveClaim(progressed, 'owner', '', lease, 90_000)).toMatchObject({ holder: 'box#s1', activity: 40_000 });
    expect(claims.earliestLiveClaim(progressed, 'owner', '', lease, 100_001)).toBeUndefined();
  });
});

describe('what a claim says about its host and session', () => {
  it('the session tag, the host label and the claim text', () => {
    expect(holders.sessionTag('session-ab12cd34ef')).toBe('ab12cd34');
    expect(holders.sessionTag('Session_x-y-z')).toBe('xyz');
    expect(holders.sessionTag('my-session-1')).toBe('mysessio');
    expect(holders.sessionTag('---')).toBe('main');
    const deps = { hostLabel: '  my\nlaptop  ', locale: locale.getLocale('zh') } as unknown as Parameters<typeof holders.hostLabelOf>[0];
    expect(holders.hostLabelOf(deps)).toBe('my laptop');
    expect(holders.hostLabelOf({ ...deps, hostLabel: undefined })).toBe('dsh');
    expect(holders.hostLabelOf({ ...deps, hostLabel: '\u200b' })).toBe('dsh');
    expect(holders.holderOf(deps, 'session-s1')).toBe('my laptop#s1');
    expect(claims.claimText({ ...deps, hostLabel: 'h'.repeat(500) }, '', 'session-s1').length).toBeLessThanOrEqual(200);
    expect(claims.claimText(deps, '2026-12-03', 'session-s1')).toBe('🤖 my laptop 开始处理 2026-12-03（会话 s1）');
    expect(claims.claimText({ ...deps, hostLabel: 'a\nb' }, '', 'session-s1')).not.toContain('\n');
  });
});
