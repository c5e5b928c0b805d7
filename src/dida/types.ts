// Wire shapes of the Dida365 Open API, validated with zod/mini; unknown fields are kept so writes preserve them.
import * as z from 'zod/mini';

const optionalString = z.optional(z.nullable(z.string()));
/** Dida dates stay raw strings so they round-trip byte-identical; `parseDidaDate` reads them. */
const didaDate = z.optional(z.nullable(z.string()));

export const ChecklistItemSchema = z.looseObject({
  id: z.optional(z.string()),
  title: z._default(z.string(), ''),
  status: z._default(z.number(), 0),
  completedTime: didaDate,
  isAllDay: z.optional(z.nullable(z.boolean())),
  sortOrder: z.optional(z.nullable(z.number())),
  startDate: didaDate,
  timeZone: optionalString,
});
export type ChecklistItem = z.infer<typeof ChecklistItemSchema>;

export const TaskSchema = z.looseObject({
  id: z.string(),
  projectId: z.string(),
  title: z._default(z.string(), ''),
  content: optionalString,
  desc: optionalString,
  isAllDay: z.optional(z.nullable(z.boolean())),
  startDate: didaDate,
  dueDate: didaDate,
  timeZone: optionalString,
  reminders: z.optional(z.nullable(z.array(z.string()))),
  repeatFlag: optionalString,
  priority: z._default(z.number(), 0),
  status: z._default(z.number(), 0),
  completedTime: didaDate,
  sortOrder: z.optional(z.nullable(z.number())),
  items: z.optional(z.nullable(z.array(ChecklistItemSchema))),
  tags: z.optional(z.nullable(z.array(z.string()))),
  kind: optionalString,
  etag: optionalString,
  createdTime: didaDate,
  modifiedTime: didaDate,
});
export type Task = z.infer<typeof TaskSchema>;

export const ProjectSchema = z.looseObject({
  id: z.string(),
  name: z._default(z.string(), ''),
  color: optionalString,
  sortOrder: z.optional(z.nullable(z.number())),
  closed: z.optional(z.nullable(z.boolean())),
  groupId: optionalString,
  viewMode: optionalString,
  permission: optionalString,
  kind: optionalString,
});
export type Project = z.infer<typeof ProjectSchema>;

export const ColumnSchema = z.looseObject({
  id: z.string(),
  projectId: z.optional(z.string()),
  name: z._default(z.string(), ''),
  sortOrder: z.optional(z.nullable(z.number())),
});

export const ProjectDataSchema = z.looseObject({
  project: z.optional(z.nullable(ProjectSchema)),
  tasks: z._default(z.nullable(z.array(TaskSchema)), []),
  columns: z._default(z.nullable(z.array(ColumnSchema)), []),
});
export interface ProjectData {
  project?: Project | null;
  tasks: Task[];
  columns: z.infer<typeof ColumnSchema>[];
}

export const CommentSchema = z.looseObject({
  id: z.string(),
  title: z._default(z.string(), ''),
  /** Dida sends an int64 number; compared as a string everywhere. */
  userId: z.optional(z.nullable(z.pipe(z.union([z.number(), z.string()]), z.transform((v) => String(v))))),
  createdTime: didaDate,
  modifiedTime: didaDate,
  replyCommentId: optionalString,
  replyUserId: z.optional(z.nullable(z.union([z.number(), z.string()]))),
});
export type Comment = z.infer<typeof CommentSchema>;

export const PreferenceSchema = z.looseObject({ timeZone: z._default(z.string(), 'UTC') });
export type Preference = z.infer<typeof PreferenceSchema>;

export const MemberSchema = z.looseObject({
  username: z._default(z.string(), ''),
  displayName: optionalString,
  self: z.optional(z.nullable(z.boolean())),
});
export type Member = z.infer<typeof MemberSchema>;

/** Priority values Dida accepts: 0 none (a draft for this bundle), 1 low, 3 medium, 5 high. */
export const PRIORITIES = [0, 1, 3, 5] as const;

/** Task status: 0 open, 2 completed, -1 abandoned. Checklist item status: 0 open, 1 (or 2) completed. */
export const ITEM_OPEN = 0;
export const ITEM_COMPLETED = 1;
export function isItemCompleted(item: Pick<ChecklistItem, 'status'>): boolean {
  return item.status === 1 || item.status === 2;
}

/** Whether a task read back from Dida is a deleted one (live Dida may still answer it, with `deleted` set). */
export function isDeletedTask(task: object): boolean {
  const flag = (task as { deleted?: unknown }).deleted;
  return flag !== undefined && flag !== null && flag !== false && flag !== 0 && flag !== '0' && flag !== '';
}

/** A checklist item to create: no id yet. */
export interface NewChecklistItem {
  title: string;
  status?: number;
  completedTime?: string | null;
  isAllDay?: boolean;
  sortOrder?: number;
  startDate?: string | null;
  timeZone?: string | null;
}

/** Fields accepted when creating a task. */
export interface NewTask {
  projectId: string;
  title: string;
  content?: string;
  desc?: string;
  isAllDay?: boolean;
  startDate?: string;
  dueDate?: string;
  timeZone?: string;
  reminders?: string[];
  repeatFlag?: string;
  priority?: number;
  sortOrder?: number;
  items?: NewChecklistItem[];
  tags?: string[];
}

/**
 * An update. Live Dida merges the fields present and keeps the ones left out (items and their ids included);
 * `items`, when present, replaces the whole checklist, and items without `id` are new. Some services ignore an
 * update without `title`, and `status` may be honoured (0 re-opens), so send only what changes, plus the title.
 */
export interface TaskUpdate {
  id: string;
  projectId: string;
  title?: string;
  items?: Array<ChecklistItem | NewChecklistItem> | null;
  /** Every other task field, sent back as read so nothing the bundle does not own is lost. */
  [field: string]: unknown;
}

export interface NewProject {
  name: string;
  color?: string;
  viewMode?: 'list' | 'kanban' | 'timeline';
  kind?: 'TASK' | 'NOTE';
}
