// What the demo seeds in Dida, what the person says, and what the scripted model answers.
import { text, toolCall, type Behaviour } from '../../local-dsh/scripted-model';

/** The simulator list the person "wrote" in Dida. */
export const DEMO_LIST_NAME = 'dida-todo 演示';

export const DEMO_WORK = {
  title: '整理发布说明',
  /** Dida priority 3 = medium. */
  priority: 3,
  content: '给 0.2 版本写一份发布说明：列出用户能感受到的变化，语气简洁。',
  items: ['收集变更', '写草稿'],
} as const;

export const DEMO_DRAFT = {
  title: '以后再说',
  /** Priority none: a draft the agent leaves alone. */
  priority: 0,
} as const;

/** What the person types in dsh: the trigger phrase that lets the agent take the top Work of the queue. */
export const FIRST_PROMPT = '检查todo';

/** The second, short session: only look at the list again (the bundle syncs it and files the rework). */
export const SECOND_PROMPT = '刷新一下 Dida 清单（todo_work refresh），告诉我有没有新的返工任务；先不要开始处理。';

/** The person's rework request, a comment on the acceptance todo. */
export const REWORK_COMMENT = '草稿里补上升级注意事项';

export const RESOLUTIONS = {
  collect: '整理出 12 条变更',
  draft: '草稿已写好，放在 docs/release-notes.md',
} as const;

export const FIRST_FINAL_TEXT = '「整理发布说明」的两个步骤都完成了，已提交验收。';
export const SECOND_FINAL_TEXT = '有一个新的返工任务：「返工：整理发布说明」（草稿里补上升级注意事项）。按你的要求，先不开始处理。';

/** A short pause before each answer so the progress is visible as it happens. */
const PACE_MS = 600;

/** Session 1: take the top Work, start the first step, finish both with results, answer. */
export function firstSessionScript(paceMs = PACE_MS): Behaviour[] {
  const [collect, draft] = DEMO_WORK.items;
  return [
    toolCall('todo_work', { action: 'next' }, { delayMs: paceMs }),
    toolCall('todo', { action: 'update', updates: [{ step: collect, status: 'in_progress' }] }, { delayMs: paceMs }),
    toolCall(
      'todo',
      {
        action: 'update',
        updates: [
          { step: collect, status: 'completed', resolution: RESOLUTIONS.collect },
          { step: draft, status: 'completed', resolution: RESOLUTIONS.draft },
        ],
      },
      { delayMs: paceMs * 2 },
    ),
    text(FIRST_FINAL_TEXT),
  ];
}

/** Session 2: refresh the list (sync files the rework Work), list the queue, answer. */
export function secondSessionScript(paceMs = PACE_MS): Behaviour[] {
  return [
    toolCall('todo_work', { action: 'refresh' }, { delayMs: paceMs }),
    toolCall('todo_work', { action: 'list' }, { delayMs: paceMs }),
    text(SECOND_FINAL_TEXT),
  ];
}
