// Turn markers in the state file: while a bound session's turn runs, its record says since when, in which process
// and in which directory — what crash recovery looks for after a crash.
import { randomUUID } from 'node:crypto';
import type { SessionWorkFacts } from '../../core/continuation/continuation-policy';
import type { LiveMark } from '../../core/queue/claim-holders';
import type { SessionRecord } from '../../core/work/work-state';
import type { RuntimeDeps } from '../session/runtime-deps';
import type { AgentTrack } from '../session/agent-tracker';

/** What this plugin adds to a session record while a turn runs (the record schema keeps unknown keys). */
export interface TurnMarker {
  turnOpenSince?: number;
  /** The process that ran the turn: while it lives, the turn was not interrupted. */
  turnOpenPid?: number;
  /** The session's directory, to find its binding before the session is live again. */
  cwd?: string;
  /**
   * The process that opened the turn, by a mark of its own: a marker with this process's mark belongs to a turn that
   * is running here, never to an interrupted one (a process id alone may be the crashed process's, reused).
   */
  turnOpenBy?: string;
  /**
   * What only the host knew of the session's own work while the turn ran (its goal, its open todo_write items), so
   * crash recovery judges a session that is not live yet by the same rule as continuation.
   */
  turnFacts?: { goalPhase?: string; modelTodosOpen: number };
  /**
   * Crash recovery took the interrupted turn and resumes it by `until` (after its backoff) in process `pid`: between the
   * taking and the resumed turn the session is idle and holds no open turn, yet it is not free for other work.
   */
  resumeDue?: { pid: number; until: number };
}

/** Whether crash recovery is about to resume the session (its resume is due and the process resuming it lives). */
export function resumePending(record: TurnMarker | undefined, now: number, isAlive: (pid: number) => boolean): boolean {
  const due = record?.resumeDue;
  return !!due && due.until > now && isAlive(due.pid);
}

/** Whether the session's turn is open, or was interrupted and is about to be resumed: it goes back to that turn first. */
export function turnPending(record: TurnMarker | undefined, now: number, isAlive: (pid: number) => boolean): boolean {
  return record?.turnOpenSince !== undefined || resumePending(record, now, isAlive);
}

/** This process's mark on the turns it opens. */
export const THIS_PROCESS = randomUUID();

export type MarkedSession = SessionRecord & TurnMarker & LiveMark;

export class TurnMarkers {
  constructor(
    private readonly deps: Pick<RuntimeDeps, 'state' | 'clock'>,
    private readonly pid: number = process.pid,
    private readonly mark: string = THIS_PROCESS,
  ) {}

  /**
   * Records that the session's turn is open (first mark wins), in which process and directory, and what the host knows
   * of the session's own work (`facts`).
   */
  async markOpen(track: AgentTrack, facts?: SessionWorkFacts): Promise<void> {
    const now = this.deps.clock.now();
    await this.deps.state.update((state) => {
      const session = (state.sessions[track.sessionId] ??= { touched: [], autoAttempts: 0, updatedAt: 0 }) as MarkedSession;
      session.turnOpenSince ??= now;
      session.turnOpenPid = this.pid;
      session.turnOpenBy = this.mark;
      delete session.resumeDue;
      session.cwd = track.cwd;
      session.updatedAt = now;
      if (facts) session.turnFacts = factsRecord(facts);
      else delete session.turnFacts;
    });
  }

  /** While a turn is open: keeps the recorded facts current (written only when whether they ask for work changed). */
  async noteFacts(sessionId: string, facts: SessionWorkFacts): Promise<void> {
    const known = (await this.deps.state.read()).sessions[sessionId] as MarkedSession | undefined;
    if (known?.turnOpenSince === undefined || sameFacts(known.turnFacts, facts)) return;
    await this.deps.state.update((state) => {
      const session = state.sessions[sessionId] as MarkedSession | undefined;
      if (session?.turnOpenSince !== undefined) session.turnFacts = factsRecord(facts);
    });
  }

  /**
   * The session is live in this process (its claims hold while the process lives): the record names the process.
   * Written only when it names another process.
   */
  async markLive(track: AgentTrack): Promise<void> {
    if (((await this.deps.state.read()).sessions[track.sessionId] as LiveMark | undefined)?.livePid === this.pid) return;
    await this.deps.state.update((state) => {
      const session = (state.sessions[track.sessionId] ??= { touched: [], autoAttempts: 0, updatedAt: 0 }) as MarkedSession;
      session.livePid = this.pid;
      session.cwd = track.cwd;
      // Live again (a disposed session that came back): it may hold claims once more.
      delete session.goneAt;
    });
  }

  /** The session is gone from this process (disposed, or its one-shot run ended). */
  async markGone(sessionId: string): Promise<void> {
    if (((await this.deps.state.read()).sessions[sessionId] as LiveMark | undefined)?.livePid === undefined) return;
    await this.deps.state.update((state) => {
      const session = state.sessions[sessionId] as MarkedSession | undefined;
      if (!session) return;
      delete session.livePid;
      if (session.turnOpenSince === undefined && holdsNothing(session)) delete state.sessions[sessionId];
    });
  }

  /**
   * The session's turn ended (idle): nothing to recover. Writes only when a marker is there. A record left holding
   * nothing else (no current Work, no Work touched, no automatic attempts counted) is dropped, so sessions that only
   * talked — each headless one-shot is a new session — do not pile up in the state.
   */
  async markClosed(sessionId: string): Promise<void> {
    if ((await this.deps.state.read()).sessions[sessionId]?.turnOpenSince === undefined) return;
    await this.deps.state.update((state) => {
      const session = state.sessions[sessionId] as MarkedSession | undefined;
      if (!session) return;
      delete session.turnOpenSince;
      delete session.turnOpenPid;
      delete session.turnOpenBy;
      delete session.turnFacts;
      session.updatedAt = this.deps.clock.now();
      if (holdsNothing(session)) delete state.sessions[sessionId];
    });
  }
}

function factsRecord(facts: SessionWorkFacts): NonNullable<TurnMarker['turnFacts']> {
  return { modelTodosOpen: facts.modelTodosOpen, ...(facts.goalPhase ? { goalPhase: facts.goalPhase } : {}) };
}

/** Whether the recorded facts ask for work exactly when `facts` do (only that matters to recovery). */
function sameFacts(recorded: TurnMarker['turnFacts'], facts: SessionWorkFacts): boolean {
  const asks = (f: SessionWorkFacts | undefined) => [f?.goalPhase === 'active', (f?.modelTodosOpen ?? 0) > 0].join();
  return recorded !== undefined && asks(recorded) === asks(facts) && recorded.goalPhase === facts.goalPhase;
}

/** Keys a record may carry that say nothing once the turn is closed. */
const EMPTY_KEYS = new Set(['touched', 'autoAttempts', 'updatedAt', 'cwd', 'lastAutoAt', 'livePid', 'goneAt']);

/** A closed session record with nothing in it that anything reads (an absent record means the same). */
function holdsNothing(session: MarkedSession): boolean {
  return session.touched.length === 0 && session.autoAttempts === 0 && Object.keys(session).every((key) => EMPTY_KEYS.has(key));
}
