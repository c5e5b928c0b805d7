// The small structural slice of dsh's plugin API this bundle uses: the only file that spells out dsh shapes.
import { HostNotReady, type GoalView, type HostAgent, type HostPort, type HostSession, type QuestionAnswer, type QuestionRequest, type ToolExecution } from '../runtime/session/session-ports';

export interface HostToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  output: { schema: Record<string, unknown>; render(args: unknown, value: any): Array<{ type: 'text'; text: string }> };
  execute(args: any, exec: ToolExecution): Promise<unknown>;
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

/** `ctx.userQuestions` (one provider per context; its `ask` fails `NO_PROVIDER` without one). */
export interface UserQuestionsService {
  ask(request: QuestionRequest): Promise<QuestionAnswer>;
}

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

/** The runtime's host port over a dsh context: one-shot runs, goals, live agents and resumes. */
export function hostPortOf(ctx: HostContext): HostPort {
  return {
    oneShot: () => optionalServices.isOneShot(ctx),
    goal: (agent) => goalOf(ctx, agent),
    resumeGoal: (agent, goal) => {
      const goals = optionalServices.goals(ctx);
      if (typeof goals?.resume !== 'function') return false;
      goals.resume(agent, { id: goal.id, revision: goal.revision });
      return true;
    },
    agent: (id) => ctx.agents.get(id),
    resume: (id) => {
      // dsh's agents service reads its own context through `this`: call resume on the service, never detached.
      const agents = ctx.agents;
      if (!agents.resume) return undefined;
      const selection = optionalServices.defaultModel(ctx)?.currentSelection();
      return agents.resume({ resumeSessionId: id, ...(selection ? { agentOptions: { provider: selection.provider, model: selection.model } } : {}) }).then(
        (handle) => handle.agent,
        (error: unknown) => {
          // Until dsh registers its agent factory, resume rejects naming it: the host is still starting.
          const message = error instanceof Error ? error.message : String(error);
          throw /factory/i.test(message) ? new HostNotReady(message) : error;
        },
      );
    },
  };
}
