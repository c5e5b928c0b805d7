// What the background writer kept for the model on the Works a session touched, handed out once (no Dida request).
import type { EngineDeps } from '../work/engine-context';
import type { WorkNews, WorkRecord } from '../work/work-state';

export interface TakenNews {
  work: WorkRecord;
  news: WorkNews;
}

/**
 * The news of every Work the session touched (its current Work first), removed from the records in the same state
 * update, so each is told once. Reads the state only (a stat when nothing changed); writes it only when there is news.
 */
export async function takeNews(deps: EngineDeps, sessionId: string): Promise<TakenNews[]> {
  const state = await deps.state.read();
  const session = state.sessions[sessionId];
  if (!session) return [];
  const keys = [...new Set([...(session.currentWork ? [session.currentWork] : []), ...session.touched])];
  if (!keys.some((key) => state.works[key]?.news)) return [];
  const taken: TakenNews[] = [];
  await deps.state.update((s) => {
    for (const key of keys) {
      const work = s.works[key];
      if (!work?.news) continue;
      taken.push({ work: structuredClone(work), news: work.news });
      delete work.news;
    }
  });
  return taken;
}
