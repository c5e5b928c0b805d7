// Registers the host-neutral tools with dsh: JSON Schema parameters, text rendering, per-call context.
import type { ParameterSpec, ToolContext, ToolDefinition, ToolResult } from '../core/tools';
import { renderResult } from '../core/tools/tool-types';
import { isDidaError } from '../dida/dida-error';
import { withRequestPriority } from '../dida/request-budget';
import type { HostToolDefinition } from './ports';
import type { ToolExecution } from '../runtime/session/session-ports';

/** Converts our parameter specs to the JSON Schema subset the dsh tool registry accepts. */
export function toJsonSchema(params: Record<string, ParameterSpec>): Record<string, unknown> {
  const node = (spec: ParameterSpec): Record<string, unknown> => {
    const out: Record<string, unknown> = { type: spec.type };
    if (spec.description) out.description = spec.description;
    if (spec.enum) out.enum = [...spec.enum];
    if (spec.items) out.items = node(spec.items);
    if (spec.properties) {
      out.properties = Object.fromEntries(Object.entries(spec.properties).map(([k, v]) => [k, node(v)]));
      const required = Object.entries(spec.properties).filter(([, v]) => v.required).map(([k]) => k);
      if (required.length) out.required = required;
    }
    if (spec.type === 'object') out.additionalProperties = spec.additionalProperties ?? false;
    return out;
  };
  const required = Object.entries(params).filter(([, v]) => v.required).map(([k]) => k);
  return {
    type: 'object',
    properties: Object.fromEntries(Object.entries(params).map(([k, v]) => [k, node(v)])),
    ...(required.length ? { required } : {}),
  };
}

/** Removes undefined values so the result is lossless JSON (dsh rejects anything else). */
function toJson(result: ToolResult): ToolResult {
  return JSON.parse(JSON.stringify(result)) as ToolResult;
}

/** When Dida gives no hint of how long to wait after a 429, the model is told to try again after this long. */
export const RATE_LIMIT_RETRY_HINT_MS = 30_000;

/**
 * The result of a tool call that Dida's rate limit (or this machine's request budget) stopped: nothing more was sent,
 * and the model is told when to call again. Undefined for every other failure.
 */
export function rateLimitedResult(error: unknown): ToolResult | undefined {
  if (!isDidaError(error) || error.code !== 'rate_limited') return undefined;
  const seconds = Math.max(1, Math.ceil((error.retryAfterMs ?? RATE_LIMIT_RETRY_HINT_MS) / 1000));
  return {
    code: 'dida_unavailable',
    message: `Dida is rate-limited on this machine right now, so this call did not finish. Call it again in ${seconds} seconds; a change it already recorded is carried out then.`,
  };
}

/** Runs after a tool call of an agent session, before its result is returned (so its effects precede the next step). */
export type AfterToolCall = (call: { tool: string; args: Record<string, unknown>; exec: ToolExecution; result: ToolResult }) => Promise<void> | void;

export function bridgeTool(
  tool: ToolDefinition,
  contextFor: (exec: ToolExecution) => ToolContext | ToolResult | undefined,
  after?: AfterToolCall,
): HostToolDefinition {
  return {
    name: tool.name,
    description: tool.description,
    parameters: toJsonSchema(tool.parameters),
    output: {
      schema: {},
      render: (_args, value: ToolResult) => [{ type: 'text', text: renderResult(value) }],
    },
    async execute(args, exec) {
      const ctx = contextFor(exec);
      if (!ctx) return toJson({ code: 'invalid_argument', message: `${tool.name} must be called by an agent session.` });
      if ('code' in ctx) return toJson(ctx);
      const input = (args ?? {}) as Record<string, unknown>;
      // Every Dida request of the call is one the model waits for: it goes before settle, comments and polling.
      let result: ToolResult;
      try {
        result = toJson(await withRequestPriority('foreground', () => tool.execute(input, ctx)));
      } catch (error) {
        const limited = rateLimitedResult(error);
        if (!limited) throw error;
        result = toJson(limited);
      }
      await after?.({ tool: tool.name, args: input, exec, result });
      return result;
    },
  };
}
