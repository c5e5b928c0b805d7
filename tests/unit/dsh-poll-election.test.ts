// Choosing which process polls a list (src/runtime/polling/poll-election.ts), over a real lock folder in one process: a second
// election stands for another process. One leader per list, lists led independently, a loser looks again only after
// the retry interval, resign and close hand the list on, a lock lost to a take-over is said at once, and a lock folder
// that cannot be used is logged.
import { linkSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ELECTION_RETRY_MS, PollElection } from '../../src/runtime/polling/poll-election';
import { lockPathFor } from '../../src/store/file-lock';
import { HOST_TAG } from '../../src/store/lock-tickets';

// The real lock, watched: the test sees the signal that tells a holder its lock was lost.
const lockSignals = vi.hoisted(() => [] as AbortSignal[]);
vi.mock('../../src/store/file-lock', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/store/file-lock')>();
  const withLock: typeof real.withLock = (lockDir, key, fn, options) =>
    real.withLock(
      lockDir,
      key,
      (ctx) => {
        lockSignals.push(ctx.compromised);
        return fn(ctx);
      },
      options,
    );
  return { ...real, withLock };
});

let dir: string;
let lockDir: string;
let clock: number;
const now = () => clock;
const elections: PollElection[] = [];

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'dida-poll-election-'));
  lockDir = path.join(dir, 'locks');
  clock = 1_000_000;
  lockSignals.length = 0;
});
afterEach(async () => {
  for (const election of elections.splice(0)) election.close();
  vi.restoreAllMocks();
  await new Promise((resolve) => setTimeout(resolve, 20));
  await rm(dir, { recursive: true, force: true });
});

function election(options: ConstructorParameters<typeof PollElection>[1] = {}): PollElection {
  const made = new PollElection(lockDir, { now, ...options });
  elections.push(made);
  return made;
}

/** Lets a released lock be let go of (the holder's section ends a few ticks later). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

async function until(probe: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('PollElection', () => {
  it('leads a list nobody leads, and says so', async () => {
    const a = election();
    expect(a.leads('list-1')).toBe(false);
    expect(a.led()).toEqual([]);
    await expect(a.tryLead('list-1')).resolves.toBe(true);
    expect(a.leads('list-1')).toBe(true);
    expect(a.led()).toEqual(['list-1']);
    await expect(a.tryLead('list-1')).resolves.toBe(true);
  });

  it('does not lead a list another process leads, and does not log that', async () => {
    const logs: string[] = [];
    const a = election();
    const b = election({ log: (line) => logs.push(line) });
    await a.tryLead('list-1');
    await expect(b.tryLead('list-1')).resolves.toBe(false);
    expect(b.leads('list-1')).toBe(false);
    expect(b.led()).toEqual([]);
    expect(logs).toEqual([]);
  });

  it('leads different lists independently', async () => {
    const a = election();
    const b = election();
    await expect(a.tryLead('list-1')).resolves.toBe(true);
    await expect(b.tryLead('list-2')).resolves.toBe(true);
    expect(a.led()).toEqual(['list-1']);
    expect(b.led()).toEqual(['list-2']);
  });

  it('a call made while a try for the same list is under way gets the answer of that try', async () => {
    const a = election();
    await expect(Promise.all([a.tryLead('list-1'), a.tryLead('list-1')])).resolves.toEqual([true, true]);
  });

  it(`a process that did not get a list looks again only after ${ELECTION_RETRY_MS} ms`, async () => {
    const a = election();
    const b = election();
    await a.tryLead('list-1');
    await expect(b.tryLead('list-1')).resolves.toBe(false);
    a.resign('list-1');
    await settle();
    clock += ELECTION_RETRY_MS - 1;
    await expect(b.tryLead('list-1')).resolves.toBe(false);
    clock += 1;
    await expect(b.tryLead('list-1')).resolves.toBe(true);
  });

  it('looks again after the retry interval it was given', async () => {
    const a = election();
    const b = election({ retryMs: 100 });
    await a.tryLead('list-1');
    await expect(b.tryLead('list-1')).resolves.toBe(false);
    a.resign('list-1');
    await settle();
    clock += 99;
    await expect(b.tryLead('list-1')).resolves.toBe(false);
    clock += 1;
    await expect(b.tryLead('list-1')).resolves.toBe(true);
  });

  it('resign lets another process lead the list; resigning a list not led does nothing', async () => {
    const a = election();
    const b = election();
    expect(() => a.resign('list-9')).not.toThrow();
    await a.tryLead('list-1');
    a.resign('list-1');
    expect(a.leads('list-1')).toBe(false);
    expect(a.led()).toEqual([]);
    await settle();
    await expect(b.tryLead('list-1')).resolves.toBe(true);
  });

  it('close resigns every list led, and a closed election never leads again', async () => {
    const a = election();
    const b = election();
    await a.tryLead('list-1');
    await a.tryLead('list-2');
    a.close();
    expect(a.led()).toEqual([]);
    await settle();
    await expect(a.tryLead('list-3')).resolves.toBe(false);
    await expect(b.tryLead('list-1')).resolves.toBe(true);
    await expect(b.tryLead('list-2')).resolves.toBe(true);
    await expect(b.tryLead('list-3')).resolves.toBe(true);
  });

  it('close resolves only once every lock it held is gone from disk (nothing of it runs after)', async () => {
    const a = election();
    await a.tryLead('list-1');
    await a.tryLead('list-2');
    const { existsSync } = await import('node:fs');
    expect(existsSync(lockPathFor(lockDir, 'poll-list-1'))).toBe(true);
    expect(existsSync(lockPathFor(lockDir, 'poll-list-2'))).toBe(true);
    await a.close();
    expect(existsSync(lockPathFor(lockDir, 'poll-list-1'))).toBe(false);
    expect(existsSync(lockPathFor(lockDir, 'poll-list-2'))).toBe(false);
    // Another process takes both at once, with no pause for a release still under way.
    const b = election();
    await expect(b.tryLead('list-1')).resolves.toBe(true);
    await expect(b.tryLead('list-2')).resolves.toBe(true);
  });

  it('a close during a try resolves after the lock of that try is released too', async () => {
    const a = election();
    const trying = a.tryLead('list-1');
    await a.close();
    await trying;
    const { existsSync } = await import('node:fs');
    expect(existsSync(lockPathFor(lockDir, 'poll-list-1'))).toBe(false);
    await expect(election().tryLead('list-1')).resolves.toBe(true);
  });

  it('a close while a try is under way lets go of the lock that try gets', async () => {
    const a = election();
    const b = election();
    const trying = a.tryLead('list-1');
    a.close();
    await trying;
    await settle();
    expect(a.leads('list-1')).toBe(false);
    expect(a.led()).toEqual([]);
    await expect(b.tryLead('list-1')).resolves.toBe(true);
  });

  it('a lock lost to a take-over is said at once, and the list can be led again at the next try', async () => {
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const a = election();
    await a.tryLead('list-1');
    const lost = lockSignals.at(-1)!;
    const seen: Array<{ leads: boolean; led: string[] }> = [];
    lost.addEventListener('abort', () => seen.push({ leads: a.leads('list-1'), led: a.led() }));
    // Another process removed the lock's files: the holder notices at its next refresh.
    await rm(lockPathFor(lockDir, 'poll-list-1'), { recursive: true, force: true });
    await until(() => lost.aborted, 3000);
    expect(seen).toEqual([{ leads: false, led: [] }]);
    await settle();
    clock += ELECTION_RETRY_MS;
    await expect(a.tryLead('list-1')).resolves.toBe(true);
  });

  it('takes the list from a leader that stopped refreshing its lock for the stale time it was given', async () => {
    // What the lock of a frozen leader (another process of this machine, still running) looks like: a mark 5 s old.
    const lockPath = lockPathFor(lockDir, 'poll-list-1');
    await mkdir(lockPath, { recursive: true });
    const holder = `t-0000000001-${HOST_TAG}-${process.pid}-0123456789abcdef`;
    writeFileSync(path.join(lockPath, holder), holder);
    linkSync(path.join(lockPath, holder), path.join(lockPath, 'owner'));
    const past = (Date.now() - 5000) / 1000;
    utimesSync(path.join(lockPath, holder), past, past);
    await expect(election().tryLead('list-1')).resolves.toBe(false);
    await expect(election({ staleMs: 2000 }).tryLead('list-1')).resolves.toBe(true);
  });

  it('logs a lock folder it cannot use and does not lead, also when it has no log', async () => {
    writeFileSync(path.join(dir, 'not-a-folder'), '');
    lockDir = path.join(dir, 'not-a-folder', 'locks');
    const logs: string[] = [];
    await expect(election({ log: (line) => logs.push(line) }).tryLead('list-1')).resolves.toBe(false);
    expect(logs).toEqual([expect.stringMatching(/^could not take part in choosing the poller: .*not-a-folder/)]);
    await expect(election().tryLead('list-1')).resolves.toBe(false);
  });
});
