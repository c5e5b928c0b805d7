// The small structural slice of dsh's plugin API this bundle uses: the only file that spells out dsh shapes.

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

export interface HostToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  output: { schema: Record<string, unknown>; render(args: unknown, value: any): Array<{ type: 'text'; text: string }> };
  execute(args: any, exec: ToolExecution): Promise<unknown>;
}

export interface GoalView {
  id: string;
  revision: number;
  phase: 'active' | 'paused' | 'blocked' | 'complete';
  activation?: 'armed' | 'disarmed';
  roundsStarted?: number;
  maxGoalRounds?: number;
}

export interface GoalsService {
  get(agent: HostAgent): GoalView | undefined;
  resume(agent: HostAgent, ref: { id: string; revision: number }): unknown;
}

export interface SystemPromptService {
  section(section: { name: string; order: number; text: string | ((context: { agent?: HostAgent }) => string) }): () => void;
}

/** The model route a resumed agent runs with. */
export interface ModelSelection {
  provider: string;
  model: string;
}

/** `ctx.agentDefaultModel`: the default model selection for agents without one of their own. */
export interface DefaultModelService {
  currentSelection(): ModelSelection & { reasoningEffort?: unknown };
}

export interface AgentsService {
  get(id: string): HostAgent | undefined;
  roots?(): HostAgent[];
  /** Loads a persisted session and runs an agent on it (rejects while the agent factory is not registered yet). */
  resume?(options: { resumeSessionId: string; agentOptions?: ModelSelection }): Promise<{ agent: HostAgent }>;
}

/** One `/dida …` invocation (dsh's `CommandInvocation`): the agent whose UI received it and the text after the name. */
export interface SlashInvocation {
  agent: HostAgent;
  rawInput: string;
  signal: AbortSignal;
}

/** What a command answers (dsh's `CommandResult`): shown in the conversation as a command card, never sent to the model. */
export type SlashResult = { kind: 'success'; text?: string } | { kind: 'error'; text: string };

/** dsh's command registry (`ctx.commands`, `@deepseek-ai/dsh-commands`); only the web profile has an adapter that runs it. */
export interface CommandsService {
  register(definition: { name: string; description: string; input?: { hint: string }; handler: (invocation: SlashInvocation) => Promise<SlashResult> }): () => void;
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

/** `ctx.userQuestions` (one provider per context; its `ask` fails `NO_PROVIDER` without one). */
export interface UserQuestionsService {
  ask(request: QuestionRequest): Promise<QuestionAnswer>;
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

export interface HostContext {
  /** `prepend` puts the listener first (a waterfall listener then runs before those registered earlier). */
  on(event: string, listener: (...args: any[]) => any, prepend?: boolean): () => void;
  /** Runs `fn` in a child context once every named service exists (again after it is replaced). */
  inject?(deps: string[], fn: (ctx: HostContext) => void): unknown;
  effect(fn: () => () => void | Promise<void>): unknown;
  get(name: string): any;
  tools: { register(def: HostToolDefinition): () => void };
  agents: AgentsService;
}

/** `ctx.sessionProjections`: the `todos` key of a session's snapshot is what dsh web's task panel shows. */
export interface SessionProjectionsService {
  snapshot(session: HostSession): { values?: Record<string, unknown> };
}

/** dsh's durable session log files: `session.jsonl.zstd` on rc.8, `session.v4.jsonl.zstd` reported from 0.1.7, plain `.jsonl`. */
export const SESSION_LOG_FILE = /^session(\.v\d+)?\.jsonl(\.zstd)?$/;

/** Optional services, read with `ctx.get` (a profile may not have them). */
export const optionalServices = {
  goals: (ctx: HostContext) => ctx.get('goals') as GoalsService | undefined,
  sessionProjections: (ctx: HostContext) => ctx.get('sessionProjections') as SessionProjectionsService | undefined,
  systemPrompt: (ctx: HostContext) => ctx.get('systemPrompt') as SystemPromptService | undefined,
  defaultModel: (ctx: HostContext) => ctx.get('agentDefaultModel') as DefaultModelService | undefined,
  /** Present only in the one-shot headless profile (`dsh --profile headless "task"`). */
  isOneShot: (ctx: HostContext) => ctx.get('headlessStartup') !== undefined,
};

/**
 * The source kind this bundle's own messages carry (its `MessageSourceMap` entry, as dsh's own packages declare theirs:
 * `skill-catalog`, `agent-instructions`, `goal`). dsh 0.1.0-rc.8 accepts any non-empty kind; dsh from 0.1.7 is reported
 * to refuse the shared `plugin` kind and to migrate old `plugin` rows to `plugin:<name>` (decision 0121).
 */
export const OWN_SOURCE_KIND = 'dida-todo';
/** The shared kind older plugins use, with `plugin: 'dida-todo'` (kept for a dsh that refuses the bundle's own kind). */
export const SHARED_SOURCE_KIND = 'plugin';
/** The kind a newer dsh gives a migrated `{kind:'plugin', plugin:'dida-todo'}` row. */
export const MIGRATED_SOURCE_KIND = `plugin:${OWN_SOURCE_KIND}`;

/** Which kind this process sends: its own until the running dsh refuses it (see `sendOwnMessage`). */
const sourceChoice = { kind: OWN_SOURCE_KIND as string, listeners: [] as Array<() => void> };

/** The kind this process's messages carry now. */
export function ownSourceKind(): string {
  return sourceChoice.kind;
}

/** Calls `listener` once when the running dsh refuses the bundle's own kind (the seam report says so). */
export function onOwnKindRefused(listener: () => void): () => void {
  sourceChoice.listeners.push(listener);
  return () => void sourceChoice.listeners.splice(sourceChoice.listeners.indexOf(listener) >>> 0, 1);
}

/** Back to the bundle's own kind (a new dsh process; tests). */
export function resetOwnSourceKind(): void {
  sourceChoice.kind = OWN_SOURCE_KIND;
}

/** Whether a message source is this bundle's, in every shape it has had: its own kind, the shared kind, the migrated kind. */
export function isOwnSource(source: { kind?: unknown; plugin?: unknown } | null | undefined): boolean {
  const kind = source?.kind;
  return kind === OWN_SOURCE_KIND || kind === MIGRATED_SOURCE_KIND || (kind === SHARED_SOURCE_KIND && source?.plugin === OWN_SOURCE_KIND);
}

/** Whether a message source is a person's (dsh's `user` kind). */
export function isPersonSource(source: { kind?: unknown } | null | undefined): boolean {
  return source?.kind === 'user';
}

/** A user message as dsh's `createUserMessage` builds it, sent by this plugin (with the kind this process sends). */
export function pluginMessage(text: string, id: string, form: 'notice' | 'instructions' = 'notice'): UserMessageLike {
  return Object.freeze({
    id,
    role: 'user' as const,
    content: Object.freeze([Object.freeze({ type: 'text' as const, text })]),
    source: Object.freeze({ kind: sourceChoice.kind, plugin: OWN_SOURCE_KIND, form }),
  });
}

/** Whether an error says dsh refused a message for its source (its kind); anything else is no answer about the kind. */
function refusesSource(error: unknown): boolean {
  return /\bsource\b|\bkind\b/i.test(error instanceof Error ? error.message : String(error));
}

/**
 * Sends this bundle's message `text` with `send` (`agent.followup`, `agent.inject`, a session append) and returns it.
 * When the running dsh refuses the bundle's own kind (a synchronous error naming the source or its kind), the message
 * is sent once more with the shared `plugin` kind and the process keeps that kind; any other error is thrown.
 */
export function sendOwnMessage(send: (message: UserMessageLike) => unknown, text: string, id: string, form?: 'notice' | 'instructions'): UserMessageLike {
  const message = pluginMessage(text, id, form);
  try {
    send(message);
    return message;
  } catch (error) {
    if (sourceChoice.kind !== OWN_SOURCE_KIND || !refusesSource(error)) throw error;
    sourceChoice.kind = SHARED_SOURCE_KIND;
    for (const listener of [...sourceChoice.listeners]) listener();
  }
  const shared = pluginMessage(text, id, form);
  send(shared);
  return shared;
}

/** The agent's goal, or undefined when there is none or the goal service answers in a shape this bundle does not know. */
export function goalOf(ctx: HostContext, agent: HostAgent): GoalView | undefined {
  try {
    const view = optionalServices.goals(ctx)?.get(agent);
    return view && typeof view === 'object' ? view : undefined;
  } catch {
    // A goal service that throws for this agent (another shape, a disposed agent): the session has no goal here.
    return undefined;
  }
}

/** The text blocks of a message, joined. */
export function textOf(message: { content?: ReadonlyArray<{ type: string; text?: string }> } | undefined): string {
  return (message?.content ?? []).filter((b) => b.type === 'text').map((b) => b.text ?? '').join('');
}

/** Whether this dsh lets the bundle wake the idle agent with a follow-up (`agent.followup`). */
export function canWake(agent: HostAgent): boolean {
  return typeof agent.followup === 'function';
}

/** True when a person's message is waiting in the agent's inbox (it will start or steer the next step). */
export function personIsWaiting(agent: HostAgent): boolean {
  const pending = [...(agent.inbox?.nextTurn ?? []), ...(agent.inbox?.nextStep ?? [])];
  return pending.some((m) => isPersonSource(m?.source));
}
