// What a finished tool call means for the adapter: a binding change to follow, or progress that ends a failure stretch.
import type { StretchEvent } from '../core/continuation/continuation-policy';
import type { ToolResult } from '../core/tools';

export interface FinishedCall {
  tool: string;
  args: Record<string, unknown>;
  result: ToolResult;
}

/** A successful `dida_todo_setup` bind or unbind: the session's binding (and tools, prompt, settle) must follow. */
export function changesBinding(call: FinishedCall): boolean {
  return call.tool === 'dida_todo_setup' && call.result.code === 'ok' && (call.args.action === 'bind' || call.args.action === 'unbind');
}

/** A successful `todo` create or update changed steps: progress, so the failure count starts afresh. */
export function stretchEventOf(call: FinishedCall): StretchEvent | undefined {
  if (call.tool === 'todo' && call.result.code === 'ok' && (call.args.action === 'create' || call.args.action === 'update')) return { kind: 'step_changed' };
  return undefined;
}
