// What the agent did in the repository while a step ran (commits, branch, links) and how it reads in Dida.
import type { Locale } from '../text/locale';
import { sanitizeForDida, truncateGraphemes } from '../text/text-guard';

/** Commits listed per step at most; more are counted. */
export const MAX_COMMITS_PER_STEP = 10;
/** Files listed per commit at most; more are counted. */
export const MAX_FILES_PER_COMMIT = 20;
/** Longest commit subject shown. */
const SUBJECT_LENGTH = 120;
/** Longest branch name or file path shown. */
const NAME_LENGTH = 160;
/** Characters shown of a commit id: git's abbreviation, never more than this. */
const SHA_LENGTH = 12;

export interface CommitEvidence {
  /** git's abbreviated commit id (7+ hex digits). */
  sha: string;
  subject: string;
  /** Files the commit changed, at most MAX_FILES_PER_COMMIT. */
  files: string[];
  /** Files changed beyond those listed. */
  moreFiles: number;
}

/** A web home of the repository whose URL forms are known. */
export interface RepoWeb {
  kind: 'github' | 'gitlab' | 'gitee';
  /** `https://host/owner/repo`, no trailing slash. */
  base: string;
}

/** What a step's completion records: its commits (oldest first), how many more there were, the branch and the web home. */
export interface StepEvidence {
  commits: CommitEvidence[];
  moreCommits: number;
  branch?: string;
  web?: RepoWeb;
}

/**
 * Reads a working directory's repository with plain git, bounded. Every method answers undefined (never throws) for a
 * directory that is not a repository, a machine without git, or a git that fails or takes too long.
 */
export interface RepoEvidencePort {
  /** The full id of the commit HEAD points at. */
  head(cwd: string): Promise<string | undefined>;
  /** Commits reachable from HEAD but not from `sha`, oldest first (the newest MAX_COMMITS_PER_STEP), and how many more. */
  commitsSince(cwd: string, sha: string): Promise<{ commits: CommitEvidence[]; more: number } | undefined>;
  /** The checked-out branch (none when detached) and the web home of its remote, when known. */
  remote(cwd: string): Promise<{ branch?: string; web?: RepoWeb } | undefined>;
}

const SHORT_SHA = /^[0-9a-f]{7,64}$/;

/** The commit id as shown: hex only, at most SHA_LENGTH digits ('' for anything else). */
export function shortSha(sha: string): string {
  return SHORT_SHA.test(sha) ? sha.slice(0, SHA_LENGTH) : '';
}

function pathSegments(branch: string): string {
  return branch
    .split('/')
    .map((part) => encodeURIComponent(part))
    .join('/');
}

/** The web page of one commit, or undefined when the id is not a plain commit id. */
export function commitUrl(web: RepoWeb, sha: string): string | undefined {
  const id = shortSha(sha);
  if (!id) return undefined;
  return web.kind === 'gitlab' ? `${web.base}/-/commit/${id}` : `${web.base}/commit/${id}`;
}

/** The web page of a branch (where a pull or merge request for it starts). */
export function branchUrl(web: RepoWeb, branch: string): string {
  return web.kind === 'gitlab' ? `${web.base}/-/tree/${pathSegments(branch)}` : `${web.base}/tree/${pathSegments(branch)}`;
}

/** How much of the evidence a text shows; the richest level that fits its budget is used. */
export interface EvidenceDetail {
  files: number;
  links: boolean;
  commits: number;
}

export const EVIDENCE_LEVELS: readonly EvidenceDetail[] = [
  { files: MAX_FILES_PER_COMMIT, links: true, commits: MAX_COMMITS_PER_STEP },
  { files: 3, links: true, commits: MAX_COMMITS_PER_STEP },
  { files: 0, links: true, commits: MAX_COMMITS_PER_STEP },
  { files: 0, links: false, commits: MAX_COMMITS_PER_STEP },
  { files: 0, links: false, commits: 3 },
  { files: 0, links: false, commits: 0 },
];

function clean(text: string, max: number): string {
  return sanitizeForDida(truncateGraphemes(text, max * 2), { maxLength: max, singleLine: true });
}

/** One line per commit (with its files and link) for people, at `detail`. */
export function commitLines(locale: Locale, evidence: StepEvidence, detail: EvidenceDetail): string[] {
  const lines: string[] = [];
  const shown = evidence.commits.slice(0, detail.commits);
  for (const commit of shown) {
    const sha = shortSha(commit.sha);
    if (!sha) continue;
    lines.push(locale.t('dida.evidence.commit', { sha, subject: clean(commit.subject, SUBJECT_LENGTH) }).trimEnd());
    const total = commit.files.length + commit.moreFiles;
    if (detail.files > 0 && total > 0) {
      const files = commit.files.slice(0, detail.files).map((file) => clean(file, NAME_LENGTH)).filter(Boolean);
      const key = files.length < total ? 'dida.evidence.filesMore' : 'dida.evidence.files';
      lines.push(locale.t(key, { count: total, files: files.join(locale.t('dida.evidence.listSeparator')) }));
    }
    const url = detail.links && evidence.web ? commitUrl(evidence.web, commit.sha) : undefined;
    if (url) lines.push(locale.t('dida.evidence.link', { url }));
  }
  const hidden = evidence.commits.length - shown.length + evidence.moreCommits;
  if (hidden > 0) lines.push(locale.t(shown.length ? 'dida.evidence.moreCommits' : 'dida.evidence.commitCount', { count: hidden }));
  return lines;
}

/** The branch as shown to people ('' when there is none). */
export function branchName(branch: string | undefined): string {
  return branch ? clean(branch, NAME_LENGTH) : '';
}

/** The evidence block of a step's completion comment: a heading naming the branch, then the commits; '' when there are none. */
export function stepEvidenceText(locale: Locale, evidence: StepEvidence | undefined, budget: number): string {
  if (!evidence || evidence.commits.length === 0) return '';
  const branch = branchName(evidence.branch);
  const heading = branch ? locale.t('dida.evidence.heading', { branch }) : locale.t('dida.evidence.headingNoBranch');
  for (const detail of EVIDENCE_LEVELS) {
    const text = [heading, ...commitLines(locale, evidence, detail)].join('\n');
    if (text.length <= budget) return text;
  }
  return '';
}
