// Property tests (fast-check) for the item codec and the merge rules: random interleavings of the person's edits in
// Dida and the agent's step changes keep every edit of the person, with Dida rewriting item ids on every update.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { matchItemIds } from '../../src/core/work/item-codec';
import { applyStepChanges } from '../../src/core/steps/step-ops';
import type { StepChange } from '../../src/core/work/step-change';
import { minimalUpdate, recordWrite } from '../../src/core/work/task-writer';
import { adoptTask, reconcileWork } from '../../src/core/work/work-reconcile';
import type { WorkRecord } from '../../src/core/work/work-state';
import type { ChecklistItem, Task } from '../../src/dida/types';
import { buildItems } from '../../src/sim/sim-task-ops';

const NOW = Date.UTC(2026, 10, 30);

describe('matchItemIds', () => {
  it('pairs every sent item with an answered item of the same title, one to one and in order, whether Dida keeps or rewrites ids', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('a', 'b', 'c', 'd'), { maxLength: 12 }), fc.array(fc.boolean(), { maxLength: 12 }), fc.boolean(), (titles, hasId, rewrite) => {
        const existing: ChecklistItem[] = titles.map((title, i) => ({ id: `old${i}`, title, status: 0 }));
        const sent = titles.map((title, i) => (hasId[i] ? { id: `old${i}`, title, status: 0 } : { title, status: 0 }));
        const answered = buildItems(sent, existing, rewrite);
        const ids = matchItemIds(sent, answered);
        expect(ids.size).toBe(sent.length);
        expect(new Set(ids.values()).size).toBe(sent.length);
        for (const [i, id] of ids) expect(answered.find((a) => a.id === id)?.title).toBe(sent[i]?.title);
        // Same-title items keep their relative order.
        for (const title of new Set(titles)) {
          const order = [...ids.entries()]
            .filter(([i]) => sent[i]?.title === title)
            .sort(([x], [y]) => x - y)
            .map(([, id]) => answered.findIndex((a) => a.id === id));
          expect(order).toEqual([...order].sort((x, y) => x - y));
        }
      }),
      { numRuns: 300 },
    );
  });
});

/** A pure Dida for one task: updates shallow-merge the keys sent, `items` replaces the checklist with new ids. */
class PureDida {
  task: Task;
  private seq = 0;
  constructor(items: string[]) {
    this.task = { id: 't', projectId: 'p', title: 'T', priority: 3, status: 0, desc: 'body', items: items.map((title) => ({ id: this.id(), title, status: 0 })) };
  }
  id(): string {
    return `i${++this.seq}`;
  }
  update(body: Record<string, unknown>): Task {
    const next: Task = { ...this.task };
    for (const [key, value] of Object.entries(body)) if (key !== 'items' && key !== 'id' && key !== 'projectId') (next as Record<string, unknown>)[key] = value;
    if (Array.isArray(body.items)) next.items = (body.items as ChecklistItem[]).map((item) => ({ ...item, id: this.id(), status: item.status ?? 0 }));
    this.task = next;
    return structuredClone(next);
  }
  /** The person's edit in the app (keeps item ids). */
  edit(items: ChecklistItem[]): void {
    this.task = { ...this.task, items };
  }
}

type PersonAction = { kind: 'add'; title: string } | { kind: 'tick' | 'untick' | 'delete'; pick: number };
type AgentAction = { kind: 'addStep'; title: string } | { kind: 'complete' | 'delete'; pick: number };
type Event = { who: 'person'; action: PersonAction } | { who: 'agent'; action: AgentAction };

const titleArb = fc.constantFrom('洗碗', '买菜', '写报告', 'Fix bug', '打电话', '✅ done');
const eventArb: fc.Arbitrary<Event> = fc.oneof(
  fc.record({ who: fc.constant('person' as const), action: fc.oneof(fc.record({ kind: fc.constant('add' as const), title: titleArb }), fc.record({ kind: fc.constantFrom('tick', 'untick', 'delete') as fc.Arbitrary<'tick' | 'untick' | 'delete'>, pick: fc.nat(20) })) }),
  fc.record({ who: fc.constant('agent' as const), action: fc.oneof(fc.record({ kind: fc.constant('addStep' as const), title: titleArb }), fc.record({ kind: fc.constantFrom('complete', 'delete') as fc.Arbitrary<'complete' | 'delete'>, pick: fc.nat(20) })) }),
);

/** One agent operation as the engine runs it: intent, read and merge, minimal write, answer merged. */
function agentOp(dida: PureDida, work: WorkRecord, action: AgentAction, ids: () => string): void {
  const agentSteps = work.steps.filter((s) => s.origin === 'agent' && s.status !== 'deleted');
  let changes: StepChange[] = [];
  if (action.kind === 'addStep') changes = [{ op: 'add', title: `${action.title} ${ids()}` }];
  else if (agentSteps.length > 0) {
    const step = agentSteps[action.pick % agentSteps.length]!;
    if (action.kind === 'delete') changes = [{ op: 'delete', step: step.id }];
    else if (step.status === 'pending' || step.status === 'in_progress') changes = [{ op: 'update', step: step.id, status: 'completed', resolution: '做完了' }];
  }
  if (changes.length === 0) return;
  applyStepChanges(work, changes, NOW, ids);
  reconcileWork(work, structuredClone(dida.task), { now: NOW, newStepId: ids, occurrence: '' });
  const prepared = minimalUpdate(structuredClone(dida.task), work, { withTitle: false, now: NOW });
  if (!prepared) return;
  const answered = dida.update(prepared.body as Record<string, unknown>);
  recordWrite(work, prepared, answered);
  reconcileWork(work, answered, { now: NOW, newStepId: ids, occurrence: '' });
}

describe('merge rules under random interleavings', () => {
  it('every item the person adds, ticks, unticks or deletes stays as they left it', () => {
    fc.assert(
      fc.property(fc.array(titleArb, { minLength: 1, maxLength: 4 }), fc.array(eventArb, { maxLength: 30 }), (initial, events) => {
        const dida = new PureDida(initial.map((t, i) => `${t} #${i}`));
        let n = 0;
        const ids = () => `s${++n}`;
        const work = adoptTask(structuredClone(dida.task), { now: NOW, newStepId: ids, occurrence: '' });
        // What the person last did to each of their own items (by unique title); deleted ones must stay deleted.
        const intended = new Map<string, 'open' | 'done' | 'deleted'>(initial.map((t, i) => [`${t} #${i}`, 'open']));
        const deletedByPerson = new Set<string>();
        let added = 0;
        for (const event of events) {
          if (event.who === 'agent') {
            agentOp(dida, work, event.action, ids);
            continue;
          }
          const items = structuredClone(dida.task.items ?? []);
          const action = event.action;
          if (action.kind === 'add') {
            const title = `${action.title} 人${++added}`;
            dida.edit([...items, { id: dida.id(), title, status: 0 }]);
            intended.set(title, 'open');
            continue;
          }
          if (items.length === 0) continue;
          const target = items[action.pick % items.length]!;
          if (action.kind === 'delete') {
            dida.edit(items.filter((i) => i !== target));
            deletedByPerson.add(target.title);
            if (intended.has(target.title)) intended.set(target.title, 'deleted');
          } else {
            dida.edit(items.map((i) => (i === target ? { ...i, status: action.kind === 'tick' ? 1 : 0 } : i)));
            if (intended.has(target.title)) intended.set(target.title, action.kind === 'tick' ? 'done' : 'open');
          }
        }
        const final = dida.task.items ?? [];
        for (const [title, state] of intended) {
          const item = final.find((i) => i.title === title);
          if (state === 'deleted') expect(item, `${title} was deleted by the person`).toBeUndefined();
          else expect(item?.status ?? -1, `${title} should be ${state}`).toBe(state === 'done' ? 1 : 0);
        }
        for (const title of deletedByPerson) expect(final.some((i) => i.title === title), `${title} came back`).toBe(false);
        // The record agrees with Dida after one more read.
        reconcileWork(work, structuredClone(dida.task), { now: NOW, newStepId: ids, occurrence: '' });
        const visible = work.steps.filter((s) => s.status !== 'deleted');
        expect(visible.map((s) => s.title).sort()).toEqual(final.map((i) => i.title).sort());
        for (const step of visible) {
          const item = final.find((i) => i.title === step.title)!;
          if (item.status === 1) expect(step.status).toBe('completed');
          if (step.origin === 'human' && item.status === 0) expect(step.status).not.toBe('completed');
        }
      }),
      { numRuns: 400 },
    );
  });
});
