// dsh asking the person, as dsh-host sees it: a question (`ctx.userQuestions.ask`: ask_user_question, a plan review)
// or an approval (`approval/request`) of a session that holds a Work is filed in Dida and raced against dsh's own
// answerer; the first answer wins and the other side is withdrawn. Where dsh has no answerer, the phone is the one.
import type { EngineDeps } from '../../core/work/engine-context';
import type { DeskAnswer } from '../../core/phone/desk-answers';
import { closeDeskAsk, lookForDeskAnswer, openDeskAsk, staleAsks, type DeskAskEnd, type DeskAskRequest, type DeskLook } from '../../core/phone/desk-asks';
import { pauseWork } from '../../core/phone/phone-pause';
import { fenceUntrusted, UNTRUSTED_PREAMBLE } from '../../core/text/text-guard';
import { MODEL_BUDGET, withinBudget } from '../../core/text/model-budget';
import type { DeskAsk } from '../../core/work/work-state';
import { withRequestPriority } from '../../dida/request-budget';
import type { RuntimeDeps } from '../session/runtime-deps';
import { messageOf } from '../session/runtime-deps';
import type { AgentTrack } from '../session/agent-tracker';
import { PAUSE_CANCEL_REASON } from './pause-guard';
import type { ApprovalOutcome, ApprovalRequest, QuestionAnswer, QuestionRequest } from '../session/session-ports';

/**
 * When the looks at Dida for an answer come, by how long the request has waited: a person who was just asked is
 * likely to answer within minutes, so the first looks are close together (each look reads the 🙋 reminder's comments,
 * every other one the Work's too: an answer there is seen within two gaps).
 */
export const LOOK_SCHEDULE: ReadonlyArray<{ until: number; every: number }> = [
  { until: 60_000, every: 5_000 },
  { until: 5 * 60_000, every: 10_000 },
  { until: 30 * 60_000, every: 20_000 },
  { until: Number.POSITIVE_INFINITY, every: 30_000 },
];
/** The first look waits this long (nobody answers faster; the reminder has just been filed). */
export const FIRST_LOOK_MS = 3_000;

/** The gap before the next look, `waited` ms after the request was filed. */
export function nextLookMs(waited: number): number {
  if (waited <= 0) return FIRST_LOOK_MS;
  return (LOOK_SCHEDULE.find((s) => waited < s.until) ?? LOOK_SCHEDULE[LOOK_SCHEDULE.length - 1]!).every;
}

/** What the model is told when the question timed out (in the answer's own words). */
export const NO_ANSWER_TEXT = (minutes: number) =>
  `No answer: the person did not answer in Dida within ${minutes} minutes. Decide without it if you safely can; otherwise call todo_work wait_for_human with the question (the Work then waits for them in Dida).`;
/** The tool's error when the person stopped the Work from Dida while the question waited. */
export const STOPPED_TEXT = 'The person paused this Work from Dida while the question waited; stop here and wait for them.';

/** How dsh's own answerer ended: its answer, no answerer at all, or withdrawn (by us, the caller, or the person). */
type DeskSide<T> = { kind: 'answer'; value: T } | { kind: 'absent'; error?: unknown } | { kind: 'cancelled'; error?: unknown };

interface Flow<T> {
  request: DeskAskRequest;
  /** Starts dsh's own answerer; `signal` aborts when the phone answered first (dsh web then withdraws its card). */
  desk(signal: AbortSignal): Promise<DeskSide<T>>;
  fromPhone(answer: DeskAnswer): T;
  noAnswer(minutes: number): T;
  stopped(): T;
  /** Nobody answers and nothing could be filed: what dsh says without this bundle (`error`: dsh's own refusal). */
  absent(error?: unknown): T;
  withdrawn(error?: unknown): T;
}

type PhoneEnd = DeskLook | { kind: 'unfiled' } | { kind: 'timeout'; minutes: number } | { kind: 'aborted' };

export interface DeskAskOptions {
  engineDeps: () => Promise<EngineDeps>;
  pid: number;
  isAlive: (pid: number) => boolean;
  /** How long the phone is waited for where dsh has no answerer of its own (minutes; the row's, per profile). */
  waitMinutes: () => number;
}

export class DeskAsks {
  /** Requests in flight in this process: ended on dispose, and by a session that goes away. */
  private readonly live = new Map<string, { sessionId: string; end: AbortController }>();
  private readonly runs = new Set<Promise<unknown>>();

  constructor(
    private readonly deps: RuntimeDeps,
    private readonly options: DeskAskOptions,
  ) {}

  /** The session's current Work when it may take a request: a bound top-level session holding an open Work. */
  private async heldWork(track: AgentTrack | undefined): Promise<string | undefined> {
    if (!track || track.subagent || !track.binding || !this.deps.settings.askInDida) return undefined;
    const state = await this.deps.state.read();
    const key = state.sessions[track.sessionId]?.currentWork;
    const work = key ? state.works[key] : undefined;
    return key && work?.phase === 'open' && !work.waiting ? key : undefined;
  }

  /** `ctx.userQuestions.ask` for `request`, with `original` the service's own ask. */
  async question(request: QuestionRequest, original: (request: QuestionRequest) => Promise<QuestionAnswer>): Promise<QuestionAnswer> {
    const track = request.agent ? this.deps.tracker.get(request.agent.id) : undefined;
    const key = await this.heldWork(track).catch(() => undefined);
    if (!key || !track) return original(request);
    const plan = request.questions.some((q) => q.intent?.kind === 'plan-review');
    const questions: NonNullable<DeskAsk['questions']> = request.questions.map((q) => ({
      id: q.id,
      question: q.question,
      ...(q.header !== undefined ? { header: q.header } : {}),
      ...(q.detail !== undefined ? { detail: q.detail } : {}),
      options: (q.options ?? []).map((o) => ({ label: o.label, ...(o.description !== undefined ? { description: o.description } : {}) })),
      ...(q.multiSelect ? { multiSelect: true } : {}),
      ...(q.intent?.approve !== undefined ? { approve: q.intent.approve } : {}),
    }));
    const flow: Flow<QuestionAnswer> = {
      request: { kind: plan ? 'plan' : 'question', sessionId: track.sessionId, pid: this.options.pid, questions },
      desk: async (signal) => {
        try {
          return { kind: 'answer', value: await original({ ...request, signal: request.signal ? AbortSignal.any([request.signal, signal]) : signal }) };
        } catch (error) {
          if ((error as { code?: unknown })?.code === 'NO_PROVIDER') return { kind: 'absent', error };
          return { kind: 'cancelled', error };
        }
      },
      fromPhone: (answer) => ({
        answers: answer.kind === 'question' ? answer.answers.map((a) => (a.custom !== undefined ? { ...a, custom: personsWords(a.custom) } : a)) : [],
      }),
      noAnswer: (minutes) => ({ answers: request.questions.map((q) => ({ id: q.id, selected: [], custom: NO_ANSWER_TEXT(minutes) })) }),
      stopped: () => {
        throw new Error(STOPPED_TEXT);
      },
      absent: (error) => {
        throw error;
      },
      withdrawn: (error) => {
        throw error ?? new Error('ask_user_question was aborted before the user answered');
      },
    };
    return this.tracked(this.run(track, key, flow, request.signal));
  }

  /** One `approval/request` of the waterfall; `next` is dsh's own answerers (dsh web's card, else "unavailable"). */
  async approval(request: ApprovalRequest, next: () => Promise<ApprovalOutcome>): Promise<ApprovalOutcome> {
    const track = request.agent ? this.deps.tracker.get(request.agent.id) : undefined;
    const key = await this.heldWork(track).catch(() => undefined);
    if (!key || !track || request.signal?.aborted) return next();
    const flow: Flow<ApprovalOutcome> = {
      request: { kind: 'approval', sessionId: track.sessionId, pid: this.options.pid, approval: approvalSubject(request) },
      desk: async (signal) => {
        const outcome = await withSwappedSignal(request, signal, next);
        if (outcome === 'unavailable') return { kind: 'absent' };
        if (outcome === 'cancelled') return { kind: 'cancelled' };
        return { kind: 'answer', value: outcome };
      },
      fromPhone: (answer) => (answer.kind === 'approval' ? answer.outcome : 'rejected'),
      noAnswer: () => 'rejected',
      stopped: () => 'rejected',
      absent: () => 'unavailable',
      withdrawn: () => 'cancelled',
    };
    return this.tracked(this.run(track, key, flow, request.signal));
  }

  private tracked<T>(run: Promise<T>): Promise<T> {
    this.runs.add(run);
    void run.then(
      () => this.runs.delete(run),
      () => this.runs.delete(run),
    );
    return run;
  }

  /** Resolves once every request in flight has ended (and told Dida how). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.runs]);
  }

  /**
   * The race: dsh's answerer starts at once (its card shows without waiting for Dida) while the request is filed and
   * Dida is looked at. The first answer wins; the other side is withdrawn and Dida is told how it ended.
   */
  private async run<T>(track: AgentTrack, key: string, flow: Flow<T>, callSignal: AbortSignal | undefined): Promise<T> {
    const deskAbort = new AbortController();
    const end = new AbortController();
    const id = this.deps.newId();
    this.live.set(id, { sessionId: track.sessionId, end });
    let deadline: number | undefined;
    try {
      const desk = flow.desk(deskAbort.signal).then((r) => ({ side: 'desk' as const, r }));
      const opened = this.open(key, flow.request);
      const phone = this.watch(key, opened, [end.signal, callSignal, this.deps.lifetime], () => deadline).then((r) => ({ side: 'phone' as const, r }));
      let first = await Promise.race([desk, phone]);
      if (first.side === 'desk' && first.r.kind === 'absent') {
        // Nobody can answer in dsh: the person answers from the phone, within the profile's limit.
        const ask = await opened;
        if (!ask) return flow.absent(first.r.error);
        deadline = this.deps.clock.now() + this.options.waitMinutes() * 60_000;
        this.deps.log(`no answerer in this dsh for session ${track.sessionId}: the person answers in Dida (at most ${this.options.waitMinutes()} min)`);
        first = await phone;
      }
      if (first.side === 'desk') {
        end.abort();
        const ask = await opened;
        const r = first.r as Exclude<DeskSide<T>, { kind: 'absent' }>;
        if (r.kind === 'answer') {
          if (ask) await this.close(key, ask.id, { how: 'desk' });
          return r.value;
        }
        if (ask) await this.close(key, ask.id, callSignal?.aborted ? { how: 'withdrawn', why: 'cancelled' } : { how: 'desk' });
        return flow.withdrawn(r.error);
      }
      const ended = first.r;
      const ask = await opened;
      if (ended.kind === 'unfiled' || !ask) {
        // Dida could not be told: dsh's own answerer alone decides, as without this bundle.
        const r = (await desk).r;
        return r.kind === 'answer' ? r.value : r.kind === 'absent' ? flow.absent(r.error) : flow.withdrawn(r.error);
      }
      deskAbort.abort(new Error('answered in Dida'));
      void desk.catch(() => undefined);
      switch (ended.kind) {
        case 'answer':
          await this.close(key, ask.id, { how: 'phone', summary: ended.summary });
          this.deps.log(`the person answered request #${ask.number} of Work ${key} in Dida`);
          return flow.fromPhone(ended.answer);
        case 'stop':
          await this.close(key, ask.id, { how: 'stopped' });
          await this.pause(track, key, ended.commentId);
          return flow.stopped();
        case 'timeout':
          await this.close(key, ask.id, { how: 'timeout', minutes: ended.minutes });
          return flow.noAnswer(ended.minutes);
        case 'gone':
          return flow.withdrawn();
        default:
          await this.close(key, ask.id, { how: 'withdrawn', why: callSignal?.aborted ? 'cancelled' : 'gone' });
          return flow.withdrawn();
      }
    } finally {
      this.live.delete(id);
      end.abort();
    }
  }

  private async open(key: string, request: DeskAskRequest): Promise<DeskAsk | undefined> {
    try {
      const deps = await this.options.engineDeps();
      const ask = await withRequestPriority('foreground', () => openDeskAsk(deps, key, request));
      if (ask) this.deps.log(`session ${request.sessionId} waits for the person (request #${ask.number} of Work ${key}, ${request.kind}): shown in Dida`);
      return ask;
    } catch (error) {
      this.deps.log(`could not show a question of session ${request.sessionId} in Dida: ${messageOf(error)}`);
      return undefined;
    }
  }

  /** Looks at Dida on LOOK_SCHEDULE until an answer, a stop, the deadline, or one of `signals` ends it. */
  private async watch(key: string, opened: Promise<DeskAsk | undefined>, signals: Array<AbortSignal | undefined>, deadline: () => number | undefined): Promise<PhoneEnd> {
    const ask = await opened;
    if (!ask) return { kind: 'unfiled' };
    const clock = this.deps.clock;
    const started = clock.now();
    for (let looks = 0; ; looks++) {
      const waited = clock.now() - started;
      const until = deadline();
      let gap = looks === 0 ? FIRST_LOOK_MS : nextLookMs(waited);
      if (until !== undefined) {
        if (clock.now() >= until) return { kind: 'timeout', minutes: this.options.waitMinutes() };
        gap = Math.min(gap, until - clock.now());
      }
      if (!(await clock.wait(gap, signals))) return { kind: 'aborted' };
      const limit = deadline();
      if (limit !== undefined && clock.now() >= limit) return { kind: 'timeout', minutes: this.options.waitMinutes() };
      try {
        const deps = await this.options.engineDeps();
        const look = await withRequestPriority('foreground', () => lookForDeskAnswer(deps, key, ask.id, { readWork: looks % 2 === 0 }));
        if (look.kind !== 'none') return look;
      } catch (error) {
        this.deps.log(`looking for the person's answer in Dida failed (looked at again): ${messageOf(error)}`);
      }
    }
  }

  private async close(key: string, askId: string, end: DeskAskEnd): Promise<void> {
    try {
      const deps = await this.options.engineDeps();
      await withRequestPriority('foreground', () => closeDeskAsk(deps, key, askId, end));
    } catch (error) {
      this.deps.log(`could not close a question of Work ${key} in Dida: ${messageOf(error)}`);
    }
  }

  /** The person's stop on a waiting request: the Work is paused as from any stop comment, and the turn is stopped. */
  private async pause(track: AgentTrack, key: string, commentId: string): Promise<void> {
    try {
      const deps = await this.options.engineDeps();
      await withRequestPriority('foreground', () => pauseWork(deps, key, { by: 'comment', commentId }));
      this.deps.log(`the person stopped Work ${key} from Dida while a question waited: it is paused and the turn of ${track.sessionId} is stopped`);
      track.agent.cancel?.({ kind: 'hook', reason: PAUSE_CANCEL_REASON }, { keepInbox: true });
    } catch (error) {
      this.deps.log(`could not pause Work ${key} after the person's stop: ${messageOf(error)}`);
    }
  }

  /**
   * Requests this machine filed for a process that is gone (its tool call ended with it, a crash or a kill): each is
   * withdrawn in Dida, saying so. Run at start.
   */
  async sweep(): Promise<number> {
    const state = await this.deps.state.read();
    const deps = await this.options.engineDeps();
    const stale = staleAsks(state, deps.hostLabel, (pid) => pid === this.options.pid || this.options.isAlive(pid));
    for (const { key, ask } of stale) await this.close(key, ask.id, { how: 'withdrawn', why: 'gone' });
    if (stale.length) this.deps.log(`withdrew ${stale.length} question(s) in Dida whose session ended with its process`);
    return stale.length;
  }

  /** The session went away: what it still waits for is withdrawn (its tool call ends with it). */
  released(sessionId: string): void {
    for (const entry of this.live.values()) if (entry.sessionId === sessionId) entry.end.abort();
  }
}

/** The person's own words for the model: fenced as untrusted Dida text, within the body budget. */
function personsWords(text: string): string {
  return `${UNTRUSTED_PREAMBLE}\n${fenceUntrusted('answer', withinBudget(text, MODEL_BUDGET.body))}`;
}

/**
 * What an approval is for, as dsh gives it: the tool, the command or path of its call (found in the session log by
 * the call id), the model's justification (else dsh's reason).
 */
export function approvalSubject(request: ApprovalRequest): NonNullable<DeskAsk['approval']> {
  let args: Record<string, unknown> = {};
  const events = request.agent?.session?.events ?? [];
  for (let i = events.length - 1; i >= 0 && request.callId !== undefined; i--) {
    const event = events[i];
    if (event?.type !== 'tool/call' || event.data?.callId !== request.callId) continue;
    try {
      const parsed: unknown = typeof event.data.arguments === 'string' ? JSON.parse(event.data.arguments) : event.data.arguments;
      if (parsed && typeof parsed === 'object') args = parsed as Record<string, unknown>;
    } catch {
      // Arguments that are not JSON name nothing: the request is shown without them.
    }
    break;
  }
  const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value : undefined);
  const subject = text(args.command) ?? text(args.path) ?? text(args.file_path) ?? text(args.filePath) ?? text(args.url);
  const justification = text(args.justification) ?? text(request.reason);
  return { tool: request.toolName, ...(subject ? { subject } : {}), ...(justification ? { justification } : {}) };
}

/**
 * Runs dsh's next answerers with `signal` in the request (fused with its own): dsh web's answerer listens to it and
 * withdraws its card when it aborts. The request is borrowed as dsh hands it over; where it cannot be changed, the
 * card stays until someone clicks it, which then changes nothing (the request is decided).
 */
async function withSwappedSignal(request: ApprovalRequest, signal: AbortSignal, next: () => Promise<ApprovalOutcome>): Promise<ApprovalOutcome> {
  const original = request.signal;
  let swapped = false;
  try {
    (request as { signal?: AbortSignal }).signal = original ? AbortSignal.any([original, signal]) : signal;
    swapped = true;
  } catch {
    // A frozen request: the card cannot be withdrawn (see above).
  }
  const outcome = next();
  if (swapped) (request as { signal?: AbortSignal }).signal = original;
  return outcome;
}
