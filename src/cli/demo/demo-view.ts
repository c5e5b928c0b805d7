// Reads what a person would see in Dida (over the same Open API the bundle uses) and watches a task while an agent works.
import type { DidaGateway } from '../../dida/dida-gateway';
import { isItemCompleted, type Comment, type Task } from '../../dida/types';

export type WatchEvent =
  | { kind: 'comment'; taskId: string; taskTitle: string; comment: Comment; atMs: number }
  | { kind: 'item'; taskId: string; taskTitle: string; item: string; done: boolean; atMs: number }
  | { kind: 'completed'; taskId: string; taskTitle: string; atMs: number }
  | { kind: 'task'; task: Task; atMs: number };

export interface DidaWatchOptions {
  gateway: DidaGateway;
  projectId: string;
  /** The task whose comments, items and completion are reported. */
  taskId: string;
  /** Task ids already known (not reported as new). */
  knownTaskIds: Iterable<string>;
  onEvent: (event: WatchEvent) => void;
  intervalMs?: number;
  now?: () => number;
}

/**
 * Polls Dida while an agent works: new comments on the watched task, items ticked, the task completed, new tasks
 * in the list. Read errors are ignored (the next poll tries again). `stop()` polls once more and reports the rest.
 */
export class DidaWatch {
  private readonly seenComments = new Set<string>();
  private readonly itemState = new Map<string, boolean>();
  private readonly knownTasks: Set<string>;
  private completed = false;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private primed = false;

  constructor(private readonly options: DidaWatchOptions) {
    this.knownTasks = new Set(options.knownTaskIds);
  }

  /** Records the current state as the baseline (nothing reported), then polls every intervalMs. */
  async start(): Promise<void> {
    await this.poll(false);
    this.primed = true;
    this.timer = setInterval(() => void this.tick(), this.options.intervalMs ?? 250);
  }

  private tick(): void {
    if (this.running) return;
    this.running = this.poll(true).finally(() => (this.running = undefined));
  }

  /** Stops polling after one last read. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
    await this.poll(this.primed);
  }

  private async poll(report: boolean): Promise<void> {
    const { gateway, projectId, taskId, onEvent } = this.options;
    const now = this.options.now ?? Date.now;
    let task: Task | undefined;
    let comments: Comment[] = [];
    let open: Task[] = [];
    try {
      [task, comments, open] = await Promise.all([
        gateway.getTask(projectId, taskId),
        gateway.listComments(projectId, taskId),
        gateway.getProjectData(projectId).then((d) => d.tasks),
      ]);
    } catch {
      return;
    }
    const at = now();
    const title = task?.title ?? '';
    for (const comment of [...comments].sort(byCreated)) {
      if (this.seenComments.has(comment.id)) continue;
      this.seenComments.add(comment.id);
      if (report) onEvent({ kind: 'comment', taskId, taskTitle: title, comment, atMs: at });
    }
    for (const item of task?.items ?? []) {
      const key = item.title;
      const done = isItemCompleted(item);
      const before = this.itemState.get(key);
      this.itemState.set(key, done);
      if (report && before !== undefined && before !== done) onEvent({ kind: 'item', taskId, taskTitle: title, item: item.title, done, atMs: at });
    }
    if (task?.status === 2 && !this.completed) {
      this.completed = true;
      if (report) onEvent({ kind: 'completed', taskId, taskTitle: title, atMs: at });
    }
    for (const t of open) {
      if (this.knownTasks.has(t.id)) continue;
      this.knownTasks.add(t.id);
      if (report) onEvent({ kind: 'task', task: t, atMs: at });
    }
  }
}

function byCreated(a: Comment, b: Comment): number {
  return String(a.createdTime ?? '').localeCompare(String(b.createdTime ?? ''));
}

/** Comments of a task, oldest first; [] when the task cannot be read. */
export async function commentsOf(gateway: DidaGateway, projectId: string, taskId: string): Promise<Comment[]> {
  try {
    return [...(await gateway.listComments(projectId, taskId))].sort(byCreated);
  } catch {
    return [];
  }
}

/** A task (open or completed), or undefined when it cannot be read. */
export async function taskOf(gateway: DidaGateway, projectId: string, taskId: string): Promise<Task | undefined> {
  try {
    return await gateway.getTask(projectId, taskId);
  } catch {
    return undefined;
  }
}
