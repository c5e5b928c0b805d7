// The `todo` tool: the steps of the session's current Work (create, update, list, get, delete, clear).
import type { StepChangeResult } from '../steps/step-ops';
import type { StepChange } from '../work/step-change';
import type { SettablePriorityLevel } from '../time/schedule';
import { findStep } from '../steps/step-ops';
import { keyOf } from '../work/work-io';
import { boundOrResult, isResult, runTool, withNews } from './tool-runner';
import type { ToolContext, ToolDefinition, ToolResult } from './tool-types';
import { TODO_DESCRIPTION, STEP_STATUS, TODO_PARAMETERS } from './tool-specs';
import { fenceUntrusted, UNTRUSTED_PREAMBLE } from '../text/text-guard';
import { SETTLED, visibleSteps } from '../work/work-state';
import { panelItems, personChanges, renderWork, stepLine, transitionsLine } from './work-view';

type StepArg = { title: string; status?: 'pending' | 'in_progress' };
type UpdateArg = { step: string; status?: (typeof STEP_STATUS)[number]; resolution?: string; title?: string };

export const todoTool: ToolDefinition = {
  name: 'todo',
  description: TODO_DESCRIPTION,
  parameters: TODO_PARAMETERS,
  execute: (args, ctx) => runTool('todo', TODO_PARAMETERS, args, () => run(args, ctx)),
};

async function run(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
  const binding = await boundOrResult(ctx);
  if (isResult(binding)) return binding;
  const engine = await ctx.engine();
  return withNews(engine, ctx.sessionId, () => act(args, ctx, engine, binding.projectId));
}

/**
 * The action on the session's current Work. Step changes return once they are on disk: the background writer writes
 * them into Dida (read right before, the person's edits merged in) and the model hears at its next call what it met.
 * Only a new Work's create is sent before the result (the Work is named by its Dida task).
 */
async function act(args: Record<string, unknown>, ctx: ToolContext, engine: Awaited<ReturnType<ToolContext['engine']>>, projectId: string): Promise<ToolResult> {
  const action = args.action as string;
  const current = await engine.currentWork(ctx.sessionId);
  const where = { cwd: ctx.cwd, background: true };

  if (action === 'create') {
    const steps = (args.steps as StepArg[] | undefined) ?? [];
    const title = args.work_title as string | undefined;
    // work_title always starts a new Work for a new request, also when another Work is current.
    if (title !== undefined || !current) {
      if (!title) {
        return { code: 'no_current_work', message: 'There is no current Work: pass work_title to start one for this request, or call todo_work next/switch to pick a Work from Dida.' };
      }
      // The model waits for the Work, not for its claim comment: that is posted right after the result.
      const work = await engine.createWork(
        ctx.sessionId,
        projectId,
        { title, steps: steps.map((s) => s.title), level: (args.priority as SettablePriorityLevel | undefined) ?? 'medium' },
        { claimInBackground: true },
      );
      const started = steps.flatMap((s, i) => (s.status === 'in_progress' && work.steps[i] ? [{ op: 'update' as const, step: work.steps[i].id, status: 'in_progress' as const }] : []));
      const final = started.length ? (await engine.changeSteps(ctx.sessionId, started, keyOf(work), where)).work : work;
      const ids = final.steps.map((s) => s.id).join(', ');
      const replaced = current && keyOf(current) !== keyOf(final) ? ` It is now the current Work (Work ${keyOf(current)} stays open).` : '';
      return { code: 'ok', message: `Created Work ${keyOf(final)} in Dida${ids ? ` with steps ${ids}` : ''}.${replaced}`, data: panelItems(final) };
    }
    if (steps.length === 0) return { code: 'invalid_argument', message: 'create needs steps: an array of {title, status?}.' };
    const changes: StepChange[] = steps.map((s) => ({ op: 'add', title: s.title, ...(s.status ? { status: s.status } : {}) }));
    const result = await engine.changeSteps(ctx.sessionId, changes, undefined, where);
    const added = result.work.steps.slice(-steps.length).map((s) => s.id).join(', ');
    return changed(`Added ${added} to Work ${keyOf(result.work)}.`, result);
  }

  if (!current) {
    return { code: 'no_current_work', message: 'This session has no current Work; call todo_work next (after the person asks to check the queue) or todo_work switch, or todo create with work_title.' };
  }

  switch (action) {
    case 'list':
      return { code: 'ok', message: `The current Work is ${keyOf(current)}.`, detail: renderWork(current), data: panelItems(current) };
    case 'get': {
      if (!args.step) return { code: 'invalid_argument', message: 'get needs step: a step id or exact title.' };
      const step = findStep(current, args.step as string);
      return { code: 'ok', message: `Step ${step.id} is ${step.status}.`, detail: `${UNTRUSTED_PREAMBLE}\n${fenceUntrusted('step', stepLine(step))}` };
    }
    case 'update': {
      const updates = (args.updates as UpdateArg[] | undefined) ?? [];
      if (updates.length === 0) return { code: 'invalid_argument', message: 'update needs updates: an array of {step, status?, resolution?, title?}.' };
      const changes: StepChange[] = updates.map((u) => ({
        op: 'update',
        step: u.step,
        ...(u.status ? { status: u.status } : {}),
        ...(u.resolution !== undefined ? { resolution: u.resolution } : {}),
        ...(u.title !== undefined ? { title: u.title } : {}),
      }));
      const result = await engine.changeSteps(ctx.sessionId, changes, undefined, where);
      const moved = transitionsLine(result);
      return changed(`Updated Work ${keyOf(result.work)}${moved ? `: ${moved}` : ''}.`, result);
    }
    case 'delete': {
      if (!args.step) return { code: 'invalid_argument', message: 'delete needs step: a step id or exact title.' };
      const result = await engine.changeSteps(ctx.sessionId, [{ op: 'delete', step: args.step as string }], undefined, { background: true });
      return changed(`Deleted ${transitionsLine(result).replace(/ deleted/g, '') || 'the step'} from Work ${keyOf(result.work)}.`, result);
    }
    case 'clear': {
      const result = await engine.changeSteps(ctx.sessionId, [{ op: 'clear' }], undefined, { background: true });
      return changed(`Removed ${result.transitions.length} unfinished step(s) of yours from Work ${keyOf(result.work)}.`, result);
    }
    default:
      return { code: 'invalid_argument', message: `Unknown action ${JSON.stringify(action)}.` };
  }
}

/** A short result for a change: what moved (ids), progress, and what the person changed meanwhile (fenced). */
function changed(message: string, result: StepChangeResult): ToolResult {
  const steps = visibleSteps(result.work);
  const settled = steps.filter((s) => SETTLED.has(s.status)).length;
  const person = personChanges(result);
  return {
    code: 'ok',
    message: `${message} ${settled}/${steps.length} steps settled.`,
    ...(person ? { detail: person } : {}),
    data: panelItems(result.work),
  };
}

