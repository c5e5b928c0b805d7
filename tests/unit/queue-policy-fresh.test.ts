// The queue policy (src/core/queue/queue-policy.ts) from a fresh import (its id pattern is built at load), and the
// edges its suite leaves: ties broken by sortOrder then id in both directions, the payload's ids, times, trimming
// and the count of Works left out.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { QueueCandidate, QueuePayloadStrings } from '../../src/core/queue/queue-policy';

type Policy = typeof import('../../src/core/queue/queue-policy');
let q: Policy;
// Loaded afresh before each test (not once for the file), so what the load builds counts for that test.
beforeEach(async () => {
  vi.resetModules();
  q = await import('../../src/core/queue/queue-policy');
});
const NOW = new Date('2026-12-02T03:00:00.123Z');
function candidate(fields: Partial<QueueCandidate> & { taskId: string }): QueueCandidate {
  return { title: `Task ${fields.taskId}`, priority: 3, order: 0, task: {}, status: 'open', hasPlan: false, unsettledSteps: 0, waitingForHuman: false, claimedByOtherHost: false, ...fields };
}
const strings: QueuePayloadStrings = { heading: 'Queue:', empty: 'Nothing.', levels: { none: 'none', low: 'low', medium: 'medium', high: 'high' }, idLabel: 'id' };

describe('the queue from a fresh import', () => {
  it('breaks a tie of Dida order by sortOrder (missing last), then by id, whichever way they come in', () => {
    const ids = (list: QueueCandidate[]) => q.rankQueue(list, NOW, 'UTC').ranked.map((r) => r.candidate.taskId);
    const a = candidate({ taskId: 'a', sortOrder: 5 });
    const b = candidate({ taskId: 'b', sortOrder: -5 });
    const c = candidate({ taskId: 'c' });
    const d = candidate({ taskId: 'd' });
    expect(ids([a, b, c, d])).toEqual(['b', 'a', 'c', 'd']);
    expect(ids([d, c, a, b])).toEqual(['b', 'a', 'c', 'd']);
    expect(ids([c, d, b, a])).toEqual(['b', 'a', 'c', 'd']);
    const twin = candidate({ taskId: 'c' });
    expect(ids([twin, c])).toEqual(['c', 'c']);
  });

  it('lists only plain ids, the read time to the second, trimmed titles and bodies, and counts what is left out', () => {
    const ranked = q.rankQueue([
      candidate({ taskId: 'ok_id-1', title: '  first  ', task: { content: '  body  ', desc: '  more  ' } }),
      candidate({ taskId: 'bad id', order: 1 }),
      candidate({ taskId: '-x/y', order: 2 }),
      candidate({ taskId: 'tail!', order: 3 }),
    ], NOW, 'UTC').ranked;
    const text = q.renderQueuePayload(ranked, { strings, now: NOW, maxEntries: 3 });
    const lines = text.split('\n');
    expect(lines[0]).toBe('Queue: (as of 2026-12-02T03:00:00Z)');
    expect(lines).toContain('1. [medium] · id ok_id-1');
    expect(lines).toContain('2. [medium]');
    expect(lines).toContain('3. [medium]');
    expect(text).not.toContain('tail!');
    expect(text).toMatch(/label=title nonce=[0-9a-f]{12}>>>\nfirst\n/);
    expect(text).toMatch(/label=body nonce=[0-9a-f]{12}>>>\nbody\n\nmore\n/);
    expect(lines.at(-1)).toBe('… (1 more Works; take the top one with todo_work next)');
    expect(lines.at(-2)).toBe('');
    // All of them shown: no count.
    const all = q.renderQueuePayload(ranked, { strings, now: NOW, maxEntries: 4 });
    expect(all).not.toContain('more Works');
    expect(q.renderQueuePayload(ranked, { strings, now: NOW }).split('\n').filter((l) => /^\d+\. \[/.test(l))).toHaveLength(4);
    expect(q.renderQueuePayload(ranked, { strings, now: new Date(Number.NaN) }).split('\n')[0]).toBe('Queue:');
  });
});
