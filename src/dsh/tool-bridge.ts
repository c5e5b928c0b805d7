// Registers the host-neutral tools with dsh: JSON Schema parameters, text rendering, per-call context.
import type { ParameterSpec, ToolContext, ToolDefinition, ToolResult } from '../core/tools';
import { renderResult } from '../core/tools/tool-types';
import type { HostToolDefinition, ToolExecution } from './ports';

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
      const result = toJson(await tool.execute(input, ctx));
      await after?.({ tool: tool.name, args: input, exec, result });
      return result;
    },
  };
}
