// A fake `dida` (@suibiji/dida-cli) executable for tests: the same commands, output and quirks, talking to the simulator.
//
// Built to an .mjs by fake-dida-install.ts. Environment:
//   FAKE_DIDA_BASE_URL    Open API base URL of the simulator (required for API commands)
//   FAKE_DIDA_SLEEP_MS    sleep this long before doing anything (timeout tests)
//   FAKE_DIDA_MODE        misbehave instead of answering: `malformed-json` | `huge-output` | `wrong-shape` | `no-token-exit-1` | `crash`
//   FAKE_DIDA_HUGE_BYTES  bytes printed by `huge-output` (default 9 MiB)
//   FAKE_DIDA_ARGV_LOG    append `{"pid":…,"argv":[…]}` as one JSON line per run to this file
//   FAKE_DIDA_PID_FILE    write this process's pid to the file at start
//   FAKE_DIDA_IGNORE_SIGTERM  when set, SIGTERM is ignored (so only SIGKILL stops it)
// The token is read like the real CLI: `$HOME/.config/dida-cli/config.json` → `access_token`.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const NO_TOKEN_TEXT = '未找到 access token。请先运行 dida auth login 登录。';
/** Flags that take no value; every other `--flag` consumes the next argument, as commander does for `<value>`. */
const BOOLEAN_FLAGS = new Set(['json', 'all-day']);

class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`DIDA API 错误 ${status}: ${body}`);
  }
}

class UsageError extends Error {}

interface ParsedArgs {
  positionals: string[];
  flags: Map<string, string | true>;
}

function parseArgs(argv: string[]): ParsedArgs {
  const positionals: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      if (BOOLEAN_FLAGS.has(name)) {
        flags.set(name, true);
      } else if (eq !== -1) {
        flags.set(name, arg.slice(eq + 1));
      } else {
        const value = argv[i + 1];
        if (value === undefined) throw new UsageError(`error: option '--${name} <value>' argument missing`);
        flags.set(name, value);
        i++;
      }
      continue;
    }
    if (arg.startsWith('-') && arg.length > 1) throw new UsageError(`error: unknown option '${arg}'`);
    positionals.push(arg);
  }
  return { positionals, flags };
}

function readToken(): string | undefined {
  try {
    const config = JSON.parse(readFileSync(join(homedir(), '.config', 'dida-cli', 'config.json'), 'utf8')) as { access_token?: unknown };
    return typeof config.access_token === 'string' && config.access_token !== '' ? config.access_token : undefined;
  } catch {
    // A missing or unreadable config file means "not logged in", as in the real CLI.
    return undefined;
  }
}

async function api(token: string, method: string, path: string, body?: unknown): Promise<unknown> {
  const base = process.env.FAKE_DIDA_BASE_URL;
  if (!base) throw new Error('FAKE_DIDA_BASE_URL is not set');
  const headers: Record<string, string> = { Authorization: `Bearer ${token}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(base.replace(/\/+$/, '') + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new ApiError(response.status, text);
  if ((response.headers.get('content-type') ?? '').includes('application/json') && text.trim() !== '') return JSON.parse(text);
  return null;
}

function str(flags: ParsedArgs['flags'], name: string): string | undefined {
  const value = flags.get(name);
  return typeof value === 'string' ? value : undefined;
}

function parseItems(value: string): unknown[] {
  const trimmed = value.trim();
  if (trimmed.startsWith('[')) return JSON.parse(trimmed) as unknown[];
  return trimmed
    .split(',')
    .map((title) => title.trim())
    .filter((title) => title !== '')
    .map((title) => ({ title, status: 0 }));
}

/** The task body built from create/update flags; a flag not given stays out of the body. */
function taskBody(flags: ParsedArgs['flags']): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const copy = (flag: string, field: string) => {
    const value = str(flags, flag);
    if (value !== undefined) body[field] = value;
  };
  copy('title', 'title');
  copy('content', 'content');
  copy('desc', 'desc');
  if (flags.get('all-day') === true) body.isAllDay = true;
  copy('start-date', 'startDate');
  copy('due-date', 'dueDate');
  copy('time-zone', 'timeZone');
  const reminders = str(flags, 'reminders');
  if (reminders !== undefined) body.reminders = reminders.split(',');
  copy('repeat', 'repeatFlag');
  const priority = str(flags, 'priority');
  if (priority !== undefined) body.priority = Number.parseInt(priority, 10);
  const sortOrder = str(flags, 'sort-order');
  if (sortOrder !== undefined) body.sortOrder = Number.parseInt(sortOrder, 10);
  const items = str(flags, 'items');
  if (items !== undefined) body.items = parseItems(items);
  const tags = str(flags, 'tags');
  if (tags !== undefined) body.tags = tags.split(',');
  return body;
}

function need(value: string | undefined, what: string): string {
  if (value === undefined) throw new UsageError(`error: missing required argument '${what}'`);
  return value;
}

const enc = encodeURIComponent;

async function execute(token: string, args: ParsedArgs): Promise<{ json: unknown; text: string }> {
  const [group, verb, ...rest] = args.positionals;
  const flags = args.flags;
  const key = `${group ?? ''} ${verb ?? ''}`;
  switch (key) {
    case 'project list': {
      const projects = await api(token, 'GET', '/project');
      return { json: projects, text: `共 ${Array.isArray(projects) ? projects.length : 0} 个清单` };
    }
    case 'project get': {
      const project = await api(token, 'GET', `/project/${enc(need(rest[0], 'projectId'))}`);
      return { json: project, text: '清单详情' };
    }
    case 'project data': {
      const data = await api(token, 'GET', `/project/${enc(need(rest[0], 'projectId'))}/data`);
      return { json: data, text: '清单数据' };
    }
    case 'project create': {
      const body: Record<string, unknown> = { name: need(str(flags, 'name'), '--name') };
      const color = str(flags, 'color');
      if (color !== undefined) body.color = color;
      const viewMode = str(flags, 'view-mode');
      if (viewMode !== undefined) body.viewMode = viewMode;
      const kind = str(flags, 'kind');
      if (kind !== undefined) body.kind = kind;
      const sortOrder = str(flags, 'sort-order');
      if (sortOrder !== undefined) body.sortOrder = Number.parseInt(sortOrder, 10);
      return { json: await api(token, 'POST', '/project', body), text: '✓ 清单已创建' };
    }
    case 'project delete': {
      await api(token, 'DELETE', `/project/${enc(need(rest[0], 'projectId'))}`);
      return { json: undefined, text: '清单已删除' };
    }
    case 'task get': {
      const task = await api(token, 'GET', `/project/${enc(need(rest[0], 'projectId'))}/task/${enc(need(rest[1], 'taskId'))}`);
      return { json: task, text: '任务详情' };
    }
    case 'task create': {
      const body = { ...taskBody(flags), title: need(str(flags, 'title'), '--title'), projectId: need(str(flags, 'project'), '--project') };
      return { json: await api(token, 'POST', '/task', body), text: '✓ 任务已创建' };
    }
    case 'task update': {
      const taskId = need(rest[0], 'taskId');
      const body = { ...taskBody(flags), id: need(str(flags, 'id'), '--id'), projectId: need(str(flags, 'project'), '--project') };
      return { json: await api(token, 'POST', `/task/${enc(taskId)}`, body), text: '✓ 任务已更新' };
    }
    case 'task complete': {
      await api(token, 'POST', `/project/${enc(need(rest[0], 'projectId'))}/task/${enc(need(rest[1], 'taskId'))}/complete`);
      return { json: undefined, text: '任务已完成' };
    }
    case 'task delete': {
      await api(token, 'DELETE', `/project/${enc(need(rest[0], 'projectId'))}/task/${enc(need(rest[1], 'taskId'))}`);
      return { json: undefined, text: '任务已删除' };
    }
    case 'task comment': {
      const [action, projectId, taskId] = rest;
      const path = `/project/${enc(need(projectId, 'projectId'))}/task/${enc(need(taskId, 'taskId'))}`;
      if (action === 'list') return { json: await api(token, 'GET', `${path}/comments`), text: '评论列表' };
      if (action === 'add') {
        const comment = await api(token, 'POST', `${path}/comment`, { title: need(str(flags, 'title'), '--title') });
        return { json: comment, text: '✓ 评论已添加' };
      }
      throw new UsageError(`error: unknown command 'comment ${action ?? ''}'`);
    }
    default:
      throw new UsageError(`error: unknown command '${key.trim()}'`);
  }
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  if (process.env.FAKE_DIDA_IGNORE_SIGTERM) process.on('SIGTERM', () => undefined);
  if (process.env.FAKE_DIDA_PID_FILE) writeFileSync(process.env.FAKE_DIDA_PID_FILE, String(process.pid));
  if (process.env.FAKE_DIDA_ARGV_LOG) appendFileSync(process.env.FAKE_DIDA_ARGV_LOG, `${JSON.stringify({ pid: process.pid, argv })}\n`);
  const sleepMs = Number(process.env.FAKE_DIDA_SLEEP_MS ?? 0);
  if (sleepMs > 0) await new Promise((resolve) => setTimeout(resolve, sleepMs));

  let args: ParsedArgs;
  try {
    args = parseArgs(argv);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    return 2;
  }

  const mode = process.env.FAKE_DIDA_MODE ?? '';
  if (mode === 'malformed-json') {
    process.stdout.write('{"id": "abc", "title": \n');
    return 0;
  }
  if (mode === 'huge-output') {
    const total = Number(process.env.FAKE_DIDA_HUGE_BYTES ?? 9 * 1024 * 1024);
    const chunk = 'x'.repeat(64 * 1024);
    for (let written = 0; written < total; written += chunk.length) {
      if (!process.stdout.write(chunk)) await new Promise((resolve) => process.stdout.once('drain', resolve));
    }
    return 0;
  }
  if (mode === 'wrong-shape') {
    process.stdout.write(`${JSON.stringify({ id: 42, projectId: null }, null, 2)}\n`);
    return 0;
  }
  if (mode === 'crash') {
    process.stderr.write('TypeError: Cannot read properties of undefined\n');
    return 1;
  }

  const token = readToken();
  if (!token || mode === 'no-token-exit-1') {
    // The real CLI prints this on stdout and (in newer versions) still exits 0.
    process.stdout.write(`${NO_TOKEN_TEXT}\n`);
    return mode === 'no-token-exit-1' ? 1 : 0;
  }

  try {
    const { json, text } = await execute(token, args);
    if (args.flags.get('json') === true && json !== undefined) process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
    else process.stdout.write(`${text}\n`);
    return 0;
  } catch (error) {
    if (error instanceof ApiError) {
      process.stderr.write(`${error.message}\n`);
      return 1;
    }
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\n`);
      return 2;
    }
    process.stderr.write(`错误: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    process.exitCode = 1;
  },
);
