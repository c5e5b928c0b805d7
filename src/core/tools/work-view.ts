// Model-facing text of a Work and its steps, with the person's text inside an untrusted-data fence.
import { levelFromPriority } from '../schedule';
import { fenceUntrusted, UNTRUSTED_PREAMBLE } from '../text-guard';
import { keyOf } from '../work-io';
import { SETTLED, visibleSteps, type StepRecord, type WorkRecord } from '../work-state';

export function stepLine(step: StepRecord): string {
  const owner = step.origin === 'human' ? ' (written by the person: status only)' : '';
  const resolution = step.resolution ? ` — ${step.resolution}` : '';
  return `- ${step.id} [${step.status}] ${step.title}${owner}${resolution}`;
}

/** Header (ours) plus the step list and body (the person's text, fenced). */
export function renderWork(work: WorkRecord): string {
  const steps = visibleSteps(work);
  const settled = steps.filter((s) => SETTLED.has(s.status)).length;
  const flags = [
    `priority ${levelFromPriority(work.priority)}`,
    work.origin === 'human' ? 'written by the person in Dida' : 'created by the agent',
    work.waiting ? 'WAITING FOR A PERSON' : '',
    work.keepOpen ? 'kept open' : '',
    work.phase !== 'open' ? `phase ${work.phase}` : '',
  ].filter(Boolean);
  const header = `Work ${keyOf(work)} (${flags.join(', ')}) — ${settled}/${steps.length} steps settled.`;
  const lines = steps.length ? steps.map(stepLine).join('\n') : '(no steps yet: plan them with todo create)';
  const body = work.body ? `\n\nBody:\n${work.body}` : '';
  return `${header}\n${UNTRUSTED_PREAMBLE}\n${fenceUntrusted('work', `Title: ${work.title}\nSteps:\n${lines}${body}`)}`;
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
