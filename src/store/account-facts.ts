// Owns what this machine remembers about a Dida account between runs (one small file per account in the state folder):
// the account's time zone from Dida's preference, so a run does not read it before its first tool call.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface AccountFacts {
  /** The IANA zone Dida's preference named, and when it was read (ms since the epoch). */
  timeZone?: string;
  timeZoneReadAt?: number;
}

/** The file of the account `key` (see accountKey in src/dida/request-budget.ts). */
export function accountFactsFile(stateDir: string, key: string): string {
  return path.join(stateDir, 'accounts', `${key}.json`);
}

/** What is remembered about the account; nothing when the file is missing or damaged (it is only a cache). */
export function readAccountFacts(stateDir: string, key: string): AccountFacts {
  try {
    const raw = JSON.parse(readFileSync(accountFactsFile(stateDir, key), 'utf8')) as Record<string, unknown>;
    const facts: AccountFacts = {};
    if (typeof raw.timeZone === 'string' && raw.timeZone !== '') facts.timeZone = raw.timeZone;
    if (typeof raw.timeZoneReadAt === 'number') facts.timeZoneReadAt = raw.timeZoneReadAt;
    return facts;
  } catch {
    // Not written yet, or cut short by a crash: nothing is known.
    return {};
  }
}

/** Replaces what is remembered (temp file and rename: a reader sees the old or the new facts). Never throws. */
export function writeAccountFacts(stateDir: string, key: string, facts: AccountFacts): void {
  const file = accountFactsFile(stateDir, key);
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(temp, JSON.stringify(facts), { mode: 0o600 });
    renameSync(temp, file);
  } catch {
    // A cache that cannot be written only means the next run reads the preference again.
    rmSync(temp, { force: true });
  }
}
