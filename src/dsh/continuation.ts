// Automatic continuation after a model error: wait the backoff, then retry the request with a note the retried
// request itself carries; after the last attempt the current Work waits for the person.
import { continuationMessage, decideContinuation, unfinishedWork, type SessionWorkFacts } from '../core/continuation-policy';
import { messageOf, type AdapterDeps } from './adapter-deps';
import type { AgentTrack } from './agent-tracker';
import { optionalServices, personIsWaiting, pluginMessage, type RequestErrorArgs } from './ports';
import type { StretchCounter } from './stretch-counter';

/** A model-facing note that becomes part of the session's history right away (so the very next request carries it). */
export function appendNote(deps: Pick<AdapterDeps, 'newId' | 'log'>, track: AgentTrack, text: string): void {
  const message = pluginMessage(text, deps.newId());
  try {
    track.agent.session.append('user/message', message, { surfaceOp: 'append' });
  } catch (error) {
    deps.log(`could not add the note to the session, queueing it instead: ${messageOf(error)}`);
    track.agent.inject(message);
  }
}

/** What the host knows live about a session's own work (its todo_write items, its goal). */
export function liveFacts(deps: Pick<AdapterDeps, 'ctx'>, track: AgentTrack): SessionWorkFacts {
  const phase = optionalServices.goals(deps.ctx)?.get(track.agent)?.phase;
  return { modelTodosOpen: track.modelTodosOpen, ...(phase ? { goalPhase: phase } : {}) };
}

export class Continuation {
  constructor(
    private readonly deps: AdapterDeps,
    private readonly counter: StretchCounter,
  ) {}

  /** See `unfinishedWork`: a Work the session touched is unfinished, its goal is active, or todo_write items are open. */
  async hasUnfinishedWork(track: AgentTrack): Promise<boolean> {
    return unfinishedWork(await this.deps.state.read(), track.sessionId, liveFacts(this.deps, track)) !== undefined;
  }

  /**
   * The `agent/request-error` decision after dsh's own retries: `{kind:'retry'}` after the backoff, with the note
   * appended to the session so the retried request contains it (each attempt's note names its number, so no two
   * attempts send the same request); undefined to let the turn fail. A person's message (already queued, or arriving
   * at any point until the retry; `personWrote` says whether one arrived since the failure reached the adapter), the
   * turn's abort and disposal all end it with undefined at once.
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
    const decision = decideContinuation({
      failureCode: code,
      attempts,
      maxAutoContinue: this.deps.row.maxAutoContinue,
      backoffSeconds: this.deps.row.backoff,
      hasUnfinishedWork: await this.hasUnfinishedWork(track),
    });
    if (decision.kind === 'stop') {
      if (decision.reason === 'exhausted' && !stopped()) await this.exhausted(track, code, attempts);
      return undefined;
    }
    if (stopped()) return undefined;
    await this.counter.record(track.sessionId, decision.attempt);
    this.deps.log(
      `model request failed (${code}); continuing automatically in ${Math.round(decision.delayMs / 1000)} s (attempt ${decision.attempt}/${this.deps.row.maxAutoContinue})`,
    );
    const waited = await this.deps.clock.wait(decision.delayMs, [args.signal, human, this.deps.lifetime]);
    if (!waited || stopped()) return undefined;
    appendNote(this.deps, track, continuationMessage(decision, this.deps.row.maxAutoContinue, code));
    return { kind: 'retry' };
  }

  /** The last automatic attempt failed: the current Work waits for the person (🙋 reminder) and the stretch ends. */
  private async exhausted(track: AgentTrack, code: string, attempts: number): Promise<void> {
    try {
      if (track.binding) {
        const engine = await this.deps.engine();
        if (await engine.currentWork(track.sessionId)) {
          await engine.waitForHuman(track.sessionId, this.deps.locale.t('dida.waiting.exhausted', { attempts, error: code }));
        } else this.deps.log(`automatic continuation gave up after ${attempts} attempts (${code}); no current Work to flag`);
      }
      await this.counter.note(track.sessionId, { kind: 'exhausted' });
    } catch (error) {
      this.deps.log(`could not ask the person for help: ${messageOf(error)}`);
    }
  }
}
