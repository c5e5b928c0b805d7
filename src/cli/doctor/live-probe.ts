// The live self-test behind `dida-todo doctor --live`: settles, in a scratch list, each Dida behaviour the bundle depends on.
import { randomBytes } from 'node:crypto';
import { newMarker } from '../../core/work/own-creates';
import { isDidaError } from '../../dida/dida-error';
import type { DidaGateway } from '../../dida/dida-gateway';
import type { Project, Task } from '../../dida/types';
import { PROBE_CHECKS, PROBE_TAG, PROBE_TEXT, type ProbeCheckId, type ProbeLocaleId } from './live-probe-text';
import { expectedObservation, variantsMatching, type LiveObservation, type LiveProbeReport } from './live-probe-report';


export interface LiveProbeOptions {
  /** Clock for the date in the scratch list's name (default Date.now). */
  now?: () => number;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
  /**
   * The mark that makes the scratch list's name unique (default: 6 random letters and digits); after a lost answer
   * the probe finds its list by that name, so only a list carrying the mark is ever deleted.
   */
  mark?: string;
  /** Language of what is written into Dida (default zh). */
  locale?: ProbeLocaleId;
}

/** A well-formed id that names nothing, and one that is malformed. */
const NO_SUCH_ID = '000000000000000000000000';
const MALFORMED_ID = 'not-a-valid-id';

/** Whether a failed write may still have happened: anything but a 4xx answer (a refusal) may have. */
function mayHaveHappened(error: unknown): boolean {
  return !(isDidaError(error) && error.status !== undefined && error.status >= 400 && error.status < 500);
}

/**
 * Creates a scratch list (its name dated and carrying a random mark), creates, updates, comments, completes and
 * deletes a few tasks in it, and reports each live behaviour as an observation next to what the simulator does by
 * default. Only the scratch list and the tasks it creates are written; reading the inbox as a list is the one read
 * outside it. When the answer to the list's create is lost the list is looked for by its name (the mark makes it the
 * probe's own) and, found, used. Everything it created is removed in the end, also after a failed step; when the
 * list's id is unknown or its delete failed, the lists are read again and every list of that name is deleted, and
 * whatever is still there (or cannot be known) is listed in `cleanup.leftBehind` with `cleanup.ok` false.
 * Never throws for a Dida failure: a step that fails is reported in `failures` and its observation is missing.
 */
export async function runLiveProbe(gateway: DidaGateway, options: LiveProbeOptions = {}): Promise<LiveProbeReport> {
  const text = PROBE_TEXT[options.locale ?? 'zh'];
  const log = options.log ?? (() => undefined);
  const stamp = new Date((options.now ?? Date.now)()).toISOString().slice(0, 16).replace('T', ' ');
  const mark = options.mark ?? randomMark();
  const report: LiveProbeReport = {
    listName: text.listName(stamp, mark),
    gateway: gateway.kind,
    observations: [],
    failures: [],
    cleanup: { ok: true, leftBehind: [] },
    allMatch: false,
    matchingVariants: [],
  };
  const created: string[] = [];
  const observe = (id: ProbeCheckId, observed: string, detail?: string) => {
    const simulatorDefault = expectedObservation(id);
    const observation: LiveObservation = { id, what: PROBE_CHECKS[id], observed, simulatorDefault, matches: observed === simulatorDefault };
    if (detail) observation.detail = detail;
    report.observations.push(observation);
    log(`${observation.matches ? 'same as the simulator' : 'DIFFERENT'}: ${observation.what}: ${observed}`);
  };
  const step = async (name: string, body: () => Promise<void>): Promise<void> => {
    try {
      await body();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      report.failures.push({ step: name, message });
      log(`step "${name}" failed: ${message}`);
    }
  };

  let listId: string | undefined;
  /** The list may exist although its id is not known (its create failed in a way that may have made it). */
  let mayExist = false;
  try {
    await step('create the scratch list', async () => {
      try {
        listId = (await gateway.createProject({ name: report.listName })).id;
      } catch (error) {
        if (!mayHaveHappened(error)) throw error;
        mayExist = true;
        // Lists that cannot be read leave the id unknown: the clean-up looks again, or says the list may be left.
        const found = await findOwnLists(gateway, report.listName).catch(() => undefined);
        if (found?.length !== 1) throw error;
        listId = found[0]!.id;
        log(`the answer to the scratch list's create was lost; found the list by its name`);
      }
      report.listId = listId;
      log(`created the scratch list "${report.listName}"`);
    });
    if (listId === undefined) return finish(report);
    const pid = listId;
    const newTask = async (input: Omit<Parameters<DidaGateway['createTask']>[0], 'projectId'>): Promise<Task> => {
      const task = await gateway.createTask({ ...input, projectId: pid });
      created.push(task.id);
      return task;
    };

    await step('update a task', async () => {
      const task = await newTask({ title: text.taskTitle(1), content: text.taskBody, desc: text.taskNotes, tags: [PROBE_TAG], items: [{ title: text.itemTitle(1) }, { title: text.itemTitle(2) }] });
      const before = await gateway.getTask(pid, task.id);
      await gateway.updateTask({ id: task.id, projectId: pid, title: before.title, priority: 1 });
      const after = await gateway.getTask(pid, task.id);
      const lost = lostFields(before, after);
      observe('partial-update', after.priority !== 1 ? 'not applied' : lost.length === 0 ? 'all kept' : `lost: ${lost.join(', ')}`);

      await gateway.updateTask({ id: task.id, projectId: pid, title: after.title, items: after.items ?? [] });
      const resent = await gateway.getTask(pid, task.id);
      const oldIds = new Set((after.items ?? []).map((i) => i.id));
      const keptIds = (resent.items ?? []).filter((i) => oldIds.has(i.id)).length;
      observe('item-ids-on-update', keptIds === 0 ? 'rewritten' : keptIds === oldIds.size ? 'kept' : 'partly rewritten');

      await gateway.updateTask({ id: task.id, projectId: pid, priority: 3 });
      observe('update-without-title', (await gateway.getTask(pid, task.id)).priority === 3 ? 'apply' : 'ignore');

      await gateway.completeTask(pid, task.id);
      const done = await gateway.getTask(pid, task.id);
      observe('completed-task-read', done.status === 2 ? 'readable' : `status ${done.status}`);
      if (gateway.kind === 'cli') {
        observe('status-on-update', 'not testable', 'the dida CLI cannot send status');
      } else {
        await gateway.updateTask({ id: task.id, projectId: pid, title: done.title, status: 0 });
        const reopened = await gateway.getTask(pid, task.id);
        observe('status-on-update', reopened.status === 0 ? 'honour' : 'ignore', reopened.status === 0 ? `completedTime after re-opening: ${reopened.completedTime ?? 'cleared'}` : undefined);
      }
    });

    await step('repeat rule without dates', async () => {
      const task = await newTask({ title: text.taskTitle(2), repeatFlag: 'RRULE:FREQ=DAILY;INTERVAL=1' });
      const read = await gateway.getTask(pid, task.id);
      observe('repeat-without-dates', typeof read.repeatFlag === 'string' && read.repeatFlag !== '' ? 'kept' : 'dropped');
    });

    await step('comments', async () => {
      const task = await newTask({ title: text.taskTitle(3) });
      const ids: string[] = [];
      for (let n = 1; n <= 3; n++) ids.push((await gateway.addComment(pid, task.id, text.comment(n))).id);
      if (!gateway.readRawComments) {
        observe('comment-order', 'not testable', 'this gateway cannot show the list as Dida sent it');
        return;
      }
      const raw = await gateway.readRawComments(pid, task.id);
      const list = Array.isArray(raw) ? (raw as Array<Record<string, unknown>>) : [];
      const positions = ids.map((id) => list.findIndex((c) => c.id === id));
      observe('comment-order', order(positions), `${list.length} comments listed`);
      const author = list.find((c) => c.id === ids[0])?.userId;
      observe('comment-author-id', author === undefined || author === null ? 'missing' : typeof author);
      if (gateway.kind === 'cli') {
        observe('comment-paging', 'not testable', 'the dida CLI has no paging options');
      } else {
        const page = await gateway.readRawComments(pid, task.id, { offset: 1, limit: 1 });
        const size = Array.isArray(page) ? page.length : -1;
        observe('comment-paging', size === 1 ? 'honoured' : size === list.length ? 'ignored' : `other (${size} comments)`);
      }
    });

    await step('sortOrder on create', async () => {
      const sent = newMarker((options.now ?? Date.now)());
      const task = await newTask({ title: text.taskTitle(5), sortOrder: sent });
      const read = (await gateway.getTask(pid, task.id)).sortOrder;
      const listed = (await gateway.getProjectData(pid)).tasks.find((t) => t.id === task.id)?.sortOrder;
      const kept = read === sent && listed === sent;
      observe('create-sort-order', kept ? 'kept' : 'not kept', kept ? undefined : `sent ${sent}, read back ${String(read)}, listed ${String(listed)}`);
    });

    await step('deleted task', async () => {
      const task = await newTask({ title: text.taskTitle(4) });
      await gateway.deleteTask(pid, task.id);
      observe('deleted-task-read', await deletedRead(gateway, pid, task.id));
    });

    await step('error answers', async () => {
      const unknown = await failureOf(gateway.getTask(pid, NO_SUCH_ID));
      observe('unknown-task-answer', describeFailure(unknown));
      observe('error-id', hasErrorId(unknown) ? 'present' : 'absent', isDidaError(unknown) ? unknown.bodyExcerpt : undefined);
      observe('malformed-id-answer', describeFailure(await failureOf(gateway.getTask(pid, MALFORMED_ID))));
      const inbox = await failureOf(gateway.getProject('inbox'));
      observe('inbox-as-project', inbox === undefined ? 'readable' : isDidaError(inbox) && inbox.code === 'not_found' ? 'refused' : describeFailure(inbox));
    });
  } finally {
    await cleanUp(gateway, { listId, mayExist }, created, report, log);
  }
  return finish(report);
}

function finish(report: LiveProbeReport): LiveProbeReport {
  report.allMatch = report.failures.length === 0 && report.observations.every((o) => o.matches);
  report.matchingVariants = report.failures.length === 0 ? variantsMatching(report.observations) : [];
  return report;
}

/** Six random lower-case letters and digits. */
function randomMark(): string {
  return [...randomBytes(6)].map((b) => 'abcdefghijklmnopqrstuvwxyz0123456789'[b % 36]).join('');
}

/** The lists named exactly `name` (the scratch list's name, made unique by its mark). */
async function findOwnLists(gateway: DidaGateway, name: string): Promise<Project[]> {
  return (await gateway.listProjects()).filter((p) => p.name === name);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Deletes the tasks the probe created and then its list; a task already gone counts as removed. When the list's id is
 * unknown or its delete failed, the lists named like the scratch list are read and deleted, at most twice, and read
 * once more: what is still there, or cannot be read, is left behind.
 */
async function cleanUp(gateway: DidaGateway, list: { listId: string | undefined; mayExist: boolean }, created: string[], report: LiveProbeReport, log: (line: string) => void): Promise<void> {
  const { listId } = list;
  if (listId === undefined && !list.mayExist) return;
  const stuck: string[] = [];
  const errors = new Map<string, string>();
  if (listId !== undefined) {
    for (const taskId of created) {
      try {
        await gateway.deleteTask(listId, taskId);
      } catch (error) {
        if (!(isDidaError(error) && error.code === 'not_found')) stuck.push(taskId);
      }
    }
    try {
      await gateway.deleteProject(listId);
      log(`removed the scratch list "${report.listName}"`);
      return;
    } catch (error) {
      errors.set(listId, messageOf(error));
    }
  }
  for (let look = 1; ; look++) {
    let found: Project[];
    try {
      found = await findOwnLists(gateway, report.listName);
    } catch (error) {
      report.cleanup.ok = false;
      const why = [...errors.values()][0];
      report.cleanup.leftBehind.push(`the list "${report.listName}" may be left (${why ? `${why}; ` : ''}the lists could not be read: ${messageOf(error)})`);
      return;
    }
    if (found.length === 0) {
      if (listId !== undefined || look > 1) log(`removed the scratch list "${report.listName}"`);
      return;
    }
    if (look === 3) {
      report.cleanup.ok = false;
      for (const left of found) report.cleanup.leftBehind.push(`the list "${report.listName}" (${left.id}): ${errors.get(left.id) ?? 'still there after its delete'}`);
      if (found.some((left) => left.id === listId)) for (const taskId of stuck) report.cleanup.leftBehind.push(`task ${taskId} in that list`);
      return;
    }
    for (const left of found) {
      try {
        await gateway.deleteProject(left.id);
      } catch (error) {
        errors.set(left.id, messageOf(error));
      }
    }
  }
}

/** Fields a partial update must keep: items (titles and ids), tags, content, desc. */
function lostFields(before: Task, after: Task): string[] {
  const lost: string[] = [];
  const titles = (t: Task) => JSON.stringify((t.items ?? []).map((i) => i.title));
  const ids = (t: Task) => JSON.stringify((t.items ?? []).map((i) => i.id));
  if (titles(before) !== titles(after)) lost.push('items');
  else if (ids(before) !== ids(after)) lost.push('item ids');
  if (JSON.stringify(before.tags ?? []) !== JSON.stringify(after.tags ?? [])) lost.push('tags');
  if ((before.content ?? '') !== (after.content ?? '')) lost.push('content');
  if ((before.desc ?? '') !== (after.desc ?? '')) lost.push('desc');
  return lost;
}

function order(positions: number[]): string {
  if (positions.some((p) => p < 0)) return 'incomplete';
  const ascending = positions.every((p, i) => i === 0 || p > positions[i - 1]!);
  const descending = positions.every((p, i) => i === 0 || p < positions[i - 1]!);
  return ascending ? 'oldest-first' : descending ? 'newest-first' : 'other';
}

/** How a deleted task answers, in the simulator's `deletedTaskRead` terms (a 5xx by its status). */
async function deletedRead(gateway: DidaGateway, projectId: string, taskId: string): Promise<string> {
  const failure = await failureOf(gateway.getTask(projectId, taskId));
  if (failure === undefined) return 'readable without a deleted mark';
  if (isDidaError(failure) && failure.code === 'not_found') {
    if (failure.notFoundSignal === 'deleted_flag') return 'readable';
    if (failure.notFoundSignal === 'empty_answer') return 'empty200';
    if (failure.status !== undefined) return String(failure.status);
  }
  return describeFailure(failure);
}

async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
    return undefined;
  } catch (error) {
    return error;
  }
}

function describeFailure(failure: unknown): string {
  if (failure === undefined) return 'answered with data';
  if (isDidaError(failure)) return failure.status !== undefined ? String(failure.status) : failure.code;
  return failure instanceof Error ? failure.message : String(failure);
}

function hasErrorId(failure: unknown): boolean {
  if (!isDidaError(failure) || !failure.bodyExcerpt) return false;
  try {
    const body = JSON.parse(failure.bodyExcerpt) as unknown;
    return typeof body === 'object' && body !== null && 'errorId' in body;
  } catch {
    return /"errorId"\s*:/.test(failure.bodyExcerpt);
  }
}
