// Owns the cross-process half of a lock: a first-come-first-served queue of tickets in the lock directory, the owner
// link that marks the holder, taking over from dead holders, and the heartbeat that tells a holder it lost the lock.
import { linkSync, mkdirSync, readdirSync, readFileSync, renameSync, rmdirSync, statSync, utimesSync } from 'node:fs';
import path from 'node:path';
import { DirWaker } from './dir-waker';
import { createTicket, isBefore, isDead, OWNER_FILE, parseTicket, readOwner, removeDeadScratch, removeFile, scratchName, statIfExists, ticketsInOrder, type Ticket } from './lock-tickets';

export interface QueueLockOptions {
  /** A holder or waiter whose files were not refreshed for this long is treated as dead (callers clamp it to ≥ 2000). */
  staleMs: number;
  /** Absolute time (Date.now()) after which waiting fails with `timeoutError()`. */
  deadline: number;
  signal: AbortSignal | undefined;
  timeoutError: () => Error;
  /** Called once when a holder finds it lost the lock (taken over, files removed, or paused past the stale time). */
  onCompromised: (reason: string) => void;
}

export interface HeldQueueLock {
  /** Aborts when the lock was lost. */
  compromised: AbortSignal;
  /** Synchronous: is this holder still the owner, refreshed within the stale time? A false answer is final. */
  stillHeld(): boolean;
  /** Gives the lock to the next waiter and removes this holder's files (the directory too when nobody waits). Never throws. */
  release(): void;
}

/** How often a holder refreshes its owner link and a waiter its ticket: well inside the stale time, also with 1 s mtimes. */
export function refreshIntervalMs(staleMs: number): number {
  return Math.max(50, Math.min(500, Math.floor(staleMs / 4)));
}

/**
 * Queues for the lock directory `lockPath` and resolves once this caller owns it. Waiters are served in the order their
 * tickets were created; a waiter looks again whenever the directory changes (fs.watch) and at least every 25 ms.
 * A holder or waiter that died (its process is gone, or it stopped refreshing for `staleMs`) is skipped and cleaned up.
 * Throws `timeoutError()` at the deadline or the signal's reason; a failed wait leaves no ticket behind.
 */
export async function acquireQueueLock(lockPath: string, options: QueueLockOptions): Promise<HeldQueueLock> {
  const { staleMs, deadline, signal } = options;
  signal?.throwIfAborted();
  let ticket = enqueue(lockPath);
  let touchedAt = Date.now();
  let waker: DirWaker | undefined;
  let requeues = 0;
  let lastTurn: Turn | undefined;
  try {
    for (;;) {
      const turn = takeTurn(lockPath, ticket, staleMs);
      if (turn === 'held') return hold(lockPath, ticket, options);
      if (turn === 'requeue') {
        // Someone judged this waiter dead (it was paused) or the directory was removed: queue again at the end.
        ticket = enqueue(lockPath);
        touchedAt = Date.now();
        waker?.close();
        waker = undefined;
        // Look again at once, unless the ticket keeps vanishing (then wait like any waiter before the next look).
        if (++requeues <= 3) continue;
      } else {
        requeues = 0;
      }
      const now = Date.now();
      if (now >= deadline) throw options.timeoutError();
      if (now - touchedAt >= refreshIntervalMs(staleMs)) {
        touchIfExists(path.join(lockPath, ticket.name), now);
        touchedAt = now;
      }
      const first = !waker;
      waker ??= new DirWaker(lockPath);
      // Behind a live ticket only its removal matters (the holder removes its owner link before its ticket); first in
      // line, the owner link and the files it is moved aside as matter too.
      const ahead = (name: string) => isBefore(name, ticket);
      waker.relevant = turn === 'owner' ? (name) => !name.startsWith('t-') || ahead(name) : ahead;
      // Watch first (or widen what wakes us), then look once more, so a change the watch did not yet report is not missed.
      const widened = turn === 'owner' && lastTurn !== 'owner';
      lastTurn = turn;
      if ((first || widened) && turn !== 'requeue') continue;
      await waker.next(deadline - now, signal);
    }
  } catch (error) {
    try {
      leave(lockPath, ticket, staleMs);
    } catch {
      // The error that ended the wait matters more; a ticket left behind is swept as dead by the next caller.
    }
    throw error;
  } finally {
    waker?.close();
  }
}

/** Creates the lock directory (and the locks folder beside the state, both 0700) if needed and queues in it. */
function enqueue(dir: string): Ticket {
  for (let attempt = 1; ; attempt++) {
    const created = mkdirSync(dir, { recursive: true, mode: 0o700 }) !== undefined;
    try {
      return createTicket(dir, created);
    } catch (error) {
      // A releaser removed the (then empty) directory between our mkdir and our ticket: make it again.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 20) throw error;
    }
  }
}

/**
 * One look at the queue: owner now, wait behind a live ticket ('behind'), wait as the first in line for the owner link
 * to go ('owner'), or queue again because this ticket is gone.
 */
type Turn = 'held' | 'behind' | 'owner' | 'requeue';

function takeTurn(dir: string, me: Ticket, staleMs: number): Turn {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'requeue';
    throw error;
  }
  if (!names.includes(me.name)) return 'requeue';
  removeDeadScratch(dir, names, staleMs);
  const now = Date.now();
  for (const ticket of ticketsInOrder(names)) {
    if (ticket.name === me.name) break;
    const file = path.join(dir, ticket.name);
    const stat = statIfExists(file);
    if (!stat) continue;
    if (!isDead(ticket, stat, staleMs, now)) return 'behind';
    removeFile(file);
  }
  return tryOwn(dir, me, staleMs);
}

/** First in line: link this ticket as the owner, taking over from a dead owner. */
function tryOwn(dir: string, me: Ticket, staleMs: number): Turn {
  const owner = path.join(dir, OWNER_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      linkSync(path.join(dir, me.name), owner);
      return 'held';
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return 'requeue';
      if (code !== 'EEXIST') throw error;
    }
    const stat = statIfExists(owner);
    const current = readOwner(dir);
    if (!stat) continue;
    if (!isDead(parseTicket(current), stat, staleMs)) return 'owner';
    takeOver(dir, current, staleMs);
  }
  return 'owner';
}

/**
 * Removes a dead owner link. The link is first renamed to a unique name, so of several waiters that judged it dead only
 * one gets it; if what was moved is not the link judged dead (a live holder refreshed it, or another waiter already
 * took over), it is put back.
 */
function takeOver(dir: string, judged: string, staleMs: number): void {
  const removed = setOwnerAside(dir, (content, file) => content === judged && isDead(parseTicket(content), statSync(file), staleMs));
  // The dead holder's ticket is the same file under its queue name; remove that name too.
  if (removed && parseTicket(judged)) removeFile(path.join(dir, judged));
}

/**
 * Renames the owner link aside; removes it when `isGarbage` says so, otherwise links it back (unless someone owns it
 * now). Answers whether it removed an owner link.
 */
function setOwnerAside(dir: string, isGarbage: (content: string, file: string) => boolean): boolean {
  const owner = path.join(dir, OWNER_FILE);
  const aside = path.join(dir, scratchName());
  try {
    renameSync(owner, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  let garbage = false;
  try {
    garbage = isGarbage(readFileSync(aside, 'utf8'), aside);
  } catch {
    // Unreadable right after our own rename: keep the conservative answer and put it back.
    garbage = false;
  }
  if (!garbage) {
    try {
      linkSync(aside, owner);
    } catch (error) {
      // EEXIST: someone linked a new owner meanwhile; the moved one lost the lock and will notice.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  removeFile(aside);
  return garbage;
}

function hold(dir: string, me: Ticket, options: QueueLockOptions): HeldQueueLock {
  const owner = path.join(dir, OWNER_FILE);
  const controller = new AbortController();
  let refreshedAt = Date.now();
  const lose = (reason: string) => {
    if (controller.signal.aborted) return;
    clearInterval(timer);
    options.onCompromised(reason);
    controller.abort(new Error(`The lock ${dir} was lost: ${reason}.`));
  };
  const stillHeld = (): boolean => {
    if (controller.signal.aborted) return false;
    const late = Date.now() - refreshedAt;
    if (late > options.staleMs) {
      lose(`this process was paused for ${late} ms, longer than the stale time of ${options.staleMs} ms`);
      return false;
    }
    if (readOwner(dir) !== me.name) {
      lose('another process took it over or its files were removed');
      return false;
    }
    return true;
  };
  const refresh = () => {
    if (!stillHeld()) return;
    const now = Date.now();
    try {
      touch(owner, now);
      refreshedAt = now;
    } catch (error) {
      lose(`it could not be refreshed (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    }
  };
  const timer = setInterval(refresh, refreshIntervalMs(options.staleMs));
  timer.unref();
  return {
    compromised: controller.signal,
    stillHeld,
    release: () => {
      clearInterval(timer);
      try {
        // Also when compromised by time alone: a mark nobody took over must not block the next waiter until it is stale.
        if (readOwner(dir) === me.name) setOwnerAside(dir, (content) => content === me.name);
        leave(dir, me, options.staleMs);
      } catch {
        // Releasing only removes this holder's own files; if that fails the next waiter treats them as dead ones.
      }
    },
  };
}

function touch(file: string, now: number): void {
  utimesSync(file, now / 1000, now / 1000);
}

/** Refreshes a waiter's ticket; a ticket already removed is noticed (and queued again) at the next look. */
function touchIfExists(file: string, now: number): void {
  try {
    touch(file, now);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

/** Removes this caller's ticket and, when nobody else is queued, the lock directory; dead leftovers are swept first. */
function leave(dir: string, me: Ticket, staleMs: number): void {
  removeFile(path.join(dir, me.name));
  if (removeDir(dir)) return;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    // Gone or unreadable: nothing to sweep.
    return;
  }
  removeDeadScratch(dir, names, staleMs);
  const now = Date.now();
  let swept = false;
  for (const ticket of ticketsInOrder(names)) {
    const file = path.join(dir, ticket.name);
    const stat = statIfExists(file);
    if (stat && isDead(ticket, stat, staleMs, now)) {
      removeFile(file);
      swept = true;
    }
  }
  if (swept) removeDir(dir);
}

/** rmdir that answers whether the directory is gone; a directory still in use stays. */
function removeDir(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return true;
    if (code === 'ENOTEMPTY' || code === 'EEXIST') return false;
    throw error;
  }
}
