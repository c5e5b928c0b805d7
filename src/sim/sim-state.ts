// The simulator's in-memory model of one Dida account: projects, tasks, comments, and every operation on them.
import { formatDidaDate, formatDidaDateMillis } from '../dida/dida-date';
import type { ChecklistItem, Project, Task } from '../dida/types';
import { SimComments } from './sim-comments';
import { projectFields } from './sim-project-fields';
import { loadStateFile, saveStateFile, type SimComment, type SimStateData, type StoredComment } from './sim-store';
import { buildItems, dropUndatedRepeat, kindFor, nextOccurrence, UPDATABLE_STATUSES, validateTaskBody, writableFields, type SimQuirks } from './sim-task-ops';
import { badRequest, clone, didaError, MAX_PAGE, newEtag, newId, notFound, SimEmptyAnswer, SORT_STEP, type JsonObject } from './sim-util';

export interface SimStateOptions {
  /** Undefined: the data file's user id, else DEFAULT_USER_ID. */
  userId?: number | undefined;
  timeZone: string;
  quirks: SimQuirks;
  now: () => number;
  dataFile?: string | undefined;
}

export const DEFAULT_USER_ID = 114433221100;


export class SimState {
  readonly userId: number;
  readonly timeZone: string;
  readonly quirks: SimQuirks;
  private readonly now: () => number;
  private readonly dataFile: string | undefined;
  private readonly projects = new Map<string, Project>();
  /** Insertion order = creation order, the tie-break when two tasks share a sortOrder. */
  private readonly tasks = new Map<string, Task>();
  /** Tasks deleted with `DELETE …` (they carry `deleted: 1`); their comments stay in `comments`. */
  private readonly trash = new Map<string, Task>();
  private readonly notes: SimComments;

  constructor(options: SimStateOptions) {
    this.timeZone = options.timeZone;
    this.quirks = options.quirks;
    this.now = options.now;
    this.dataFile = options.dataFile;
    this.notes = new SimComments(this.quirks, () => this.stampMillis(), () => this.persist());
    const loaded = options.dataFile ? loadStateFile(options.dataFile) : undefined;
    this.userId = options.userId ?? loaded?.userId ?? DEFAULT_USER_ID;
    if (loaded) {
      for (const p of loaded.projects) this.projects.set(p.id, p as Project);
      for (const t of loaded.tasks) this.tasks.set(t.id, t as Task);
      for (const t of loaded.deletedTasks ?? []) this.trash.set(t.id, t as Task);
      this.notes.load([...loaded.comments, ...loaded.deletedComments] as StoredComment[]);
    }
  }

  /** The account's inbox: a per-user project id (`inbox<userId>`), never listed by `GET /project`. */
  get inboxId(): string {
    return `inbox${this.userId}`;
  }

  /** Maps the literal `inbox` to the inbox id. */
  resolveProjectId(pid: string): string {
    return pid === 'inbox' ? this.inboxId : pid;
  }

  private stampMillis(): string {
    return formatDidaDateMillis(this.now());
  }

  private persist(): void {
    if (this.dataFile) saveStateFile(this.dataFile, this.snapshot());
  }

  snapshot(): SimStateData {
    return clone({
      version: 1,
      userId: this.userId,
      timeZone: this.timeZone,
      projects: [...this.projects.values()],
      tasks: [...this.tasks.values()],
      comments: this.notes.stored((tid) => !this.trash.has(tid)),
      deletedTasks: [...this.trash.values()],
      deletedComments: this.notes.stored((tid) => this.trash.has(tid)),
    });
  }

  // ---- projects -------------------------------------------------------------------------------------------

  /** A project that can hold tasks (the inbox included); throws 404 otherwise. */
  private projectOrInbox(pid: string): Project {
    const id = this.resolveProjectId(pid);
    if (id === this.inboxId) return { id, name: 'Inbox', sortOrder: 0, closed: false, viewMode: 'list', kind: 'TASK' };
    const project = this.projects.get(id);
    if (!project) throw notFound(`project ${pid} not found`, 'project_not_found');
    return project;
  }

  listProjects(): Project[] {
    return clone([...this.projects.values()].map((p) => ({ ...p, permission: 'write' })));
  }

  /** One page of `GET /project`; limit defaults to 200 and is capped at 200. */
  listProjectsPage(offset: number, limit: number): Project[] {
    const size = Math.min(Math.max(limit, 0), MAX_PAGE);
    return this.listProjects().slice(Math.max(offset, 0), Math.max(offset, 0) + size);
  }

  /** `GET /project/{pid}`: the inbox is not a project you can read this way (live most likely refuses it: 404). */
  getProject(pid: string): Project {
    if (this.resolveProjectId(pid) === this.inboxId) throw notFound(`project ${pid} not found`, 'project_not_found');
    return clone(this.projectOrInbox(pid));
  }

  createProject(body: JsonObject, options: { id?: string | undefined; closed?: boolean | undefined } = {}): Project {
    if (typeof body.name !== 'string' || body.name.trim() === '') throw badRequest('name is required');
    const fields = projectFields(body);
    const project: Project = { id: options.id ?? newId(), name: body.name, sortOrder: 0, closed: options.closed ?? false, viewMode: 'list', kind: 'TASK', ...fields };
    if (this.projects.has(project.id)) throw badRequest(`project ${project.id} already exists`);
    this.projects.set(project.id, project);
    this.persist();
    return clone(project);
  }

  updateProject(pid: string, body: JsonObject): Project {
    const project = this.projects.get(pid);
    if (!project) throw notFound(`project ${pid} not found`, 'project_not_found');
    if ('name' in body && (typeof body.name !== 'string' || body.name.trim() === '')) throw badRequest('name must be a non-empty string');
    Object.assign(project, projectFields(body));
    if (typeof body.name === 'string') project.name = body.name;
    if (typeof body.closed === 'boolean') project.closed = body.closed;
    this.persist();
    return clone(project);
  }

  /** Deletes the project with its tasks (deleted ones included) and their comments. */
  deleteProject(pid: string): void {
    if (!this.projects.delete(pid)) throw notFound(`project ${pid} not found`, 'project_not_found');
    for (const map of [this.tasks, this.trash]) {
      for (const task of [...map.values()]) {
        if (task.projectId === pid) {
          map.delete(task.id);
          this.notes.forget(task.id);
        }
      }
    }
    this.persist();
  }

  closeProject(pid: string): void {
    const project = this.projects.get(pid);
    if (!project) throw notFound(`project ${pid} not found`, 'project_not_found');
    project.closed = true;
    this.persist();
  }

  /** `GET /project/{pid}/data`: open tasks only, in Dida order, no columns. Not capped. */
  projectData(pid: string): { project: Project; tasks: Task[]; columns: [] } {
    const project = this.projectOrInbox(pid);
    return { project: clone(project), tasks: this.listTasks(project.id, false), columns: [] };
  }

  // ---- tasks ----------------------------------------------------------------------------------------------

  /** Tasks sorted by sortOrder ascending (creation order breaks ties); open ones only unless asked. */
  listTasks(projectId: string | undefined, includeCompleted: boolean): Task[] {
    const pid = projectId === undefined ? undefined : this.resolveProjectId(projectId);
    const list = [...this.tasks.values()].filter((t) => (pid === undefined || t.projectId === pid) && (includeCompleted || t.status === 0));
    list.sort((a, b) => (a.sortOrder ?? 0) - (b.sortOrder ?? 0));
    return clone(list);
  }

  peekTask(tid: string): Task | undefined {
    const task = this.tasks.get(tid);
    return task ? clone(task) : undefined;
  }

  /** A task deleted with `DELETE …`, as kept in the trash (with `deleted: 1`). */
  peekDeletedTask(tid: string): Task | undefined {
    const task = this.trash.get(tid);
    return task ? clone(task) : undefined;
  }

  /** A live task of the project; 404 otherwise (deleted tasks included: this is the library's view). */
  private taskIn(pid: string, tid: string): Task {
    const id = this.resolveProjectId(pid);
    const task = this.tasks.get(tid);
    if (!task || task.projectId !== id) throw notFound(`task ${tid} not found in project ${pid}`, 'task_not_found');
    return task;
  }

  /**
   * The task an API call on `(pid, tid)` addresses. A deleted task answers by the `deletedTaskRead` quirk: 404,
   * a 500 naming the missing task, an empty 200 (SimEmptyAnswer), or (`readable`) the deleted task itself.
   */
  private apiTask(pid: string, tid: string): { task: Task; deleted: boolean } {
    const id = this.resolveProjectId(pid);
    const deleted = this.trash.get(tid);
    if (!deleted || deleted.projectId !== id) return { task: this.taskIn(pid, tid), deleted: false };
    switch (this.quirks.deletedTaskRead) {
      case 'readable':
        return { task: deleted, deleted: true };
      case 'empty200':
        throw new SimEmptyAnswer();
      case '500':
        throw didaError(500, 'task_not_found', `Task not found: ${tid}`);
      case '404':
        throw notFound(`task ${tid} not found in project ${pid}`, 'task_not_found');
      default: {
        const never: never = this.quirks.deletedTaskRead;
        throw new Error(`unknown deletedTaskRead ${String(never)}`);
      }
    }
  }

  /** `GET /project/{pid}/task/{tid}`. */
  getTask(pid: string, tid: string): Task {
    return clone(this.apiTask(pid, tid).task);
  }

  private nextSortOrder(projectId: string): number {
    let min = 0;
    for (const t of this.tasks.values()) if (t.projectId === projectId && typeof t.sortOrder === 'number' && t.sortOrder < min) min = t.sortOrder;
    return (Math.floor(min / SORT_STEP) - 1) * SORT_STEP;
  }

  /**
   * `POST /task`. `status` in the body is ignored (tasks start open); seeding passes `seedStatus` and may
   * target a closed project.
   */
  createTask(body: JsonObject, seed: { status?: number | undefined } = {}): Task {
    if (typeof body.title !== 'string' || body.title === '') throw badRequest('title is required');
    if (typeof body.projectId !== 'string' || body.projectId === '') throw badRequest('projectId is required');
    validateTaskBody(body);
    const project = this.projectOrInbox(body.projectId);
    if (project.closed && seed.status === undefined) throw notFound(`project ${body.projectId} is closed`, 'project_closed');
    const fields = writableFields(body);
    // Seeding (a test's own fixture) always keeps the sortOrder it asks for.
    if (this.quirks.sortOrderOnCreate === 'assign' && seed.status === undefined) delete fields.sortOrder;
    const stamp = this.stampMillis();
    const task: Task = {
      id: newId(),
      projectId: project.id,
      sortOrder: this.nextSortOrder(project.id),
      isAllDay: false,
      priority: 0,
      ...fields,
      title: body.title,
      status: 0,
      kind: kindFor(body.items),
      etag: newEtag(),
      createdTime: stamp,
      modifiedTime: stamp,
    };
    if (task.priority === null) task.priority = 0;
    if (typeof task.sortOrder !== 'number') task.sortOrder = this.nextSortOrder(project.id);
    if (typeof task.timeZone !== 'string') task.timeZone = this.timeZone;
    if (Array.isArray(body.items)) task.items = buildItems(body.items, [], false);
    else delete task.items;
    if (seed.status !== undefined && seed.status !== 0) {
      task.status = seed.status;
      task.completedTime = formatDidaDate(this.now());
    }
    dropUndatedRepeat(task);
    this.tasks.set(task.id, task);
    this.persist();
    return clone(task);
  }

  /**
   * `POST /task/{tid}`: shallow merge of the keys present. Server-owned fields in the body are ignored, and so is
   * `status` unless the `statusOnUpdate` quirk is `honour` (then 0 re-opens, keeping completedTime, and 2 or -1
   * closes). With `updateWithoutTitle: 'ignore'` a body without `title` changes nothing. A deleted task answers
   * by the `deletedTaskRead` quirk; `readable` applies the update to the deleted task, which stays deleted.
   */
  updateTask(tid: string, body: JsonObject): Task {
    if (body.id !== tid) throw badRequest(`body id must equal the task id ${tid}`);
    if (!this.tasks.has(tid) && !this.trash.has(tid)) throw notFound(`task ${tid} not found`, 'task_not_found');
    if (typeof body.projectId !== 'string' || body.projectId === '') throw badRequest('projectId is required');
    const { task, deleted } = this.apiTask(body.projectId, tid);
    if ('title' in body && typeof body.title !== 'string') throw badRequest('title must be a string');
    if (!('title' in body) && this.quirks.updateWithoutTitle === 'ignore') return clone(task);
    validateTaskBody(body);
    const fields = writableFields(body);
    const previousKind = task.kind;
    const next: Task = { ...task, ...fields };
    if ('items' in fields) {
      next.items = buildItems(Array.isArray(fields.items) ? fields.items : [], (task.items ?? []) as ChecklistItem[], this.quirks.rewriteItemIds);
    }
    if (next.priority === null) next.priority = 0;
    next.kind = kindFor(next.items, previousKind);
    if (this.quirks.clearContentOnChecklist && previousKind === 'TEXT' && next.kind === 'CHECKLIST') next.content = '';
    if (this.quirks.statusOnUpdate === 'honour' && UPDATABLE_STATUSES.has(body.status) && body.status !== task.status) {
      next.status = body.status as number;
      if (next.status !== 0) next.completedTime = formatDidaDate(this.now());
    }
    dropUndatedRepeat(next);
    next.etag = newEtag();
    next.modifiedTime = this.stampMillis();
    (deleted ? this.trash : this.tasks).set(tid, next);
    this.persist();
    return clone(next);
  }

  /**
   * `…/complete`. Already completed: no-op. A repeating task (RRULE DAILY/WEEKLY/MONTHLY/YEARLY with a date)
   * stays open with its dates moved to the next occurrence, and a completed copy (new id) records this one.
   */
  completeTask(pid: string, tid: string): void {
    const { task, deleted } = this.apiTask(pid, tid);
    if (task.status === 2) return;
    if (deleted) {
      // A deleted task is completed where it lies; it never rolls over to a next occurrence.
      this.trash.set(tid, { ...task, status: 2, completedTime: formatDidaDate(this.now()), etag: newEtag(), modifiedTime: this.stampMillis() });
      this.persist();
      return;
    }
    const completedTime = formatDidaDate(this.now());
    const next = nextOccurrence(task);
    if (next) {
      const done: Task = { ...clone(task), id: newId(), status: 2, completedTime, etag: newEtag(), modifiedTime: this.stampMillis() };
      this.tasks.set(done.id, done);
      Object.assign(task, next);
      if (Array.isArray(task.items)) task.items = task.items.map((item) => ({ ...item, status: 0, completedTime: null }));
    } else {
      task.status = 2;
      task.completedTime = completedTime;
    }
    task.etag = newEtag();
    task.modifiedTime = this.stampMillis();
    this.persist();
  }

  /**
   * `DELETE …/task/{tid}`: the task moves to the trash (out of `/data` and the library's task views) with its
   * comments. Deleting a deleted task answers by the `deletedTaskRead` quirk (`readable`: a no-op 200).
   */
  deleteTask(pid: string, tid: string): void {
    const { task, deleted } = this.apiTask(pid, tid);
    if (deleted) return;
    this.tasks.delete(task.id);
    this.trash.set(task.id, { ...task, deleted: 1, etag: newEtag(), modifiedTime: this.stampMillis() });
    this.persist();
  }

  /** A person editing the task in the Dida app: shallow merge of anything, new etag and modifiedTime. */
  editTask(tid: string, patch: JsonObject): Task {
    const task = this.tasks.get(tid);
    if (!task) throw notFound(`task ${tid} not found`, 'task_not_found');
    const next: Task = { ...task, ...clone(patch), id: tid };
    if (typeof next.projectId !== 'string') next.projectId = task.projectId;
    if (next.projectId !== task.projectId) this.projectOrInbox(next.projectId);
    if (Array.isArray(patch.items)) {
      next.items = (next.items ?? []).map((item, index) => ({
        ...item,
        id: typeof item.id === 'string' ? item.id : newId(),
        status: typeof item.status === 'number' ? item.status : 0,
        isAllDay: typeof item.isAllDay === 'boolean' ? item.isAllDay : false,
        sortOrder: typeof item.sortOrder === 'number' ? item.sortOrder : index * SORT_STEP,
      }));
    }
    if (!('kind' in patch)) next.kind = kindFor(next.items, task.kind);
    if (next.status !== 0 && task.status === 0 && !('completedTime' in patch)) next.completedTime = formatDidaDate(this.now());
    next.etag = newEtag();
    next.modifiedTime = this.stampMillis();
    this.tasks.set(tid, next);
    this.persist();
    return clone(next);
  }

  // ---- comments (kept by SimComments; a deleted task answers by the `deletedTaskRead` quirk) ------------------------

  /** `GET …/comments`: one page (see SimComments.page). */
  listComments(pid: string, tid: string, page: { offset?: number | undefined; limit?: number | undefined } = {}): SimComment[] {
    return this.notes.page(this.apiTask(pid, tid).task.id, page);
  }

  /** Every comment of a task (deleted or not) in creation order, not paged. */
  allComments(tid: string): SimComment[] {
    return this.notes.all(tid);
  }

  /** `POST …/comment`: a deleted task answers by `deletedTaskRead` (`readable`: the comment is added to it). */
  addApiComment(pid: string, tid: string, text: unknown): SimComment {
    return this.notes.add(this.apiTask(pid, tid).task, text, this.userId);
  }

  /** A comment written in the Dida app (any author); the task must exist and not be deleted. */
  addComment(pid: string, tid: string, text: unknown, userId: number = this.userId): SimComment {
    return this.notes.add(this.taskIn(pid, tid), text, userId);
  }

  deleteComment(pid: string, tid: string, cid: string): void {
    this.notes.remove(this.apiTask(pid, tid).task.id, cid);
  }
}
