// The simulator's comments: kept per task in creation order, served in pages in the order the quirks say.
import type { SimComment, StoredComment } from './sim-store';
import type { SimQuirks } from './sim-task-ops';
import { badRequest, clone, newId, notFound } from './sim-util';

export class SimComments {
  private readonly byTask = new Map<string, StoredComment[]>();

  constructor(
    private readonly quirks: SimQuirks,
    private readonly stamp: () => string,
    private readonly persist: () => void,
  ) {}

  load(comments: readonly StoredComment[]): void {
    for (const c of comments) this.of(c.taskId).push(c);
  }

  /** The stored comments of the tasks `pick` selects (for the data file). */
  stored(pick: (taskId: string) => boolean): StoredComment[] {
    return [...this.byTask.entries()].filter(([tid]) => pick(tid)).flatMap(([, list]) => list);
  }

  forget(taskId: string): void {
    this.byTask.delete(taskId);
  }

  private of(tid: string): StoredComment[] {
    let list = this.byTask.get(tid);
    if (!list) this.byTask.set(tid, (list = []));
    return list;
  }

  /** One page in the `commentOrder` quirk's order, from `offset`, at most `limit` and never more than `commentPageSize`. */
  page(taskId: string, page: { offset?: number | undefined; limit?: number | undefined }): SimComment[] {
    const all = [...(this.byTask.get(taskId) ?? [])];
    if (this.quirks.commentOrder === 'newest-first') all.reverse();
    const size = Math.min(page.limit ?? this.quirks.commentPageSize, this.quirks.commentPageSize);
    const offset = page.offset ?? 0;
    return all.slice(offset, offset + Math.max(0, size)).map(wireComment);
  }

  all(taskId: string): SimComment[] {
    return (this.byTask.get(taskId) ?? []).map(wireComment);
  }

  add(task: { id: string; projectId: string }, text: unknown, userId: number): SimComment {
    if (typeof text !== 'string' || text.trim() === '') throw badRequest('title is required');
    const stamp = this.stamp();
    const comment: StoredComment = { id: newId(), title: text, userId, createdTime: stamp, modifiedTime: stamp, taskId: task.id, projectId: task.projectId };
    this.of(task.id).push(comment);
    this.persist();
    return wireComment(comment);
  }

  remove(taskId: string, cid: string): void {
    const list = this.byTask.get(taskId) ?? [];
    const index = list.findIndex((c) => c.id === cid);
    if (index < 0) throw notFound(`comment ${cid} not found`, 'comment_not_found');
    list.splice(index, 1);
    this.persist();
  }
}

function wireComment(stored: StoredComment): SimComment {
  const { taskId: _t, projectId: _p, ...wire } = stored;
  return clone(wire);
}

