// Ordering and paging rules for comment lists whose order and paging live Dida does not document.
import { describe, expect, it } from 'vitest';
import { MAX_COMMENT_PAGES, readAllCommentPages, sortComments } from '../../src/dida/comment-pages';
import type { Comment } from '../../src/dida/types';

const comment = (id: string, createdTime?: string): Comment => ({ id, title: id, createdTime });

describe('sortComments', () => {
  it('orders by createdTime, not by id or position; ties by id; a missing time sorts last', () => {
    const list = [
      comment('ccc', '2026-01-01T10:00:02.000+0000'),
      comment('zzz', '2026-01-01T10:00:00+0000'),
      comment('aaa'),
      comment('bbb', '2026-01-01T10:00:02.000+0000'),
      comment('yyy', '2026-01-01T18:00:01.000+0800'),
    ];
    expect(sortComments(list).map((c) => c.id)).toEqual(['zzz', 'yyy', 'bbb', 'ccc', 'aaa']);
  });
});

describe('readAllCommentPages', () => {
  const titles = (n: number) => Array.from({ length: n }, (_, i) => comment(`id${String(i).padStart(4, '0')}`, new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString()));

  it('pages with the server cap until a short page, newest-first pages come back oldest-first', async () => {
    const all = titles(130).reverse();
    const asked: Array<[number, number]> = [];
    const result = await readAllCommentPages(async (offset, limit) => {
      asked.push([offset, limit]);
      return all.slice(offset, offset + Math.min(limit, 50));
    });
    expect(result.map((c) => c.id)).toEqual(titles(130).map((c) => c.id));
    expect(asked).toEqual([[0, 200], [50, 200], [100, 200]]);
  });

  it('a short first page is the whole list; a first page of plausible page size is checked with one more read', async () => {
    let calls = 0;
    await readAllCommentPages(async (offset) => (calls++, titles(5).slice(offset)));
    expect(calls).toBe(1);
    calls = 0;
    const result = await readAllCommentPages(async (offset) => (calls++, titles(50).slice(offset)));
    expect(result).toHaveLength(50);
    expect(calls).toBe(2);
  });

  it('stops when the server ignores offset (a page with no new ids) and after a bounded number of pages', async () => {
    let calls = 0;
    const same = await readAllCommentPages(async () => (calls++, titles(60)));
    expect(same).toHaveLength(60);
    expect(calls).toBe(2);
    calls = 0;
    let next = 0;
    await readAllCommentPages(async () => {
      calls++;
      return Array.from({ length: 30 }, () => comment(`n${next++}`));
    });
    expect(calls).toBe(MAX_COMMENT_PAGES);
  });
});
