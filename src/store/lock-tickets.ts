// Owns the files inside one lock directory: ticket names (arrival order, host, pid), the owner link, and who is dead.
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, openSync, readdirSync, readFileSync, statSync, unlinkSync, writeSync, type Stats } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { processAlive } from '../common/process-alive';

/** The holder's mark: a hard link to its ticket, created with link(2), which fails when the name exists. */
export const OWNER_FILE = 'owner';

/** Short tag of this machine's host name, so process ids are only trusted for processes of this machine. */
export const HOST_TAG = createHash('sha256').update(os.hostname()).digest('hex').slice(0, 8);

const TICKET = /^t-(\d{10})-([0-9a-f]{8})-(\d{1,10})-[0-9a-f]{16}$/;
const SCRATCH = /^x-([0-9a-f]{8})-(\d{1,10})-[0-9a-f]{16}$/;

/** A waiter's ticket: `t-<arrival number>-<host tag>-<pid>-<random>`; the file holds its own name. */
export interface Ticket {
  name: string;
  seq: number;
  host: string;
  pid: number;
}

export function parseTicket(name: string): Ticket | undefined {
  const match = TICKET.exec(name);
  if (!match) return undefined;
  return { name, seq: Number(match[1]), host: match[2] as string, pid: Number(match[3]) };
}

function compareTickets(a: Ticket, b: Ticket): number {
  return a.seq - b.seq || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/** Tickets in serving order: arrival number, then name (two waiters that drew the same number). */
export function ticketsInOrder(names: readonly string[]): Ticket[] {
  return names
    .map(parseTicket)
    .filter((t): t is Ticket => t !== undefined)
    .sort(compareTickets);
}

/** Whether `name` is a ticket served before `me`. */
export function isBefore(name: string, me: Ticket): boolean {
  const ticket = parseTicket(name);
  return ticket !== undefined && compareTickets(ticket, me) < 0;
}

/** A unique name for a file moved aside while releasing or taking over; removed right after (or by anyone once dead). */
export function scratchName(): string {
  return `x-${HOST_TAG}-${process.pid}-${randomBytes(8).toString('hex')}`;
}

/**
 * Creates this process's next ticket in `dir`: one number past the highest ticket present, so it is served after
 * everyone already queued (`fresh`: the caller just created `dir`, so there is nothing to look at).
 * Throws ENOENT when `dir` vanished (a releaser removed the empty directory): create it again.
 */
export function createTicket(dir: string, fresh = false): Ticket {
  const last = fresh ? undefined : ticketsInOrder(readdirSync(dir)).at(-1);
  const seq = (last?.seq ?? 0) + 1;
  const name = `t-${String(seq).padStart(10, '0')}-${HOST_TAG}-${process.pid}-${randomBytes(8).toString('hex')}`;
  const fd = openSync(path.join(dir, name), 'wx', 0o600);
  try {
    writeSync(fd, name);
  } finally {
    closeSync(fd);
  }
  return { name, seq, host: HOST_TAG, pid: process.pid };
}

/**
 * A lock file belongs to a dead process when it was not refreshed for `staleMs`, or when it was made on this machine by
 * a process that no longer runs. A process of another machine (a shared home directory) is judged by time alone.
 */
export function isDead(owner: { host: string; pid: number } | undefined, stat: Stats, staleMs: number, now = Date.now()): boolean {
  if (now - stat.mtimeMs > staleMs) return true;
  return owner !== undefined && owner.host === HOST_TAG && !processAlive(owner.pid);
}

/** The file's stat, or undefined when it is gone. */
export function statIfExists(file: string): Stats | undefined {
  try {
    return statSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** The ticket name the owner link points at ('' when there is no owner or it cannot be read). */
export function readOwner(dir: string): string {
  try {
    return readFileSync(path.join(dir, OWNER_FILE), 'utf8');
  } catch {
    // No owner (ENOENT) or an unreadable one: both mean "not this caller's".
    return '';
  }
}

/** Removes a file; a file already gone is fine. */
export function removeFile(file: string): void {
  try {
    unlinkSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

/** Removes scratch files whose process died (it was killed between moving a file aside and removing it). */
export function removeDeadScratch(dir: string, names: readonly string[], staleMs: number): void {
  for (const name of names) {
    const match = SCRATCH.exec(name);
    if (!match) continue;
    const file = path.join(dir, name);
    const stat = statIfExists(file);
    if (stat && isDead({ host: match[1] as string, pid: Number(match[2]) }, stat, staleMs)) removeFile(file);
  }
}
