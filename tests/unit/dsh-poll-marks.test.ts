// The poller's marks in the shared state (src/runtime/polling/poll-marks.ts): an offer is removed only by the call that finds it,
// handed Works are remembered once each (newest last, at most WOKEN_KEPT) and forgotten on request, and sessions that
// ended no longer keep what they were handed from being offered again.
import { describe, expect, it } from 'vitest';
import { emptyEngineState, type EngineState, type SessionRecord } from '../../src/core/work/work-state';
import { forgetWoken, removeOffer, sharedWork, WOKEN_KEPT, writeOffer, writeWoken, type MarkedRecord } from '../../src/runtime/polling/poll-marks';
import { memoryState } from '../helpers/dsh-fakes';
import { makeWork } from '../helpers/work-fixtures';

function session(fields: Partial<MarkedRecord> = {}): SessionRecord {
  return { touched: [], autoAttempts: 0, updatedAt: Date.now(), ...fields } as SessionRecord;
}

function stateWith(sessions: Record<string, Partial<MarkedRecord>>): EngineState {
  const state = emptyEngineState();
  for (const [id, fields] of Object.entries(sessions)) state.sessions[id] = session(fields);
  return state;
}

const offer = (key: string) => ({ key, projectId: 'p1', at: 1, by: 7 });
const marks = (state: { value: EngineState }, id: string) => state.value.sessions[id] as MarkedRecord | undefined;

describe('removeOffer', () => {
  it('removes the offer of the given key and says it did', async () => {
    const state = memoryState(stateWith({ s1: { pollOffer: offer('w1') } }));
    await expect(removeOffer(state, 's1', 'w1')).resolves.toBe(true);
    expect(marks(state, 's1')?.pollOffer).toBeUndefined();
  });

  it('leaves an offer of another key in place and says it removed nothing', async () => {
    const state = memoryState(stateWith({ s1: { pollOffer: offer('w2') } }));
    await expect(removeOffer(state, 's1', 'w1')).resolves.toBe(false);
    expect(marks(state, 's1')?.pollOffer).toEqual(offer('w2'));
  });

  it('says false for a session without an offer, and for a session the state does not know', async () => {
    const state = memoryState(stateWith({ s1: {} }));
    await expect(removeOffer(state, 's1', 'w1')).resolves.toBe(false);
    await expect(removeOffer(state, 'gone', 'w1')).resolves.toBe(false);
    expect(Object.keys(state.value.sessions)).toEqual(['s1']);
  });

  it('only the first of two calls for the same offer removes it', async () => {
    const state = memoryState(stateWith({ s1: { pollOffer: offer('w1') } }));
    const answers = await Promise.all([removeOffer(state, 's1', 'w1'), removeOffer(state, 's1', 'w1')]);
    expect(answers).toEqual([true, false]);
  });
});

describe('writeOffer', () => {
  it('offers a Work by its task id and remembers it as handed to the session', async () => {
    const state = memoryState(stateWith({ s1: {} }));
    const key = await writeOffer(state, 's1', 'p1', makeWork([], { taskId: 'task-a' }), 100, 42);
    expect(key).toBe('task-a');
    expect(marks(state, 's1')?.pollOffer).toEqual({ key: 'task-a', projectId: 'p1', at: 100, by: 42 });
    expect(marks(state, 's1')?.pollWoken).toEqual(['task-a']);
  });

  it('names an occurrence of a recurring task by task id and occurrence', async () => {
    const state = memoryState(stateWith({ s1: {} }));
    const key = await writeOffer(state, 's1', 'p1', makeWork([], { taskId: 'task-a', occurrence: '2026-12-02' }), 100, 42);
    expect(key).toBe('task-a#2026-12-02');
    expect(marks(state, 's1')?.pollOffer?.key).toBe('task-a#2026-12-02');
  });

  it('writes nothing for a session the state does not know', async () => {
    const state = memoryState(stateWith({ s1: {} }));
    await expect(writeOffer(state, 'gone', 'p1', makeWork([], { taskId: 'task-a' }), 100, 42)).resolves.toBe('task-a');
    expect(Object.keys(state.value.sessions)).toEqual(['s1']);
    expect(marks(state, 's1')?.pollOffer).toBeUndefined();
  });
});

describe('writeWoken', () => {
  it('remembers the key and the process that woke the session', async () => {
    const state = memoryState(stateWith({ s1: {} }));
    await writeWoken(state, 's1', 'w1', 42);
    expect(marks(state, 's1')?.pollWoken).toEqual(['w1']);
    expect(marks(state, 's1')?.pollWokenBy).toBe(42);
  });

  it('adds the newest key last, keeps the earlier ones, and never lists a key twice', async () => {
    const state = memoryState(stateWith({ s1: { pollWoken: ['w1', 'w2', 'w3'] } }));
    await writeWoken(state, 's1', 'w4', 42);
    expect(marks(state, 's1')?.pollWoken).toEqual(['w1', 'w2', 'w3', 'w4']);
    await writeWoken(state, 's1', 'w2', 43);
    expect(marks(state, 's1')?.pollWoken).toEqual(['w1', 'w3', 'w4', 'w2']);
    expect(marks(state, 's1')?.pollWokenBy).toBe(43);
  });

  it(`keeps at most ${WOKEN_KEPT} keys, dropping the oldest`, async () => {
    const earlier = Array.from({ length: WOKEN_KEPT }, (_, i) => `w${i}`);
    const state = memoryState(stateWith({ s1: { pollWoken: earlier } }));
    await writeWoken(state, 's1', 'newest', 42);
    expect(marks(state, 's1')?.pollWoken).toEqual([...earlier.slice(1), 'newest']);
  });

  it('an offer is remembered the same way (no duplicate, newest last, bounded)', async () => {
    const earlier = Array.from({ length: WOKEN_KEPT }, (_, i) => `w${i}`);
    const state = memoryState(stateWith({ s1: { pollWoken: earlier } }));
    await writeOffer(state, 's1', 'p1', makeWork([], { taskId: 'w3' }), 100, 42);
    expect(marks(state, 's1')?.pollWoken).toEqual([...earlier.filter((k) => k !== 'w3'), 'w3']);
  });

  it('writes nothing for a session the state does not know', async () => {
    const state = memoryState(stateWith({ s1: {} }));
    await expect(writeWoken(state, 'gone', 'w1', 42)).resolves.toBeUndefined();
    expect(Object.keys(state.value.sessions)).toEqual(['s1']);
    expect(marks(state, 's1')?.pollWoken).toBeUndefined();
  });
});

describe('forgetWoken', () => {
  it('forgets only the given key', async () => {
    const state = memoryState(stateWith({ s1: { pollWoken: ['w1', 'w2', 'w3'] } }));
    await forgetWoken(state, 's1', 'w2');
    expect(marks(state, 's1')?.pollWoken).toEqual(['w1', 'w3']);
  });

  it('does nothing for a key it was never handed, a session without handed Works, or an unknown session', async () => {
    const state = memoryState(stateWith({ s1: { pollWoken: ['w1'] }, s2: {} }));
    await forgetWoken(state, 's1', 'other');
    await forgetWoken(state, 's2', 'w1');
    await forgetWoken(state, 'gone', 'w1');
    expect(marks(state, 's1')?.pollWoken).toEqual(['w1']);
    expect(marks(state, 's2')?.pollWoken).toBeUndefined();
    expect(Object.keys(state.value.sessions)).toEqual(['s1', 's2']);
  });
});

describe('sharedWork', () => {
  const live = (record: MarkedRecord) => record.livePid === 1;

  it('a live session keeps its handed Works from being offered, and holds its current Work and its offer', async () => {
    const state = stateWith({ s1: { livePid: 1, pollWoken: ['w1', 'w2'], currentWork: 'w3', pollOffer: offer('w4') } });
    const shared = sharedWork(state, live);
    expect(shared.offered).toEqual(new Set(['w1', 'w2']));
    expect(shared.held).toEqual(new Set(['w3', 'w4']));
  });

  it('a session that ended frees what it was handed and its current Work, but its offer stays held', () => {
    const state = stateWith({ s1: { livePid: 2, pollWoken: ['w1'], currentWork: 'w3', pollOffer: offer('w4') } });
    const shared = sharedWork(state, live);
    expect(shared.offered).toEqual(new Set());
    expect(shared.held).toEqual(new Set(['w4']));
  });

  it('a live session without marks adds nothing', () => {
    const state = stateWith({ s1: { livePid: 1 } });
    const shared = sharedWork(state, live);
    expect(shared.offered).toEqual(new Set());
    expect(shared.held).toEqual(new Set());
  });

  it('gathers the marks of every session', () => {
    const state = stateWith({
      s1: { livePid: 1, pollWoken: ['w1'], currentWork: 'c1' },
      s2: { livePid: 1, pollWoken: ['w2'], pollOffer: offer('o2') },
      s3: { livePid: 2, pollWoken: ['w3'], currentWork: 'c3', pollOffer: offer('o3') },
    });
    const shared = sharedWork(state, live);
    expect(shared.offered).toEqual(new Set(['w1', 'w2']));
    expect(shared.held).toEqual(new Set(['c1', 'o2', 'o3']));
  });
});
