// What the live self-test writes into Dida (list, task and comment texts), per locale, and how it names each check.

export type ProbeLocaleId = 'zh' | 'en';

export interface ProbeText {
  /**
   * The scratch list's name: says it is a self-test, when it ran, and that it may be deleted; `mark` makes it unique
   * (the probe finds its own list by this name after a lost answer).
   */
  listName(stamp: string, mark: string): string;
  taskTitle(n: number): string;
  taskBody: string;
  taskNotes: string;
  itemTitle(n: number): string;
  comment(n: number): string;
}

export const PROBE_TEXT: Record<ProbeLocaleId, ProbeText> = {
  zh: {
    listName: (stamp, mark) => `dida-todo 自检 ${stamp} ${mark}（可删除）`,
    taskTitle: (n) => `自检任务 ${n}`,
    taskBody: '自检用的正文，自检结束后会删除。',
    taskNotes: '自检用的备注。',
    itemTitle: (n) => `自检子项 ${n}`,
    comment: (n) => `自检评论 ${n}`,
  },
  en: {
    listName: (stamp, mark) => `dida-todo self-test ${stamp} ${mark} (safe to delete)`,
    taskTitle: (n) => `Self-test task ${n}`,
    taskBody: 'Body text for the self-test; removed when the self-test ends.',
    taskNotes: 'Notes for the self-test.',
    itemTitle: (n) => `Self-test item ${n}`,
    comment: (n) => `Self-test comment ${n}`,
  },
};

/** The tag the self-test puts on its tasks (Dida tags are lower case). */
export const PROBE_TAG = 'dida-todo-selftest';

/** Every behaviour the self-test reports, with the plain-language question it answers (English, for the CLI). */
export const PROBE_CHECKS = {
  'partial-update': 'An update that leaves fields out keeps them (checklist items and their ids, tags, body, notes)',
  'item-ids-on-update': 'Checklist item ids after an update that sends the items back unchanged',
  'update-without-title': 'An update without a title is applied',
  'status-on-update': 'status in an update is honoured (0 re-opens a completed task)',
  'completed-task-read': 'A completed task can still be read by id',
  'repeat-without-dates': 'A repeat rule on a task without dates',
  'comment-order': 'Order of the comment list',
  'comment-author-id': 'Type of a comment author id (userId)',
  'comment-paging': 'The comment list takes ?offset=&limit=',
  'create-sort-order':
    "A create keeps the sortOrder it sends (dida-todo finds its own tasks by it after a lost answer; where it is not kept, such a task is made again, a duplicate, and a person's task is never taken)",
  'deleted-task-read': 'How a deleted task reads back',
  'unknown-task-answer': 'Status of a read of a task id that never existed',
  'malformed-id-answer': 'Status of a read with a malformed task id',
  'error-id': 'Error bodies carry an errorId',
  'inbox-as-project': 'Reading the inbox as a list',
} as const;

export type ProbeCheckId = keyof typeof PROBE_CHECKS;
