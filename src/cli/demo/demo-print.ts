// Renders Dida state the way a person sees it in the Dida app: plain text, colours only when asked for. Every text
// that came from Dida is made terminal-safe (control and escape characters shown escaped, never run).
import { cliText, type CliKey, type CliText } from '../cli-locale';
import { colorsWanted } from '../cli-output';
import { displayWidth, safeText } from '../terminal-text';
import { parseDidaDate } from '../../dida/dida-date';
import { isItemCompleted, type Comment, type Task } from '../../dida/types';

export interface DemoStyle {
  readonly enabled: boolean;
  /** The person's language (the CLI's catalogs): config.yaml's `locale`, else LANG. */
  readonly text: CliText;
  bold(text: string): string;
  dim(text: string): string;
  good(text: string): string;
  warn(text: string): string;
  bad(text: string): string;
  accent(text: string): string;
}

export function demoStyle(enabled: boolean, text: CliText = cliText('en')): DemoStyle {
  const wrap = (open: number, close: number) => (value: string) => (enabled ? `\u001b[${open}m${value}\u001b[${close}m` : value);
  return { enabled, text, bold: wrap(1, 22), dim: wrap(2, 22), good: wrap(32, 39), warn: wrap(33, 39), bad: wrap(31, 39), accent: wrap(36, 39) };
}

/** Colours are on when forced by a flag, else as the CLI decides (FORCE_COLOR, NO_COLOR, TERM=dumb, a terminal). */
export function colorEnabled(forced: boolean | undefined, isTTY: boolean | undefined, env: NodeJS.ProcessEnv): boolean {
  if (forced !== undefined) return forced;
  return colorsWanted(isTTY, env);
}

const PRIORITY_KEYS: Record<number, CliKey> = { 5: 'cli.demo.priority.high', 3: 'cli.demo.priority.medium', 1: 'cli.demo.priority.low' };

/** Dida's names for its priorities, in the person's language. */
export function priorityName(priority: number | null | undefined, text: CliText = cliText('en')): string {
  return text.t(PRIORITY_KEYS[priority ?? 0] ?? 'cli.demo.priority.none');
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

function relativeMinutes(ms: number, text: CliText): string {
  const minutes = Math.round(ms / 60_000);
  return text.t('cli.demo.minutes', { sign: minutes >= 0 ? '+' : '−', minutes: Math.abs(minutes) });
}

/**
 * One sentence explaining when Dida reminds the person: each reminder as a wall-clock time and as minutes after
 * `filedAtMs` (when the todo appeared), e.g. "at 14:05 (+3 min) and 14:08 (+6 min)".
 */
export function explainReminders(task: Task, filedAtMs: number, text: CliText = cliText('en')): string[] {
  const { t } = text;
  const reminders = task.reminders ?? [];
  const due = parseDidaDate(task.dueDate ?? task.startDate);
  if (reminders.length === 0) return [t('cli.demo.noReminders')];
  if (!due) return [text.plural('cli.demo.remindersNoDue', reminders.length)];
  const times = reminders.map((r) => triggerOffsetMs(r)).filter((o): o is number => o !== undefined).map((o) => due.getTime() + o);
  const parts = times.map((at) => `${clock(at)} (${relativeMinutes(at - filedAtMs, text)})`);
  const joined = parts.length <= 1 ? parts.join('') : `${parts.slice(0, -1).join(t('cli.demo.listSeparator'))}${t('cli.demo.and')}${parts.at(-1)}`;
  const later = Math.round(((times.at(-1) ?? due.getTime()) - due.getTime()) / 60_000);
  return [
    t('cli.demo.due', { due: clock(due.getTime()), relative: relativeMinutes(due.getTime() - filedAtMs, text), times: joined }),
    later > 0 ? t('cli.demo.dueAgain', { minutes: later }) : t('cli.demo.dueOnce'),
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
  const name = priorityName(task.priority, s.text);
  const priority = s.dim(s.text.t(task.priority === 0 ? 'cli.demo.priorityDraft' : 'cli.demo.priority', { name }));
  const status = done ? ` ${s.good(s.text.t('cli.demo.taskCompleted'))}` : '';
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
  if (tasks.length === 0) lines.push(`${indent}  ${s.dim(s.text.t('cli.demo.noOpenTasks'))}`);
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
  lines.push(`${indent}    ${s.dim(s.text.t('cli.demo.report'))}`);
  lines.push(...indentLines(taskBody(task), `${indent}    ${s.dim('│')} `));
  // The first line carries the clock; the explanation continues under it.
  lines.push(...explainReminders(task, filedAtMs, s.text).map((line, i) => `${indent}    ${i === 0 ? '⏰' : '  '} ${line}`));
  for (const comment of comments) lines.push(...renderComment(comment, s, `${indent}    `));
  return lines;
}

/** A section heading: `Step n/m  title`. */
export function heading(step: number, total: number, title: string, s: DemoStyle): string {
  return `\n${s.accent(s.bold(s.text.t('cli.demo.heading', { step, total })))}  ${s.bold(title)}`;
}

/** Seconds with one decimal. */
export function seconds(ms: number, text: CliText = cliText('en')): string {
  return text.t('cli.demo.seconds', { seconds: (ms / 1000).toFixed(1) });
}
