// A gateway and a lock port bound to an abort signal (src/dida/abortable-gateway.ts, src/common/abortable-lock.ts).
import { describe, expect, it, vi } from 'vitest';
import { abortableLocks } from '../../src/common/abortable-lock';
import { abortableGateway, CallAbortedError } from '../../src/dida/abortable-gateway';
import type { DidaGateway } from '../../src/dida/dida-gateway';

const METHODS = ['listProjects', 'getProject', 'createProject', 'getProjectData', 'getTask', 'createTask', 'updateTask', 'completeTask', 'deleteTask', 'listComments', 'addComment', 'getPreference', 'listMembers'] as const;

function recordingGateway() {
  const calls: Array<{ method: string; args: unknown[]; signal?: AbortSignal }> = [];
  const gateway = { kind: 'http', close: vi.fn(async () => undefined) } as unknown as DidaGateway & { close: ReturnType<typeof vi.fn> };
  for (const method of METHODS) {
    (gateway as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
      const options = args.at(-1) as { signal?: AbortSignal } | undefined;
      calls.push({ method, args: args.slice(0, -1), ...(options?.signal ? { signal: options.signal } : {}) });
      return method;
    };
  }
  return { gateway, calls };
}

const argsFor: Record<(typeof METHODS)[number], unknown[]> = {
  listProjects: [],
  getProject: ['p'],
  createProject: [{ name: 'n' }],
  getProjectData: ['p'],
  getTask: ['p', 't'],
  createTask: [{ projectId: 'p', title: 't' }],
  updateTask: [{ id: 't', projectId: 'p' }],
  completeTask: ['p', 't'],
  deleteTask: ['p', 't'],
  listComments: ['p', 't'],
  addComment: ['p', 't', 'hi'],
  getPreference: [],
  listMembers: ['p'],
};

describe('abortableGateway', () => {
  it('passes every call through with its arguments and the signal', async () => {
    const { gateway, calls } = recordingGateway();
    const turn = new AbortController();
    const bound = abortableGateway(gateway, turn.signal);
    expect(bound.kind).toBe('http');
    for (const method of METHODS) {
      expect(await (bound[method] as (...a: unknown[]) => Promise<unknown>)(...argsFor[method])).toBe(method);
    }
    expect(calls.map((c) => c.method)).toEqual([...METHODS]);
    for (const call of calls) {
      expect(call.args).toEqual(argsFor[call.method as (typeof METHODS)[number]]);
      expect(call.signal).toBe(turn.signal);
    }
  });

  it('merges the caller\'s own signal: either one aborts the call', async () => {
    const { gateway, calls } = recordingGateway();
    const turn = new AbortController();
    const own = new AbortController();
    await abortableGateway(gateway, turn.signal).getTask('p', 't', { signal: own.signal });
    const merged = calls[0]!.signal!;
    expect(merged.aborted).toBe(false);
    own.abort();
    expect(merged.aborted).toBe(true);
  });

  it('once aborted, no call reaches the gateway', async () => {
    const { gateway, calls } = recordingGateway();
    const turn = new AbortController();
    const bound = abortableGateway(gateway, turn.signal);
    turn.abort({ kind: 'user' });
    for (const method of METHODS) {
      const error = await (bound[method] as (...a: unknown[]) => Promise<unknown>)(...argsFor[method]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CallAbortedError);
      expect((error as Error).name).toBe('AbortError');
      expect((error as Error).message).toContain('the turn was stopped');
      expect((error as Error).cause).toEqual({ kind: 'user' });
    }
    expect(calls).toEqual([]);
  });

  it('close() leaves the shared gateway open', async () => {
    const { gateway } = recordingGateway();
    await abortableGateway(gateway, new AbortController().signal).close();
    expect(gateway.close).not.toHaveBeenCalled();
  });
});

/** A lock port whose lock is held until `release()`. */
function heldLock() {
  let release!: () => void;
  const busy = new Promise<void>((resolve) => (release = resolve));
  let chain: Promise<unknown> = busy;
  const ran: string[] = [];
  return {
    release: () => release(),
    ran,
    locks: {
      withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
        const run = chain.then(() => {
          ran.push(key);
          return fn();
        });
        chain = run.catch(() => undefined);
        return run;
      },
    },
  };
}

describe('abortableLocks', () => {
  it('runs the work under the lock and returns its value or error', async () => {
    const lock = heldLock();
    lock.release();
    const bound = abortableLocks(lock.locks, new AbortController().signal);
    expect(await bound.withLock('k', async () => 42)).toBe(42);
    await expect(bound.withLock('k', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
  });

  it('the wait for a busy lock ends at the abort, and the work never runs', async () => {
    const lock = heldLock();
    const turn = new AbortController();
    const work = vi.fn(async () => 'done');
    const waiting = abortableLocks(lock.locks, turn.signal).withLock('k', work);
    turn.abort(new Error('stopped'));
    await expect(waiting).rejects.toThrow('stopped');
    lock.release();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(work).not.toHaveBeenCalled();
  });

  it('after the abort nothing starts, and a non-Error reason becomes an Error that names it', async () => {
    const lock = heldLock();
    lock.release();
    const turn = new AbortController();
    turn.abort({ kind: 'user' });
    const work = vi.fn(async () => 'done');
    const error = await abortableLocks(lock.locks, turn.signal).withLock('k', work).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain('stopped');
    expect((error as Error).cause).toEqual({ kind: 'user' });
    expect(work).not.toHaveBeenCalled();
    expect(lock.ran).toEqual([]);
  });

  it('passes through what the lock port hands the locked work, and keeps its other members', async () => {
    const port = { extra: 7, withLock: <T>(_key: string, fn: (held: { token: string }) => Promise<T>) => fn({ token: 'held-1' }) };
    const bound = abortableLocks(port, new AbortController().signal);
    expect(await bound.withLock('k', async (held: { token: string }) => held.token)).toBe('held-1');
    expect(bound.extra).toBe(7);
  });

  it('an abort while the work runs does not interrupt it', async () => {
    const lock = heldLock();
    lock.release();
    const turn = new AbortController();
    let finish!: (v: string) => void;
    const running = abortableLocks(lock.locks, turn.signal).withLock('k', () => new Promise<string>((resolve) => (finish = resolve)));
    await new Promise((resolve) => setTimeout(resolve, 5));
    turn.abort();
    finish('finished');
    expect(await running).toBe('finished');
  });
});
