// Automatic continuation after a model error: wait the backoff, then retry the request with a note the retried
// request itself carries; after the last attempt the current Work waits for the person.
import { backoffDelayMs, continuationMessage, decideContinuation, unfinishedWork, type SessionWorkFacts } from '../../core/continuation/continuation-policy';
import { classifyFailure, type StopVerdict } from '../../core/continuation/stop-policy';
import type { RuntimeDeps } from '../session/runtime-deps';
import { messageOf } from '../session/runtime-deps';
import type { AgentTrack } from '../session/agent-tracker';
import { personIsWaiting, sendOwnMessage } from '../session/messages';
import type { RequestErrorArgs } from '../session/session-ports';
import type { StretchCounter } from '../session/stretch-counter';

/** A model-facing note that becomes part of the session's history right away (so the very next request carries it). */
export function appendNote(deps: Pick<RuntimeDeps, 'newId' | 'log'>, track: AgentTrack, text: string): void {
  const id = deps.newId();
  try {
    sendOwnMessage((message) => track.agent.session.append('user/message', message, { surfaceOp: 'append' }), text, id);
  } catch (error) {
    deps.log(`could not add the note to the session, queueing it instead: ${messageOf(error)}`);
    sendOwnMessage((message) => track.agent.inject(message), text, id);
  }
}

/** What the host knows live about a session's own work (its todo_write items, its goal). */
export function liveFacts(deps: Pick<RuntimeDeps, 'host'>, track: AgentTrack): SessionWorkFacts {
  const phase = deps.host.goal(track.agent)?.phase;
  return { modelTodosOpen: track.modelTodosOpen, ...(phase ? { goalPhase: phase } : {}) };
}

/** How often a long wait for a limit's reset looks for a pause from the phone (two Dida reads each time). */
export const PAUSE_LOOK_MS = 5 * 60_000;

/** What the session record keeps while a session waits for a limit's reset (the record schema keeps unknown keys). */
export interface WaitMark {
  waitUntil?: { until: number; code: string };
}

export class Continuation {
  /** `lookForPause` looks at the session's current Work in Dida for a pause (and applies it); true when paused. */
  constructor(
    private readonly deps: RuntimeDeps,
    private readonly counter: StretchCounter,
    private readonly lookForPause: (track: AgentTrack) => Promise<boolean> = async () => false,
    /** An automatic continuation is about to be sent (it counts toward the Work's usage). */
    private readonly continued: (track: AgentTrack) => void = () => undefined,
  ) {}

  /** See `unfinishedWork`: a Work the session touched is unfinished, its goal is active, or todo_write items are open. */
  async hasUnfinishedWork(track: AgentTrack): Promise<boolean> {
    return unfinishedWork(await this.deps.state.read(), track.sessionId, liveFacts(this.deps, track)) !== undefined;
  }

  /**
   * The `agent/request-error` decision after dsh's own retries, by the failure's verdict (see classifyFailure):
   * - continue: `{kind:'retry'}` after the backoff, with the note appended to the session so the retried request
   *   contains it (each attempt's note names its number, so no two attempts send the same request);
   * - wait until a limit's known reset: one comment on the Work saying when it carries on, the wait kept in the state
   *   (a restart keeps it), a look for a pause from the phone every few minutes, then a retry counted as an attempt;
   * - needs the person: at once, the current Work waits for them with words for the cause, and the turn fails.
   * Undefined lets the turn fail. A person's message (already queued, or arriving at any point until the retry;
   * `personWrote` says whether one arrived since the failure reached the adapter), the turn's abort and disposal all
   * end it with undefined at once.
   */
  async onRequestError(args: RequestErrorArgs, personWrote: () => boolean = () => false): Promise<{ kind: 'retry' } | undefined> {
    const track = this.deps.tracker.get(args.agent.id);
    if (!track || track.subagent || this.deps.lifetime.aborted) return undefined;
    // Taken before any await: a person writing from here on ends the wait even if the signal is replaced meanwhile.
    const human = track.humanSignal.signal;
    const stopped = () => human.aborted || personWrote() || !!args.signal?.aborted || this.deps.lifetime.aborted || personIsWaiting(args.agent);
    if (stopped()) return undefined;
    const code = args.failure?.code ?? 'UNKNOWN';
    const attempts = await this.counter.attempts(track.sessionId);
    const verdict = classifyFailure({
      code,
      ...(args.failure?.providerRetryAfterMs !== undefined ? { retryAfterMs: args.failure.providerRetryAfterMs } : {}),
      now: this.deps.clock.now(),
      nextBackoffMs: backoffDelayMs(this.deps.settings.backoff, attempts),
      maxWaitMs: this.deps.settings.maxWaitMinutes * 60_000,
    });
    switch (verdict.kind) {
      case 'needs_person':
        if (!stopped()) await this.needsPerson(track, verdict, code);
        return undefined;
      case 'wait_until':
        // Automatic continuation turned off: the person is told when the limit resets, and nothing waits.
        if (this.deps.settings.maxAutoContinue <= 0) {
          if (!stopped()) await this.needsPerson(track, { kind: 'needs_person', cause: 'limit', until: verdict.until }, code);
          return undefined;
        }
        return this.waitUntil(track, args, verdict.until, code, attempts, human, stopped);
      case 'continue':
        return this.backoff(track, args, code, attempts, human, stopped);
      default: {
        const never: never = verdict;
        throw new Error(`unknown verdict ${JSON.stringify(never)}`);
      }
    }
  }

  /** A continuable failure: the backoff, then a retry with the attempt's note (or the hand-over after the last). */
  private async backoff(track: AgentTrack, args: RequestErrorArgs, code: string, attempts: number, human: AbortSignal, stopped: () => boolean): Promise<{ kind: 'retry' } | undefined> {
    const decision = decideContinuation({
      failureCode: code,
      attempts,
      maxAutoContinue: this.deps.settings.maxAutoContinue,
      backoffSeconds: this.deps.settings.backoff,
      hasUnfinishedWork: await this.hasUnfinishedWork(track),
    });
    if (decision.kind === 'stop') {
      if (decision.reason === 'exhausted' && !stopped()) await this.exhausted(track, code, attempts);
      return undefined;
    }
    if (stopped()) return undefined;
    await this.counter.record(track.sessionId, decision.attempt);
    this.deps.log(
      `model request failed (${code}); continuing automatically in ${Math.round(decision.delayMs / 1000)} s (attempt ${decision.attempt}/${this.deps.settings.maxAutoContinue})`,
    );
    const waited = await this.deps.clock.wait(decision.delayMs, [args.signal, human, this.deps.lifetime]);
    if (!waited || stopped()) return undefined;
    appendNote(this.deps, track, continuationMessage(decision, this.deps.settings.maxAutoContinue, code));
    this.continued(track);
    return { kind: 'retry' };
  }

  /**
   * A limit with a known reset beyond the backoff: waits until `until` (said once on the current Work; kept in the
   * session record so a restarted dsh resumes then), looking for a pause from the phone every PAUSE_LOOK_MS, then
   * retries as an automatic attempt.
   */
  private async waitUntil(
    track: AgentTrack,
    args: RequestErrorArgs,
    until: number,
    code: string,
    attempts: number,
    human: AbortSignal,
    stopped: () => boolean,
  ): Promise<{ kind: 'retry' } | undefined> {
    if (!(await this.hasUnfinishedWork(track))) return undefined;
    if (attempts >= this.deps.settings.maxAutoContinue) {
      if (!stopped()) await this.exhausted(track, code, attempts);
      return undefined;
    }
    if (stopped()) return undefined;
    const attempt = attempts + 1;
    await this.counter.record(track.sessionId, attempt);
    await this.recordWait(track.sessionId, { until, code });
    this.deps.log(`model request failed (${code}); the limit resets in ${Math.round((until - this.deps.clock.now()) / 60_000)} min: waiting until then (attempt ${attempt}/${this.deps.settings.maxAutoContinue})`);
    try {
      if (track.binding) {
        try {
          await (await this.deps.engine()).noteWaitUntil(track.sessionId, until);
        } catch (error) {
          this.deps.log(`could not say in Dida when the work carries on: ${messageOf(error)}`);
        }
      }
      for (;;) {
        const left = until - this.deps.clock.now();
        if (left <= 0) break;
        const waited = await this.deps.clock.wait(Math.min(left, PAUSE_LOOK_MS), [args.signal, human, this.deps.lifetime]);
        if (!waited || stopped()) return undefined;
        if (left > PAUSE_LOOK_MS && track.binding && (await this.lookForPause(track))) return undefined;
      }
      if (stopped()) return undefined;
    } finally {
      await this.recordWait(track.sessionId, undefined);
    }
    appendNote(this.deps, track, continuationMessage({ kind: 'continue', delayMs: 0, attempt, variant: 'error' }, this.deps.settings.maxAutoContinue, code));
    this.continued(track);
    return { kind: 'retry' };
  }

  /** Keeps (or clears) the wait for a limit's reset in the session record, so crash recovery resumes at its end. */
  private async recordWait(sessionId: string, wait: { until: number; code: string } | undefined): Promise<void> {
    if (!wait && !((await this.deps.state.read()).sessions[sessionId] as WaitMark | undefined)?.waitUntil) return;
    await this.deps.state.update((state) => {
      const session = (state.sessions[sessionId] ??= { touched: [], autoAttempts: 0, updatedAt: 0 }) as WaitMark & (typeof state.sessions)[string];
      if (wait) session.waitUntil = wait;
      else delete session.waitUntil;
    });
  }

  /** A failure no retry fixes: the current Work waits for the person now, saying why; the stretch ends. */
  private async needsPerson(track: AgentTrack, verdict: Extract<StopVerdict, { kind: 'needs_person' }>, code: string): Promise<void> {
    try {
      if (track.binding) {
        const flagged = await (await this.deps.engine()).waitForModelFailure(track.sessionId, verdict.cause, code, verdict.until);
        this.deps.log(flagged ? `model request failed (${code}): no retry can fix it; Work ${flagged.taskId} now waits for the person` : `model request failed (${code}): no retry can fix it; no unfinished current Work to flag`);
      } else this.deps.log(`model request failed (${code}): no retry can fix it`);
      await this.counter.note(track.sessionId, { kind: 'exhausted' });
    } catch (error) {
      this.deps.log(`could not ask the person for help: ${messageOf(error)}`);
    }
  }

  /** The last automatic attempt failed: the current Work waits for the person (🙋 reminder) and the stretch ends. */
  private async exhausted(track: AgentTrack, code: string, attempts: number): Promise<void> {
    try {
      if (track.binding) {
        const flagged = await (await this.deps.engine()).waitAfterAttempts(track.sessionId, attempts, code);
        if (!flagged) this.deps.log(`automatic continuation gave up after ${attempts} attempts (${code}); no unfinished current Work to flag`);
      }
      await this.counter.note(track.sessionId, { kind: 'exhausted' });
    } catch (error) {
      this.deps.log(`could not ask the person for help: ${messageOf(error)}`);
    }
  }
}
