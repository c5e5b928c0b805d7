// The small structural slice of dsh's plugin API this bundle uses (the only file that spells out dsh shapes).

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
  append(type: string, data: unknown): unknown;
}

export interface UserMessageLike {
  id: string;
  role: 'user';
  content: ReadonlyArray<{ type: 'text'; text: string }>;
  source: { kind: string; [key: string]: unknown };
}

export interface HostAgent {
  id: string;
  status: 'idle' | 'running';
  session: HostSession;
  inbox?: { nextTurn?: readonly unknown[]; nextStep?: readonly unknown[] };
  followup(message: UserMessageLike): void;
  inject(message: UserMessageLike): void;
  runMaintenance?<T>(job: (signal: AbortSignal) => Promise<T>): Promise<T>;
}

export interface LlmFailureLike {
  code: string;
  message?: string;
  status?: number;
  providerRetryAfterMs?: number;
}

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

export interface HostContext {
  on(event: string, listener: (...args: any[]) => any): () => void;
  effect(fn: () => () => void | Promise<void>): unknown;
  get(name: string): any;
  tools: { register(def: HostToolDefinition): () => void };
  agents: { get(id: string): HostAgent | undefined; roots?(): HostAgent[] };
}
