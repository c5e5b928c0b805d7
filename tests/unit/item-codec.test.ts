// Item codec: read-merge-write item plans, id re-matching after Dida rewrites ids, the human body kept exactly once.
import { makeStep, makeWork } from '../helpers/work-fixtures';
import { describe, expect, it } from 'vitest';
import { descWithBody, humanFingerprint, matchItemIds, planItems, rememberItemIds, taskUpdateFor } from '../../src/core/work/item-codec';
import type { ChecklistItem, Task } from '../../src/dida/types';

const NOW = Date.UTC(2026, 10, 30, 2, 0, 0);

function task(fields: Partial<Task> = {}): Task {
  return { id: 't1', projectId: 'p1', title: 'Work', priority: 3, status: 0, ...fields } as Task;
}

const step = makeStep;

const work = makeWork;

/** What Dida answers after an update: every item gets a fresh id (the live-service quirk). */
function rewriteIds(items: ReadonlyArray<{ title: string; status?: number }>, prefix = 'n'): ChecklistItem[] {
  return items.map((item, i) => ({ ...item, id: `${prefix}${i}`, status: item.status ?? 0 }) as ChecklistItem);
}

describe('planItems', () => {
  it('keeps unknown item fields, order and dates, changing only status and completedTime', () => {
    const items = [
      { id: 'i1', title: 'human first', status: 0, sortOrder: 7, startDate: '2026-12-01T01:00:00+0000', isAllDay: true, custom: { x: 1 } },
      { id: 'i2', title: 'agent step', status: 0, sortOrder: 3, timeZone: 'Asia/Shanghai', extra: 'keep me' },
      { id: 'i3', title: 'unrelated', status: 1, completedTime: '2026-11-01T00:00:00+0000', weird: [1, 2] },
    ] as ChecklistItem[];
    const steps = [
      step({ id: 's1', itemId: 'i1', title: 'human first', origin: 'human', status: 'completed' }),
      step({ id: 's2', itemId: 'i2', title: 'agent step', status: 'in_progress' }),
    ];
    const plan = planItems(task({ items }), steps, NOW);
    expect(plan.items).toEqual([
      { ...items[0], status: 1, completedTime: '2026-11-30T02:00:00+0000' },
      items[1],
      items[2],
    ]);
    expect(plan.stepIndex).toEqual(new Map([['s1', 0], ['s2', 1]]));
    // The input task is not mutated.
    expect(items[0]?.status).toBe(0);
  });

  it('reopens an item whose step is no longer completed and clears its completedTime', () => {
    const items = [{ id: 'i1', title: 'a', status: 1, completedTime: '2026-11-01T00:00:00+0000' }] as ChecklistItem[];
    const plan = planItems(task({ items }), [step({ id: 's1', itemId: 'i1', title: 'a', status: 'skipped' })], NOW);
    expect(plan.items).toEqual([{ id: 'i1', title: 'a', status: 0, completedTime: null }]);
  });

  it('never removes or renames a human item, even when its step says otherwise', () => {
    const items = [
      { id: 'i1', title: 'written by a person', status: 0 },
      { id: 'i2', title: 'also human', status: 0 },
    ] as ChecklistItem[];
    const steps = [
      step({ id: 's1', itemId: 'i1', title: 'renamed locally', origin: 'human' }),
      step({ id: 's2', itemId: 'i2', title: 'also human', origin: 'human', status: 'deleted' }),
    ];
    const plan = planItems(task({ items }), steps, NOW);
    expect(plan.items.map((i) => i.title)).toEqual(['written by a person', 'also human']);
  });

  it('renames and removes agent items only', () => {
    const items = [
      { id: 'i1', title: 'old name', status: 0 },
      { id: 'i2', title: 'to delete', status: 0 },
      { id: 'i3', title: 'human', status: 0 },
    ] as ChecklistItem[];
    const steps = [
      step({ id: 's1', itemId: 'i1', title: 'new name' }),
      step({ id: 's2', itemId: 'i2', title: 'to delete', status: 'deleted' }),
      step({ id: 's3', itemId: 'i3', title: 'human', origin: 'human' }),
    ];
    const plan = planItems(task({ items }), steps, NOW);
    expect(plan.items.map((i) => [i.title, 'id' in i ? i.id : undefined])).toEqual([
      ['new name', 'i1'],
      ['human', 'i3'],
    ]);
    expect(plan.stepIndex).toEqual(new Map([['s1', 0], ['s3', 1]]));
  });

  it('appends new steps at the end without ids, in step order, with their status', () => {
    const items = [{ id: 'i1', title: 'existing', status: 0 }] as ChecklistItem[];
    const steps = [
      step({ id: 's1', itemId: 'i1', title: 'existing' }),
      step({ id: 's2', title: 'new one' }),
      step({ id: 's3', title: 'new done', status: 'completed' }),
      step({ id: 's4', title: 'new deleted', status: 'deleted' }),
    ];
    const plan = planItems(task({ items }), steps, NOW);
    expect(plan.items).toEqual([
      items[0],
      { title: 'new one', status: 0 },
      { title: 'new done', status: 1, completedTime: '2026-11-30T02:00:00+0000' },
    ]);
    expect(plan.items.slice(1).every((i) => !('id' in i))).toBe(true);
    expect(plan.stepIndex.get('s2')).toBe(1);
    expect(plan.stepIndex.get('s3')).toBe(2);
    expect(plan.stepIndex.has('s4')).toBe(false);
  });

  it('does not re-add a human item the person removed, but re-adds an agent step whose item id went stale', () => {
    const steps = [
      step({ id: 's1', itemId: 'gone-human', title: 'human removed', origin: 'human' }),
      step({ id: 's2', itemId: 'gone-agent', title: 'agent stale' }),
    ];
    const plan = planItems(task({ items: [] }), steps, NOW);
    expect(plan.items).toEqual([{ title: 'agent stale', status: 0 }]);
  });
});

describe('matchItemIds', () => {
  it('matches by id when Dida kept the ids', () => {
    const sent = [
      { id: 'a', title: 'x', status: 0 },
      { id: 'b', title: 'x', status: 0 },
    ] as ChecklistItem[];
    const answered = [
      { id: 'b', title: 'x', status: 0 },
      { id: 'a', title: 'x', status: 0 },
    ] as ChecklistItem[];
    expect(matchItemIds(sent, answered)).toEqual(new Map([[0, 'a'], [1, 'b']]));
  });

  it('matches rewritten ids one to one by position among equal titles', () => {
    const sent = [
      { id: 'old1', title: 'same', status: 0 },
      { title: 'other', status: 0 },
      { id: 'old2', title: 'same', status: 1 },
      { title: 'same', status: 0 },
    ];
    const answered = rewriteIds(sent);
    expect(matchItemIds(sent, answered)).toEqual(
      new Map([
        [0, 'n0'],
        [1, 'n1'],
        [2, 'n2'],
        [3, 'n3'],
      ]),
    );
  });

  it('mixes kept ids and rewritten ones without giving one answer to two items', () => {
    const sent = [
      { id: 'keep', title: 'dup', status: 0 },
      { title: 'dup', status: 0 },
      { title: 'dup', status: 0 },
    ];
    const answered = [
      { id: 'new-a', title: 'dup', status: 0 },
      { id: 'keep', title: 'dup', status: 0 },
      { id: 'new-b', title: 'dup', status: 0 },
    ] as ChecklistItem[];
    const ids = matchItemIds(sent, answered);
    expect(ids).toEqual(new Map([[0, 'keep'], [1, 'new-a'], [2, 'new-b']]));
    expect(new Set(ids.values()).size).toBe(3);
  });

  it('leaves items unmatched when Dida answered fewer of that title', () => {
    const sent = [
      { title: 'dup', status: 0 },
      { title: 'dup', status: 0 },
    ];
    const answered = [{ id: 'only', title: 'dup', status: 0 }] as ChecklistItem[];
    expect(matchItemIds(sent, answered)).toEqual(new Map([[0, 'only']]));
  });

  it('rememberItemIds gives every step the id of its own item, duplicates included', () => {
    const items = [
      { id: 'i1', title: 'dup', status: 0 },
      { id: 'i2', title: 'dup', status: 0 },
    ] as ChecklistItem[];
    const steps = [
      step({ id: 's1', itemId: 'i1', title: 'dup', origin: 'human', status: 'completed' }),
      step({ id: 's2', itemId: 'i2', title: 'dup', origin: 'human' }),
      step({ id: 's3', title: 'dup 2' }),
    ];
    const plan = planItems(task({ items }), steps, NOW);
    const answered = rewriteIds(plan.items.map((i) => ({ title: i.title, status: i.status ?? 0 })), 'r');
    rememberItemIds(steps, plan, answered);
    expect(steps.map((s) => s.itemId)).toEqual(['r0', 'r1', 'r2']);
    // The completed duplicate kept its tick in the write, at its own position.
    expect(plan.items.map((i) => i.status)).toEqual([1, 0, 0]);
  });
});

describe('descWithBody', () => {
  it('puts the body into an empty desc', () => {
    expect(descWithBody('', '  请按模块分组  ')).toBe('请按模块分组');
    expect(descWithBody(null, 'body')).toBe('body');
  });

  it('appends the body after an existing desc once', () => {
    expect(descWithBody('note\n', 'body')).toBe('note\n\nbody');
  });

  it('keeps the body exactly once over many writes', () => {
    let desc: string | null | undefined = 'person note';
    for (let i = 0; i < 20; i++) desc = descWithBody(desc, '正文：第一段\n第二段');
    expect(desc.split('正文：第一段').length - 1).toBe(1);
    expect(desc).toBe('person note\n\n正文：第一段\n第二段');
  });

  it('leaves desc alone when there is no body', () => {
    expect(descWithBody('as is  ', '   ')).toBe('as is  ');
  });
});

describe('humanFingerprint', () => {
  it('is stable when Dida moves the body from content to desc', () => {
    expect(humanFingerprint({ title: 'T', content: 'body', desc: '' })).toBe(humanFingerprint({ title: 'T', content: '', desc: 'body' }));
  });

  it('is stable when the body is appended to an existing desc and content cleared', () => {
    const before = { title: 'T', content: 'body', desc: 'note' };
    const after = { title: 'T', content: '', desc: descWithBody(before.desc, before.content) };
    expect(humanFingerprint(after)).toBe(humanFingerprint(before));
    expect(humanFingerprint({ ...after, content: 'body' })).toBe(humanFingerprint(before));
  });

  it('changes when a person writes new text into content while desc holds the old body', () => {
    expect(humanFingerprint({ title: 'T', content: 'new request', desc: 'body' })).not.toBe(humanFingerprint({ title: 'T', content: '', desc: 'body' }));
  });

  it('changes with the title and with the body', () => {
    const base = humanFingerprint({ title: 'T', content: 'body', desc: '' });
    expect(humanFingerprint({ title: 'T2', content: 'body', desc: '' })).not.toBe(base);
    expect(humanFingerprint({ title: 'T', content: 'other', desc: '' })).not.toBe(base);
  });
});

describe('taskUpdateFor', () => {
  it('sends the whole task as read, with the body kept in desc exactly once across repeated writes', () => {
    const read = task({ content: '请按模块分组', desc: '', startDate: '2026-12-01T01:00:00+0000', repeatFlag: 'RRULE:FREQ=DAILY', reminders: ['TRIGGER:PT0S'], tags: ['x'], unknownField: 42 } as Partial<Task>);
    const w = work([step({ id: 's1', title: 'new' })], { body: '请按模块分组' });
    const first = taskUpdateFor(read, w, NOW).update;
    expect(first).toMatchObject({ startDate: read.startDate, repeatFlag: read.repeatFlag, reminders: read.reminders, tags: read.tags, unknownField: 42 });
    expect(first.desc).toBe('请按模块分组');
    // Dida cleared content; the next write must not duplicate the body.
    const after = task({ ...first, content: '', items: rewriteIds([{ title: 'new' }]) } as Partial<Task>);
    w.steps[0]!.itemId = 'n0';
    const second = taskUpdateFor(after, w, NOW).update;
    expect(second.desc).toBe('请按模块分组');
  });

  it('does not touch desc while the task has no items', () => {
    const { update } = taskUpdateFor(task({ content: 'x', desc: 'y' }), work([]), NOW);
    expect(update.desc).toBe('y');
    expect(update.items).toEqual([]);
  });
});
