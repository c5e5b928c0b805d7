// The task panel: the current Work's steps published as a todo/write snapshot inside the open turn, and the model's
// own todo_write items counted as unfinished work.
import { panelItems } from '../core/tools';
import type { DidaTodoConfig } from '../store/config-schema';
import type { AdapterDeps } from './adapter-deps';
import { messageOf } from '../runtime/session/runtime-deps';
import { sessionLocale, waitingPanel } from '../runtime/phone/session-notices';
import type { AgentTrack } from '../runtime/session/agent-tracker';
import { optionalServices } from './ports';
import type { SessionEvent } from '../runtime/session/session-ports';

/** How long the first step of a turn waits for the read a person's message started. */
export const PANEL_SYNC_WAIT_MS = 5_000;

export class Panel {
  private projectionProbed = false;

  constructor(
    private readonly deps: AdapterDeps,
    private readonly config: () => DidaTodoConfig | undefined = () => undefined,
  ) {}

  /** Publishes the current Work's steps (only bound, top-level sessions; only when the snapshot changed in this turn). */
  async publish(track: AgentTrack, turn: number): Promise<void> {
    if (track.subagent || !track.binding || typeof track.agent.session?.append !== 'function') return;
    try {
      if (track.syncing) {
        const syncing = track.syncing;
        track.syncing = undefined;
        await Promise.race([syncing.catch(() => undefined), this.deps.clock.wait(PANEL_SYNC_WAIT_MS, [this.deps.lifetime])]);
      }
      const state = await this.deps.state.read();
      const key = state.sessions[track.sessionId]?.currentWork;
      const work = key ? state.works[key] : undefined;
      const todos = waitingPanel(sessionLocale(this.deps, this.config()), work, panelItems(work));
      if (todos.length === 0) return;
      const json = JSON.stringify(todos);
      if (json === track.lastPanel && track.lastPanelTurn === turn) return;
      track.agent.session.append('todo/write', { todos });
      track.lastPanel = json;
      track.lastPanelTurn = turn;
      this.probeProjection(track);
    } catch (error) {
      this.deps.log(`could not update the task panel: ${messageOf(error)}`);
    }
  }

  /** Once per process, after the first publish: dsh's task panel shows the list only when its `todos` projection took it. */
  private probeProjection(track: AgentTrack): void {
    const seams = this.deps.seams;
    if (!seams || this.projectionProbed) return;
    this.projectionProbed = true;
    try {
      const values = optionalServices.sessionProjections(this.deps.ctx)?.snapshot(track.agent.session)?.values;
      if (values && typeof values === 'object' && 'todos' in values) seams.present('panel');
      else seams.lack('panel', 'the list the bundle published reached no todos projection');
    } catch (error) {
      seams.lack('panel', `reading the todos projection failed: ${messageOf(error)}`);
    }
  }

  /** Counts the open items of a todo/write the model made (our own mirror is recognised and ignored). */
  observe(track: AgentTrack, event: SessionEvent): void {
    if (event?.type !== 'todo/write') return;
    const todos: Array<{ status?: string }> = Array.isArray(event.data?.todos) ? event.data.todos : [];
    if (JSON.stringify(event.data?.todos) === track.lastPanel) return;
    track.modelTodosOpen = todos.filter((t) => t.status !== 'completed').length;
  }
}
