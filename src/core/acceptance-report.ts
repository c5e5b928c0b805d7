// The human-readable completion report of a Work (acceptance todo body) and the Dida texts around it.
import type { Locale } from './locale';
import { MAX_REPORT_LENGTH, MAX_TITLE_LENGTH, sanitizeForDida } from './text-guard';
import { visibleSteps, type WorkRecord } from './work-state';

export function acceptanceTitle(locale: Locale, work: Pick<WorkRecord, 'title'>): string {
  return sanitizeForDida(locale.t('dida.acceptance.title', { title: work.title }), { maxLength: MAX_TITLE_LENGTH, singleLine: true });
}

export function reworkTitle(locale: Locale, work: Pick<WorkRecord, 'title'>): string {
  return sanitizeForDida(locale.t('dida.rework.title', { title: work.title }), { maxLength: MAX_TITLE_LENGTH, singleLine: true });
}

export function waitingTitle(locale: Locale, work: Pick<WorkRecord, 'title'>): string {
  return sanitizeForDida(locale.t('dida.waiting.title', { title: work.title }), { maxLength: MAX_TITLE_LENGTH, singleLine: true });
}

/** Intro, one line per step with its resolution (skipped steps with their reason), then how to accept or ask for rework. */
export function acceptanceReport(locale: Locale, work: WorkRecord): string {
  const lines = [locale.t('dida.acceptance.intro', { title: work.title }), ''];
  for (const step of visibleSteps(work)) {
    if (step.status === 'skipped') lines.push(locale.t('dida.acceptance.stepSkipped', { step: step.title, reason: step.resolution ?? '' }));
    else if (step.resolution) lines.push(locale.t('dida.acceptance.stepDoneWithResult', { step: step.title, resolution: step.resolution }));
    else lines.push(locale.t('dida.acceptance.stepDone', { step: step.title }));
  }
  lines.push('', locale.t('dida.acceptance.howTo'));
  return sanitizeForDida(lines.join('\n'), { maxLength: MAX_REPORT_LENGTH });
}

/** Titles that mark tasks this bundle files (acceptance todos, reminders) in any locale; such tasks are never Works. */
export function isBundleTaskTitle(locales: readonly Locale[], title: string): boolean {
  return locales.some((l) => title.startsWith(`${l.t('dida.acceptancePrefix')} `) || title.startsWith(`${l.t('dida.reminderPrefix')} `));
}
