// Which process of the machine polls a list: the one that holds the list's poll lock in the lock folder. Others try
// again every few seconds, so when the holder dies (its lock is taken over at once) another leads within seconds.
import { LockTimeoutError, withLock } from '../../store/file-lock';

/** How often a process that does not lead a list tries again. */
export const ELECTION_RETRY_MS = 2_000;
/** A leader whose process stopped refreshing its lock this long (paused, hung) loses it; a dead one loses it at once. */
export const ELECTION_STALE_MS = 10_000;

interface Held {
  release: () => void;
  lost: AbortSignal;
}

export class PollElection {
  private readonly held = new Map<string, Held>();
  private readonly triedAt = new Map<string, number>();
  private readonly trying = new Map<string, Promise<boolean>>();
  private closed = false;
  /** The lock operations under way (taking, holding, releasing), awaited by close(). */
  private readonly locks = new Set<Promise<void>>();

  constructor(
    private readonly lockDir: string,
    private readonly options: { retryMs?: number; staleMs?: number; now?: () => number; log?: (line: string) => void } = {},
  ) {}

  /** Whether this process leads `key` now (a lock lost to a take-over says no). */
  leads(key: string): boolean {
    const held = this.held.get(key);
    return !!held && !held.lost.aborted;
  }

  /** The keys this process leads. */
  led(): string[] {
    return [...this.held.keys()].filter((key) => this.leads(key));
  }

  /**
   * Leads `key` if nobody does: one look at its lock, never a wait (at most once per retry interval; in between the
   * answer is false). Resolves whether this process leads it now.
   */
  tryLead(key: string): Promise<boolean> {
    if (this.leads(key)) return Promise.resolve(true);
    this.held.delete(key);
    const pending = this.trying.get(key);
    if (pending) return pending;
    const now = (this.options.now ?? Date.now)();
    if (this.closed || now - (this.triedAt.get(key) ?? -Infinity) < (this.options.retryMs ?? ELECTION_RETRY_MS)) return Promise.resolve(false);
    this.triedAt.set(key, now);
    const attempt = new Promise<boolean>((resolve) => {
      let release = () => undefined as void;
      const hold = new Promise<void>((done) => (release = done));
      const locked = withLock(
        this.lockDir,
        `poll-${key}`,
        async ({ compromised }) => {
          const entry: Held = { release, lost: compromised };
          this.held.set(key, entry);
          resolve(true);
          if (this.closed) release();
          await Promise.race([hold, new Promise<void>((done) => compromised.addEventListener('abort', () => done(), { once: true }))]);
          if (this.held.get(key) === entry) this.held.delete(key);
        },
        { timeoutMs: 0, staleMs: this.options.staleMs ?? ELECTION_STALE_MS },
      ).catch((error: unknown) => {
        // Busy: another process leads. Anything else (an unwritable lock folder) is said, and tried again later.
        if (!(error instanceof LockTimeoutError)) this.options.log?.(`could not take part in choosing the poller: ${error instanceof Error ? error.message : String(error)}`);
        resolve(false);
      });
      this.locks.add(locked);
      void locked.finally(() => this.locks.delete(locked));
    }).finally(() => this.trying.delete(key));
    this.trying.set(key, attempt);
    return attempt;
  }

  /** Stops leading `key` (another process may take it at its next try). */
  resign(key: string): void {
    this.held.get(key)?.release();
    this.held.delete(key);
  }

  /** Stops leading every list; resolves once each lock it held is released on disk. */
  async close(): Promise<void> {
    this.closed = true;
    for (const key of [...this.held.keys()]) this.resign(key);
    while (this.locks.size > 0) await Promise.allSettled([...this.locks]);
  }
}
