// The progress-comment outbox: comments are stored with the intent that causes them and posted exactly once.
import { randomBytes } from 'node:crypto';
import { parseDidaDate } from '../../dida/dida-date';
import { isDidaError } from '../../dida/dida-error';
import type { EngineDeps } from './engine-context';
import { isRefusal } from './task-writer';
import { MAX_COMMENT_LENGTH } from '../text/text-guard';
import type { EngineState, OutboxEntry } from './work-state';

/** A comment whose post had an unknown outcome counts as posted when Dida shows it created after this much before. */
const CLOCK_SKEW_MS = 5 * 60_000;

/** Default wait before progress comments are posted (a start and finish inside it are one comment). */
export const DEFAULT_PROGRESS_WINDOW_MS = 60_000;

type NewEntry = Omit<OutboxEntry, 'id' | 'uncertain' | 'attempts' | 'kind' | 'sentAs'> & { kind?: OutboxEntry['kind'] };

/** Adds a comment for the Work `workKey` to the outbox of `state` (call inside the update that saves the intent). */
export function queueComment(state: EngineState, entry: NewEntry): string {
  const id = randomBytes(6).toString('hex');
  state.outbox.push({ kind: 'note', ...entry, id, uncertain: false, attempts: 0 });
  return id;
}

/** Drops the outbox entries of `ids` (a refused intent takes its comments back). */
export function dropComments(state: EngineState, ids: ReadonlySet<string>): void {
  state.outbox = state.outbox.filter((e) => !ids.has(e.id));
}

/** A comment Dida refused this many times (a 4xx that will never succeed, or the task is gone) is dropped and logged. */
export const MAX_POST_ATTEMPTS = 5;

/** After a transient failure (429, 5xx, timeout, network) a comment waits this long, doubling per failure, up to the cap. */
export const RETRY_BASE_MS = 15_000;
export const RETRY_MAX_MS = 10 * 60_000;
/** A comment that waited this long is reported (`dida-todo status`). */
export const LONG_WAIT_MS = 10 * 60_000;

/** The wait before the next post of a comment that failed transiently `failures` times. */
export function retryDelayMs(failures: number): number {
  return Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.max(0, failures - 1));
}

/** The comments that have waited longer than LONG_WAIT_MS at `now` (oldest first). */
export function longWaiting(state: Pick<EngineState, 'outbox'>, now: number): OutboxEntry[] {
  return state.outbox.filter((e) => now - e.createdAt >= LONG_WAIT_MS).sort((a, b) => a.createdAt - b.createdAt);
}

/**
 * The comments a batch of entries goes out as: a step's start followed by its finish is only the finish, and the rest
 * are joined into as few comments as fit Dida's length (in order). Returns the texts with the entry ids each carries.
 */
export function coalesce(entries: readonly OutboxEntry[]): Array<{ text: string; ids: string[] }> {
  const finished = new Set(entries.filter((e) => e.stepId && (e.kind === 'completed' || e.kind === 'skipped')).map((e) => e.stepId));
  const posts: Array<{ text: string; ids: string[] }> = [];
  const covered: string[] = [];
  for (const entry of entries) {
    if (entry.kind === 'started' && finished.has(entry.stepId)) {
      covered.push(entry.id);
      continue;
    }
    const last = posts.at(-1);
    if (last && last.text.length + 2 + entry.text.length <= MAX_COMMENT_LENGTH) {
      last.text = `${last.text}\n\n${entry.text}`;
      last.ids.push(entry.id);
    } else posts.push({ text: entry.text, ids: [entry.id] });
  }
  if (posts[0]) posts[0].ids.push(...covered);
  return posts;
}

export interface FlushOptions {
  /**
   * Post only when the oldest waiting comment of the Work has waited the progress window, and none of them waits out
   * the delay after a transient failure (the background timer; explicit flushes at settle, waiting and finalize try at once).
   */
  onlyDue?: boolean;
}

/**
 * Posts the outbox comments of one Work, coalesced (see coalesce). The caller holds the Work's lock. Each post is
 * recorded as in flight (with its text) before it is sent; after a crash or a lost answer the task's comments are
 * checked for that text before posting again, so each comment appears once. Any failure keeps the comments for the next
 * flush and stops this one. Only a refusal (a 4xx that will never succeed) counts towards dropping: a comment refused
 * MAX_POST_ATTEMPTS times is dropped (a deleted task refuses). A transient failure (429, 5xx, timeout, network) keeps it
 * with a growing delay (see retryDelayMs) for as long as its Work is in the state (pruneState drops what is left of a
 * Work it forgets). Returns how many entries still wait.
 */
export async function flushWorkOutbox(deps: EngineDeps, workKey: string, options: FlushOptions = {}): Promise<number> {
  const waiting = (await deps.state.read()).outbox.filter((e) => e.workKey === workKey);
  if (waiting.length === 0) return 0;
  const windowMs = deps.progressWindowMs ?? DEFAULT_PROGRESS_WINDOW_MS;
  if (options.onlyDue && Math.min(...waiting.map((e) => e.createdAt)) > deps.now() - windowMs) return waiting.length;
  if (options.onlyDue && waiting.some((e) => e.retryAt !== undefined && e.retryAt > deps.now())) return waiting.length;
  const done = new Set<string>();
  // Posts whose answer was lost: found by their text, or posted again as they were.
  const resent = new Map<string, string[]>();
  for (const entry of waiting) {
    if (!entry.sentAs) continue;
    resent.set(entry.sentAs, [...(resent.get(entry.sentAs) ?? []), entry.id]);
  }
  const fresh = waiting.filter((e) => !e.sentAs);
  const posts = [...[...resent].map(([text, ids]) => ({ text, ids, uncertain: true })), ...coalesce(fresh).map((p) => ({ ...p, uncertain: false }))];
  const firstTry = posts.filter((p) => !p.uncertain);
  if (firstTry.length > 0) {
    const sentAs = new Map(firstTry.flatMap((p) => p.ids.map((id) => [id, p.text] as const)));
    await deps.state.update((state) => {
      state.outbox = state.outbox.map((e) => (sentAs.has(e.id) ? { ...e, sentAs: sentAs.get(e.id), uncertain: true } : e));
    });
  }
  let failed: { ids: string[]; refused: boolean } | undefined;
  let failure: unknown;
  for (const post of posts) {
    const entry = waiting.find((e) => e.id === post.ids[0]) as OutboxEntry;
    try {
      if (post.uncertain && (await alreadyPosted(deps, entry, post.text))) {
        for (const id of post.ids) done.add(id);
        continue;
      }
      await deps.gateway.addComment(entry.projectId, entry.taskId, post.text);
      for (const id of post.ids) done.add(id);
    } catch (error) {
      if (isDidaError(error) && error.code === 'auth') throw error;
      failed = { ids: post.ids, refused: isRefusal(error) };
      failure = error;
      break;
    }
  }
  const attempted = new Set(failed?.ids ?? []);
  const after = await deps.state.update((state) => {
    state.outbox = state.outbox.flatMap((e) => {
      if (done.has(e.id)) return [];
      if (!attempted.has(e.id)) return [e];
      // A refused post was not made: it is not looked for before the next try, and it counts towards dropping.
      if (failed?.refused) {
        const next: OutboxEntry = { ...e, attempts: e.attempts + 1, uncertain: false };
        delete next.sentAs;
        delete next.retryAt;
        if (next.attempts >= MAX_POST_ATTEMPTS) {
          deps.log?.(`a progress comment was dropped after Dida refused it ${next.attempts} times`);
          return [];
        }
        return [next];
      }
      // A transient failure: kept, and tried again after a delay that grows with each failure.
      const failures = (e.failures ?? 0) + 1;
      return [{ ...e, failures, retryAt: deps.now() + retryDelayMs(failures) }];
    });
  });
  if (failure) deps.log?.(`progress comments will be posted later: ${failure instanceof Error ? failure.message : String(failure)}`);
  return after.outbox.filter((e) => e.workKey === workKey).length;
}

async function alreadyPosted(deps: EngineDeps, entry: OutboxEntry, text: string): Promise<boolean> {
  const comments = await deps.gateway.listComments(entry.projectId, entry.taskId);
  return comments.some((c) => c.title === text && (parseDidaDate(c.createdTime)?.getTime() ?? Number.MAX_SAFE_INTEGER) >= entry.createdAt - CLOCK_SKEW_MS);
}
