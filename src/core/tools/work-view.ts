// Model-facing text of a Work and its steps: our words outside the fence (ids, statuses, counts), the person's inside it.
import { levelFromPriority } from '../time/schedule';
import { fenceUntrusted, UNTRUSTED_PREAMBLE } from '../text/text-guard';
import type { StepChangeResult } from '../steps/step-ops';
import type { TakenNews } from '../engine/work-news';
import { keyOf } from '../work/work-io';
import { SETTLED, visibleSteps, type StepRecord, type WorkRecord } from '../work/work-state';
import { MODEL_BUDGET, withinBudget } from '../text/model-budget';

/** One step inside the fence: its id, status, title (capped), who wrote it and the resolution. */
export function stepLine(step: StepRecord): string {
  const owner = step.origin === 'human' ? ' (written by the person: status only)' : '';
  const resolution = step.resolution ? ` — ${withinBudget(step.resolution, MODEL_BUDGET.resolution)}` : '';
  return `- ${step.id} [${step.status}] ${withinBudget(oneLine(step.title), MODEL_BUDGET.item)}${owner}${resolution}`;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ');
}

/** The Work's id, flags and progress: no text from Dida. */
export function workHeader(work: WorkRecord): string {
  const steps = visibleSteps(work);
  const settled = steps.filter((s) => SETTLED.has(s.status)).length;
  const flags = [
    `priority ${levelFromPriority(work.priority)}`,
    work.origin === 'human' ? 'written by the person in Dida' : 'created by the agent',
    work.waiting ? 'WAITING FOR A PERSON' : '',
    work.keepOpen ? 'kept open' : '',
    work.reopened ? 're-opened by the person' : '',
    work.phase !== 'open' ? `phase ${work.phase}` : '',
  ].filter(Boolean);
  return `Work ${keyOf(work)} (${flags.join(', ')}) — ${settled}/${steps.length} steps settled.`;
}

/** Header (ours) plus the title, steps and body (the person's text, fenced and capped). */
export function renderWork(work: WorkRecord): string {
  const steps = visibleSteps(work);
  const shown: string[] = [];
  let used = 0;
  for (const step of steps) {
    const line = stepLine(step);
    if (used + line.length > MODEL_BUDGET.steps) break;
    shown.push(line);
    used += line.length + 1;
  }
  const more = steps.length - shown.length;
  const lines = steps.length ? shown.join('\n') + (more > 0 ? `\n… (${more} more steps; todo get <id> shows one)` : '') : '(no steps yet: plan them with todo create)';
  const body = work.body ? `\n\nBody:\n${withinBudget(work.body, MODEL_BUDGET.body)}` : '';
  return `${workHeader(work)}\n${UNTRUSTED_PREAMBLE}\n${fenceUntrusted('work', `Title: ${withinBudget(work.title, MODEL_BUDGET.title)}\nSteps:\n${lines}${body}`)}`;
}

/** The step ids a call changed, with their new status: "s1 completed, s2 in_progress". */
export function transitionsLine(result: Pick<StepChangeResult, 'transitions'>): string {
  return (result.transitions ?? []).map((t) => `${t.step.id} ${t.to}`).join(', ');
}

/**
 * What the person changed in Dida that the call merged in, for the model: ids outside the fence, their titles inside.
 * Empty when they changed nothing.
 */
export function personChanges(result: Pick<StepChangeResult, 'merge'>): string {
  const merge = result.merge;
  if (!merge) return '';
  const lines = [
    ...merge.imported.slice(0, 20).map((s) => `- ${s.id} added by the person: ${withinBudget(oneLine(s.title), MODEL_BUDGET.item)}`),
    ...(merge.imported.length > 20 ? [`- … ${merge.imported.length - 20} more added (todo list shows them)`] : []),
    ...merge.completedByHuman.map((s) => `- ${s.id} ticked by the person (completed)`),
    ...merge.reopenedByHuman.map((s) => `- ${s.id} unticked by the person: open again, do it again or ask them`),
    ...merge.removed.map((s) => `- ${s.id} deleted by the person`),
  ];
  const edited = merge.humanEdited ? '\nThe person edited the Work’s title or description in Dida: call todo list to read it.' : '';
  if (lines.length === 0) return edited.trim();
  return `The person changed the checklist in Dida meanwhile:\n${UNTRUSTED_PREAMBLE}\n${fenceUntrusted('changes', lines.join('\n'))}${edited}`;
}

/** The step snapshot a host mirrors into its task panel (skipped shows as completed; names made unique). */
export function panelItems(work: WorkRecord | undefined): Array<{ content: string; status: 'pending' | 'in_progress' | 'completed' }> {
  if (!work) return [];
  const seen = new Map<string, number>();
  return visibleSteps(work).map((step) => {
    const base = step.title.trim() || step.id;
    const count = (seen.get(base) ?? 0) + 1;
    seen.set(base, count);
    const content = count === 1 ? base : `${base} (${count})`;
    const status = step.status === 'skipped' ? 'completed' : (step.status as 'pending' | 'in_progress' | 'completed');
    return { content, status };
  });
}

/**
 * What the background writer met since the model's last call, one paragraph per Work: the person's checklist edits its
 * read merged in (ids outside the fence, titles inside), a write Dida refused or has not taken yet, a task closed in
 * Dida meanwhile. Empty when there is nothing.
 */
export function newsText(taken: readonly TakenNews[]): string {
  const parts: string[] = [];
  for (const { work, news } of taken) {
    const key = keyOf(work);
    const step = (id: string) => work.steps.find((s) => s.id === id);
    const merged = personChanges({
      merge: {
        changed: true,
        humanEdited: !!news.humanEdited,
        imported: news.imported.flatMap((id) => step(id) ?? []),
        completedByHuman: news.completedByHuman.flatMap((id) => step(id) ?? []),
        reopenedByHuman: news.reopenedByHuman.flatMap((id) => step(id) ?? []),
        removed: news.removed.flatMap((id) => step(id) ?? []),
      },
    });
    if (merged) parts.push(`Work ${key}: ${merged}`);
    if (news.closed === 'completed_by_human') parts.push(`The Dida task of Work ${key} was completed in Dida before your last step changes reached it; leave it and call todo_work list to pick other work.`);
    if (news.closed === 'deleted') parts.push(`The Dida task of Work ${key} was deleted in Dida before your last step changes reached it; leave it and call todo_work list to pick other work.`);
    if (news.failure?.refused) {
      parts.push(`Dida refused the write of Work ${key}'s step changes (${news.failure.message}): they are kept here but Dida does not show them; the person was told in Dida. Tell them too if it matters; it is tried again at your next change.`);
    } else if (news.failure) {
      parts.push(`Dida has not taken Work ${key}'s latest step changes yet (${news.failure.message}): they are kept and written when Dida answers; nothing to call again.`);
    }
  }
  return parts.join('\n\n');
}
