// Owns the shared budget files: one small JSON file per Dida account in the state folder, changed under a short
// cross-process lock (a dead holder is taken over at once), read without one by `dida-todo status`.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { BudgetRecord, BudgetStorePort } from '../dida/request-budget';
import { emptyBudgetRecord } from '../dida/request-budget';
import { withLock } from './file-lock';

/** The folder of the budget files inside the state folder. */
export function budgetDir(stateDir: string): string {
  return path.join(stateDir, 'budget');
}

/** The budget file of the account `key` (see accountKey). */
export function budgetFile(stateDir: string, key: string): string {
  return path.join(budgetDir(stateDir), `${key}.json`);
}

/** A wait for the budget lock longer than this lets the request go unchecked (the gate logs it). */
export const BUDGET_LOCK_TIMEOUT_MS = 2_000;
/** A holder that stopped refreshing for this long is taken over (a killed process of this machine at once). */
export const BUDGET_LOCK_STALE_MS = 5_000;

/** The record in `file`; an absent, unreadable or damaged file is an empty record (the budget only advises). */
export function readBudgetFile(file: string): BudgetRecord {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    // Missing (no request yet) or cut short by a crash mid-write: start from an empty record.
    return emptyBudgetRecord();
  }
  return sanitize(raw);
}

function sanitize(raw: unknown): BudgetRecord {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return emptyBudgetRecord();
  const value = raw as Record<string, unknown>;
  const record: BudgetRecord = {
    stamps: Array.isArray(value.stamps) ? value.stamps.filter((t): t is number => typeof t === 'number' && Number.isFinite(t)).sort((a, b) => a - b) : [],
  };
  if (typeof value.pausedUntil === 'number' && Number.isFinite(value.pausedUntil)) record.pausedUntil = value.pausedUntil;
  if (typeof value.pausedAt === 'number' && Number.isFinite(value.pausedAt)) record.pausedAt = value.pausedAt;
  if (typeof value.strikes === 'number' && value.strikes > 0) record.strikes = Math.floor(value.strikes);
  if (typeof value.baseUrl === 'string') record.baseUrl = value.baseUrl;
  if (typeof value.share === 'number' && value.share > 0 && value.share < 1) record.share = value.share;
  for (const field of ['cutAt', 'cutFrom', 'raisedAt', 'heldAt'] as const) {
    const v = value[field];
    if (typeof v === 'number' && Number.isFinite(v)) record[field] = v;
  }
  const limits = value.limits as Record<string, unknown> | undefined;
  if (limits && typeof limits.perMinute === 'number' && typeof limits.perFiveMinutes === 'number') {
    record.limits = { perMinute: limits.perMinute, perFiveMinutes: limits.perFiveMinutes };
  }
  return record;
}

/** Replaces `file` for readers in one step (temp file and rename; not fsynced: a crash loses at most a few stamps). */
function writeBudgetFile(file: string, record: BudgetRecord): void {
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    writeFileSync(temp, JSON.stringify(record), { mode: 0o600 });
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

/**
 * The budget store of one account: `transact` reads, changes and writes the file under the lock `budget-<key>` in
 * `lockDir` (waiting at most BUDGET_LOCK_TIMEOUT_MS, then throwing LockTimeoutError).
 */
export function budgetStore(stateDir: string, lockDir: string, key: string): BudgetStorePort {
  const file = budgetFile(stateDir, key);
  let dirMade = false;
  return {
    transact: (change) =>
      withLock(
        lockDir,
        `budget-${key}`,
        () => {
          if (!dirMade) {
            mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
            dirMade = true;
          }
          const record = readBudgetFile(file);
          const result = change(record);
          writeBudgetFile(file, record);
          return result;
        },
        { timeoutMs: BUDGET_LOCK_TIMEOUT_MS, staleMs: BUDGET_LOCK_STALE_MS },
      ),
  };
}

/** Every account's budget record in the state folder (for `dida-todo status`), read without the lock. */
export function readBudgets(stateDir: string): Array<{ key: string; record: BudgetRecord }> {
  let names: string[];
  try {
    names = readdirSync(budgetDir(stateDir));
  } catch {
    // No budget folder yet: no request was ever counted here.
    return [];
  }
  return names
    .filter((name) => /^[0-9a-f]{16}\.json$/.test(name))
    .sort()
    .map((name) => ({ key: name.slice(0, -'.json'.length), record: readBudgetFile(path.join(budgetDir(stateDir), name)) }));
}
