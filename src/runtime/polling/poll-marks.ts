// The poller's marks in the machine's shared state: which process takes part in polling, the Work offered to a session
// of another process, and the Works the poller handed to a session (so no poll offers them twice).
import type { StatePort } from '../../core/work/engine-context';
import type { EngineState, SessionRecord, WorkRecord } from '../../core/work/work-state';

/** Works a session record remembers it was handed by the poller. */
export const WOKEN_KEPT = 50;

/** What this module keeps in a session record (the record schema keeps unknown keys). */
export interface PollMarks {
  /** The process hosting the session takes part in the machine's polling (its pid; compared with `livePid`). */
  pollReady?: number;
  /** A Work the poller claimed for this session and hands over (taken, or declined, by the session's process). */
  pollOffer?: { key: string; projectId: string; at: number; by: number };
  /** Works the poller handed to this session (never offered to anyone again while they stay in the list). */
  pollWoken?: string[];
  /** The process that last woke the session for a Work the poller handed it. */
  pollWokenBy?: number;
}

export type MarkedRecord = SessionRecord & PollMarks & { livePid?: number; cwd?: string };

/** Removes the offer of `key` from the session's record; true when this call removed it. */
export async function removeOffer(state: StatePort, sessionId: string, key: string): Promise<boolean> {
  let removed = false;
  await state.update((s) => {
    const record = s.sessions[sessionId] as MarkedRecord | undefined;
    if (record?.pollOffer?.key !== key) return;
    delete record.pollOffer;
    removed = true;
  });
  return removed;
}

/** Offers `work` (claimed for the session) to a session of another process `by` this one; returns the Work's key. */
export async function writeOffer(state: StatePort, sessionId: string, projectId: string, work: WorkRecord, at: number, by: number): Promise<string> {
  const key = work.occurrence ? `${work.taskId}#${work.occurrence}` : work.taskId;
  await state.update((s) => {
    const record = s.sessions[sessionId] as MarkedRecord | undefined;
    if (!record) return;
    record.pollOffer = { key, projectId, at, by };
    record.pollWoken = rememberKey(record.pollWoken, key);
  });
  return key;
}

/** Records that process `by` woke its session for `key` (a later leader does not offer it again). */
export async function writeWoken(state: StatePort, sessionId: string, key: string, by: number): Promise<void> {
  await state.update((s) => {
    const record = s.sessions[sessionId] as MarkedRecord | undefined;
    if (!record) return;
    record.pollWoken = rememberKey(record.pollWoken, key);
    record.pollWokenBy = by;
  });
}

/** Forgets that the session was handed `key` (so it may be offered again). */
export async function forgetWoken(state: StatePort, sessionId: string, key: string): Promise<void> {
  await state.update((s) => {
    const record = s.sessions[sessionId] as MarkedRecord | undefined;
    if (record?.pollWoken?.includes(key)) record.pollWoken = record.pollWoken.filter((k) => k !== key);
  });
}

function rememberKey(keys: string[] | undefined, key: string): string[] {
  return [...(keys ?? []).filter((k) => k !== key), key].slice(-WOKEN_KEPT);
}

/**
 * What no poll may offer again: Works live sessions were handed by the poller (while they stay in the list), and Works
 * live sessions hold as their current Work or are being offered. A session that ended frees what it was handed.
 */
export function sharedWork(state: EngineState, live: (record: MarkedRecord) => boolean): { offered: Set<string>; held: Set<string> } {
  const offered = new Set<string>();
  const held = new Set<string>();
  for (const raw of Object.values(state.sessions)) {
    const record = raw as MarkedRecord;
    if (record.pollOffer) held.add(record.pollOffer.key);
    if (!live(record)) continue;
    for (const key of record.pollWoken ?? []) offered.add(key);
    if (record.currentWork) held.add(record.currentWork);
  }
  return { offered, held };
}
