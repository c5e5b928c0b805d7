// Reconcile (src/core/work/work-reconcile.ts): folding a Dida task, as just read, into a Work record (adoption, imports,
// human ticks, edits); Dida's version of a task, the fields a new Work starts with, the body read from desc and content,
// the order of steps following Dida's items, and what a read that changes nothing (or only one thing) does to the record.
import { describe, expect, it } from 'vitest';
import { humanFingerprint } from '../../src/core/work/item-codec';
import { adoptTask, agentWorkFromTask, bodyOf, pairStepsWithItems, reconcileWork, taskVersion } from '../../src/core/work/work-reconcile';
import type { StepRecord, WorkRecord } from '../../src/core/work/work-state';
import type { ChecklistItem, Task } from '../../src/dida/types';
import { makeStep, makeWork } from '../helpers/work-fixtures';

const NOW = 1_000;

function task(fields: Partial<Task> = {}): Task {
  return { id: 't1', projectId: 'p1', title: 'Work', priority: 3, status: 0, content: '', desc: '', ...fields } as Task;
}

function item(id: string, title: string, status = 0): ChecklistItem {
  return { id, title, status } as ChecklistItem;
}

const step = makeStep;

function opts() {
  let n = 100;
  return { now: NOW, newStepId: () => `s${++n}`, occurrence: '' };
}

/** A Work whose last-seen fingerprint matches `seen`. */
function work(steps: StepRecord[], seen: Task, fields: Partial<WorkRecord> = {}): WorkRecord {
  return makeWork(steps, { title: seen.title, priority: seen.priority, humanFingerprint: humanFingerprint(seen), rev: 3, ...fields });
}

/** A Work that last saw `seen` with its body too, each step having seen its item. */
function workSeen(steps: StepRecord[], seen: Task, fields: Partial<WorkRecord> = {}): WorkRecord {
  return work(steps, seen, { body: bodyOf(seen), ...fields });
}

const seenStep = (id: string, itemId: string, title: string, fields: Partial<StepRecord> = {}) => makeStep({ id, itemId, title, seen: { title, done: false }, ...fields });

describe('adoptTask', () => {
  it('turns a person’s task into a human Work without touching it', () => {
    const t = task({ title: '整理发布说明', content: '  请按模块分组 ', priority: 0, items: [item('i1', '收集变更'), item('i2', '写草稿', 1)] });
    const frozen = JSON.stringify(t);
    const w = adoptTask(t, { ...opts(), occurrence: '2026-11-30' });
    expect(JSON.stringify(t)).toBe(frozen);
    expect(w).toMatchObject({ taskId: 't1', projectId: 'p1', occurrence: '2026-11-30', origin: 'human', priority: 0, phase: 'open', body: '请按模块分组', nextStepNumber: 3 });
    expect(w.steps.map((s) => [s.id, s.itemId, s.title, s.status, s.origin])).toEqual([
      ['s101', 'i1', '收集变更', 'pending', 'human'],
      ['s102', 'i2', '写草稿', 'completed', 'human'],
    ]);
    expect(w.humanFingerprint).toBe(humanFingerprint(t));
  });
});

describe('pairStepsWithItems', () => {
  it('pairs by id first, then stale ids one to one by position among equal titles', () => {
    const steps = [
      step({ id: 'a', itemId: 'stale1', title: 'dup' }),
      step({ id: 'b', itemId: 'x2', title: 'dup' }),
      step({ id: 'c', itemId: 'stale2', title: 'dup' }),
      step({ id: 'd', title: 'gone', status: 'deleted' }),
    ];
    const items = [item('x1', 'dup'), item('x2', 'dup'), item('x3', 'dup'), item('x4', 'gone')];
    expect(pairStepsWithItems(steps, items)).toEqual(
      new Map([
        ['b', 1],
        ['a', 0],
        ['c', 2],
      ]),
    );
  });
});

describe('reconcileWork', () => {
  it('imports items a person added, as human steps, keeping everything else', () => {
    const seen = task({ items: [item('i1', 'a')] });
    const w = work([step({ id: 's1', itemId: 'i1', title: 'a' })], seen);
    const r = reconcileWork(w, task({ items: [item('i1', 'a'), item('h1', 'person added'), item('h2', '   '), item('h3', 'done already', 1)] }), opts());
    expect(r.imported.map((s) => [s.title, s.origin, s.status, s.itemId])).toEqual([
      ['person added', 'human', 'pending', 'h1'],
      ['done already', 'human', 'completed', 'h3'],
    ]);
    expect(w.steps).toHaveLength(3);
    expect(w.nextStepNumber).toBe(4);
    expect(r.changed).toBe(true);
    expect(r.humanEdited).toBe(false);
    expect(w.rev).toBe(4);
  });

  it('a person ticking an item completes its step', () => {
    const seen = task({ items: [item('i1', 'a')] });
    const w = work([step({ id: 's1', itemId: 'i1', title: 'a', status: 'in_progress' })], seen);
    const r = reconcileWork(w, task({ items: [item('i1', 'a', 1)] }), opts());
    expect(r.completedByHuman.map((s) => s.id)).toEqual(['s1']);
    expect(w.steps[0]?.status).toBe('completed');
  });

  it('a ticked item also completes a skipped step (the person did it after all)', () => {
    const seen = task({ items: [item('i1', 'a')] });
    const w = work([step({ id: 's1', itemId: 'i1', title: 'a', status: 'skipped', resolution: 'no time' })], seen);
    reconcileWork(w, task({ items: [item('i1', 'a', 2)] }), opts());
    expect(w.steps[0]?.status).toBe('completed');
  });

  it('an unticked item Dida showed unticked before is the agent’s tick still to write, not the person’s untick', () => {
    const seen = task({ items: [item('i1', 'a'), item('i2', 'b')] });
    const w = work(
      [
        step({ id: 's1', itemId: 'i1', title: 'a', status: 'completed', resolution: 'done', seen: { title: 'a', done: false } }),
        step({ id: 's2', itemId: 'i2', title: 'b', status: 'skipped', resolution: 'not needed', seen: { title: 'b', done: false } }),
      ],
      seen,
    );
    const r = reconcileWork(w, seen, opts());
    expect(w.steps.map((s) => [s.status, s.resolution])).toEqual([
      ['completed', 'done'],
      ['skipped', 'not needed'],
    ]);
    expect(r.changed).toBe(false);
    expect(w.rev).toBe(3);
  });

  it('the person unticking an item the agent ticked reopens the step and reports it', () => {
    const before = task({ items: [{ ...item('i1', 'a'), status: 0 }] });
    const w = work([step({ id: 's1', itemId: 'i1', title: 'a', status: 'completed', resolution: 'done', seen: { title: 'a', done: true } })], before);
    const r = reconcileWork(w, before, opts());
    expect(w.steps[0]?.status).toBe('pending');
    expect(r.reopenedByHuman.map((s) => s.id)).toEqual(['s1']);
    expect(w.steps[0]?.seen).toEqual({ title: 'a', done: false });
  });

  it('a record without a last-seen state (older versions) keeps an agent-completed step whose item is unticked', () => {
    const seen = task({ items: [item('i1', 'a')] });
    const w = work([step({ id: 's1', itemId: 'i1', title: 'a', status: 'completed', resolution: 'done' })], seen);
    const r = reconcileWork(w, seen, opts());
    expect(w.steps[0]?.status).toBe('completed');
    expect(r.reopenedByHuman).toEqual([]);
    expect(w.steps[0]?.seen).toEqual({ title: 'a', done: false });
  });

  it('takes a person’s rename of an item into the step', () => {
    const seen = task({ items: [item('i1', 'old')] });
    const w = work([step({ id: 's1', itemId: 'i1', title: 'old' })], seen);
    const r = reconcileWork(w, task({ items: [item('i1', 'new title')] }), opts());
    expect(w.steps[0]?.title).toBe('new title');
    expect(r.changed).toBe(true);
    expect(r.imported).toEqual([]);
  });

  it('marks steps whose items the person removed as deleted', () => {
    const seen = task({ items: [item('i1', 'a'), item('i2', 'b')] });
    const w = work([step({ id: 's1', itemId: 'i1', title: 'a', origin: 'human' }), step({ id: 's2', itemId: 'i2', title: 'b' }), step({ id: 's3', title: 'not yet written' })], seen);
    const r = reconcileWork(w, task({ items: [item('i2', 'b')] }), opts());
    expect(r.removed.map((s) => s.id)).toEqual(['s1']);
    expect(Object.fromEntries(w.steps.map((s) => [s.id, s.status]))).toEqual({ s1: 'deleted', s2: 'pending', s3: 'pending' });
  });

  it('re-matches rewritten item ids by title and position, duplicates one to one', () => {
    const seen = task({ items: [item('i1', 'dup', 1), item('i2', 'dup')] });
    const w = work([step({ id: 's1', itemId: 'i1', title: 'dup', status: 'completed', resolution: 'r' }), step({ id: 's2', itemId: 'i2', title: 'dup' })], seen);
    const r = reconcileWork(w, task({ items: [item('n1', 'dup', 1), item('n2', 'dup')] }), opts());
    expect(w.steps.map((s) => [s.itemId, s.status])).toEqual([
      ['n1', 'completed'],
      ['n2', 'pending'],
    ]);
    expect(r.imported).toEqual([]);
    expect(r.removed).toEqual([]);
  });

  it.each([
    ['title', { title: 'Work, but sharper' }],
    ['content', { content: 'new body text' }],
    ['desc', { desc: 'new description' }],
  ])('a person editing the %s reopens skipped steps and clears keepOpen', (_field, patch) => {
    const seen = task({ items: [item('i1', 'a'), item('i2', 'b')] });
    const w = work(
      [
        step({ id: 's1', itemId: 'i1', title: 'a', status: 'skipped', resolution: 'why not' }),
        step({ id: 's2', itemId: 'i2', title: 'b', status: 'completed', resolution: 'done' }),
      ],
      seen,
      { keepOpen: true },
    );
    const edited = task({ items: seen.items, ...patch });
    const r = reconcileWork(w, edited, opts());
    expect(r.humanEdited).toBe(true);
    expect(w.keepOpen).toBe(false);
    expect(w.steps[0]).toMatchObject({ status: 'pending' });
    expect(w.steps[0]?.resolution).toBeUndefined();
    expect(w.steps[1]).toMatchObject({ status: 'completed', resolution: 'done' });
    expect(w.title).toBe(edited.title);
    expect(w.humanFingerprint).toBe(humanFingerprint(edited));
  });

  it('a person editing the body of a checklist Work whose body already moved to desc is a human edit', () => {
    // After the first write Dida keeps the body in desc; a person then writes new text into content.
    const seen = task({ content: '', desc: 'original body', items: [item('i1', 'a')] });
    const w = work([step({ id: 's1', itemId: 'i1', title: 'a', status: 'skipped', resolution: 'x' })], seen, { keepOpen: true, body: 'original body' });
    const r = reconcileWork(w, task({ content: 'please also do X', desc: 'original body', items: seen.items }), opts());
    expect(r.humanEdited).toBe(true);
    expect(w.steps[0]?.status).toBe('pending');
    expect(w.keepOpen).toBe(false);
  });

  it('Dida clearing content after the body moved to desc is not a human edit', () => {
    const seen = task({ content: '请按模块分组', desc: '' });
    const w = work([step({ id: 's1', itemId: 'i1', title: 'a', status: 'skipped', resolution: 'x' })], seen, { keepOpen: true, body: '请按模块分组' });
    const r = reconcileWork(w, task({ content: '', desc: '请按模块分组', items: [item('i1', 'a')] }), opts());
    expect(r.humanEdited).toBe(false);
    expect(w.keepOpen).toBe(true);
    expect(w.steps[0]?.status).toBe('skipped');
  });

  it('follows a priority change made in Dida', () => {
    const seen = task();
    const w = work([], seen);
    const r = reconcileWork(w, task({ priority: 0 }), opts());
    expect(w.priority).toBe(0);
    expect(r.changed).toBe(true);
  });
});

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

describe('reconcileWork: order, seen state, and reads that change little', () => {
  it('a read that changes nothing leaves the record as it was (same rev), its version noted', () => {
    const seen = task({ items: [item('i1', 'a'), item('i2', 'b')], etag: 'v2' });
    const w = workSeen([seenStep('s1', 'i1', 'a'), seenStep('s2', 'i2', 'b')], seen, { seenVersion: 'v1' });
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
    const w = workSeen([makeStep({ id: 'x1', title: 'own' }), seenStep('s3', 'i3', 'c'), seenStep('s1', 'i1', 'a'), seenStep('s2', 'i9', 'gone', { status: 'deleted' }), makeStep({ id: 'x2', title: 'own 2' })], seen);
    const result = reconcileWork(w, seen, opts());
    expect(w.steps.map((s) => s.id)).toEqual(['s1', 's3', 'x1', 's2', 'x2']);
    expect(result.changed).toBe(true);
    expect(w.rev).toBe(4);
    // Already in order: nothing changes.
    expect(reconcileWork(w, seen, opts()).changed).toBe(false);
  });

  it('a deleted step stays deleted (its item not taken for a new one); an unpaired step of a direct Work is not deleted', () => {
    const seen = task({ items: [item('i1', 'a')] });
    const w = workSeen([seenStep('s1', 'i1', 'a', { status: 'deleted', updatedAt: 7 })], seen);
    const result = reconcileWork(w, seen, opts());
    const deleted = w.steps.find((s) => s.id === 's1')!;
    expect(deleted).toMatchObject({ status: 'deleted', updatedAt: 7, seen: { title: 'a', done: false } });
    expect(result.removed).toEqual([]);
    // Its item, still in Dida, is that deletion still to be written: not the person's new item.
    expect(result.imported).toEqual([]);
    expect(w.steps).toHaveLength(1);
    const direct = workSeen([seenStep('s1', 'gone', 'z')], task(), { mode: 'direct' });
    const kept = reconcileWork(direct, task(), opts());
    expect(direct.steps[0]!.status).toBe('pending');
    expect(kept.removed).toEqual([]);
  });

  it("a blank item title never renames; an agent step keeps its own new title until the person changes the item's", () => {
    const seen = task({ items: [item('i1', 'old')] });
    const blank = workSeen([seenStep('s1', 'i1', 'old')], seen);
    reconcileWork(blank, task({ items: [item('i1', '  ')] }), opts());
    expect(blank.steps[0]!.title).toBe('old');
    const renamed = workSeen([seenStep('s1', 'i1', 'new', { seen: { title: 'old', done: false } })], seen);
    reconcileWork(renamed, seen, opts());
    expect(renamed.steps[0]!.title).toBe('new');
    reconcileWork(renamed, task({ items: [item('i1', 'theirs')] }), opts());
    expect(renamed.steps[0]!.title).toBe('theirs');
    const human = workSeen([seenStep('s1', 'i1', 'mine', { origin: 'human', seen: { title: 'old', done: false } })], seen);
    reconcileWork(human, seen, opts());
    expect(human.steps[0]!.title).toBe('old');
  });

  it("an item Dida shows ticked as before, on a step the agent opened again, is the agent's change to write", () => {
    const seen = task({ items: [item('i1', 'a', 2)] });
    const w = workSeen([seenStep('s1', 'i1', 'a', { seen: { title: 'a', done: true } })], seen);
    const result = reconcileWork(w, seen, opts());
    expect(w.steps[0]!.status).toBe('pending');
    expect(result.completedByHuman).toEqual([]);
    expect(result.reopenedByHuman).toEqual([]);
  });

  it('every paired step remembers its item as read', () => {
    const seen = task({ items: [item('i1', 'a')] });
    const w = workSeen([seenStep('s1', 'i1', 'a')], seen);
    const now = task({ items: [item('i1', 'b', 2)] });
    reconcileWork(w, now, opts());
    expect(w.steps[0]!.seen).toEqual({ title: 'b', done: true });
    expect(w.steps[0]!.status).toBe('completed');
  });

  it('an imported item alone changes the record and counts the step numbers on', () => {
    const seen = task({ items: [item('i1', 'a')] });
    const w = workSeen([seenStep('s1', 'i1', 'a')], seen, { nextStepNumber: 7 });
    const result = reconcileWork(w, task({ items: [item('i1', 'a'), item('i2', 'new')] }), opts());
    expect(result.imported).toHaveLength(1);
    expect(w.nextStepNumber).toBe(8);
    expect(w.rev).toBe(4);
    expect(w.updatedAt).toBe(NOW);
  });

  it('a blank task title is not taken; the body and the tags follow Dida', () => {
    const seen = task({ title: 'Work', tags: ['web'] });
    const w = workSeen([], seen, { tags: ['web'] });
    reconcileWork(w, task({ title: '  ', tags: ['web'] }), opts());
    expect(w.title).toBe('Work');
    const bodied = workSeen([], seen, { tags: ['web'] });
    const body = reconcileWork(bodied, task({ tags: ['web'], content: 'more words' }), opts());
    expect(bodied.body).toBe('more words');
    expect(body.changed).toBe(true);
    const tagged = workSeen([], seen, { tags: ['web'] });
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
