// The live binding of each session's directory (config.yaml as it is now) and the tool set that goes with it.
import type { Binding, DidaTodoConfig } from '../../store/config-schema';
import { findBinding } from '../../store/config-bindings';
import type { RuntimeDeps } from './runtime-deps';
import { messageOf } from './runtime-deps';
import type { AgentTrack } from './agent-tracker';

/** Tools that only work in a bound directory: an unbound session is not shown them. */
export const BOUND_ONLY_TOOLS: readonly string[] = ['todo', 'todo_work'];
/** Every tool of this bundle: a subagent is shown none (it reports to its parent, which updates Dida). */
export const ALL_TOOLS: readonly string[] = ['todo', 'todo_work', 'dida_todo_setup'];

function sameBinding(a: Binding | undefined, b: Binding | undefined): boolean {
  return a?.projectId === b?.projectId && a?.cwd === b?.cwd;
}

export class LiveBinding {
  private latest: DidaTodoConfig | undefined;

  /** `onBound` runs when a session becomes bound (or bound to another list), e.g. to read the list. */
  constructor(
    private readonly deps: RuntimeDeps,
    private readonly onBound: (track: AgentTrack) => void = () => undefined,
  ) {}

  /** The config read last (undefined before the first successful read). */
  get config(): DidaTodoConfig | undefined {
    return this.latest;
  }

  /**
   * Reads config.yaml (a stat when unchanged) and brings every tracked session's binding and tool set up to date.
   * A read failure is logged and keeps the previous bindings. Resolves with the config read, if any.
   */
  async refresh(): Promise<DidaTodoConfig | undefined> {
    try {
      this.latest = await this.deps.config.read();
    } catch (error) {
      this.deps.log(messageOf(error));
      return undefined;
    }
    for (const track of this.deps.tracker.all()) this.apply(track);
    return this.latest;
  }

  /** Applies the last config read to one session: its binding, and which of this bundle's tools it sees. */
  apply(track: AgentTrack): void {
    if (track.subagent) {
      track.binding = undefined;
      this.restrict(track, 'subagent', ALL_TOOLS);
      return;
    }
    const before = track.binding;
    track.binding = this.latest ? findBinding(this.latest, track.cwd) : undefined;
    this.restrict(track, track.binding ? undefined : 'unbound', BOUND_ONLY_TOOLS);
    if (track.binding && !sameBinding(before, track.binding)) this.onBound(track);
  }

  /** Places (or lifts, with `kind` undefined) this plugin's one tool restriction on the agent, when it changes. */
  private restrict(track: AgentTrack, kind: string | undefined, deny: readonly string[]): void {
    if (track.restriction === kind) return;
    try {
      track.liftRestriction?.();
    } catch (error) {
      this.deps.log(`could not lift the tool restriction: ${messageOf(error)}`);
    }
    track.liftRestriction = undefined;
    track.restriction = undefined;
    if (!kind) return;
    const tools = track.agent.ctx?.tools;
    if (!tools) return;
    try {
      track.liftRestriction = tools.restrict({ deny: [...deny] });
      track.restriction = kind;
    } catch (error) {
      this.deps.log(`could not hide the Dida tools from session ${track.sessionId}: ${messageOf(error)}`);
    }
  }
}
