// How a step's commits read in Dida (src/core/evidence/repo-evidence.ts), from a fresh import (its id pattern and its
// levels of detail are built at load): every level of detail line by line, the richest level that fits a budget (one
// that fits exactly counts), commit ids that are not plain hex, subjects and file names the text guard empties.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { getLocale } from '../../src/core/text/locale';
import type { StepEvidence } from '../../src/core/evidence/repo-evidence';

type Evidence = typeof import('../../src/core/evidence/repo-evidence');
let e: Evidence;
// Loaded afresh before each test (not once for the file), so what the load builds counts for that test.
beforeEach(async () => {
  vi.resetModules();
  e = await import('../../src/core/evidence/repo-evidence');
});
const en = getLocale('en');
const GITHUB = { kind: 'github' as const, base: 'https://github.com/acme/web' };
const evidence: StepEvidence = {
  commits: [
    { sha: 'abc1234', subject: 'Add the login form', files: ['src/a.ts', 'src/b.ts', 'src/c.ts', 'src/d.ts'], moreFiles: 1 },
    { sha: 'def5678', subject: '修复', files: [], moreFiles: 0 },
    { sha: 'bad sha', subject: 'ghost', files: ['x'], moreFiles: 0 },
    { sha: '1234567', subject: '<think>', files: ['<think>', 'ok.ts'], moreFiles: 0 },
    { sha: 'aaa1111', subject: `${'<think>'.repeat(20)}real\nsubject`, files: [], moreFiles: 0 },
  ],
  moreCommits: 2,
  branch: 'feature/x',
  web: GITHUB,
};
const link = (sha: string) => `  https://github.com/acme/web/commit/${sha}`;

describe('evidence from a fresh import', () => {
  it('shows only plain hex ids of 7 to 64 digits, cut to 12', () => {
    expect(e.shortSha('abc1234')).toBe('abc1234');
    expect(e.shortSha('abc123')).toBe('');
    expect(e.shortSha('xabc1234')).toBe('');
    expect(e.shortSha('abc1234x')).toBe('');
    expect(e.shortSha('ABC1234')).toBe('');
    expect(e.shortSha('a'.repeat(64))).toBe('a'.repeat(12));
    expect(e.shortSha('a'.repeat(65))).toBe('');
  });

  it('has six levels, from every file and link down to a count', () => {
    expect(e.EVIDENCE_LEVELS).toEqual([
      { files: e.MAX_FILES_PER_COMMIT, links: true, commits: e.MAX_COMMITS_PER_STEP },
      { files: 3, links: true, commits: e.MAX_COMMITS_PER_STEP },
      { files: 0, links: true, commits: e.MAX_COMMITS_PER_STEP },
      { files: 0, links: false, commits: e.MAX_COMMITS_PER_STEP },
      { files: 0, links: false, commits: 3 },
      { files: 0, links: false, commits: 0 },
    ]);
  });

  it('each level, line by line: a bad id is left out, an emptied subject leaves no trailing space, emptied file names are not listed', () => {
    const lines = e.EVIDENCE_LEVELS.map((d) => e.commitLines(en, evidence, d));
    expect(lines[0]).toEqual([
      '· abc1234 Add the login form', '  files changed (5): src/a.ts, src/b.ts, src/c.ts, src/d.ts and more', link('abc1234'),
      '· def5678 修复', link('def5678'),
      '· 1234567', '  files changed (2): ok.ts and more', link('1234567'),
      '· aaa1111 real subject', link('aaa1111'),
      '· and 2 more commit(s)',
    ]);
    expect(lines[1]![1]).toBe('  files changed (5): src/a.ts, src/b.ts, src/c.ts and more');
    expect(lines[2]).toEqual(['· abc1234 Add the login form', link('abc1234'), '· def5678 修复', link('def5678'), '· 1234567', link('1234567'), '· aaa1111 real subject', link('aaa1111'), '· and 2 more commit(s)']);
    expect(lines[3]).toEqual(['· abc1234 Add the login form', '· def5678 修复', '· 1234567', '· aaa1111 real subject', '· and 2 more commit(s)']);
    expect(lines[4]).toEqual(['· abc1234 Add the login form', '· def5678 修复', '· and 4 more commit(s)']);
    expect(lines[5]).toEqual(['· 7 commit(s)']);
    // Every file listed: the plain "files changed" form.
    expect(e.commitLines(en, { ...evidence, commits: [{ sha: 'abc1234', subject: 's', files: ['a.ts'], moreFiles: 0 }], moreCommits: 0 }, e.EVIDENCE_LEVELS[0]!)[1]).toBe('  files changed (1): a.ts');
  });

  it('the richest level that fits the budget, a level that fits exactly included; nothing when none fits', () => {
    const heading = 'Commits (branch feature/x):';
    for (const detail of e.EVIDENCE_LEVELS) {
      const text = [heading, ...e.commitLines(en, evidence, detail)].join('\n');
      expect(e.stepEvidenceText(en, evidence, text.length)).toBe(text);
    }
    expect(e.stepEvidenceText(en, evidence, 30)).toBe('');
    expect(e.stepEvidenceText(en, { ...evidence, branch: undefined }, 10_000).split('\n')[0]).toBe(en.t('dida.evidence.headingNoBranch'));
  });
});
