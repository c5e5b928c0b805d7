// The progress-comment outbox: comments are stored with the intent that causes them and posted exactly once.
import { randomBytes } from 'node:crypto';
import { parseDidaDate } from '../dida/dida-date';
import { isDidaError } from '../dida/dida-error';
import type { EngineDeps } from './engine-context';
import { isRefusal } from './task-writer';
import type { EngineState, OutboxEntry } from './work-state';

/** A comment whose post had an unknown outcome counts as posted when Dida shows it created after this much before. */
const CLOCK_SKEW_MS = 5 * 60_000;

/** Adds a comment for the Work `workKey` to the outbox of `state` (call inside the update that saves the intent). */
export function queueComment(state: EngineState, entry: Omit<OutboxEntry, 'id' | 'uncertain' | 'attempts'>): void {
  state.outbox.push({ ...entry, id: randomBytes(6).toString('hex'), uncertain: false, attempts: 0 });
}

/** Drops the outbox entries of `ids` (a refused intent takes its comments back). */
export function dropComments(state: EngineState, ids: ReadonlySet<string>): void {
  state.outbox = state.outbox.filter((e) => !ids.has(e.id));
}

/** A comment that failed this many times (refused, or the task is gone) is dropped and logged. */
export const MAX_POST_ATTEMPTS = 5;

/**
 * Posts the outbox comments of one Work, oldest first. The caller holds the Work's lock. A post whose answer was lost
 * is marked uncertain and, before it is posted again, the task's comments are checked for it: each comment appears
 * once. Any failure keeps the comment for the next flush (at the next change, settle or sync) and stops this one; a
 * comment refused MAX_POST_ATTEMPTS times is dropped. Returns how many comments of the Work are still waiting.
 */
export async function flushWorkOutbox(deps: EngineDeps, workKey: string): Promise<number> {
  const waiting = (await deps.state.read()).outbox.filter((e) => e.workKey === workKey);
  if (waiting.length === 0) return 0;
  // Recorded as in flight before posting: after a crash mid-post the next flush looks before posting again.
  const fresh = new Set(waiting.filter((e) => !e.uncertain).map((e) => e.id));
  const entries = fresh.size === 0 ? waiting : (await deps.state.update((state) => {
    state.outbox = state.outbox.map((e) => (fresh.has(e.id) ? { ...e, uncertain: true } : e));
  })).outbox.filter((e) => e.workKey === workKey).map((e) => (fresh.has(e.id) ? { ...e, uncertain: false } : e));
  const done = new Set<string>();
  let failed: { id: string; uncertain: boolean } | undefined;
  let failure: unknown;
  for (const entry of entries) {
    try {
      if (entry.uncertain && (await alreadyPosted(deps, entry))) {
        done.add(entry.id);
        continue;
      }
      await deps.gateway.addComment(entry.projectId, entry.taskId, entry.text);
      done.add(entry.id);
    } catch (error) {
      if (isDidaError(error) && error.code === 'auth') throw error;
      failed = { id: entry.id, uncertain: !isRefusal(error) };
      fresh.delete(entry.id);
      failure = error;
      break;
    }
  }
  const after = await deps.state.update((state) => {
    state.outbox = state.outbox.flatMap((e) => {
      if (done.has(e.id)) return [];
      // Not tried in this flush: as it was before.
      if (fresh.has(e.id)) return [{ ...e, uncertain: false }];
      if (e.id !== failed?.id) return [e];
      const next = { ...e, uncertain: failed.uncertain || waiting.find((w) => w.id === e.id)?.uncertain === true, attempts: e.attempts + 1 };
      if (next.attempts >= MAX_POST_ATTEMPTS) {
        deps.log?.(`a progress comment was dropped after ${next.attempts} failed posts`);
        return [];
      }
      return [next];
    });
  });
  if (failure) deps.log?.(`progress comments will be posted later: ${failure instanceof Error ? failure.message : String(failure)}`);
  return after.outbox.filter((e) => e.workKey === workKey).length;
}

async function alreadyPosted(deps: EngineDeps, entry: OutboxEntry): Promise<boolean> {
  const comments = await deps.gateway.listComments(entry.projectId, entry.taskId);
  return comments.some((c) => c.title === entry.text && (parseDidaDate(c.createdTime)?.getTime() ?? Number.MAX_SAFE_INTEGER) >= entry.createdAt - CLOCK_SKEW_MS);
}
