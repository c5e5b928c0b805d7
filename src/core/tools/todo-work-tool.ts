// The `todo_work` tool: the list's queue of Works (list, switch, next, refresh, finish_current, wait_for_human, resume, keep_open).
import { finalizeWork } from '../review/finalize';
import type { TakenAnswer } from '../phone/phone-answers';
import { renderQueuePayload, type QueuePayloadStrings, type SkippedWork } from '../queue/queue-policy';
import { routeFor, type Route } from '../queue/route-tags';
import { keyOf } from '../work/work-io';
import { visibleSteps, SETTLED } from '../work/work-state';
import { boundOrResult, isResult, runTool, withNews } from './tool-runner';
import type { Binding } from '../../store/config-schema';
import type { ToolContext, ToolDefinition, ToolResult } from './tool-types';
import { TODO_WORK_DESCRIPTION, TODO_WORK_PARAMETERS } from './tool-specs';
import { panelItems, renderWork } from './work-view';

/** At most this many answers from the phone are handed over in one list result (the rest wait for the next call). */
const ANSWERS_PER_LIST = 2;

const QUEUE_STRINGS: QueuePayloadStrings = {
  heading: 'Executable Works in the bound Dida list, highest priority first',
  empty: 'Nothing is executable right now.',
  levels: { none: 'none', low: 'low', medium: 'medium', high: 'high' },
  idLabel: 'id',
};

/** Works for other directories named at most in one list result. */
const ROUTED_SHOWN = 10;
const SAFE_KEY = /^[A-Za-z0-9_#-]{1,80}$/;

/**
 * Why Works are not for this directory, by id: "routed to #api" (another binding's tag) or "not tagged #web" (this
 * binding's tag). Both tags come from this machine's config.yaml, never from Dida.
 */
export function routedNote(skipped: readonly SkippedWork[], route: Route | undefined): string {
  const routed = skipped.filter((s) => s.reason === 'routed');
  if (routed.length === 0) return '';
  const shown = routed
    .slice(0, ROUTED_SHOWN)
    .map((s) => `${SAFE_KEY.test(s.candidate.taskId) ? s.candidate.taskId : 'a Work'} ${s.routedTo ? `routed to #${s.routedTo}` : `not tagged #${route?.own ?? ''}`}`);
  const more = routed.length > shown.length ? `; ${routed.length - shown.length} more` : '';
  return ` ${routed.length} Work(s) are for other directories: ${shown.join('; ')}${more}.`;
}

export const todoWorkTool: ToolDefinition = {
  name: 'todo_work',
  description: TODO_WORK_DESCRIPTION,
  parameters: TODO_WORK_PARAMETERS,
  execute: (args, ctx) => runTool('todo_work', TODO_WORK_PARAMETERS, args, () => run(args, ctx)),
};

async function run(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
  const binding = await boundOrResult(ctx);
  if (isResult(binding)) return binding;
  const engine = await ctx.engine();
  return withNews(engine, ctx.sessionId, () => act(args, ctx, engine, binding));
}

async function act(args: Record<string, unknown>, ctx: ToolContext, engine: Awaited<ReturnType<ToolContext['engine']>>, binding: Binding): Promise<ToolResult> {
  const action = args.action as string;
  const now = new Date(engine.deps.now());
  const route = routeFor(await ctx.config.read(), binding);

  switch (action) {
    case 'list': {
      const queue = await engine.queue(binding.projectId, undefined, route);
      const waiting = queue.skipped.filter((s) => s.reason === 'waiting_for_human').length;
      const note = (waiting ? ` ${waiting} Work(s) are waiting for the person.` : '') + routedNote(queue.skipped, route);
      // Answers the person gave in Dida to Works no other session works on now are handed over here, once.
      const { answerNote, heldByOtherSession, mayTakeAnswer, takeAnswers } = await import('../phone/phone-answers');
      const taker = { projectId: binding.projectId, ...(route ? { route } : {}) };
      const answers: TakenAnswer[] = await takeAnswers(
        engine.deps,
        (key, work, state) => mayTakeAnswer(work, taker) && !heldByOtherSession(state, key, ctx.sessionId, now.getTime()),
        ANSWERS_PER_LIST,
      );
      const answered = answers.length ? ` The person answered ${answers.length} Work(s) in Dida (below).` : '';
      const detail = [renderQueuePayload(queue.ranked, { strings: QUEUE_STRINGS, now }), ...answers.map(answerNote)].join('\n\n');
      return { code: 'ok', message: `${queue.ranked.length} executable Work(s).${note}${answered}`, detail };
    }
    case 'next': {
      if (!ctx.queueGranted) {
        return { code: 'queue_not_granted', message: 'Picking from the queue needs the person to ask for it (their trigger phrase) in this turn; keep to the current Work or ask the person.' };
      }
      const work = await engine.claimNext(ctx.sessionId, binding.projectId, undefined, route);
      if (!work) return { code: 'queue_empty', message: 'No Work in the bound list is executable now (or other machines hold them); tell the person the queue is empty.' };
      return { code: 'ok', message: `Now working on Work ${keyOf(work)}.`, detail: renderWork(work), data: panelItems(work) };
    }
    case 'switch': {
      if (!args.work) return { code: 'invalid_argument', message: 'switch needs work: a Work id from todo_work list.' };
      await engine.sync(binding.projectId);
      const work = await engine.switchTo(ctx.sessionId, binding.projectId, args.work as string);
      return { code: 'ok', message: `Now working on Work ${keyOf(work)}.`, detail: renderWork(work), data: panelItems(work) };
    }
    case 'refresh': {
      const report = await engine.sync(binding.projectId);
      const current = await engine.currentWork(ctx.sessionId);
      const summary = `Refreshed: ${report.tasks.length} open task(s), ${report.adopted.length} new, ${report.updated.length} changed by the person.`;
      return current
        ? { code: 'ok', message: summary, detail: renderWork(current), data: panelItems(current) }
        : { code: 'ok', message: `${summary} This session has no current Work.` };
    }
    case 'finish_current': {
      const current = await engine.currentWork(ctx.sessionId);
      if (!current) return { code: 'no_current_work', message: 'This session has no current Work to finish.' };
      const open = visibleSteps(current).filter((s) => !SETTLED.has(s.status));
      if (open.length > 0) {
        return { code: 'not_settled', message: `${open.length} step(s) are not completed or skipped yet (${open.map((s) => s.id).join(', ')}); settle them first.` };
      }
      const outcome = await finalizeWork(engine.deps, keyOf(current));
      if (outcome.status === 'finalized' || outcome.status === 'already') return { code: 'ok', message: `Work ${keyOf(current)} is sent to the person for review.` };
      if (outcome.status === 'not_ready') return { code: outcome.code, message: outcome.message };
      return { code: 'dida_unavailable', message: `Sending for review failed and will be retried automatically: ${outcome.message}` };
    }
    case 'wait_for_human': {
      if (!args.reason) return { code: 'invalid_argument', message: 'wait_for_human needs reason: one sentence saying what you need from the person.' };
      const work = await engine.waitForHuman(ctx.sessionId, args.reason as string, args.work as string | undefined);
      return { code: 'ok', message: `Work ${keyOf(work)} is waiting for the person; they were reminded in Dida. Stop working on it until they answer.` };
    }
    case 'resume': {
      const key = (args.work as string | undefined) ?? (await engine.requireCurrent(ctx.sessionId));
      const before = await engine.getWork(key);
      // A Work the person already resumed from Dida: its answer (if not handed over yet) is the result.
      const work = before.waiting || !before.pendingAnswer ? await engine.resume(ctx.sessionId, key) : before;
      const { answerNote, takeAnswers } = await import('../phone/phone-answers');
      const answers = await takeAnswers(engine.deps, (k) => k === keyOf(work));
      const message = before.waiting ? `Resumed Work ${keyOf(work)}.` : `Work ${keyOf(work)} was already resumed by the person in Dida.`;
      return { code: 'ok', message, detail: [renderWork(work), ...answers.map(answerNote)].join('\n\n'), data: panelItems(work) };
    }
    case 'keep_open': {
      const current = await engine.currentWork(ctx.sessionId);
      if (!current) return { code: 'no_current_work', message: 'This session has no current Work.' };
      const keep = args.keep !== false;
      await engine.keepOpen(keyOf(current), keep);
      return { code: 'ok', message: keep ? `Work ${keyOf(current)} stays open until the person allows review.` : `Work ${keyOf(current)} will be sent for review when settled.` };
    }
    default:
      return { code: 'invalid_argument', message: `Unknown action ${JSON.stringify(action)}.` };
  }
}

