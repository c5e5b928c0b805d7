// The request-budget part of `dida-todo status`: for each Dida account of this machine, the budget in force, how much
// of it the machine's processes used in the last minute and the last five minutes, and the part of it the machine
// takes while other machines share the account (read from the shared file, no lock).
import { boundPause, DEFAULT_BUDGET, FIVE_MINUTES_MS, MINUTE_MS, shareNow, usedIn, type BudgetLimits } from '../../dida/request-budget';
import { readBudgets } from '../../store/budget-store';

export interface BudgetStatus {
  /** Which Dida the account is on (never the token). */
  baseUrl: string | null;
  perMinute: number;
  perFiveMinutes: number;
  usedLastMinute: number;
  usedLastFiveMinutes: number;
  /** After a 429: no request goes out before this time (ISO), else null. */
  pausedUntil: string | null;
  /** The part of the budget this machine uses now, in percent (below 100 after Dida's 429: other machines share the account). */
  sharePercent: number;
  /** When Dida's last 429 cut the share (ISO), while it is below 100 %. */
  sharedSince: string | null;
}

/** The budgets of the state folder at `now`, with config.yaml's limits (when readable) over what the file last used. */
export function budgetStatus(stateDir: string, configured: BudgetLimits | undefined, now = Date.now()): BudgetStatus[] {
  return readBudgets(stateDir)
    .map(({ record }) => {
      // The pause as every process takes it: within the ceiling, from a time not in the future.
      boundPause(record, now);
      const limits = configured ?? record.limits ?? DEFAULT_BUDGET;
      const share = shareNow(structuredClone(record), now);
      return {
        baseUrl: record.baseUrl ?? null,
        perMinute: limits.perMinute,
        perFiveMinutes: limits.perFiveMinutes,
        usedLastMinute: usedIn(record, MINUTE_MS, now),
        usedLastFiveMinutes: usedIn(record, FIVE_MINUTES_MS, now),
        pausedUntil: record.pausedUntil !== undefined ? new Date(record.pausedUntil).toISOString() : null,
        sharePercent: Math.round(share * 100),
        sharedSince: share < 1 && record.cutAt !== undefined ? new Date(record.cutAt).toISOString() : null,
      };
    })
    .filter((b) => b.usedLastFiveMinutes > 0 || b.pausedUntil !== null || b.sharedSince !== null);
}

/**
 * The lines of the budget row: one per account used lately (its Dida named when there are several), a warning line
 * under an account paused after a 429, or "none".
 */
export function budgetLines(
  budgets: readonly BudgetStatus[],
  t: (key: 'cli.status.budget.none' | 'cli.status.budget.line' | 'cli.status.budget.paused' | 'cli.status.budget.shared', vars?: Record<string, string | number>) => string,
): Array<{ text: string; warn: boolean }> {
  if (budgets.length === 0) return [{ text: t('cli.status.budget.none'), warn: false }];
  return budgets.flatMap((b) => {
    const line = t('cli.status.budget.line', { perMinute: b.perMinute, perFiveMinutes: b.perFiveMinutes, minute: b.usedLastMinute, five: b.usedLastFiveMinutes });
    const first = { text: budgets.length > 1 && b.baseUrl ? `${b.baseUrl}: ${line}` : line, warn: false };
    const shared = b.sharedSince ? [{ text: t('cli.status.budget.shared', { percent: b.sharePercent, since: new Date(b.sharedSince).toTimeString().slice(0, 5) }), warn: false }] : [];
    return [first, ...shared, ...(b.pausedUntil ? [{ text: t('cli.status.budget.paused', { until: new Date(b.pausedUntil).toTimeString().slice(0, 8) }), warn: true }] : [])];
  });
}
