// A review todo whose record was lost with the state file, rebuilt from Dida so the person's accept or rework still works.
import type { Task } from '../../dida/types';
import { getLocale } from '../text/locale';
import type { EngineDeps } from '../work/engine-context';

const ALL_LOCALES = [getLocale('zh'), getLocale('en')];

/**
 * An open review todo of this bundle that no record knows (the state file was lost): a record in phase `accepting` is
 * rebuilt from Dida — the title from the todo's title, the owner from the anchor comment — so the person's accept or
 * rework still works. Returns what was rebuilt, for `dida-todo status`.
 */
export async function rebuildReview(deps: EngineDeps, task: Task): Promise<string | undefined> {
  const title = reviewedTitle(task.title);
  if (title === undefined) {
    await deps.state.update((state) => {
      state.ownTasks[task.id] ??= 'reminder';
    });
    return undefined;
  }
  const comments = await deps.gateway.listComments(task.projectId, task.id);
  const anchorTexts = new Set(ALL_LOCALES.map((l) => l.t('dida.acceptance.anchor')));
  const anchor = comments.find((c) => anchorTexts.has(c.title));
  const now = deps.now();
  const what = `review todo "${title}"`;
  await deps.state.update((state) => {
    if (state.ownTasks[task.id]) return;
    const owner = anchor?.userId ?? state.owners[task.projectId];
    state.ownTasks[task.id] = 'acceptance';
    state.works[task.id] = {
      taskId: task.id,
      projectId: task.projectId,
      occurrence: '',
      title,
      origin: 'human',
      mode: 'direct',
      priority: task.priority,
      phase: 'accepting',
      steps: [],
      nextStepNumber: 1,
      keepOpen: false,
      humanFingerprint: '',
      body: '',
      acceptance: { taskId: task.id, ...(owner ? { ownerUserId: owner } : {}), ...(anchor ? { anchorCommentId: anchor.id } : {}), handledCommentIds: [], closed: false },
      createdAt: now,
      updatedAt: now,
      rev: 1,
      rebuilt: true,
    };
    if (anchor?.userId) state.owners[task.projectId] ??= anchor.userId;
    state.rebuilt.push({ at: now, what });
    if (state.rebuilt.length > 50) state.rebuilt.splice(0, state.rebuilt.length - 50);
  });
  return what;
}

/** The Work title inside a review todo's title (any locale), or undefined for other bundle tasks. */
function reviewedTitle(title: string): string | undefined {
  for (const locale of ALL_LOCALES) {
    const [before, after] = locale.t('dida.acceptance.title').split('{title}') as [string, string];
    if (title.startsWith(before) && title.endsWith(after ?? '')) return title.slice(before.length, title.length - (after ?? '').length);
  }
  return undefined;
}
