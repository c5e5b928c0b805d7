// The human-readable completion report of a Work (acceptance todo body) and the Dida texts around it.
import { displayPath } from '../../store/paths';
import { getLocale, type Locale } from '../text/locale';
import { branchName, branchUrl, commitLines, EVIDENCE_LEVELS, type EvidenceDetail, type StepEvidence } from '../evidence/repo-evidence';
import { MAX_REPORT_LENGTH, MAX_TITLE_LENGTH, sanitizeForDida } from '../text/text-guard';
import { visibleSteps, type StepRecord, type WorkRecord } from '../work/work-state';

export function acceptanceTitle(locale: Locale, work: Pick<WorkRecord, 'title'>): string {
  return sanitizeForDida(locale.t('dida.acceptance.title', { title: work.title }), { maxLength: MAX_TITLE_LENGTH, singleLine: true });
}

export function reworkTitle(locale: Locale, work: Pick<WorkRecord, 'title'>): string {
  return sanitizeForDida(locale.t('dida.rework.title', { title: work.title }), { maxLength: MAX_TITLE_LENGTH, singleLine: true });
}

export function waitingTitle(locale: Locale, work: Pick<WorkRecord, 'title'>): string {
  return sanitizeForDida(locale.t('dida.waiting.title', { title: work.title }), { maxLength: MAX_TITLE_LENGTH, singleLine: true });
}

/** Who did the work, for the review todo: the claim's host label and session tag, and the session's directory. */
export interface ReportOrigin {
  host: string;
  session: string;
  /** The directory as people read it (`~/…` under the home directory). */
  dir?: string;
}

/** The commits of each step not already listed under an earlier step (several steps may share a base). */
function uniqueEvidence(steps: readonly StepRecord[]): Map<StepRecord, StepEvidence> {
  const seen = new Set<string>();
  const out = new Map<StepRecord, StepEvidence>();
  for (const step of steps) {
    if (!step.evidence || step.status !== 'completed') continue;
    const commits = step.evidence.commits.filter((c) => !seen.has(c.sha));
    for (const c of commits) seen.add(c.sha);
    if (commits.length > 0) out.set(step, { ...step.evidence, commits });
  }
  return out;
}

/** The branch line and its link: the newest step evidence that names a branch. */
function repoLines(locale: Locale, evidence: readonly StepEvidence[], links: boolean): string[] {
  const last = [...evidence].reverse().find((e) => e.branch);
  const branch = branchName(last?.branch);
  if (!last || !branch) return [];
  const lines = [locale.t('dida.acceptance.repo', { branch })];
  if (links && last.web && last.branch) lines.push(locale.t('dida.acceptance.repoLink', { url: branchUrl(last.web, last.branch) }));
  return lines;
}

function render(locale: Locale, work: WorkRecord, origin: ReportOrigin | undefined, detail: EvidenceDetail | undefined, usage: string): string {
  const lines = [locale.t('dida.acceptance.intro', { title: work.title }), ''];
  const steps = visibleSteps(work);
  const evidence = detail ? uniqueEvidence(steps) : new Map<StepRecord, StepEvidence>();
  for (const step of steps) {
    if (step.status === 'skipped') lines.push(locale.t('dida.acceptance.stepSkipped', { step: step.title, reason: step.resolution ?? '' }));
    else if (step.resolution) lines.push(locale.t('dida.acceptance.stepDoneWithResult', { step: step.title, resolution: step.resolution }));
    else lines.push(locale.t('dida.acceptance.stepDone', { step: step.title }));
    const own = evidence.get(step);
    if (own && detail) lines.push(...commitLines(locale, own, detail));
  }
  const repo = detail ? repoLines(locale, [...evidence.values()], detail.links) : [];
  const who = origin ? [origin.dir ? locale.t('dida.acceptance.sessionDir', { ...origin, dir: origin.dir }) : locale.t('dida.acceptance.session', { host: origin.host, session: origin.session })] : [];
  const used = usage ? [usage] : [];
  if (repo.length || who.length || used.length) lines.push('', ...repo, ...who, ...used);
  lines.push('', locale.t('dida.acceptance.howTo'));
  return sanitizeForDida(lines.join('\n'), { maxLength: Number.MAX_SAFE_INTEGER });
}

/**
 * Intro, one line per step with its resolution (skipped steps with their reason) and the commits made for it, the
 * branch with its link, who did the work and what it cost (`usage`, one line), then how to accept or ask for rework. The commits are shown in the
 * richest detail that keeps the report within MAX_REPORT_LENGTH (files, then links, then commits are left out).
 */
export function acceptanceReport(locale: Locale, work: WorkRecord, origin?: ReportOrigin, usage = ''): string {
  for (const detail of EVIDENCE_LEVELS) {
    const text = render(locale, work, origin, detail, usage);
    if (text.length <= MAX_REPORT_LENGTH) return text;
  }
  return sanitizeForDida(render(locale, work, origin, undefined, usage), { maxLength: MAX_REPORT_LENGTH });
}

/** Who did the work as the Work's record says: the session that holds its claim, and the directory it worked in. */
export function reportOrigin(work: Pick<WorkRecord, 'claim' | 'dir'>): ReportOrigin | undefined {
  const holder = work.claim?.holder ?? '';
  const cut = holder.lastIndexOf('#');
  if (cut <= 0 || cut === holder.length - 1) return undefined;
  return { host: holder.slice(0, cut), session: holder.slice(cut + 1), ...(work.dir ? { dir: displayPath(work.dir) } : {}) };
}

/** Titles that mark tasks this bundle files (acceptance todos, reminders) in any locale; such tasks are never Works. */
export function isBundleTaskTitle(locales: readonly Locale[], title: string): boolean {
  return locales.some((l) => title.startsWith(`${l.t('dida.acceptancePrefix')} `) || title.startsWith(`${l.t('dida.reminderPrefix')} `));
}

const ORIGIN_PATTERNS = ['zh', 'en'].flatMap((id) =>
  (['dida.acceptance.session', 'dida.acceptance.sessionDir'] as const).map((key) => {
    const template = getLocale(id as 'zh' | 'en').t(key);
    const escaped = template.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    return new RegExp(`^${escaped.replace('\\{host\\}', '(?<host>.+?)').replace('\\{session\\}', '[0-9A-Za-z]{1,16}').replace('\\{dir\\}', '.*')}$`, 'mu');
  }),
);

/** The host label a review todo's report names as the one that did the work (undefined when it names none). */
export function reportedHost(content: string | null | undefined): string | undefined {
  for (const pattern of ORIGIN_PATTERNS) {
    const host = pattern.exec(content ?? '')?.groups?.host;
    if (host) return host;
  }
  return undefined;
}
