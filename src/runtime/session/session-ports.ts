// The runtime's ports to a session: the agent, its session and messages, and the turn hooks' arguments as the runtime
// receives them. They have the shape of a dsh agent (the one host today); another host would wrap its sessions into them.

export interface SessionHeader {
  id?: string;
  cwd?: string;
  parentSession?: string;
  origin?: string;
  delegationDepth?: number;
}

export interface SessionEvent {
  type: string;
  seq?: number;
  time?: number;
  data?: any;
}

export interface HostSession {
  id: string;
  header: SessionHeader;
  /** The durable events so far (read only: the approval's tool call is found here by its call id). */
  events?: readonly SessionEvent[];
  /** Appends an event; `surfaceOp: 'append'` makes a message part of the history every later request is built from. */
  append(type: string, data: unknown, options?: { surfaceOp?: 'append' }): unknown;
}

export interface UserMessageLike {
  id: string;
  role: 'user';
  content: ReadonlyArray<{ type: 'text'; text: string }>;
  source: { kind: string; [key: string]: unknown };
}

/** A per-agent filter over the globally registered tools (dsh's `agent.ctx.tools.restrict`). */
export interface ToolRestriction {
  allow?: readonly string[];
  deny?: readonly string[];
}

export interface HostAgent {
  id: string;
  status: 'idle' | 'running';
  session: HostSession;
  inbox?: { nextTurn?: readonly UserMessageLike[]; nextStep?: readonly UserMessageLike[] };
  /** The agent-scoped context: registrations through it apply to this agent only. */
  ctx?: { tools?: { restrict(filter: ToolRestriction): () => void } };
  followup(message: UserMessageLike): void;
  inject(message: UserMessageLike): void;
  runMaintenance?<T>(job: (signal: AbortSignal) => Promise<T>): Promise<T>;
  /** Aborts the running turn (the loop ends it `aborted` with this cause); `keepInbox` keeps queued messages. */
  cancel?(cause: AgentCancelCause, options?: { keepInbox?: boolean }): void;
}

/** Why an agent's turn was cancelled (dsh's `AgentCancelCause`); a plugin cancels with `hook` and its reason. */
export type AgentCancelCause = { kind: 'user' } | { kind: 'parent' } | { kind: 'hook'; reason: string } | { kind: 'disposed' };

export interface LlmFailureLike {
  code: string;
  message?: string;
  status?: number;
  providerRetryAfterMs?: number;
}

/** The `agent/request-error` waterfall's arguments (after dsh's own retries). */
export interface RequestErrorArgs {
  agent: HostAgent;
  failure: LlmFailureLike;
  signal?: AbortSignal;
}

/** The `agent/pre-step` waterfall's arguments and its `enter` decision. */
export interface PreStepArgs {
  agent: HostAgent;
  turn: number;
  step?: number;
  messages?: readonly UserMessageLike[];
  signal?: AbortSignal;
}
export type PreStepDecision = { kind: 'enter'; messages: readonly unknown[]; [key: string]: unknown } | { kind: string; [key: string]: unknown };

export interface ToolExecution {
  callId?: string;
  name?: string;
  agent?: HostAgent;
  signal?: AbortSignal;
}


export interface GoalView {
  id: string;
  revision: number;
  phase: 'active' | 'paused' | 'blocked' | 'complete';
  activation?: 'armed' | 'disarmed';
  roundsStarted?: number;
  maxGoalRounds?: number;
}

/** One question of dsh's question service (`@deepseek-ai/dsh-user-questions`). */
export interface QuestionItem {
  id: string;
  question: string;
  detail?: string;
  header?: string;
  options?: Array<{ label: string; description?: string }>;
  multiSelect?: boolean;
  /** A plan review (`exit_plan_mode`): `approve` names the label that approves. */
  intent?: { kind: string; approve?: string };
}

/** `ctx.userQuestions.ask`'s request and answer. */
export interface QuestionRequest {
  questions: QuestionItem[];
  agent?: HostAgent;
  signal?: AbortSignal;
}
export interface QuestionAnswer {
  answers: Array<{ id: string; selected: string[]; custom?: string }>;
}

/** One `approval/request` waterfall argument (`@deepseek-ai/dsh-user-approval`): no tool arguments, only the call id. */
export interface ApprovalRequest {
  agent?: HostAgent;
  toolName: string;
  callId?: string;
  reason?: string;
  signal?: AbortSignal;
}
export type ApprovalOutcome = 'allowed-once' | 'rejected' | 'cancelled' | 'unavailable';

/** What the runtime asks of its host beyond one session (dsh answers from its context's services). */
export interface HostPort {
  /** A one-shot run (a headless run with a task): the host ends after it, no later turn comes. */
  oneShot(): boolean;
  /** The session's goal, when the host runs goals and the session has one (undefined for an answer it cannot read). */
  goal(agent: HostAgent): GoalView | undefined;
  /** Re-arms a goal a restart disarmed; false when the host cannot (the runtime then sends a follow-up of its own). */
  resumeGoal(agent: HostAgent, goal: GoalView): boolean;
  /** The live agent of session `id`, if the host runs one. */
  agent(id: string): HostAgent | undefined;
  /**
   * Loads the persisted session `id` and runs an agent on it; undefined when this host cannot resume sessions. It rejects
   * with HostNotReady while the host is still starting (worth trying again), with anything else when it is final.
   */
  resume(id: string): Promise<HostAgent> | undefined;
}

/** The host is still starting and cannot do this yet (a resume before its agent factory exists). */
export class HostNotReady extends Error {
  override readonly name = 'HostNotReady';
}
