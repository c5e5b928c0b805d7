// What the work engine is given (gateway, state, locks, clock, locale) and the domain outcome type it returns.
import type { DidaGateway } from '../../dida/dida-gateway';
import type { Locale } from '../text/locale';
import type { Pricing, SpendLimits } from '../usage/usage-schema';
import type { RepoEvidencePort } from '../evidence/repo-evidence';
import type { EngineState } from './work-state';

export interface StatePort {
  read(): Promise<EngineState>;
  /** Read-modify-write under the state lock; `fn` may mutate its argument. */
  update(fn: (state: EngineState) => EngineState | void | Promise<EngineState | void>): Promise<EngineState>;
}

/** Handed to a locked function: `compromised` aborts when another process took the lock over (this one was paused). */
export interface HeldLock {
  compromised: AbortSignal;
  /** Whether this process still owns the lock (checked synchronously right before an irreversible write). */
  stillHeld?(): boolean;
}

export interface LockPort {
  /** Runs `fn` holding the cross-process lock `key` (not re-entrant). */
  withLock<T>(key: string, fn: (lock: HeldLock) => Promise<T>): Promise<T>;
}

export interface EngineDeps {
  gateway: DidaGateway;
  state: StatePort;
  locks: LockPort;
  now: () => number;
  locale: Locale;
  /** The account's time zone; read from Dida's preference when absent. */
  timeZone?: string;
  /** Shown in claim comments, e.g. the machine name. */
  hostLabel?: string;
  /** How long a claim without progress blocks other hosts (default 30 min). */
  claimLeaseMs?: number;
  /**
   * Progress comments wait this long (default 60 s) so a step's start and finish, or a burst of completions, become one
   * comment; settle, idle and the end of a one-shot run post them at once.
   */
  progressWindowMs?: number;
  /** Diagnostics (stderr in the adapters). */
  log?: (line: string) => void;
  /** Step id generator (tests pass a counter). */
  newStepId?: () => string;
  /**
   * The owner's whole comments that pause a running Work (config.yaml's, else the plugin row's; default
   * DEFAULT_STOP_PHRASES); an empty list turns stop comments off everywhere.
   */
  stopPhrases?: () => Promise<readonly string[]>;
  /** The spend guard's limits and the prices per model (config.yaml `limits`, `pricing`); defaults without them. */
  spendSettings?: () => Promise<{ limits: SpendLimits; pricing?: Pricing }>;
  /** Reads what the agent committed in the session's repository (git); without it steps carry no evidence. */
  evidence?: RepoEvidencePort;
  /** Whether a process of this machine still runs (default: asked of the system); tests with made-up pids pass their own. */
  isAlive?: (pid: number) => boolean;
}

/** The closed set of domain outcome codes the tools and adapters see. */
export const OUTCOME_CODES = [
  'ok',
  'not_bound',
  'list_missing',
  'list_closed',
  'list_ambiguous',
  'list_near_miss',
  'work_not_found',
  'no_current_work',
  'step_not_found',
  'step_ambiguous',
  'invalid_transition',
  'human_item_readonly',
  'duplicate_step',
  'invalid_text',
  'missing_resolution',
  'work_closed',
  'work_completed_remotely',
  'work_deleted_remotely',
  'not_settled',
  'waiting_for_human',
  'not_waiting',
  'draft',
  'keep_open',
  'queue_not_granted',
  'queue_empty',
  'claimed_elsewhere',
  'invalid_argument',
  'too_many_steps',
  'dida_unavailable',
] as const;
export type OutcomeCode = (typeof OUTCOME_CODES)[number];

/** A domain outcome that is not success: a code and one sentence naming the argument and the next action. */
export class WorkError extends Error {
  override readonly name = 'WorkError';
  /**
   * @param message for the model: never text from Dida (things are named by id).
   * @param forPeople the same sentence for a person in a terminal, where it may name things as they are called in Dida.
   */
  constructor(
    readonly code: Exclude<OutcomeCode, 'ok'>,
    message: string,
    readonly forPeople?: string,
  ) {
    super(message);
  }
}

export function isWorkError(value: unknown): value is WorkError {
  return value instanceof WorkError;
}
