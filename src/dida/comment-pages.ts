// Comment lists as live Dida may send them (undocumented order, paged): read every page, order by createdTime.
import { parseDidaDate } from './dida-date';
import type { Comment } from './types';

/** The page size asked for; the server may cap it lower. */
export const COMMENT_PAGE_LIMIT = 200;
/** A server page smaller than this is not believed to be a cap: a first page this short is the whole list. */
export const MIN_SERVER_PAGE = 20;
/** Upper bound on pages read for one task (at most 50 × 200 comments). */
export const MAX_COMMENT_PAGES = 50;

/**
 * Comments ordered by `createdTime` ascending, ties (and missing times, which sort last) by id; ids are Mongo-style
 * and grow with creation time. List position is never used.
 */
export function sortComments<T extends Pick<Comment, 'id' | 'createdTime'>>(comments: readonly T[]): T[] {
  const time = (c: T) => parseDidaDate(c.createdTime)?.getTime() ?? Number.POSITIVE_INFINITY;
  return [...comments].sort((a, b) => {
    const ta = time(a);
    const tb = time(b);
    if (ta !== tb) return ta < tb ? -1 : 1;
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  });
}

/**
 * Reads every page through `fetchPage(offset, limit)` and returns the comments without duplicates, sorted.
 * Stops on an empty page, a page with no new ids (the server ignores `offset`), a page shorter than an earlier
 * one (the last page), a first page shorter than MIN_SERVER_PAGE (the whole list), or after
 * MAX_COMMENT_PAGES pages.
 */
export async function readAllCommentPages(fetchPage: (offset: number, limit: number) => Promise<Comment[]>): Promise<Comment[]> {
  const byId = new Map<string, Comment>();
  let offset = 0;
  let largest = 0;
  for (let page = 0; page < MAX_COMMENT_PAGES; page++) {
    const list = await fetchPage(offset, COMMENT_PAGE_LIMIT);
    let fresh = 0;
    for (const comment of list) {
      if (byId.has(comment.id)) continue;
      byId.set(comment.id, comment);
      fresh++;
    }
    if (list.length === 0 || fresh === 0) break;
    const short = largest > 0 ? list.length < largest : list.length < MIN_SERVER_PAGE;
    largest = Math.max(largest, list.length);
    offset += list.length;
    if (short) break;
  }
  return sortComments([...byId.values()]);
}
