// Shared execution path of the tools: argument validation, binding lookup, domain outcomes as results.
import { isDidaError, adviceFor } from '../../dida/dida-error';
import type { Binding } from '../../store/config-schema';
import { findBinding } from '../../store/config-bindings';
import { isWorkError } from '../work/engine-context';
import { validateArgs } from './tool-args';
import type { ParameterSpec, ToolContext, ToolResult } from './tool-types';
import type { WorkEngine } from '../engine/work-engine';
import { newsText } from './work-view';

export const UNBOUND_MESSAGE =
  'This directory is not bound to a Dida list, so there is no Dida work here. Ask the person which list to use, then call dida_todo_setup with action "bind" and the list name (or run `dida-todo bind <list name>` in a terminal).';

export async function boundOrResult(ctx: ToolContext): Promise<Binding | ToolResult> {
  const binding = findBinding(await ctx.config.read(), ctx.cwd);
  return binding ?? { code: 'not_bound', message: UNBOUND_MESSAGE };
}

export function isResult(value: unknown): value is ToolResult {
  return typeof value === 'object' && value !== null && 'code' in value && 'message' in value && !('projectId' in value);
}

/** Validates, runs `body`, and turns domain outcomes (and a missing or rejected token) into results; other faults throw. */
export async function runTool(
  tool: string,
  params: Record<string, ParameterSpec>,
  args: Record<string, unknown>,
  body: () => Promise<ToolResult>,
): Promise<ToolResult> {
  const invalid = validateArgs(args, params, tool);
  if (invalid) return invalid;
  try {
    return await body();
  } catch (error) {
    if (isWorkError(error)) return { code: error.code, message: error.message };
    if (isDidaError(error) && error.code === 'auth') return { code: 'dida_unavailable', message: `Dida cannot be used: ${adviceFor('auth')}. Tell the person; do not retry.` };
    throw error;
  }
}

/**
 * Runs a bound tool's `body` and adds what the background writer met since the session's last call (see newsText):
 * also to a domain outcome, which is returned as a result here. Reads the state only, no Dida request.
 */
export async function withNews(engine: Pick<WorkEngine, 'takeNews'>, sessionId: string, body: () => Promise<ToolResult>): Promise<ToolResult> {
  let result: ToolResult;
  try {
    result = await body();
  } catch (error) {
    if (!isWorkError(error)) throw error;
    result = { code: error.code, message: error.message };
  }
  const taken = await engine.takeNews(sessionId);
  const news = newsText(taken);
  if (!news) return result;
  // The session lost its current Work to the person meanwhile (completed or deleted in Dida): that is the outcome.
  const closed = result.code === 'no_current_work' ? taken.find((t) => t.news.closed)?.news.closed : undefined;
  if (closed) {
    const code = closed === 'deleted' ? 'work_deleted_remotely' : 'work_completed_remotely';
    return { code, message: `${result.message} ${code === 'work_deleted_remotely' ? 'Its Work was deleted in Dida meanwhile.' : 'Its Work was completed in Dida meanwhile.'}`, detail: result.detail ? `${result.detail}\n\n${news}` : news };
  }
  return { ...result, detail: result.detail ? `${result.detail}\n\n${news}` : news };
}
