// How the CLI gateway reads one finished `dida` run, and which flags it builds for a task.
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { interpret, type CommandSpec } from '../../src/dida/cli-output';
import { taskFlags } from '../../src/dida/cli-args';
import { DidaError } from '../../src/dida/dida-error';
import { TaskSchema, type TaskUpdate } from '../../src/dida/types';

const taskSpec: CommandSpec<typeof TaskSchema> = { args: ['task', 'get', 'p', 't', '--json'], route: 'GET /project/{pid}/task/{tid}', schema: TaskSchema, idempotent: true };
const textSpec: CommandSpec<undefined> = { args: ['task', 'complete', 'p', 't'], route: 'POST /project/{pid}/task/{tid}/complete', schema: undefined, idempotent: false };

function run(stdout: string, stderr = '', exitCode: number | null = 0) {
  return { stdout, stderr, exitCode, exitSignal: null };
}

function codeOf(fn: () => unknown): DidaError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(DidaError);
    return error as DidaError;
  }
  throw new Error('expected a DidaError');
}

describe('interpret', () => {
  it('maps DIDA API 错误 <status> to the status code with a truncated body excerpt', () => {
    for (const [status, code] of [
      [401, 'auth'],
      [403, 'forbidden'],
      [404, 'not_found'],
      [429, 'rate_limited'],
      [500, 'server'],
    ] as const) {
      const body = `{"errorCode":"x","errorMessage":"${'长'.repeat(400)}"}`;
      const error = codeOf(() => interpret(taskSpec, 'dida task get', run('', `DIDA API 错误 ${status}: ${body}\n`, 1)));
      expect(error.code).toBe(code);
      expect(error.status).toBe(status);
      expect(error.route).toBe('GET /project/{pid}/task/{tid}');
      expect(error.bodyExcerpt?.length).toBeLessThanOrEqual(301);
      expect(error.message).toContain('dida task get');
    }
  });

  it('strips colour codes and redacts bearer tokens from excerpts', () => {
    const error = codeOf(() => interpret(taskSpec, 'dida task get', run('', '\u001b[31mDIDA API 错误 401: Bearer abcdef0123456789 rejected\u001b[39m', 1)));
    expect(error.code).toBe('auth');
    expect(error.message).not.toContain('abcdef0123456789');
    expect(error.message).not.toContain('\u001b');
  });

  it('treats the no-token text as auth whatever the exit code', () => {
    expect(codeOf(() => interpret(taskSpec, 'dida task get', run('未找到 access token。请先运行 dida auth login 登录。\n'))).code).toBe('auth');
    expect(codeOf(() => interpret(textSpec, 'dida task complete', run('未登录\n'))).code).toBe('auth');
    expect(codeOf(() => interpret(taskSpec, 'dida task get', run('', '请先运行 `dida auth login`', 1))).code).toBe('auth');
  });

  it('does not mistake a task titled like an error or the no-token text for one', () => {
    const task = { id: 't', projectId: 'p', title: '未登录 DIDA API 错误 500: 请先运行 dida auth login' };
    const parsed = interpret(taskSpec, 'dida task get', run(JSON.stringify(task, null, 2)));
    expect(parsed?.title).toBe(task.title);
  });

  it('accepts text confirmations and empty JSON answers', () => {
    expect(interpret(textSpec, 'dida task complete', run('任务已完成\n'))).toBeUndefined();
    expect(interpret(taskSpec, 'dida task get', run('null\n'))).toBeUndefined();
    expect(interpret(taskSpec, 'dida task get', run(''))).toBeUndefined();
  });

  it('tolerates a notice printed before the JSON document', () => {
    const parsed = interpret(taskSpec, 'dida task get', run(`有新版本可用\n${JSON.stringify({ id: 't', projectId: 'p', extra: 1 })}`));
    expect(parsed).toMatchObject({ id: 't', projectId: 'p', extra: 1 });
  });

  it('reports schema problems by path', () => {
    const spec: CommandSpec<z.ZodMiniArray<typeof TaskSchema>> = { ...taskSpec, schema: z.array(TaskSchema) };
    const error = codeOf(() => interpret(spec, 'dida task get', run('[{"id":"t"}]')));
    expect(error.code).toBe('invalid_response');
    expect(error.message).toMatch(/at \[0\]\.projectId: expected string/);
  });
});

describe('taskFlags', () => {
  it('builds every create flag the CLI knows', () => {
    const flags = taskFlags(
      {
        projectId: 'p',
        title: 't',
        content: 'c',
        desc: 'd',
        items: [{ title: 'a, b' }],
        priority: 3,
        sortOrder: -2199023255552,
        startDate: '2026-01-01T00:00:00+0000',
        dueDate: '2026-01-02T00:00:00+0000',
        timeZone: 'Asia/Shanghai',
        reminders: ['TRIGGER:PT0S', 'TRIGGER:-PT15M'],
        repeatFlag: 'RRULE:FREQ=DAILY;INTERVAL=1',
        tags: ['work', 'urgent'],
        isAllDay: true,
      },
      'create',
    );
    expect(flags).toEqual([
      '--content', 'c',
      '--desc', 'd',
      '--items', '[{"title":"a, b"}]',
      '--priority', '3',
      '--sort-order', '-2199023255552',
      '--start-date', '2026-01-01T00:00:00+0000',
      '--due-date', '2026-01-02T00:00:00+0000',
      '--time-zone', 'Asia/Shanghai',
      '--reminders', 'TRIGGER:PT0S,TRIGGER:-PT15M',
      '--repeat', 'RRULE:FREQ=DAILY;INTERVAL=1',
      '--tags', 'work,urgent',
      '--all-day',
    ]);
  });

  it('leaves out what is absent on create and cannot clear (nulls, empty lists, isAllDay false)', () => {
    expect(taskFlags({ projectId: 'p', title: 't', items: [], tags: [], reminders: [], isAllDay: false, content: '' }, 'create')).toEqual([]);
    const update = { id: 't', projectId: 'p', title: 't', content: null, dueDate: null, tags: [], isAllDay: false } as TaskUpdate;
    expect(taskFlags(update, 'update')).toEqual([]);
  });

  it('sends the whole checklist on update, keeping item ids and unknown item fields', () => {
    const update: TaskUpdate = {
      id: 't',
      projectId: 'p',
      title: 't',
      content: '',
      items: [{ id: 'i1', title: 'a', status: 1, completedTime: null, futureField: { x: 1 } }, { title: 'new' }],
    };
    const flags = taskFlags(update, 'update');
    expect(flags.slice(0, 2)).toEqual(['--content', '']);
    const items = JSON.parse(flags[flags.indexOf('--items') + 1] as string) as unknown;
    expect(items).toEqual(update.items);
    expect(taskFlags({ id: 't', projectId: 'p', items: [] }, 'update')).toEqual(['--items', '[]']);
  });
});
