// The per-session count of consecutive automatic continuations, kept in the state file so a restart keeps it.
import { resetsCounter, type StretchEvent } from '../../core/continuation/continuation-policy';
import type { RuntimeDeps } from './runtime-deps';

export class StretchCounter {
  constructor(private readonly deps: Pick<RuntimeDeps, 'state' | 'clock'>) {}

  /** Automatic continuations made so far in the session's current stretch of work. */
  async attempts(sessionId: string): Promise<number> {
    return (await this.deps.state.read()).sessions[sessionId]?.autoAttempts ?? 0;
  }

  /** Records automatic attempt number `attempt` (1-based) of the session's stretch. */
  async record(sessionId: string, attempt: number): Promise<void> {
    const now = this.deps.clock.now();
    await this.deps.state.update((state) => {
      const session = (state.sessions[sessionId] ??= { touched: [], autoAttempts: 0, updatedAt: 0 });
      session.autoAttempts = attempt;
      session.lastAutoAt = now;
      session.updatedAt = now;
    });
  }

  /** Starts the count afresh when `event` ends the stretch (see `resetsCounter`); writes only when it was not 0. */
  async note(sessionId: string, event: StretchEvent): Promise<void> {
    if (!resetsCounter(event)) return;
    if (!(await this.attempts(sessionId))) return;
    await this.deps.state.update((state) => {
      const session = state.sessions[sessionId];
      if (session) session.autoAttempts = 0;
    });
  }
}
