// The simulator's own web page, the person's phone: `/` serves it, `/page/data` the lists it shows and `/page/edit` the
// edits a person makes in the Dida app (through the same store the Open API serves). Loopback, its own Host, no foreign
// Origin, and the simulator's token (from the page address, then a cookie) — like the control API.
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import * as z from 'zod/mini';
import en from '../../locale/sim.en.json';
import zh from '../../locale/sim.zh.json';
import { describeIssues } from '../common/schema-issues';
import { formatDidaDate, parseDidaDate } from '../dida/dida-date';
import type { ChecklistItem, Task } from '../dida/types';
import { parseJsonBody, readBody, sendJson } from './sim-http';
import { PAGE_SCRIPT, PAGE_STYLE } from './sim-page-assets';
import type { SimState } from './sim-state';
import { isObject, SimHttpError } from './sim-util';

export type PageLocale = 'zh' | 'en';
export type PageKey = keyof typeof zh;

const CATALOGS: Record<PageLocale, Record<PageKey, string>> = { zh, en };

/** Completed tasks shown per list at most (the most recently completed). */
export const PAGE_COMPLETED_SHOWN = 30;
/** Comments shown per task at most (the newest). */
export const PAGE_COMMENTS_SHOWN = 100;

export interface PageHost {
  state: SimState;
  /** The simulator's current token. */
  token(): string;
  port(): number;
  /** The page's language unless the address asks for another (`?lang=en`). */
  locale: PageLocale;
}

/** The cookie holding the token for one simulator (cookies ignore ports, so the name carries it). */
export function pageCookieName(port: number): string {
  return `dida_sim_${port}`;
}

/** Whether `path` is one of the page's. */
export function isPagePath(path: string): boolean {
  return path === '/' || path === '/page/data' || path === '/page/edit';
}

function ownHosts(port: number): string[] {
  return [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
}

function cookieToken(headers: IncomingHttpHeaders, port: number): string | undefined {
  const name = pageCookieName(port);
  for (const part of (headers.cookie ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return decodeURIComponent(rest.join('='));
  }
  return undefined;
}

type Access = { ok: true } | { ok: false; status: 403; why: 'host' | 'origin' | 'token' };

/** The control API's rules: its own Host, no Origin but its own, and the token (Bearer or the page's cookie). */
export function pageAccess(headers: IncomingHttpHeaders, expected: { token: string; port: number }): Access {
  const own = ownHosts(expected.port);
  if (!own.includes((headers.host ?? '').toLowerCase())) return { ok: false, status: 403, why: 'host' };
  const origin = headers.origin;
  if (origin !== undefined && !own.some((h) => origin.toLowerCase() === `http://${h}`)) return { ok: false, status: 403, why: 'origin' };
  const bearer = /^Bearer\s+(.+)$/i.exec((headers.authorization ?? '').trim())?.[1];
  if (bearer !== expected.token && cookieToken(headers, expected.port) !== expected.token) return { ok: false, status: 403, why: 'token' };
  return { ok: true };
}

const SECURITY_HEADERS = {
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
};

function sendText(res: ServerResponse, status: number, type: string, body: string, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.writableEnded) return;
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': String(Buffer.byteLength(body)), ...SECURITY_HEADERS, ...headers });
  res.end(body);
}

/** `text` safe inside HTML text and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch] as string);
}

function pickLocale(url: URL, fallback: PageLocale): PageLocale {
  const asked = url.searchParams.get('lang');
  return asked === 'zh' || asked === 'en' ? asked : fallback;
}

function fill(template: string, vars: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in vars ? String(vars[name]) : whole));
}

/** A plain page saying why it was refused and what to open instead. */
function deniedPage(locale: PageLocale, port: number, wrongToken: boolean): string {
  const t = CATALOGS[locale];
  const body = wrongToken ? t['page.denied.wrong'] : fill(t['page.denied.body'], { port });
  return `<!doctype html><html lang="${locale === 'zh' ? 'zh-CN' : 'en'}"><head><meta charset="utf-8"><title>${escapeHtml(t['page.title'])}</title></head><body><h1>${escapeHtml(t['page.denied.title'])}</h1><p>${escapeHtml(body)}</p></body></html>\n`;
}

/** JSON for a `<script type="application/json">` block: nothing in it can end the block or open a comment. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

function pageHtml(locale: PageLocale): { html: string; nonce: string } {
  const nonce = randomBytes(16).toString('base64');
  const t = CATALOGS[locale];
  const boot = scriptJson({ locale, strings: t, refreshMs: 1500 });
  const html = [
    '<!doctype html>',
    `<html lang="${locale === 'zh' ? 'zh-CN' : 'en'}"><head><meta charset="utf-8">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(t['page.title'])}</title>`,
    `<style nonce="${nonce}">${PAGE_STYLE}</style></head>`,
    '<body><main id="app"></main>',
    `<script id="boot" type="application/json">${boot}</script>`,
    `<script nonce="${nonce}">${PAGE_SCRIPT}</script>`,
    '</body></html>',
    '',
  ].join('\n');
  return { html, nonce };
}

/** Only the page's own script and style run; it may talk to this simulator only; no frame may hold it. */
function contentSecurityPolicy(nonce: string): string {
  return `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;
}

/**
 * Answers one request for the page. `GET /?token=<token>` sets the token cookie (HttpOnly, SameSite=Strict) and sends
 * the browser on to `/`, so the token leaves the address bar; `GET /` shows the page; `GET /page/data` is its data;
 * `POST /page/edit` applies one person's edit. Without the token (or from a foreign Host or Origin) the answer is a
 * 403 saying what to open.
 */
export async function handlePageRequest(req: IncomingMessage, res: ServerResponse, url: URL, host: PageHost): Promise<void> {
  const method = req.method ?? 'GET';
  const port = host.port();
  const locale = pickLocale(url, host.locale);
  const remote = req.socket.remoteAddress ?? '';
  const loopback = ['127.0.0.1', '::1', '::ffff:127.0.0.1'].includes(remote);
  if (url.pathname === '/') {
    if (method !== 'GET' && method !== 'HEAD') return sendText(res, 405, 'text/plain; charset=utf-8', 'GET only\n', { Allow: 'GET' });
    const offered = url.searchParams.get('token');
    if (offered !== null && loopback && pageAccess({ ...req.headers, authorization: `Bearer ${offered}` }, { token: host.token(), port }).ok) {
      const cookie = `${pageCookieName(port)}=${encodeURIComponent(offered)}; Path=/; HttpOnly; SameSite=Strict`;
      const next = url.searchParams.get('lang') ? `/?lang=${locale}` : '/';
      res.writeHead(303, { Location: next, 'Set-Cookie': cookie, 'Content-Length': '0', ...SECURITY_HEADERS });
      res.end();
      return;
    }
    const access = loopback ? pageAccess(req.headers, { token: host.token(), port }) : ({ ok: false, status: 403, why: 'host' } as const);
    if (!access.ok || offered !== null) return sendText(res, 403, 'text/html; charset=utf-8', deniedPage(locale, port, offered !== null));
    const { html, nonce } = pageHtml(locale);
    return sendText(res, 200, 'text/html; charset=utf-8', html, { 'Content-Security-Policy': contentSecurityPolicy(nonce) });
  }
  const access = loopback ? pageAccess(req.headers, { token: host.token(), port }) : ({ ok: false, status: 403, why: 'host' } as const);
  if (!access.ok) {
    const error = access.why === 'host' ? 'the page answers only requests addressed to this simulator (Host)' : access.why === 'origin' ? 'the page refuses requests from other web pages (Origin)' : "the page needs the simulator's token: open the page address `dida-todo sim` printed";
    return sendJson(res, 403, { error });
  }
  try {
    if (url.pathname === '/page/data' && method === 'GET') return sendJson(res, 200, pageData(host.state), SECURITY_HEADERS);
    if (url.pathname === '/page/edit' && method === 'POST') {
      if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) throw new SimHttpError(415, { error: 'send the edit as application/json' });
      const task = applyEdit(host.state, parseJsonBody(await readBody(req)));
      return sendJson(res, 200, { ok: true, task: taskView(task, host.state) }, SECURITY_HEADERS);
    }
    return sendJson(res, 405, { error: `${method} ${url.pathname} is not a page route` });
  } catch (error) {
    if (error instanceof SimHttpError) {
      const body = isObject(error.body) ? (error.body.error ?? error.body.errorMessage ?? error.message) : error.message;
      return sendJson(res, error.status >= 500 ? 400 : error.status, { error: String(body) });
    }
    throw error;
  }
}

// ---- what the page shows -------------------------------------------------------------------------------------

interface ItemView {
  id: string;
  title: string;
  done: boolean;
}
interface CommentView {
  id: string;
  text: string;
  mine: boolean;
  userId: number;
  time: string | null;
}
export interface TaskView {
  id: string;
  projectId: string;
  title: string;
  description: string;
  priority: number;
  done: boolean;
  start: string | null;
  due: string | null;
  allDay: boolean;
  timeZone: string | null;
  repeat: boolean;
  tags: string[];
  items: ItemView[];
  comments: CommentView[];
  commentCount: number;
  completedTime: string | null;
}
export interface PageData {
  userId: number;
  timeZone: string;
  lists: Array<{ id: string; name: string; closed: boolean }>;
  tasks: TaskView[];
}

const iso = (value: unknown) => parseDidaDate(typeof value === 'string' ? value : undefined)?.toISOString() ?? null;

/** The body a person sees: `content`, else `desc` (a checklist task keeps its description there). */
function descriptionOf(task: Task): string {
  const content = (task.content ?? '').trim();
  return content !== '' ? (task.content as string) : (task.desc ?? '');
}

function taskView(task: Task, state: SimState): TaskView {
  const all = state.allComments(task.id);
  return {
    id: task.id,
    projectId: task.projectId,
    title: task.title,
    description: descriptionOf(task),
    priority: task.priority,
    done: task.status !== 0,
    start: iso(task.startDate),
    due: iso(task.dueDate),
    allDay: task.isAllDay === true,
    timeZone: task.timeZone ?? null,
    repeat: typeof task.repeatFlag === 'string' && task.repeatFlag !== '',
    tags: [...(task.tags ?? [])],
    items: (task.items ?? []).map((item: ChecklistItem) => ({ id: item.id ?? '', title: item.title, done: item.status === 1 || item.status === 2 })),
    comments: all.slice(-PAGE_COMMENTS_SHOWN).map((c) => ({ id: c.id, text: c.title, mine: c.userId === state.userId, userId: c.userId, time: iso(c.createdTime) })),
    commentCount: all.length,
    completedTime: iso(task.completedTime),
  };
}

/** Every list (the inbox when it holds tasks), each one's open tasks in Dida order and its latest completed ones. */
export function pageData(state: SimState): PageData {
  const snapshot = state.snapshot();
  const lists = snapshot.projects.map((p) => ({ id: p.id, name: p.name, closed: p.closed === true }));
  const tasks = state.listTasks(undefined, true);
  if (tasks.some((t) => t.projectId === state.inboxId)) lists.unshift({ id: state.inboxId, name: 'Inbox', closed: false });
  const shown: Task[] = [];
  for (const list of lists) {
    const mine = tasks.filter((t) => t.projectId === list.id);
    shown.push(...mine.filter((t) => t.status === 0));
    const done = mine.filter((t) => t.status !== 0).sort((a, b) => (iso(b.completedTime) ?? '').localeCompare(iso(a.completedTime) ?? ''));
    shown.push(...done.slice(0, PAGE_COMPLETED_SHOWN));
  }
  return { userId: state.userId, timeZone: state.timeZone, lists, tasks: shown.map((t) => taskView(t, state)) };
}

// ---- the person's edits --------------------------------------------------------------------------------------

const Priority = z.union([z.literal(0), z.literal(1), z.literal(3), z.literal(5)]);
const Text = z.string().check(z.maxLength(20_000));
const EditSchema = z.discriminatedUnion('op', [
  z.object({ op: z.literal('addTask'), projectId: z.string(), title: Text, description: z.optional(Text), priority: Priority, items: z.optional(z.array(Text).check(z.maxLength(200))), tags: z.optional(z.array(z.string().check(z.maxLength(64))).check(z.maxLength(20))) }),
  z.object({ op: z.literal('editTask'), taskId: z.string(), title: z.optional(Text), description: z.optional(Text) }),
  z.object({ op: z.literal('setItem'), taskId: z.string(), itemId: z.string(), done: z.boolean() }),
  z.object({ op: z.literal('addItem'), taskId: z.string(), title: Text }),
  z.object({ op: z.literal('setPriority'), taskId: z.string(), priority: Priority }),
  z.object({ op: z.literal('complete'), taskId: z.string() }),
  z.object({ op: z.literal('reopen'), taskId: z.string() }),
  z.object({ op: z.literal('comment'), taskId: z.string(), text: Text }),
]);

function bad(message: string): SimHttpError {
  return new SimHttpError(400, { error: message });
}

function nonEmpty(text: string, what: string): string {
  const trimmed = text.trim();
  if (trimmed === '') throw bad(`${what} is empty`);
  return trimmed;
}

function existing(state: SimState, taskId: string): Task {
  const task = state.peekTask(taskId);
  if (!task) throw new SimHttpError(404, { error: `no task ${taskId} (it may have been deleted)` });
  return task;
}

/**
 * Applies one edit as the Dida app makes it: a new task (a checklist task keeps its description in `desc`, a plain one
 * in `content`), a title or description change, an item ticked, unticked or added, a priority, a completion (a
 * repeating task moves to its next occurrence), a reopen, or a comment by the account's owner. Returns the task after.
 */
export function applyEdit(state: SimState, body: unknown): Task {
  const parsed = EditSchema.safeParse(body, { reportInput: true });
  if (!parsed.success) throw bad(`invalid edit: ${describeIssues(parsed.error.issues)}`);
  const edit = parsed.data;
  switch (edit.op) {
    case 'addTask': {
      const title = nonEmpty(edit.title, 'the title');
      const items = (edit.items ?? []).map((t) => t.trim()).filter((t) => t !== '');
      const tags = [...new Set((edit.tags ?? []).map((t) => t.trim().replace(/^#+/, '').toLowerCase()).filter((t) => t !== ''))];
      const description = (edit.description ?? '').trim();
      const fields: Record<string, unknown> = { projectId: edit.projectId, title, priority: edit.priority };
      if (description) fields[items.length > 0 ? 'desc' : 'content'] = description;
      if (items.length > 0) fields.items = items.map((t) => ({ title: t, status: 0 }));
      if (tags.length > 0) fields.tags = tags;
      return state.createTask(fields);
    }
    case 'editTask': {
      const task = existing(state, edit.taskId);
      const patch: Record<string, unknown> = {};
      if (edit.title !== undefined) patch.title = nonEmpty(edit.title, 'the title');
      if (edit.description !== undefined) patch[(task.content ?? '').trim() === '' && (task.items?.length ?? 0) > 0 ? 'desc' : 'content'] = edit.description;
      if (Object.keys(patch).length === 0) throw bad('nothing to change: give a title or a description');
      return state.editTask(task.id, patch);
    }
    case 'setItem': {
      const task = existing(state, edit.taskId);
      const items = task.items ?? [];
      if (!items.some((i) => i.id === edit.itemId)) throw new SimHttpError(404, { error: `the task has no checklist item ${edit.itemId} (it may have changed; reload)` });
      const stamp = formatDidaDate(Date.now());
      return state.editTask(task.id, {
        items: items.map((i) => (i.id === edit.itemId ? { ...i, status: edit.done ? 1 : 0, completedTime: edit.done ? stamp : null } : i)),
      });
    }
    case 'addItem': {
      const task = existing(state, edit.taskId);
      if ((task.items?.length ?? 0) >= 200) throw bad('a checklist holds at most 200 items');
      return state.editTask(task.id, { items: [...(task.items ?? []), { title: nonEmpty(edit.title, 'the item'), status: 0 }] });
    }
    case 'setPriority':
      return state.editTask(existing(state, edit.taskId).id, { priority: edit.priority });
    case 'complete': {
      const task = existing(state, edit.taskId);
      state.completeTask(task.projectId, task.id);
      return state.peekTask(task.id) ?? task;
    }
    case 'reopen': {
      const task = existing(state, edit.taskId);
      if (task.status === 0) return task;
      return state.editTask(task.id, { status: 0, completedTime: null });
    }
    case 'comment': {
      const task = existing(state, edit.taskId);
      state.addComment(task.projectId, task.id, nonEmpty(edit.text, 'the comment'), state.userId);
      return existing(state, task.id);
    }
  }
}
