// Hands the person's answers from Dida to the model: a follow-up into the idle session whose current Work was answered,
// a note at the next step of a running one, or at the first step of the next turn in a directory bound to that list.
import { answerNote, answersMayArrive, mayTakeAnswer, returnAnswer, takeAnswers, type TakenAnswer } from '../../core/phone/phone-answers';
import { routeFor } from '../../core/queue/route-tags';
import type { DidaTodoConfig } from '../../store/config-schema';
import type { RuntimeDeps } from '../session/runtime-deps';
import { messageOf } from '../session/runtime-deps';
import type { AgentTrack } from '../session/agent-tracker';
import { canWake, personIsWaiting, pluginMessage, sendOwnMessage } from '../session/messages';
import type { PreStepArgs } from '../session/session-ports';
import type { StretchCounter } from '../session/stretch-counter';

/** How long the first step of a turn waits for the session's first read of its list (which may carry an answer). */
export const ANSWER_SYNC_WAIT_MS = 5_000;

export class AnswerRelay {
  private readonly store: { state: RuntimeDeps['state']; now: () => number };

  /** `config` is config.yaml as read last (the bindings' route tags decide which directory may take an answer). */
  /** `onResumed` is told of each answer handed to a session (the session shows it: session-notices.ts). */
  constructor(
    private readonly deps: RuntimeDeps,
    private readonly counter: StretchCounter,
    private readonly config: () => DidaTodoConfig | undefined = () => undefined,
    private readonly onResumed: (track: AgentTrack, title: string) => void = () => undefined,
  ) {
    this.store = { state: deps.state, now: () => deps.clock.now() };
  }

  private sessions(): AgentTrack[] {
    return this.deps.tracker.all().filter((t) => !t.subagent && t.binding);
  }

  /**
   * Answers for the current Works of live bound sessions: an idle session (with no person's message queued) is woken
   * with a follow-up at once; a running one gets the note at its next step. Reads the state only; each answer is taken
   * from it once (a failed follow-up puts it back).
   */
  async deliver(): Promise<void> {
    const tracks = this.sessions();
    if (tracks.length === 0 || this.deps.lifetime.aborted) return;
    const state = await this.deps.state.read();
    const owners = new Map<string, AgentTrack>();
    for (const track of tracks) {
      const key = state.sessions[track.sessionId]?.currentWork;
      const work = key ? state.works[key] : undefined;
      // An idle session this dsh cannot wake (no agent.followup) takes the answer at its next turn's first step instead.
      if (key && work?.pendingAnswer && !work.waiting && (track.agent.status !== 'idle' || canWake(track.agent))) owners.set(key, track);
    }
    if (owners.size === 0) return;
    for (const answer of await takeAnswers(this.store, (key) => owners.has(key))) {
      await this.hand(owners.get(answer.key) as AgentTrack, answer);
    }
  }

  /**
   * At the first step of a turn: after the session's first read of its list (bounded), answers of Works in its list
   * that may run in its directory (route tags) and that no other live session of this process works on become notes of
   * this step (a one-shot run in the directory gets them in its first
   * request).
   */
  async atTurnStart(track: AgentTrack, args: Pick<PreStepArgs, 'step'>): Promise<void> {
    const binding = track.binding;
    if (!binding || track.subagent || (args.step !== undefined && args.step !== 1)) return;
    const reading = track.sessionSync?.promise ?? track.syncing;
    // The read is waited for only when it may bring an answer: a Work of the list waits for the person or holds one.
    if (reading && answersMayArrive(await this.deps.state.read(), binding.projectId)) await Promise.race([reading.catch(() => undefined), this.deps.clock.wait(ANSWER_SYNC_WAIT_MS, [this.deps.lifetime])]);
    const state = await this.deps.state.read();
    const others = new Set(
      this.deps.tracker
        .all()
        .filter((t) => t !== track && !t.subagent)
        .map((t) => state.sessions[t.sessionId]?.currentWork)
        .filter((key): key is string => !!key),
    );
    const config = this.config();
    const route = config ? routeFor(config, binding) : undefined;
    const taker = { projectId: binding.projectId, ...(route ? { route } : {}) };
    const taken = await takeAnswers(this.store, (key, work) => !others.has(key) && mayTakeAnswer(work, taker));
    for (const answer of taken) {
      track.pendingNotes.push(pluginMessage(answerNote(answer), this.deps.newId()));
      this.onResumed(track, answer.title);
    }
    if (taken.length) this.deps.log(`gave the person's answer to ${taken.map((a) => a.key).join(', ')} to session ${track.sessionId}`);
  }

  private async hand(track: AgentTrack, answer: TakenAnswer): Promise<void> {
    this.onResumed(track, answer.title);
    const message = pluginMessage(answerNote(answer), this.deps.newId());
    if (track.agent.status !== 'idle' || personIsWaiting(track.agent) || !canWake(track.agent)) {
      track.pendingNotes.push(message);
      return;
    }
    try {
      await this.counter.note(track.sessionId, { kind: 'new_work' });
      sendOwnMessage((message) => track.agent.followup(message), answerNote(answer), this.deps.newId());
      this.deps.log(`the person answered Work ${answer.key} in Dida; woke session ${track.sessionId} with it`);
    } catch (error) {
      this.deps.log(`could not wake session ${track.sessionId} with the person's answer (kept for later): ${messageOf(error)}`);
      await returnAnswer(this.store, answer);
    }
  }
}
