// The texts around a review (src/core/review/acceptance-report.ts) not pinned elsewhere: the three titles (one line,
// cut to Dida's length), the step lines without evidence, the usage line, who did the work without a directory, the
// holder forms that name nobody, the report cut when even the plain one is too long, and which titles are the bundle's.
import { describe, expect, it } from 'vitest';
import { acceptanceReport, acceptanceTitle, isBundleTaskTitle, reportOrigin, reworkTitle, waitingTitle } from '../../src/core/review/acceptance-report';
import { getLocale } from '../../src/core/text/locale';
import { branchUrl, commitLines, EVIDENCE_LEVELS, type StepEvidence } from '../../src/core/evidence/repo-evidence';
import { MAX_REPORT_LENGTH, MAX_TITLE_LENGTH } from '../../src/core/text/text-guard';
import { makeStep, makeWork } from '../helpers/work-fixtures';

const zh = getLocale('zh');
const en = getLocale('en');

describe('titles', () => {
  it('each title is the locale text for the Work on one line, cut to Dida’s title length', () => {
    for (const [make, key] of [
      [acceptanceTitle, 'dida.acceptance.title'],
      [reworkTitle, 'dida.rework.title'],
      [waitingTitle, 'dida.waiting.title'],
    ] as const) {
      expect(make(zh, { title: '部署' })).toBe(zh.t(key, { title: '部署' }));
      expect(make(zh, { title: '两\n行' })).not.toContain('\n');
      expect(make(zh, { title: '长'.repeat(400) }).length).toBeLessThanOrEqual(MAX_TITLE_LENGTH);
      expect(make(zh, { title: '长'.repeat(400) }).length).toBeGreaterThan(MAX_TITLE_LENGTH - 5);
    }
    expect(new Set([acceptanceTitle(zh, { title: 'x' }), reworkTitle(zh, { title: 'x' }), waitingTitle(zh, { title: 'x' })]).size).toBe(3);
  });

  it('the bundle’s own tasks are told by their prefix in any locale, followed by a space', () => {
    const locales = [zh, en];
    expect(isBundleTaskTitle(locales, acceptanceTitle(zh, { title: 'x' }))).toBe(true);
    expect(isBundleTaskTitle(locales, acceptanceTitle(en, { title: 'x' }))).toBe(true);
    expect(isBundleTaskTitle(locales, waitingTitle(zh, { title: 'x' }))).toBe(true);
    expect(isBundleTaskTitle(locales, `${zh.t('dida.reminderPrefix')} 任何`)).toBe(true);
    expect(isBundleTaskTitle(locales, `${zh.t('dida.acceptancePrefix')}紧贴`)).toBe(false);
    expect(isBundleTaskTitle(locales, '普通任务')).toBe(false);
    expect(isBundleTaskTitle([en], `${zh.t('dida.acceptancePrefix')} x`)).toBe(zh.t('dida.acceptancePrefix') === en.t('dida.acceptancePrefix'));
    expect(isBundleTaskTitle([], acceptanceTitle(zh, { title: 'x' }))).toBe(false);
  });
});

describe('the report', () => {
  it('a step done without a result, a skipped step without a reason, the usage line and the session without a directory', () => {
    const work = makeWork(
      [
        makeStep({ id: 'a', title: '甲', status: 'completed' }),
        makeStep({ id: 'b', title: '乙', status: 'skipped' }),
        makeStep({ id: 'c', title: '丙', status: 'deleted' }),
        makeStep({ id: 'd', title: '丁', status: 'completed', resolution: '好了' }),
      ],
      { title: '工作' },
    );
    const report = acceptanceReport(zh, work, { host: 'box', session: 's1' }, '用量：1 次请求');
    expect(report.split('\n')).toEqual([
      zh.t('dida.acceptance.intro', { title: '工作' }),
      '',
      zh.t('dida.acceptance.stepDone', { step: '甲' }),
      zh.t('dida.acceptance.stepSkipped', { step: '乙', reason: '' }),
      zh.t('dida.acceptance.stepDoneWithResult', { step: '丁', resolution: '好了' }),
      '',
      zh.t('dida.acceptance.session', { host: 'box', session: 's1' }),
      '用量：1 次请求',
      '',
      ...zh.t('dida.acceptance.howTo').split('\n'),
    ]);
  });

  it('only the usage line, without origin: one blank line before it', () => {
    const work = makeWork([makeStep({ id: 'a', title: 'A', status: 'completed' })], { title: 'T' });
    expect(acceptanceReport(en, work, undefined, 'usage line')).toBe(`${en.t('dida.acceptance.intro', { title: 'T' })}\n\n${en.t('dida.acceptance.stepDone', { step: 'A' })}\n\nusage line\n\n${en.t('dida.acceptance.howTo')}`);
  });

  it('a report too long even without commits is cut to the report length', () => {
    const steps = Array.from({ length: 60 }, (_, i) => makeStep({ id: `s${i}`, title: `步骤 ${i}`, status: 'completed', resolution: '很长的结果'.repeat(20) }));
    const report = acceptanceReport(zh, makeWork(steps));
    expect(report.length).toBeLessThanOrEqual(MAX_REPORT_LENGTH);
    expect(report.length).toBeGreaterThan(MAX_REPORT_LENGTH - 50);
    expect(report.startsWith(zh.t('dida.acceptance.intro', { title: 'Work' }))).toBe(true);
  });
});

describe('who did the work', () => {
  it('names a host and a session only for host#session; a holder with no host or no session names nobody', () => {
    expect(reportOrigin({ claim: { holder: 'box#s1', at: 0 } })).toEqual({ host: 'box', session: 's1' });
    expect(reportOrigin({ claim: { holder: '#s1', at: 0 } })).toBeUndefined();
    expect(reportOrigin({ claim: { holder: 'box#', at: 0 } })).toBeUndefined();
    expect(reportOrigin({ claim: { holder: 'box', at: 0 } })).toBeUndefined();
    expect(reportOrigin({ claim: { holder: 'box#s1', at: 0 }, dir: '/srv/app' })).toEqual({ host: 'box', session: 's1', dir: '/srv/app' });
  });
});

describe('the commits and the branch in the report', () => {
  const web = { kind: 'github' as const, base: 'https://github.com/o/r' };
  const commit = (n: number, files: string[] = []) => ({ sha: `${n}`.repeat(40).slice(0, 40), subject: `提交 ${n}`, files, moreFiles: 0 });
  const ev = (commits: StepEvidence['commits'], fields: Partial<StepEvidence> = {}): StepEvidence => ({ commits, moreCommits: 0, ...fields });
  const full = EVIDENCE_LEVELS[0]!;

  it('each commit once, under the first completed step that made it; the branch of the newest step that names one, with its link', () => {
    const work = makeWork(
      [
        makeStep({ id: 'a', title: '甲', status: 'completed', evidence: ev([commit(1, ['a.ts']), commit(2)], { branch: 'feat/a', web }) }),
        makeStep({ id: 'b', title: '乙', status: 'completed', evidence: ev([commit(2), commit(3)], { branch: 'feat/b', web }) }),
        makeStep({ id: 'c', title: '丙', status: 'skipped', resolution: '不需要', evidence: ev([commit(4)], { branch: 'feat/c', web }) }),
        makeStep({ id: 'd', title: '丁', status: 'completed', evidence: ev([commit(1)], { branch: 'feat/d', web }) }),
        makeStep({ id: 'e', title: '戊', status: 'completed', evidence: ev([commit(5)]) }),
      ],
      { title: '工作' },
    );
    expect(acceptanceReport(zh, work).split('\n')).toEqual([
      zh.t('dida.acceptance.intro', { title: '工作' }),
      '',
      zh.t('dida.acceptance.stepDone', { step: '甲' }),
      ...commitLines(zh, ev([commit(1, ['a.ts']), commit(2)], { web }), full),
      zh.t('dida.acceptance.stepDone', { step: '乙' }),
      ...commitLines(zh, ev([commit(3)], { web }), full),
      zh.t('dida.acceptance.stepSkipped', { step: '丙', reason: '不需要' }),
      zh.t('dida.acceptance.stepDone', { step: '丁' }),
      zh.t('dida.acceptance.stepDone', { step: '戊' }),
      ...commitLines(zh, ev([commit(5)]), full),
      '',
      zh.t('dida.acceptance.repo', { branch: 'feat/b' }),
      zh.t('dida.acceptance.repoLink', { url: branchUrl(web, 'feat/b') }),
      '',
      ...zh.t('dida.acceptance.howTo').split('\n'),
    ]);
  });

  it('a branch without a known web address has no link; a branch that cleans to nothing has no line', () => {
    const step = (evidence: StepEvidence) => makeWork([makeStep({ id: 'a', title: '甲', status: 'completed', evidence })], { title: 'W' });
    const noWeb = acceptanceReport(zh, step(ev([commit(1)], { branch: 'main' }))).split('\n');
    expect(noWeb).toContain(zh.t('dida.acceptance.repo', { branch: 'main' }));
    expect(noWeb.filter((l) => l.includes('main'))).toHaveLength(1);
    const blank = acceptanceReport(zh, step(ev([commit(1)], { branch: '\u200b', web })));
    expect(blank).toBe(acceptanceReport(zh, step(ev([commit(1)], { web }))));
  });

  it('without commits, origin or usage there is no extra block: one blank line before how to accept', () => {
    const work = makeWork([makeStep({ id: 'a', title: 'A', status: 'completed' })], { title: 'T' });
    expect(acceptanceReport(en, work)).toBe(`${en.t('dida.acceptance.intro', { title: 'T' })}\n\n${en.t('dida.acceptance.stepDone', { step: 'A' })}\n\n${en.t('dida.acceptance.howTo')}`);
  });

  it('a report that fits only without the branch line is the plain report, whole', () => {
    const withTitle = (title: string, evidence?: StepEvidence) => makeWork([makeStep({ id: 'a', title, status: 'completed', ...(evidence ? { evidence } : {}) })], { title: 'W' });
    const base = acceptanceReport(zh, withTitle('x')).length;
    const title = 'x'.repeat(1 + MAX_REPORT_LENGTH - 1 - base);
    const plain = acceptanceReport(zh, withTitle(title));
    expect(plain.length).toBe(MAX_REPORT_LENGTH - 1);
    expect(acceptanceReport(zh, withTitle(title, ev([commit(1)], { branch: 'main' })))).toBe(plain);
  });

  it('a report exactly at the report length keeps its richest detail', () => {
    const withTitle = (title: string) => makeWork([makeStep({ id: 'a', title, status: 'completed', evidence: ev([commit(1, ['src/a.ts', 'src/b.ts', 'src/c.ts', 'src/d.ts'])], { branch: 'main', web }) })], { title: 'W' });
    const base = acceptanceReport(zh, withTitle('x')).length;
    const title = 'x'.repeat(1 + MAX_REPORT_LENGTH - base);
    const report = acceptanceReport(zh, withTitle(title));
    expect(report.length).toBe(MAX_REPORT_LENGTH);
    expect(report).toContain('src/d.ts');
  });
});

