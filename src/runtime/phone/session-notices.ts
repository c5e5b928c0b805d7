// What the phone did, shown in the dsh session itself: a line in the conversation (a `/dida` command card, which dsh
// web renders and never sends to the model) when a Work is paused from Dida, waits for the person's answer there, or
// is resumed from there; and the task panel's look of a Work that waits (no step "in progress", a line saying why).
import { randomUUID } from 'node:crypto';
import { pausedComment } from '../../core/phone/phone-pause';
import { getLocale, type Locale } from '../../core/text/locale';
import type { WorkRecord } from '../../core/work/work-state';
import type { DidaTodoConfig } from '../../store/config-schema';
import type { RuntimeDeps } from '../session/runtime-deps';
import { messageOf } from '../session/runtime-deps';
import type { AgentTrack } from '../session/agent-tracker';

/** The command name the cards are shown under (the bundle's own `/dida`). */
export const NOTICE_COMMAND = 'dida';

type PanelItem = { content: string; status: 'pending' | 'in_progress' | 'completed' };

/** The locale of what the person reads in the session: config.yaml's, else the row's. */
export function sessionLocale(deps: Pick<RuntimeDeps, 'locale'>, config: DidaTodoConfig | undefined): Locale {
  return config?.locale ? getLocale(config.locale) : deps.locale;
}

/**
 * The panel items of a Work that waits for the person: no step shows "in progress" (nothing is being worked on) and
 * a first line says why it waits, so dsh web's panel no longer reads "1 in progress". Other Works are left as they are.
 */
export function waitingPanel(locale: Locale, work: WorkRecord | undefined, items: PanelItem[]): PanelItem[] {
  if (!work?.waiting || items.length === 0) return items;
  const line = locale.t(work.waiting.pausedBy ? 'dsh.panel.paused' : 'dsh.panel.waiting', { title: work.title });
  const steps = items.map((item) => (item.status === 'in_progress' ? { ...item, status: 'pending' as const } : item));
  return [{ content: steps.some((s) => s.content === line) ? `${line} ` : line, status: 'pending' }, ...steps];
}

export class SessionNotices {
  constructor(
    private readonly deps: RuntimeDeps,
    private readonly config: () => DidaTodoConfig | undefined,
  ) {}

  private say(key: 'dsh.notice.paused' | 'dsh.notice.waiting' | 'dsh.notice.resumed', vars: Record<string, string>): string {
    return sessionLocale(this.deps, this.config()).t(key, vars);
  }

  /** The Work was paused from Dida (its priority set to none, a stop comment): where it stopped. */
  paused(track: AgentTrack, work: WorkRecord): void {
    const locale = sessionLocale(this.deps, this.config());
    // Where it stopped, as the Work's comment says it, without that comment's own "paused:" lead.
    const where = (pausedComment({ locale }, work).split('\n')[0] ?? '').replace(/^[^：:（(]+[：:]\s*/u, '');
    this.show(track, this.say('dsh.notice.paused', { title: work.title, where }));
  }

  /** The agent asked the person and the Work now waits for their answer in Dida. */
  waiting(track: AgentTrack, work: WorkRecord): void {
    this.show(track, this.say('dsh.notice.waiting', { title: work.title, reason: work.waiting?.reason ?? '' }));
  }

  /** After a Dida tool call: when the agent asked the person (wait_for_human), the session says the Work waits for them. */
  async afterToolCall(call: { tool: string; args: Record<string, unknown>; exec: { agent?: { id: string } }; result: { code: string } }): Promise<void> {
    if (call.tool !== 'todo_work' || call.args.action !== 'wait_for_human' || call.result.code !== 'ok' || !call.exec.agent) return;
    const track = this.deps.tracker.get(call.exec.agent.id);
    const state = await this.deps.state.read();
    const key = track ? state.sessions[track.sessionId]?.currentWork : undefined;
    const work = key ? state.works[key] : undefined;
    if (track && work?.waiting && !work.waiting.pausedBy) this.waiting(track, work);
  }

  /** The person resumed the Work from Dida (answered it, or set its priority back). */
  resumed(track: AgentTrack, title: string): void {
    this.show(track, this.say('dsh.notice.resumed', { title }));
  }

  /**
   * One command card in the session's conversation: `command/run` and `command/done`, as dsh's own command registry
   * logs a command (plain log events, inside a turn or between turns); never sent to the model. Appended on the next
   * tick (an append from inside an event listener would re-enter the session), and never throws.
   */
  private show(track: AgentTrack, text: string): void {
    if (track.subagent || this.deps.lifetime.aborted) return;
    queueMicrotask(() => {
      try {
        const commandId = `dida-${randomUUID()}`;
        track.agent.session.append('command/run', { commandId, name: NOTICE_COMMAND, args: '', source: { kind: 'plugin', plugin: 'dida-todo' } });
        track.agent.session.append('command/done', { commandId, kind: 'success', text });
      } catch (error) {
        this.deps.log(`could not show in session ${track.sessionId} what happened in Dida: ${messageOf(error)}`);
      }
    });
  }
}
