// Which phase of a Work each Dida request served (claim, plan, steps, comments, settle, review, comment looks, polls),
// told from the request alone and the order of the requests: for the benches' and the soaks' per-phase tables.
import { parseClaim, parseClaimEnd } from '../../src/core/queue/claims';
import { getLocale } from '../../src/core/text/locale';
import type { SimRequestInfo } from '../../src/sim/simulator';

export const REQUEST_PHASES = ['setup', 'claim', 'plan', 'steps', 'comments', 'settle', 'review', 'comment looks', 'polls'] as const;
export type RequestPhase = (typeof REQUEST_PHASES)[number];

export interface SeenRequest {
  method: string;
  route: string;
  path: string;
  body?: unknown;
}

/** What the classifier keeps from a simulator request (its body only for creates and comments). */
export function seen(info: SimRequestInfo): SeenRequest {
  const keep = info.route === 'POST /task' || info.route === 'POST /project/{pid}/task/{tid}/comment';
  return { method: info.method, route: info.route, path: info.path, ...(keep ? { body: info.body } : {}) };
}

const REVIEW_PREFIX = '🧑‍🔬';
const REMINDER_PREFIX = '🙋';
const LOCALES = [getLocale('zh'), getLocale('en')];
const REWORK_PREFIXES = LOCALES.map((l) => l.t('dida.rework.title', { title: '' }));
const REVIEW_TITLE_PREFIXES = LOCALES.map((l) => l.t('dida.acceptance.title', { title: '' }));
const ANCHORS = new Set(LOCALES.map((l) => l.t('dida.acceptance.anchor')));

/** The Work's title inside a review todo's title. */
function reviewed(title: string): string {
  const prefix = REVIEW_TITLE_PREFIXES.find((p) => title.startsWith(p));
  return prefix ? title.slice(prefix.length) : title;
}

function taskIdOf(path: string): string | undefined {
  return /\/task\/([^/]+)/.exec(path)?.[1];
}

function titleIn(body: unknown): string {
  return typeof body === 'object' && body !== null && typeof (body as { title?: unknown }).title === 'string' ? (body as { title: string }).title : '';
}

/**
 * Classifies `requests` (in the order Dida received them). `titleOf` names a task by id (the simulator's view at the
 * end of the run). A Work's task is any task that is not a review todo or a 🙋 reminder; its requests before its
 * review todo was filed are claim (comment lists, claim posts and withdrawals), plan (its create, or the first write
 * and the read before it) and steps (later reads and writes); from the review's create to the Work's completion they
 * are settle; after it, review. Comment posts that are not claims are comments; comment lists of review todos (and of
 * Works after their review was filed) are comment looks; list reads are polls.
 */
export function classifyRequests(requests: readonly SeenRequest[], titleOf: (taskId: string) => string | undefined): Array<{ phase: RequestPhase; route: string }> {
  const reviewFiled = new Set<string>();
  const completed = new Set<string>();
  const planned = new Set<string>();
  const out: Array<{ phase: RequestPhase; route: string }> = [];
  const kindOf = (title: string): 'review' | 'reminder' | 'work' => (title.startsWith(REVIEW_PREFIX) ? 'review' : title.startsWith(REMINDER_PREFIX) ? 'reminder' : 'work');
  for (const [i, r] of requests.entries()) {
    const push = (phase: RequestPhase) => out.push({ phase, route: r.route });
    if (r.route === 'GET /project/{pid}/data') push('polls');
    else if (r.route === 'POST /task') {
      const title = titleIn(r.body);
      if (title.startsWith(REVIEW_PREFIX)) {
        reviewFiled.add(reviewed(title));
        push('settle');
      } else if (REWORK_PREFIXES.some((p) => title.startsWith(p))) push('review');
      else if (title.startsWith(REMINDER_PREFIX)) push('comments');
      else push('plan');
    } else {
      const id = taskIdOf(r.path);
      if (!id) {
        push('setup');
        continue;
      }
      const title = titleOf(id) ?? '';
      const kind = kindOf(title);
      const filed = kind === 'work' && reviewFiled.has(title);
      if (kind === 'review') {
        if (r.route === 'GET /project/{pid}/task/{tid}/comments') push('comment looks');
        else if (r.route === 'POST /project/{pid}/task/{tid}/comment') push(ANCHORS.has(titleIn(r.body)) ? 'settle' : 'review');
        else if (r.route === 'DELETE /project/{pid}/task/{tid}') push('settle');
        else push('review');
        if (r.route === 'POST /project/{pid}/task/{tid}/complete') completed.add(id);
        continue;
      }
      if (kind === 'reminder') {
        push(r.route === 'GET /project/{pid}/task/{tid}/comments' ? 'comment looks' : 'comments');
        continue;
      }
      if (r.route === 'POST /project/{pid}/task/{tid}/comment') {
        const text = titleIn(r.body);
        push(parseClaim(text) || parseClaimEnd(text) ? 'claim' : 'comments');
      } else if (r.route === 'DELETE /project/{pid}/task/{tid}/comment/{cid}') push('claim');
      else if (r.route === 'GET /project/{pid}/task/{tid}/comments') push(filed ? 'comment looks' : 'claim');
      else if (completed.has(id)) push('review');
      else if (filed) {
        push('settle');
        if (r.route === 'POST /project/{pid}/task/{tid}/complete') completed.add(id);
      } else if (r.route === 'POST /task/{tid}') {
        push(planned.has(id) ? 'steps' : 'plan');
        planned.add(id);
      } else if (r.route === 'GET /project/{pid}/task/{tid}') {
        // The read right before a Work's first write belongs to the plan.
        const next = requests[i + 1];
        push(!planned.has(id) && next?.route === 'POST /task/{tid}' && taskIdOf(next.path) === id ? 'plan' : 'steps');
      } else push(r.route === 'POST /project/{pid}/task/{tid}/complete' ? 'settle' : 'steps');
    }
  }
  return out;
}

/** Phase → route → requests, and each phase's total. */
export function phaseTable(classified: ReadonlyArray<{ phase: RequestPhase; route: string }>): Map<RequestPhase, Map<string, number>> {
  const table = new Map<RequestPhase, Map<string, number>>();
  for (const { phase, route } of classified) {
    const routes = table.get(phase) ?? new Map<string, number>();
    routes.set(route, (routes.get(route) ?? 0) + 1);
    table.set(phase, routes);
  }
  return table;
}

/** Rows [phase, route, count] in phase order, with a "= phase total" row after each phase and a whole total. */
export function phaseRows(classified: ReadonlyArray<{ phase: RequestPhase; route: string }>, per = 1): string[][] {
  const table = phaseTable(classified);
  const rows: string[][] = [];
  const fmt = (n: number) => (per === 1 ? String(n) : (n / per).toFixed(2));
  for (const phase of REQUEST_PHASES) {
    const routes = table.get(phase);
    if (!routes) continue;
    for (const [route, n] of [...routes].sort((a, b) => a[0].localeCompare(b[0]))) rows.push([phase, route.replace('/project/{pid}/task/{tid}', '…/task/{tid}'), fmt(n)]);
    rows.push([phase, '= phase total', fmt([...routes.values()].reduce((a, b) => a + b, 0))]);
  }
  rows.push(['all', '= total', fmt(classified.length)]);
  return rows;
}
