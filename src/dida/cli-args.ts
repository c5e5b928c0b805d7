// The argv of a `dida` command: task fields as its flags, ids and texts checked so the command cannot misread them,
// and a label of the command words for messages (never ids or user text).
import { DidaError } from './dida-error';
import type { NewTask, TaskUpdate } from './types';

/** The flags shared by `task create` and `task update`; a field that is absent (or cannot be sent) is left out. */
export function taskFlags(task: NewTask | TaskUpdate, mode: 'create' | 'update'): string[] {
  const source = task as Record<string, unknown>;
  const args: string[] = [];
  const str = (field: string, flag: string) => {
    const value = source[field];
    if (typeof value === 'string' && (value !== '' || mode === 'update')) args.push(flag, text(value, field));
  };
  const num = (field: string, flag: string) => {
    const value = source[field];
    if (typeof value === 'number' && Number.isFinite(value)) args.push(flag, String(Math.trunc(value)));
  };
  const list = (field: string, flag: string) => {
    const value = source[field];
    if (!Array.isArray(value)) return;
    const entries = value.filter((v): v is string => typeof v === 'string' && v !== '');
    if (entries.length > 0) args.push(flag, text(entries.join(','), field));
  };
  str('content', '--content');
  str('desc', '--desc');
  const items = source.items;
  if (Array.isArray(items) && (items.length > 0 || mode === 'update')) args.push('--items', text(JSON.stringify(items), 'items'));
  num('priority', '--priority');
  num('sortOrder', '--sort-order');
  const dated = (field: string, flag: string) => {
    const value = source[field];
    if (typeof value === 'string' && value !== '') args.push(flag, text(value, field));
  };
  dated('startDate', '--start-date');
  dated('dueDate', '--due-date');
  dated('timeZone', '--time-zone');
  list('reminders', '--reminders');
  dated('repeatFlag', '--repeat');
  list('tags', '--tags');
  if (source.isAllDay === true) args.push('--all-day');
  return args;
}

/** `dida task get`: the command words only, never ids or user text. */
export function commandLabel(command: string, args: readonly string[]): string {
  const words: string[] = [];
  for (const arg of args) {
    if (arg.startsWith('-') || !/^[a-z]+$/.test(arg) || words.length >= 3) break;
    words.push(arg);
  }
  const name = command.split(/[\\/]/).pop() || command;
  return [name, ...words].join(' ');
}

/** A Dida id passed as a positional argument: non-empty and not flag-like, so the CLI cannot misread it. */
export function id(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.trim() === '' || value.startsWith('-')) {
    throw new DidaError({ code: 'not_found', message: `The ${name} "${String(value)}" is not a Dida id; pass the id of an existing list or task.` });
  }
  return text(value, name);
}

/** A flag value: argv cannot carry a NUL character, so such text cannot be sent through the CLI. */
export function text(value: string, name: string): string {
  if (value.includes('\u0000')) {
    throw new DidaError({
      code: 'invalid_response',
      message: `The ${name} contains a NUL character, which cannot be passed to the dida command; remove it or use the HTTP gateway.`,
    });
  }
  return value;
}
