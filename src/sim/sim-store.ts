// JSON-file persistence of the simulator state: validated load, atomic save (temp file + rename).
import fs from 'node:fs';
import path from 'node:path';
import * as z from 'zod/mini';
import { describeIssues } from '../common/schema-issues';
import type { Project, Task } from '../dida/types';

/** A comment as Dida sends it (`userId` is a JSON number), plus the task and project it belongs to. */
export interface SimComment {
  id: string;
  title: string;
  userId: number;
  createdTime: string;
  modifiedTime: string;
  [key: string]: unknown;
}
export interface StoredComment extends SimComment {
  taskId: string;
  projectId: string;
}

/** The whole simulator state, as saved to the data file and served by `GET /__sim/state`. */
export interface SimStateData {
  version: 1;
  userId: number;
  timeZone: string;
  projects: Project[];
  /** Every task that is not deleted (open, completed, abandoned), in creation order. */
  tasks: Task[];
  /** Every comment of those tasks, grouped by task, in creation order. */
  comments: StoredComment[];
  /** Tasks deleted with `DELETE …` (each carries `deleted: 1`), kept for the `deletedTaskRead` quirk. */
  deletedTasks: Task[];
  /** The comments of the deleted tasks. */
  deletedComments: StoredComment[];
}

const CommentFileSchema = z.looseObject({ id: z.string(), taskId: z.string(), projectId: z.string(), title: z.string(), userId: z.number() });
const TaskFileSchema = z.looseObject({ id: z.string(), projectId: z.string(), title: z.string() });

const StateFileSchema = z.object({
  version: z.literal(1),
  userId: z.optional(z.number()),
  timeZone: z.optional(z.string()),
  projects: z.array(z.looseObject({ id: z.string(), name: z.string() })),
  tasks: z.array(TaskFileSchema),
  comments: z._default(z.array(CommentFileSchema), []),
  deletedTasks: z._default(z.array(TaskFileSchema), []),
  deletedComments: z._default(z.array(CommentFileSchema), []),
});
export type LoadedState = z.infer<typeof StateFileSchema>;

/** Reads the data file; undefined when it does not exist. Throws an Error naming the file when it is unreadable. */
export function loadStateFile(file: string): LoadedState | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`dida simulator: cannot read data file ${file}: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`dida simulator: data file ${file} is not valid JSON (${(error as Error).message}); fix or remove it`);
  }
  const parsed = StateFileSchema.safeParse(json, { reportInput: true });
  if (!parsed.success) {
    throw new Error(`dida simulator: data file ${file} is not a simulator state file (${describeIssues(parsed.error.issues)}); fix or remove it`);
  }
  return parsed.data;
}

/** Writes the state atomically: a temp file in the same directory, then rename over the target. */
export function saveStateFile(file: string, data: SimStateData): void {
  const dir = path.dirname(file);
  fs.mkdirSync(dir, { recursive: true });
  const temp = path.join(dir, `.${path.basename(file)}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`);
  fs.writeFileSync(temp, `${JSON.stringify(data, null, 2)}\n`);
  try {
    fs.renameSync(temp, file);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
}
