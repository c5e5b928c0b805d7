// The engine's local state (Works, steps, acceptances, sessions): schema, defaults and small accessors.
import * as z from 'zod/mini';
import { WorkUsageSchema } from '../usage/usage-schema';

export const STEP_STATUSES = ['pending', 'in_progress', 'completed', 'skipped', 'deleted'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];
export const SETTLED: ReadonlySet<StepStatus> = new Set(['completed', 'skipped']);

const Origin = z.enum(['human', 'agent']);
export type Origin = z.infer<typeof Origin>;

const RepoWebSchema = z.object({ kind: z.enum(['github', 'gitlab', 'gitee']), base: z.string() });

/** What the agent committed while a step was in progress (read with git when the step completed). */
export const StepEvidenceSchema = z.object({
  commits: z.array(z.object({ sha: z.string(), subject: z.string(), files: z.array(z.string()), moreFiles: z._default(z.number(), 0) })),
  moreCommits: z._default(z.number(), 0),
  branch: z.optional(z.string()),
  web: z.optional(RepoWebSchema),
});

export const StepRecordSchema = z.looseObject({
  /** Stable id shown to the model (never written to Dida). */
  id: z.string(),
  /** Current Dida checklist item id (Dida rewrites these on every update); absent for Direct steps. */
  itemId: z.optional(z.string()),
  title: z.string(),
  status: z.enum(STEP_STATUSES),
  origin: Origin,
  /** What changed and how it was verified (completed) or why it was not done (skipped). */
  resolution: z.optional(z.string()),
  /** True once the "started" progress comment was posted for the current in_progress spell. */
  startedNoted: z.optional(z.boolean()),
  /**
   * The step's checklist item as Dida last showed it (after the last read or write): the base of the three-way merge.
   * A difference between Dida and this is the person's edit; a difference between the step and this is ours to write.
   */
  seen: z.optional(z.object({ title: z.string(), done: z.boolean() })),
  /** The repository's HEAD when the step last went in progress (local only; the base of its commit list). */
  head: z.optional(z.string()),
  evidence: z.optional(StepEvidenceSchema),
  updatedAt: z.number(),
});
export type StepRecord = z.infer<typeof StepRecordSchema>;

export const FinalizeSchema = z.looseObject({
  acceptanceTaskId: z.optional(z.string()),
  anchorCommentId: z.optional(z.string()),
  summaryPosted: z.optional(z.boolean()),
  itemsTicked: z.optional(z.boolean()),
  workCompleted: z.optional(z.boolean()),
  lastError: z.optional(z.string()),
  attempts: z._default(z.number(), 0),
});
export type FinalizeRecord = z.infer<typeof FinalizeSchema>;

export const WaitingSchema = z.looseObject({
  reason: z.string(),
  previousPriority: z.number(),
  reminderTaskId: z.optional(z.string()),
  /** Set once priority 0 and the reason comment are written. */
  applied: z._default(z.boolean(), false),
  since: z.number(),
  /** The person paused the Work from Dida (its priority set to none, or a stop comment); absent when the agent asked. */
  pausedBy: z.optional(z.enum(['priority', 'comment'])),
  /** The comment queued on the Work when it started waiting: the person's answers on the Work are those written after it. */
  comment: z.optional(z.string()),
  /** That comment as Dida shows it, once found: its id and `createdTime` (ms). */
  anchorCommentId: z.optional(z.string()),
  anchorAt: z.optional(z.number()),
  /**
   * Why it waits, for `dida-todo status`: the agent asked, automatic continuation gave up, or a model failure no retry
   * fixes (`auth`, `quota`, `invalid_request`, `limit`, `unknown`); absent in records of older versions (the agent asked).
   */
  cause: z.optional(z.string()),
  /** The person answered (or set the priority back) during this wait; set before the resume is written. */
  answered: z.optional(z.boolean()),
});
export type WaitingRecord = z.infer<typeof WaitingSchema>;

/**
 * A question or approval dsh itself put to the person (its `ask_user_question` tool, a plan review, an approval of a
 * tool call) while the session held this Work, shown in Dida until it is answered at the desk or from the phone
 * (core/phone/desk-asks). Removed once answered, withdrawn or timed out.
 */
export const DeskAskSchema = z.object({
  /** Local id (never shown). */
  id: z.string(),
  /** The number the person names it by when several wait at once ("#2 允许"). */
  number: z.number(),
  kind: z.enum(['question', 'plan', 'approval']),
  /** The session whose tool call waits, and its process and machine (an ask of a process that is gone is withdrawn). */
  sessionId: z.string(),
  pid: z.optional(z.number()),
  host: z.optional(z.string()),
  since: z.number(),
  /** What is asked, as dsh gave it (the model's text). */
  questions: z.optional(
    z.array(
      z.object({
        id: z.string(),
        question: z.string(),
        header: z.optional(z.string()),
        detail: z.optional(z.string()),
        options: z._default(z.array(z.object({ label: z.string(), description: z.optional(z.string()) })), []),
        multiSelect: z.optional(z.boolean()),
        /** A plan review: the option label that approves the plan (every other one declines it). */
        approve: z.optional(z.string()),
      }),
    ),
  ),
  /** What an approval is for: the tool, the command or path it would act on, why it is needed. */
  approval: z.optional(z.object({ tool: z.string(), subject: z.optional(z.string()), justification: z.optional(z.string()) })),
  /** The 🙋 reminder filed for it. */
  reminderTaskId: z.optional(z.string()),
  /** The comment posted on the Work for it: the person's answers on the Work are the comments written after it. */
  comment: z.string(),
  anchorCommentId: z.optional(z.string()),
  anchorAt: z.optional(z.number()),
});
export type DeskAsk = z.infer<typeof DeskAskSchema>;

/** A background sync's last look at the comments of a review todo or a waiting Work (see core/phone/comment-looks). */
export const CommentLookSchema = z.object({
  /** When the first look was (the schedule slows with the time since). */
  first: z.number(),
  /** When the last look was. */
  at: z.number(),
  /** The etags (or modified times) of the tasks carrying the comments at that look: a change makes the next look due. */
  version: z.optional(z.string()),
  /** What was looked at (the review todo, or the wait by its start): a new review or a new wait starts afresh. */
  scope: z.optional(z.string()),
});
export type CommentLook = z.infer<typeof CommentLookSchema>;

/** A failed background write of a Work's steps (core/work/background-writer). */
export const WriteFailureSchema = z.object({
  /** Dida refused it (a 4xx other than 408, 425, 429): retried only after the next change, not on a timer. */
  refused: z.boolean(),
  message: z.string(),
  at: z.number(),
  /** Failures in a row; a transient one is retried after a delay that grows with them. */
  failures: z._default(z.number(), 1),
  /** Not written by a background flush before this time (ms), after a transient failure. */
  retryAt: z.optional(z.number()),
});
export type WriteFailure = z.infer<typeof WriteFailureSchema>;

/**
 * What the model is told at the session's next tool call about a Work whose step changes were written in the
 * background: the person's edits the write's read merged in (step ids), a write that failed, the task closed in Dida.
 */
export const WorkNewsSchema = z.looseObject({
  imported: z._default(z.array(z.string()), []),
  completedByHuman: z._default(z.array(z.string()), []),
  reopenedByHuman: z._default(z.array(z.string()), []),
  removed: z._default(z.array(z.string()), []),
  humanEdited: z.optional(z.boolean()),
  failure: z.optional(z.object({ refused: z.boolean(), message: z.string() })),
  closed: z.optional(z.enum(['completed_by_human', 'deleted'])),
});
export type WorkNews = z.infer<typeof WorkNewsSchema>;

export const WorkRecordSchema = z.looseObject({
  taskId: z.string(),
  projectId: z.string(),
  /** Occurrence key ('' for non-recurring tasks). */
  occurrence: z._default(z.string(), ''),
  title: z.string(),
  origin: Origin,
  /** Checklist work keeps its steps as Dida items; direct work keeps them only here. */
  mode: z.enum(['checklist', 'direct']),
  priority: z.number(),
  /** Lifecycle: open → finalizing → accepting (acceptance todo filed) → closed. */
  phase: z.enum(['open', 'finalizing', 'accepting', 'closed']),
  steps: z.array(StepRecordSchema),
  nextStepNumber: z._default(z.number(), 1),
  keepOpen: z._default(z.boolean(), false),
  /** Fingerprint of the human-owned text (title, content, desc) last seen, to detect human edits. */
  humanFingerprint: z.string(),
  /** The human's body text as first seen, kept so it can be restored into desc exactly once. */
  body: z._default(z.string(), ''),
  finalize: z.optional(FinalizeSchema),
  waiting: z.optional(WaitingSchema),
  /** Acceptance todo of this Work once filed. */
  acceptance: z.optional(
    z.object({
      taskId: z.string(),
      ownerUserId: z.optional(z.string()),
      anchorCommentId: z.optional(z.string()),
      handledCommentIds: z._default(z.array(z.string()), []),
      reworkTaskId: z.optional(z.string()),
      closed: z._default(z.boolean(), false),
    }),
  ),
  /**
   * A background sync's last look at the comments the person may write on it while it is in review or waits for them
   * (core/phone/comment-looks); dropped when it leaves both. Not a change of the Work: `rev` and `updatedAt` stay.
   */
  commentLook: z.optional(CommentLookSchema),
  /** The last claim decision seen for this occurrence (which host executes it). */
  claim: z.optional(z.object({ holder: z.string(), at: z.number() })),
  /** Set (ms) right before a claim comment is posted, until its decision is recorded: a retry looks for that post first. */
  claimPosting: z.optional(z.number()),
  /** For rework Works: the Work they rework. */
  reworkOf: z.optional(z.string()),
  /** How the Work ended, once closed. */
  outcome: z.optional(z.enum(['accepted', 'rework', 'completed_by_human', 'deleted', 'superseded'])),
  createdAt: z.number(),
  updatedAt: z.number(),
  /** Dida's version of the task (etag, else modifiedTime) when it was last folded in; an unchanged task is skipped. */
  seenVersion: z.optional(z.string()),
  /** Bumped on every local change; sync skips Works changed while it was reading Dida. */
  rev: z._default(z.number(), 0),
  /** 1 for the first round; a person re-opening the task in Dida after review starts the next round. */
  round: z.optional(z.number()),
  /** Rebuilt from Dida after the state file was lost (a review whose Work record was gone). */
  rebuilt: z.optional(z.boolean()),
  /** The person re-opened the Work in Dida: it is not sent for review again until its steps change in this round. */
  reopened: z.optional(z.boolean()),
  /** The person's text still to be appended to the task's description (late review feedback), written with the items. */
  pendingDesc: z.optional(z.string()),
  /** The repository's HEAD at the Work's last step event: the base for a step completed without going in progress. */
  repoHead: z.optional(z.string()),
  /** The directory of the session that last changed the Work's steps (named in the review todo). */
  dir: z.optional(z.string()),
  /**
   * The person resumed the Work from Dida and the model was not told yet: their answer (the owner's comments, whole;
   * '' when they only set the priority back), handed to the model once and then removed.
   */
  pendingAnswer: z.optional(
    z.object({
      text: z.string(),
      commentIds: z._default(z.array(z.string()), []),
      at: z.number(),
      /** What the agent had asked (its wait_for_human reason); absent for a Work the person paused. */
      question: z.optional(z.string()),
      /** The Work had been paused by the person (rather than waiting for an answer the agent asked for). */
      paused: z.optional(z.boolean()),
    }),
  ),
  /** The task's Dida tags as last seen (route tags decide which bound directory may run it, and get its answers). */
  tags: z.optional(z.array(z.string())),
  /** The owner's comments already taken as answers or stop requests (never taken again, across restarts). */
  phoneHandled: z.optional(z.array(z.string())),
  /** dsh's own questions and approvals waiting for the person while a session holds the Work (see DeskAskSchema). */
  asks: z.optional(z.array(DeskAskSchema)),
  /** The number the next ask gets. */
  nextAskNumber: z.optional(z.number()),
  /** What the person was told this Work loses on the running dsh (`continuation`, `phone`): each said once. */
  hostGaps: z.optional(z.array(z.string())),
  /**
   * Since when the record holds step changes a tool call recorded and the background writer has not written into
   * Dida yet (core/work/background-writer); absent when Dida shows them (or they wait for a write that was cut short).
   */
  pendingSince: z.optional(z.number()),
  /** The background writer's last failure, until a write succeeds: refused (a 4xx) or not yet (429, 5xx, no answer). */
  writeFailure: z.optional(WriteFailureSchema),
  /** What the background writer found or met since the model last heard of this Work: told at its next call, then dropped. */
  news: z.optional(WorkNewsSchema),
});
export type WorkRecord = z.infer<typeof WorkRecordSchema>;

export const SessionRecordSchema = z.looseObject({
  currentWork: z.optional(z.string()),
  touched: z._default(z.array(z.string()), []),
  /** Automatic continuation attempts since the last human message. */
  autoAttempts: z._default(z.number(), 0),
  lastAutoAt: z.optional(z.number()),
  /** Set while a turn is running, to recover crash-interrupted turns on restart. */
  turnOpenSince: z.optional(z.number()),
  updatedAt: z._default(z.number(), 0),
});
export type SessionRecord = z.infer<typeof SessionRecordSchema>;

/**
 * A create that was sent but whose task is not recorded yet. `marker` is the `sortOrder` sent with it: after a lost
 * answer or a crash the bundle finds its own task by marker and title, never by title alone.
 */
export const PendingCreateSchema = z.looseObject({
  kind: z.enum(['work', 'acceptance', 'reminder', 'rework']),
  projectId: z.string(),
  title: z.string(),
  marker: z.number(),
  startedAt: z.number(),
  /** The Work the created task belongs to (acceptance, reminder, rework). */
  forKey: z.optional(z.string()),
});
export type PendingCreate = z.infer<typeof PendingCreateSchema>;

/** A progress comment waiting to be posted (written with the intent, so it is posted exactly once). */
export const OutboxEntrySchema = z.object({
  id: z.string(),
  projectId: z.string(),
  taskId: z.string(),
  workKey: z.string(),
  text: z.string(),
  createdAt: z.number(),
  /** A post whose answer was lost: check the task's comments before posting again. */
  uncertain: z._default(z.boolean(), false),
  /** Posts Dida refused (a 4xx that will never succeed): the comment is dropped after MAX_POST_ATTEMPTS. */
  attempts: z._default(z.number(), 0),
  /** Transient failures (429, 5xx, timeout, network): they never drop the comment, they delay its next post. */
  failures: z.optional(z.number()),
  /** Not posted by the background flush before this time (ms), after a transient failure. */
  retryAt: z.optional(z.number()),
  /** Progress of one step (coalesced: a start followed by the finish is only the finish); `note` is any other comment. */
  kind: z._default(z.enum(['started', 'completed', 'skipped', 'note']), 'note'),
  stepId: z.optional(z.string()),
  /** The comment text this entry went out in (a coalesced post), to find it after a lost answer. */
  sentAs: z.optional(z.string()),
});
export type OutboxEntry = z.infer<typeof OutboxEntrySchema>;

/** The top-level parts of the state other than the Works, each stored (and logged) whole. */
export const ENGINE_STATE_SECTIONS = {
  /** Tasks this bundle created that are not Works (acceptance todos, reminders): never adopted. */
  ownTasks: z._default(z.record(z.string(), z.enum(['acceptance', 'reminder'])), {}),
  /** Owner identity per list, learned from the answer to the bundle's own comments. */
  owners: z._default(z.record(z.string(), z.string()), {}),
  sessions: z._default(z.record(z.string(), SessionRecordSchema), {}),
  pendingCreates: z._default(z.record(z.string(), PendingCreateSchema), {}),
  outbox: z._default(z.array(OutboxEntrySchema), []),
  /** The bundle's own todos that stopped applying but could not be removed yet (a review todo filed too early): sync removes them. */
  strayTasks: z._default(
    z.array(
      z.object({
        projectId: z.string(),
        taskId: z.string(),
        since: z.number(),
        /** The Work it was filed for: the person's comments on it go there. */
        forKey: z.optional(z.string()),
        /** Those comments, once carried over (never twice). */
        carried: z.optional(z.array(z.string())),
      }),
    ),
    [],
  ),
  /**
   * When this machine last saw a live claim of another machine on each list (ms, by list id): while others work the
   * same list, a claim looks at the comments before it posts, and takes Works of one priority in an order of its own.
   */
  peers: z._default(z.record(z.string(), z.number()), {}),
  /** What was rebuilt from Dida after the state file was lost, for `dida-todo status`. */
  rebuilt: z._default(z.array(z.object({ at: z.number(), what: z.string() })), []),
};

export const EngineStateSchema = z.object({
  works: z._default(z.record(z.string(), WorkRecordSchema), {}),
  /**
   * What each Work cost on this machine (by Work key), kept apart from the Work records so recording a model answer
   * never races a Work's own writes; logged entry by entry like the Works.
   */
  usage: z._default(z.record(z.string(), WorkUsageSchema), {}),
  ...ENGINE_STATE_SECTIONS,
});
export type EngineState = z.infer<typeof EngineStateSchema>;
/** 2: a snapshot plus a change log (`state.json.log`); version 1 files (one whole file) are read and kept going. */
export const ENGINE_STATE_VERSION = 2;

export function emptyEngineState(): EngineState {
  return { works: {}, ownTasks: {}, owners: {}, sessions: {}, pendingCreates: {}, outbox: [], usage: {}, rebuilt: [], strayTasks: [], peers: {} };
}

/** Key of a Work in state: the task id, plus `#occurrence` for recurring tasks. */
export function workKey(taskId: string, occurrence: string): string {
  return occurrence ? `${taskId}#${occurrence}` : taskId;
}

export function visibleSteps(work: WorkRecord): StepRecord[] {
  return work.steps.filter((s) => s.status !== 'deleted');
}

export function isSettled(work: WorkRecord): boolean {
  const steps = visibleSteps(work);
  return steps.length > 0 && steps.every((s) => SETTLED.has(s.status));
}
