// The `dida_todo_setup` tool: status, bind to a list by name or id, unbind, login check.
import { isDidaError } from '../../dida/dida-error';
import { findBinding } from '../../store/config-bindings';
import { bindList, checkList, unbindList } from '../queue/bindings';
import { normaliseRouteTag } from '../queue/route-tags';
import { fenceUntrusted, UNTRUSTED_PREAMBLE } from '../text/text-guard';
import { MODEL_BUDGET, withinBudget } from '../text/model-budget';
import { runTool } from './tool-runner';
import type { ToolContext, ToolDefinition, ToolResult } from './tool-types';
import { SETUP_DESCRIPTION, SETUP_PARAMETERS } from './tool-specs';

/** What the model tells the person when the token is missing or rejected: the form that reads it without echo. */
export const LOGIN_ADVICE = 'ask the person to run `dida-todo login --token -` in a terminal (it reads the token without showing it; never put the token on the command line or in this chat)';

export const setupTool: ToolDefinition = {
  name: 'dida_todo_setup',
  description: SETUP_DESCRIPTION,
  parameters: SETUP_PARAMETERS,
  execute: async (args, ctx) => stdinLogin(await runTool('dida_todo_setup', SETUP_PARAMETERS, args, () => run(args, ctx))),
};

/** Advice from lower layers that names `login --token <token>` is given in the stdin form instead. */
function stdinLogin(result: ToolResult): ToolResult {
  const message = result.message.replace(/`dida-todo login --token <token>`/g, '`dida-todo login --token -`');
  return message === result.message ? result : { ...result, message };
}

/** A list name from Dida, for the model: fenced and capped. */
function listName(name: string): string {
  return `${UNTRUSTED_PREAMBLE}\n${fenceUntrusted('list_name', withinBudget(name, MODEL_BUDGET.title))}`;
}

/** The directory's route tag as configured here (validated config text, never Dida text). */
function routeNote(tag: string | undefined): string {
  return tag ? ` with route tag #${normaliseRouteTag(tag)} (tasks tagged so run only in directories with that tag)` : '';
}

async function run(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
  switch (args.action) {
    case 'status': {
      const binding = findBinding(await ctx.config.read(), ctx.cwd);
      const token = await ctx.tokenSource();
      if (!token) return { code: 'dida_unavailable', message: `No Dida token is configured: ${LOGIN_ADVICE}.` };
      if (!binding) return { code: 'not_bound', message: `Token found (${token.source}). This directory is not bound to a Dida list; bind it with action "bind" when the person names a list.` };
      const health = await checkList(await ctx.gateway(), binding);
      if (!health.ok) return { code: health.code, message: health.message };
      return { code: 'ok', message: `Bound to the Dida list ${health.project.id}${routeNote(binding.tag)} (token from ${token.source}); Dida is reachable.`, detail: listName(health.project.name) };
    }
    case 'bind': {
      const name = args.list_name as string | undefined;
      const id = args.list_id as string | undefined;
      if (!name && !id) return { code: 'invalid_argument', message: 'bind needs list_name (or list_id).' };
      const tag = args.tag as string | undefined;
      const options = { ...(tag !== undefined ? { tag } : {}), ...(args.create === true ? { allowNearName: true } : {}) };
      const result = await bindList(await ctx.gateway(), ctx.config, ctx.cwd, id ? { id } : { name: name as string }, options);
      const bound = findBinding(await ctx.config.read(), ctx.cwd);
      return { code: 'ok', message: `${result.created ? 'Created and bound' : 'Bound'} the Dida list ${result.project.id} to this directory${routeNote(bound?.tag)}.`, detail: listName(result.project.name) };
    }
    case 'unbind': {
      const removed = await unbindList(ctx.config, ctx.cwd);
      return removed
        ? { code: 'ok', message: `Unbound this directory from the Dida list ${removed.projectId}.` }
        : { code: 'not_bound', message: 'This exact directory has no binding (a parent directory may still be bound; check with status).' };
    }
    case 'login_check': {
      try {
        const projects = await (await ctx.gateway()).listProjects();
        return { code: 'ok', message: `The Dida token works (${projects.length} list(s) visible).` };
      } catch (error) {
        if (isDidaError(error) && error.code === 'auth') return { code: 'dida_unavailable', message: `The Dida token was rejected: ${LOGIN_ADVICE}.` };
        throw error;
      }
    }
    default:
      return { code: 'invalid_argument', message: `Unknown action ${JSON.stringify(args.action)}.` };
  }
}

