// Reconcile's edges (src/core/work/work-reconcile.ts) the main suite leaves: Dida's version of a task, the fields a new
// Work starts with, the body read from desc and content, the order of steps following Dida's items, and what a read
// that changes nothing (or only one thing) does to the record.
import { describe, expect, it } from 'vitest';
import { humanFingerprint } from '../../src/core/work/item-codec';
import { adoptTask, agentWorkFromTask, bodyOf, reconcileWork, taskVersion } from '../../src/core/work/work-reconcile';
import type { StepRecord, WorkRecord } from '../../src/core/work/work-state';
import type { ChecklistItem, Task } from '../../src/dida/types';
import { makeStep, makeWork } from '../helpers/work-fixtures';

const NOW = 5_000;
function task(fields: Partial<Task> = {}): Task {
  return { id: 't1', projectId: 'p1', title: 'Work', priority: 3, status: 0, content: '', desc: '', ...fields } as Task;
}
const item = (id: string, title: string, status = 0) => ({ id, title, status }) as ChecklistItem;
function opts() {
  let n = 100;
  return { now: NOW, newStepId: () => `s${++n}`, occurrence: '' };
}
/** A Work that last saw `seen` (its fingerprint, title, priority and body), each step having seen its item. */
function work(steps: StepRecord[], seen: Task, fields: Partial<WorkRecord> = {}): WorkRecord {
  return makeWork(steps, { title: seen.title, priority: seen.priority, body: bodyOf(seen), humanFingerprint: humanFingerprint(seen), rev: 3, ...fields });
}
const seenStep = (id: string, itemId: string, title: string, fields: Partial<StepRecord> = {}) => makeStep({ id, itemId, title, seen: { title, done: false }, ...fields });

describe('taskVersion', () => {
  it('the etag, else the modification time, else none', () => {
    expect(taskVersion({ etag: 'e1', modifiedTime: 'm1' })).toBe('e1');
    expect(taskVersion({ etag: '', modifiedTime: 'm1' })).toBe('m1');
    expect(taskVersion({ modifiedTime: 'm1' })).toBe('m1');
    expect(taskVersion({ etag: '', modifiedTime: '' })).toBeUndefined();
    expect(taskVersion({})).toBeUndefined();
  });
});

describe('a new Work', () => {
  it("copies the task's tags and version; none when the task has none", () => {
    const tags = ['web'];
    const adopted = adoptTask(task({ tags, etag: 'v1', items: [item('i1', 'a', 2)] }), opts());
    expect(adopted.tags).toEqual(['web']);
    expect(adopted.tags).not.toBe(tags);
    expect(adopted.seenVersion).toBe('v1');
    expect(adopted.steps).toEqual([{ id: 's101', itemId: 'i1', title: 'a', status: 'completed', origin: 'human', seen: { title: 'a', done: true }, updatedAt: NOW }]);
    expect(adopted.nextStepNumber).toBe(2);
    const bare = adoptTask(task({ tags: [] }), opts());
    expect('tags' in bare).toBe(false);
    expect('seenVersion' in bare).toBe(false);
    expect('reworkOf' in bare).toBe(false);
  });

  it("the bundle's own task: agent steps by default, the person's for a rework, which names its Work", () => {
    const own = agentWorkFromTask(task({ items: [item('i1', 'a')] }), { now: NOW, newStepId: () => 'x' });
    expect(own).toMatchObject({ origin: 'agent', occurrence: '', rev: 0 });
    expect(own.steps.map((s) => s.origin)).toEqual(['agent']);
    expect('reworkOf' in own).toBe(false);
    const rework = agentWorkFromTask(task({ items: [item('i1', 'fix it')] }), { now: NOW, newStepId: () => 'x', reworkOf: 'w0', stepOrigin: 'human' });
    expect(rework.reworkOf).toBe('w0');
    expect(rework.steps.map((s) => s.origin)).toEqual(['human']);
    expect(agentWorkFromTask(task(), { now: NOW, newStepId: () => 'x' }).steps).toEqual([]);
  });
});

describe('bodyOf', () => {
  it('reads desc and content, trimmed, without saying the same text twice', () => {
    expect(bodyOf({ desc: ' d ', content: '' })).toBe('d');
    expect(bodyOf({ desc: '', content: ' c ' })).toBe('c');
    expect(bodyOf({ desc: 'abc', content: 'b' })).toBe('abc');
    expect(bodyOf({ desc: 'b', content: 'abc' })).toBe('abc');
    expect(bodyOf({ desc: 'd', content: 'c' })).toBe('d\n\nc');
    expect(bodyOf({})).toBe('');
  });
});

describe('reconcileWork', () => {
  it('a read that changes nothing leaves the record as it was (same rev), its version noted', () => {
    const seen = task({ items: [item('i1', 'a'), item('i2', 'b')], etag: 'v2' });
    const w = work([seenStep('s1', 'i1', 'a'), seenStep('s2', 'i2', 'b')], seen, { seenVersion: 'v1' });
    const result = reconcileWork(w, seen, opts());
    expect(result.changed).toBe(false);
    expect(w.rev).toBe(3);
    expect(w.updatedAt).toBe(0);
    expect(w.seenVersion).toBe('v2');
    reconcileWork(w, { ...seen, etag: undefined } as Task, opts());
    expect('seenVersion' in w).toBe(false);
  });

  it("the steps follow Dida's order of items; steps without a live item keep their order after them", () => {
    const seen = task({ items: [item('i1', 'a'), item('i3', 'c')] });
    const w = work([makeStep({ id: 'x1', title: 'own' }), seenStep('s3', 'i3', 'c'), seenStep('s1', 'i1', 'a'), seenStep('s2', 'i9', 'gone', { status: 'deleted' }), makeStep({ id: 'x2', title: 'own 2' })], seen);
    const result = reconcileWork(w, seen, opts());
    expect(w.steps.map((s) => s.id)).toEqual(['s1', 's3', 'x1', 's2', 'x2']);
    expect(result.changed).toBe(true);
    expect(w.rev).toBe(4);
    // Already in order: nothing changes.
    expect(reconcileWork(w, seen, opts()).changed).toBe(false);
  });

  it('a deleted step stays deleted (its item not taken for a new one); an unpaired step of a direct Work is not deleted', () => {
    const seen = task({ items: [item('i1', 'a')] });
    const w = work([seenStep('s1', 'i1', 'a', { status: 'deleted', updatedAt: 7 })], seen);
    const result = reconcileWork(w, seen, opts());
    const deleted = w.steps.find((s) => s.id === 's1')!;
    expect(deleted).toMatchObject({ status: 'deleted', updatedAt: 7, seen: { title: 'a', done: false } });
    expect(result.removed).toEqual([]);
    // Its item, still in Dida, is that deletion still to be written: not the person's new item.
    expect(result.imported).toEqual([]);
    expect(w.steps).toHaveLength(1);
    const direct = work([seenStep('s1', 'gone', 'z')], task(), { mode: 'direct' });
    const kept = reconcileWork(direct, task(), opts());
    expect(direct.steps[0]!.status).toBe('pending');
    expect(kept.removed).toEqual([]);
  });

  it("a blank item title never renames; an agent step keeps its own new title until the person changes the item's", () => {
    const seen = task({ items: [item('i1', 'old')] });
    const blank = work([seenStep('s1', 'i1', 'old')], seen);
    reconcileWork(blank, task({ items: [item('i1', '  ')] }), opts());
    expect(blank.steps[0]!.title).toBe('old');
    const renamed = work([seenStep('s1', 'i1', 'new', { seen: { title: 'old', done: false } })], seen);
    reconcileWork(renamed, seen, opts());
    expect(renamed.steps[0]!.title).toBe('new');
    reconcileWork(renamed, task({ items: [item('i1', 'theirs')] }), opts());
    expect(renamed.steps[0]!.title).toBe('theirs');
    const human = work([seenStep('s1', 'i1', 'mine', { origin: 'human', seen: { title: 'old', done: false } })], seen);
    reconcileWork(human, seen, opts());
    expect(human.steps[0]!.title).toBe('old');
  });

  it("an item Dida shows ticked as before, on a step the agent opened again, is the agent's change to write", () => {
    const seen = task({ items: [item('i1', 'a', 2)] });
    const w = work([seenStep('s1', 'i1', 'a', { seen: { title: 'a', done: true } })], seen);
    const result = reconcileWork(w, seen, opts());
    expect(w.steps[0]!.status).toBe('pending');
    expect(result.completedByHuman).toEqual([]);
    expect(result.reopenedByHuman).toEqual([]);
  });

  it('every paired step remembers its item as read', () => {
    const seen = task({ items: [item('i1', 'a')] });
    const w = work([seenStep('s1', 'i1', 'a')], seen);
    const now = task({ items: [item('i1', 'b', 2)] });
    reconcileWork(w, now, opts());
    expect(w.steps[0]!.seen).toEqual({ title: 'b', done: true });
    expect(w.steps[0]!.status).toBe('completed');
  });

  it('an imported item alone changes the record and counts the step numbers on', () => {
    const seen = task({ items: [item('i1', 'a')] });
    const w = work([seenStep('s1', 'i1', 'a')], seen, { nextStepNumber: 7 });
    const result = reconcileWork(w, task({ items: [item('i1', 'a'), item('i2', 'new')] }), opts());
    expect(result.imported).toHaveLength(1);
    expect(w.nextStepNumber).toBe(8);
    expect(w.rev).toBe(4);
    expect(w.updatedAt).toBe(NOW);
  });

  it('a blank task title is not taken; the body and the tags follow Dida', () => {
    const seen = task({ title: 'Work', tags: ['web'] });
    const w = work([], seen, { tags: ['web'] });
    reconcileWork(w, task({ title: '  ', tags: ['web'] }), opts());
    expect(w.title).toBe('Work');
    const bodied = work([], seen, { tags: ['web'] });
    const body = reconcileWork(bodied, task({ tags: ['web'], content: 'more words' }), opts());
    expect(bodied.body).toBe('more words');
    expect(body.changed).toBe(true);
    const tagged = work([], seen, { tags: ['web'] });
    const tags = ['api', 'web'];
    const retag = reconcileWork(tagged, task({ tags }), opts());
    expect(tagged.tags).toEqual(['api', 'web']);
    expect(tagged.tags).not.toBe(tags);
    expect(retag.changed).toBe(true);
    expect(tagged.rev).toBe(4);
    reconcileWork(tagged, task({ tags: [] }), opts());
    expect('tags' in tagged).toBe(false);
    expect(tagged.rev).toBe(5);
  });
});
