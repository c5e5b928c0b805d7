// Host-neutral tool definitions: a parameter schema in the shape dsh tools use, validation, and {code, message} results.
import type { ConfigPort } from '../queue/bindings';
import type { OutcomeCode } from '../work/engine-context';
import type { WorkEngine } from '../engine/work-engine';
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

/** Renders a result as the text the model reads, within the result budget (8,000 characters). */
export function renderResult(result: ToolResult): string {
  const head = result.code === 'ok' ? result.message : `[${result.code}] ${result.message}`;
  const text = result.detail ? `${head}\n\n${result.detail}` : head;
  return withinResultBudget(text);
}

const RESULT_BUDGET = 8000;

/** Cuts a result at the budget; a fence cut open is closed again so the rest never reads as ours. */
function withinResultBudget(text: string): string {
  if (text.length <= RESULT_BUDGET) return text;
  const marker = `\n… (${text.length} characters in all; the rest is left out — ask for less at a time)`;
  let cut = text.slice(0, RESULT_BUDGET - marker.length - 60);
  const open = /<<<DIDA_DATA label=[^\n]*? nonce=([0-9a-f]+)>>>/g;
  let last: RegExpExecArray | null = null;
  for (let m = open.exec(cut); m; m = open.exec(cut)) last = m;
  if (last && !cut.includes(`<<<END_DIDA_DATA nonce=${last[1]}>>>`, last.index)) cut = `${cut.replace(/<<<[^\n]*$/, '')}\n<<<END_DIDA_DATA nonce=${last[1]}>>>`;
  return `${cut}${marker}`;
}
