// The phone as the control panel, as dsh-host sees it: the answer relay and the pause guard behind four hooks, loaded
// on first use by a bound session (an unbound session never loads them).
import type { EngineDeps } from '../../core/work/engine-context';
import type { DidaTodoConfig } from '../../store/config-schema';
import type { RuntimeDeps } from '../session/runtime-deps';
import { messageOf } from '../session/runtime-deps';
import type { AgentTrack } from '../session/agent-tracker';
import type { AnswerRelay } from './answer-relay';
import type { PauseGuard } from './pause-guard';
import type { PreStepArgs, ToolExecution } from '../session/session-ports';
import type { SessionNotices } from './session-notices';
import type { StretchCounter } from '../session/stretch-counter';

interface Parts {
  answers: AnswerRelay;
  pause: PauseGuard;
}

export class PhoneControl {
  private parts: Promise<Parts> | undefined;

  /** `config` is config.yaml as read last: its `stopPhrases` win over the row's. */
  constructor(
    private readonly deps: RuntimeDeps,
    private readonly engine: () => Promise<{ deps: EngineDeps }>,
    private readonly counter: StretchCounter,
    private readonly config: () => DidaTodoConfig | undefined,
    private readonly notices?: SessionNotices,
  ) {}

  /** The relay and the guard, loaded once. */
  load(): Promise<Parts> {
    this.parts ??= Promise.all([import('./answer-relay'), import('./pause-guard')]).then(([relay, guard]) => ({
      answers: new relay.AnswerRelay(this.deps, this.counter, () => this.config(), (track, title) => this.notices?.resumed(track, title)),
      pause: new guard.PauseGuard(
        this.deps,
        async () => (await this.engine()).deps,
        () => this.config()?.stopPhrases ?? this.deps.settings.stopPhrases,
        (track, work) => this.notices?.paused(track, work),
      ),
    }));
    return this.parts;
  }

  /** Before each step of a bound session: a pause is looked for, then answers become this step's notes or wake idle sessions. */
  async beforeStep(track: AgentTrack, args: PreStepArgs): Promise<void> {
    if (!track.binding || track.subagent) return;
    await this.quietly(async ({ pause, answers }) => {
      await pause.beforeStep(track, args);
      await answers.atTurnStart(track, args);
      await answers.deliver();
    });
  }

  /** After a Dida tool call: a pause is looked for (the call may have read the task), then answers it synced are handed over. */
  async afterToolCall(call: { tool: string; exec: ToolExecution }): Promise<void> {
    if (call.tool !== 'todo' && call.tool !== 'todo_work') return;
    await this.quietly(async ({ pause, answers }) => {
      await pause.afterToolCall(call);
      await answers.deliver();
    });
  }

  /** A look for a pause on the session's current Work now (cancels its turn when paused); true when it was paused. */
  async lookForPause(track: AgentTrack): Promise<boolean> {
    if (!track.binding || track.subagent) return false;
    try {
      return await (await this.load()).pause.atBoundary(track, true);
    } catch (error) {
      this.deps.log(`answers and pauses from Dida: ${messageOf(error)} (looked at again later)`);
      return false;
    }
  }

  /** The session went idle: its stretch of work ended. */
  onIdle(track: AgentTrack): void {
    void this.parts?.then(({ pause }) => pause.onIdle(track)).catch(() => undefined);
  }

  /** After the poller read the lists: a pause set between turns is acknowledged, and answers reach their idle sessions. */
  afterPoll(): Promise<void> {
    return this.quietly(async ({ pause, answers }) => {
      await pause.afterPoll();
      await answers.deliver();
    });
  }

  private async quietly(work: (parts: Parts) => Promise<void>): Promise<void> {
    try {
      await work(await this.load());
    } catch (error) {
      this.deps.log(`answers and pauses from Dida: ${messageOf(error)} (looked at again at the next step or poll)`);
    }
  }
}
