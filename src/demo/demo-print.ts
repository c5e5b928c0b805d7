// Renders Dida state the way a person sees it in the Dida app: plain text, colours only when asked for. Every text
// that came from Dida is made terminal-safe (control and escape characters shown escaped, never run).
import { colorsWanted } from '../cli/cli-output';
import { displayWidth, safeText } from '../cli/terminal-text';
import { parseDidaDate } from '../dida/dida-date';
import { isItemCompleted, type Comment, type Task } from '../dida/types';

export interface DemoStyle {
  readonly enabled: boolean;
  bold(text: string): string;
  dim(text: string): string;
  good(text: string): string;
  warn(text: string): string;
  bad(text: string): string;
  accent(text: string): string;
}

export function demoStyle(enabled: boolean): DemoStyle {
  const wrap = (open: number, close: number) => (text: string) => (enabled ? `\u001b[${open}m${text}\u001b[${close}m` : text);
  return { enabled, bold: wrap(1, 22), dim: wrap(2, 22), good: wrap(32, 39), warn: wrap(33, 39), bad: wrap(31, 39), accent: wrap(36, 39) };
}

/** Colours are on when forced by a flag, else as the CLI decides (FORCE_COLOR, NO_COLOR, TERM=dumb, a terminal). */
export function colorEnabled(forced: boolean | undefined, isTTY: boolean | undefined, env: NodeJS.ProcessEnv): boolean {
  if (forced !== undefined) return forced;
  return colorsWanted(isTTY, env);
}

/** Dida's names for its priorities. */
export function priorityName(priority: number | null | undefined): string {
  switch (priority) {
    case 5:
      return 'high';
    case 3:
      return 'medium';
    case 1:
      return 'low';
    default:
      return 'none';
  }
}

/** The person's text of a task: `desc` (a checklist's description) plus `content` when it is not already in it. */
export function taskBody(task: Task): string {
  const desc = (task.desc ?? '').trim();
  const content = (task.content ?? '').trim();
  return [desc, content !== '' && !desc.includes(content) ? content : ''].filter((p) => p !== '').join('\n\n');
}

/** Local wall-clock time `HH:MM`. */
export function clock(ms: number): string {
  const d = new Date(ms);
  return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
}

const TRIGGER = /^TRIGGER:(-)?P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/;

/** Offset of a Dida reminder (`TRIGGER:PT3M`, `TRIGGER:-PT5M`, …) from the due time, in ms; undefined when unreadable. */
export function triggerOffsetMs(trigger: string): number | undefined {
  const m = TRIGGER.exec(trigger.trim());
  if (!m) return undefined;
  const [, minus, d, h, min, s] = m;
  const ms = (Number(d ?? 0) * 86_400 + Number(h ?? 0) * 3_600 + Number(min ?? 0) * 60 + Number(s ?? 0)) * 1000;
  return minus ? -ms : ms;
}

function relativeMinutes(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  return `${minutes >= 0 ? '+' : '−'}${Math.abs(minutes)} min`;
}

/**
 * One sentence explaining when Dida reminds the person: each reminder as a wall-clock time and as minutes after
 * `filedAtMs` (when the todo appeared), e.g. "at 14:05 (+3 min) and 14:08 (+6 min)".
 */
export function explainReminders(task: Task, filedAtMs: number): string[] {
  const reminders = task.reminders ?? [];
  const due = parseDidaDate(task.dueDate ?? task.startDate);
  if (reminders.length === 0) return ['No reminders.'];
  if (!due) return [`${reminders.length} reminder${reminders.length === 1 ? '' : 's'}, but no due time to count them from.`];
  const times = reminders.map((r) => triggerOffsetMs(r)).filter((o): o is number => o !== undefined).map((o) => due.getTime() + o);
  const parts = times.map((t) => `${clock(t)} (${relativeMinutes(t - filedAtMs)})`);
  const joined = parts.length <= 1 ? parts.join('') : `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`;
  const later = Math.round(((times.at(-1) ?? due.getTime()) - due.getTime()) / 60_000);
  return [
    `Due ${clock(due.getTime())} (${relativeMinutes(due.getTime() - filedAtMs)} after it was filed); Dida reminds you at ${joined}:`,
    later > 0 ? `at the due time and again ${later} minutes later, so a finished Work does not wait unnoticed.` : 'at the due time, so a finished Work does not wait unnoticed.',
  ];
}

/** Multi-line Dida text, one terminal-safe line each. */
function indentLines(text: string, prefix: string): string[] {
  return text.split('\n').map((line) => `${prefix}${safeText(line)}`.trimEnd());
}

export interface TaskRenderOptions {
  indent?: string;
  /** Show the task's body (default true). */
  body?: boolean;
  /** A short note after the title (e.g. "untouched"). */
  note?: string;
}

/** A task as a card: box, title, priority; its checklist items; its body. */
export function renderTask(task: Task, s: DemoStyle, options: TaskRenderOptions = {}): string[] {
  const indent = options.indent ?? '  ';
  const done = task.status === 2;
  const box = done ? s.good('☑') : '☐';
  const title = done ? s.good(safeText(task.title)) : s.bold(safeText(task.title));
  const priority = s.dim(`[priority ${priorityName(task.priority)}${task.priority === 0 ? ' → a draft, left alone' : ''}]`);
  const status = done ? ` ${s.good('completed')}` : '';
  const lines = [`${indent}${box} ${title}  ${priority}${status}${options.note ? `  ${s.dim(options.note)}` : ''}`];
  for (const item of task.items ?? []) {
    const ticked = isItemCompleted(item);
    lines.push(`${indent}    ${ticked ? s.good('☑') : '☐'} ${safeText(item.title)}`);
  }
  if (options.body !== false) {
    const body = taskBody(task);
    if (body) lines.push(...indentLines(body, `${indent}    ${s.dim('│')} `));
  }
  return lines;
}

/** A list header and its tasks. */
export function renderList(name: string, tasks: readonly Task[], s: DemoStyle, indent = '  '): string[] {
  const lines = [`${indent}${s.bold(`📋 ${safeText(name)}`)}`];
  if (tasks.length === 0) lines.push(`${indent}  ${s.dim('(no open tasks)')}`);
  for (const task of tasks) lines.push(...renderTask(task, s, { indent: `${indent}  ` }));
  return lines;
}

/** One comment as it appears under a task: 💬 and its text (multi-line texts indented). */
export function renderComment(comment: Pick<Comment, 'title'>, s: DemoStyle, indent = '    ', prefix = ''): string[] {
  const [first = '', ...rest] = comment.title.split('\n');
  const pad = ' '.repeat(displayWidth(prefix));
  return [`${indent}${prefix}💬 ${safeText(first)}`.trimEnd(), ...rest.map((line) => (line.trim() === '' ? '' : `${indent}${pad}   ${safeText(line)}`.trimEnd()))];
}

/** The acceptance todo: title, priority, report body, reminders explained, and its comments. */
export function renderAcceptance(task: Task, comments: readonly Comment[], filedAtMs: number, s: DemoStyle, indent = '  '): string[] {
  const lines = renderTask(task, s, { indent, body: false });
  lines.push(`${indent}    ${s.dim('report (the todo\'s description):')}`);
  lines.push(...indentLines(taskBody(task), `${indent}    ${s.dim('│')} `));
  lines.push(...explainReminders(task, filedAtMs).map((line) => `${indent}    ⏰ ${line}`.replace('⏰ at the due', '   at the due')));
  for (const comment of comments) lines.push(...renderComment(comment, s, `${indent}    `));
  return lines;
}

/** A section heading: `Step n/m  title`. */
export function heading(step: number, total: number, title: string, s: DemoStyle): string {
  return `\n${s.accent(s.bold(`Step ${step}/${total}`))}  ${s.bold(title)}`;
}

/** Seconds with one decimal. */
export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
