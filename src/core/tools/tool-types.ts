// Host-neutral tool definitions: a parameter schema in the shape dsh tools use, validation, and {code, message} results.
import type { ConfigPort } from '../bindings';
import type { OutcomeCode } from '../engine-context';
import type { WorkEngine } from '../work-engine';
import type { DidaGateway } from '../../dida/dida-gateway';

/** A parameter node (same vocabulary as dsh's ParameterSchemaSpec). */
export interface ParameterSpec {
  type: 'string' | 'number' | 'integer' | 'boolean' | 'array' | 'object';
  required?: boolean;
  description?: string;
  enum?: readonly string[];
  items?: ParameterSpec;
  properties?: Record<string, ParameterSpec>;
  additionalProperties?: boolean;
}

export interface ToolResult {
  code: OutcomeCode;
  /** One sentence for the model: what happened, or what is wrong and what to do next. */
  message: string;
  /** Model-facing detail (step list, queue), already fenced where it holds Dida text. */
  detail?: string;
  /** Structured data for hosts (panel mirroring); never shown to people. */
  data?: unknown;
}

/** What a tool call may use. The adapter builds it per call. */
export interface ToolContext {
  sessionId: string;
  cwd: string;
  /** True while the current turn holds the queue grant (trigger phrase or poller). */
  queueGranted: boolean;
  config: ConfigPort;
  /** The engine (created lazily; throws DidaError `auth` when no token is configured). */
  engine(): Promise<WorkEngine>;
  gateway(): Promise<DidaGateway>;
  /** Where the token comes from, for status (never the token). */
  tokenSource(): Promise<{ source: string; file?: string } | undefined>;
  signal?: AbortSignal;
}

export interface ToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, ParameterSpec>;
  /** Validates raw arguments; returns an error result or undefined when they are fine. */
  execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult>;
}

/** Renders a result as the text the model reads. */
export function renderResult(result: ToolResult): string {
  const head = result.code === 'ok' ? result.message : `[${result.code}] ${result.message}`;
  return result.detail ? `${head}\n\n${result.detail}` : head;
}
