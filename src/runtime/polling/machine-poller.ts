// One poller per machine, account and list: the processes of the machine elect it through the lock folder; it reads the
// list for the idle bound sessions of every process and hands each Work it claims to one of them — a session of its own
// process at once, a session of another process through an offer in the shared state that process takes on its next look.
import { hostLabelOf, sessionTag } from '../../core/queue/claim-holders';
import type { WorkEngine } from '../../core/engine/work-engine';
import { isSettled, type EngineState, type WorkRecord } from '../../core/work/work-state';
import { withRequestPriority } from '../../dida/request-budget';
import type { Binding, DidaTodoConfig } from '../../store/config-schema';
import { findBinding } from '../../store/config-bindings';
import { processAlive, processStopped } from '../../common/process-alive';
import type { RuntimeDeps } from '../session/runtime-deps';
import { messageOf } from '../session/runtime-deps';
import { PollElection } from './poll-election';
import { forgetWoken, removeOffer, sharedWork, writeOffer, writeWoken, type MarkedRecord } from './poll-marks';
import { pollDue, type ListPace, type PollPace } from './poll-pace';
import { nextPacedLook } from '../../core/engine/sync-looks';
import type { PollCandidate, Poller } from './poller';
import { retrySettles } from './poll-upkeep';
import { HandOvers } from './poll-hand-overs';
import { turnPending, type TurnMarker } from '../turns/turn-markers';
import type { StretchCounter } from '../session/stretch-counter';

/** How often each process looks at the shared state: offers for its sessions, elections, polls that fall due. */
export const POLL_TICK_MS = 1_000;
/** An offer not taken this long (its process alive but not looking) is withdrawn and the Work released. */
export const OFFER_TTL_MS = 2 * 60_000;
/** How often the leader looks for Works it handed to sessions of this machine that died before their first turn. */
const DEAD_HOLDER_SWEEP_MS = 30_000;

export interface MachinePollerOptions {
  /** The lock folder the election uses. */
  lockDir: string;
  /** The Dida account the election is keyed by (see Runtime.account). */
  account: () => Promise<string>;
  /** The full engine: its deps (claims), touch (taking a Work over). */
  engine: () => Promise<WorkEngine>;
  pid?: number;
  isAlive?: (pid: number) => boolean;
  /** Whether a live process looks at the state now (a stopped one, Ctrl-Z, cannot take a hand-over). */
  canLook?: (pid: number) => boolean;
  /** Runs after the leader read a list, and in other processes when an answer waits for one of their sessions. */
  afterRead?: () => Promise<void>;
  tickMs?: number;
}

export class MachinePoller {
  private readonly election: PollElection;
  private readonly pid: number;
  private readonly isAlive: (pid: number) => boolean;
  private readonly canLook: (pid: number) => boolean;
  private readonly lists = new Map<string, ListPace>();
  private pace: PollPace = { baseMs: 20_000, ceilingMs: 10 * 60_000 };
  private stop: (() => void) | undefined;
  private ticking: Promise<void> | undefined;
  private closed = false;
  private sweptAt = -Infinity;
  private settledAt = 0;
  private accountFailure: string | undefined;
  private readonly polls = new Set<Promise<void>>();
  private readonly handOvers: HandOvers;

  constructor(
    private readonly deps: RuntimeDeps,
    private readonly poller: Poller,
    counter: StretchCounter,
    private readonly options: MachinePollerOptions,
  ) {
    this.pid = options.pid ?? process.pid;
    this.isAlive = options.isAlive ?? processAlive;
    this.canLook = options.canLook ?? ((pid) => !processStopped(pid));
    this.election = new PollElection(options.lockDir, { now: () => deps.clock.now(), log: deps.log });
    this.handOvers = new HandOvers(deps, counter, { pid: this.pid, isAlive: this.isAlive, engine: options.engine });
  }

  /** The pace it polls at (while it leads a list). */
  get pacing(): PollPace {
    return { ...this.pace };
  }

  /** Takes part in the machine's polling at `pace` until `close()`. */
  start(pace: PollPace): void {
    this.pace = pace;
    this.stop?.();
    this.stop = this.deps.clock.every(this.options.tickMs ?? POLL_TICK_MS, () => void this.tick());
    void this.tick();
  }

  /** Stops polling; resolves once the look and polls under way have ended and its locks are released. */
  async close(): Promise<void> {
    this.closed = true;
    this.stop?.();
    this.stop = undefined;
    await Promise.allSettled([this.ticking, this.polled()]);
    await this.election.close();
  }

  /** Whether this process polls `projectId` for the machine now. */
  leads(account: string, projectId: string): boolean {
    return this.election.leads(`${account}-${projectId}`);
  }

  /** One look (a look already running is joined). */
  tick(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.ticking ??= this.look()
      .catch((error: unknown) => this.deps.log(`polling for new work failed (will retry): ${messageOf(error)}`))
      .finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  private async look(): Promise<void> {
    if (this.deps.lifetime.aborted) return;
    const state = await this.deps.state.read();
    await this.handOvers.markReady(state);
    await this.handOvers.takeOffers(state);
    await this.handOvers.resumeHanded(state);
    if (this.handOvers.answerWaits(state)) await this.options.afterRead?.();
    const now = this.deps.clock.now();
    if (now - this.settledAt >= DEAD_HOLDER_SWEEP_MS) {
      this.settledAt = now;
      await retrySettles(this.handOvers.own(), state, this.options.engine, this.deps.log, this.deps.lifetime);
    }
    const lists = new Set(this.handOvers.own().map((t) => (t.binding as Binding).projectId));
    let account: string;
    try {
      account = await this.options.account();
      this.accountFailure = undefined;
    } catch (error) {
      const message = messageOf(error);
      if (this.accountFailure !== message) this.deps.log(`polling waits for Dida access: ${message}`);
      this.accountFailure = message;
      return;
    }
    for (const key of this.election.led()) {
      const projectId = key.slice(account.length + 1);
      if (!key.startsWith(`${account}-`) || !lists.has(projectId)) {
        this.election.resign(key);
        this.lists.delete(projectId);
      }
    }
    if (lists.size === 0) return;
    const config = await this.deps.config.read().catch(() => undefined);
    for (const projectId of lists) {
      if (this.deps.lifetime.aborted) return;
      if (!(await this.election.tryLead(`${account}-${projectId}`))) {
        this.lists.delete(projectId);
        continue;
      }
      await this.lead(projectId, await this.deps.state.read(), config);
    }
  }

  /** Whether the record is a live session of another process of this machine that takes part in polling. */
  private liveElsewhere(record: MarkedRecord): boolean {
    return record.livePid !== undefined && record.livePid !== this.pid && record.pollReady === record.livePid && this.isAlive(record.livePid) && this.canLook(record.livePid);
  }

  /** The idle bound sessions of `projectId` on the machine: this process's tracks, and other processes' records. */
  private candidates(projectId: string, state: EngineState, config: DidaTodoConfig | undefined, host: string): PollCandidate[] {
    const found: PollCandidate[] = [];
    // A session still holding an unfinished current Work is not free: handing it another would switch its Work under it.
    const holdsUnfinished = (sessionId: string) => {
      const work = state.works[state.sessions[sessionId]?.currentWork ?? ''];
      return !!work && work.phase === 'open' && !work.waiting && !isSettled(work) && work.claim?.holder === `${host}#${sessionTag(sessionId)}`;
    };
    const recovering = (record: TurnMarker | undefined) => turnPending(record, this.deps.clock.now(), this.isAlive);
    const mine = new Set(this.deps.tracker.all().map((t) => t.sessionId));
    for (const track of this.handOvers.own()) {
      const record = state.sessions[track.sessionId] as MarkedRecord | undefined;
      if (track.binding?.projectId !== projectId || track.agent.status !== 'idle' || record?.pollOffer || recovering(record) || holdsUnfinished(track.sessionId)) continue;
      found.push({ sessionId: track.sessionId, binding: track.binding, track });
    }
    if (!config) return found;
    for (const [sessionId, raw] of Object.entries(state.sessions)) {
      const record = raw as MarkedRecord;
      if (mine.has(sessionId) || !record.cwd || recovering(record) || record.pollOffer || !this.liveElsewhere(record) || holdsUnfinished(sessionId)) continue;
      const binding = findBinding(config, record.cwd);
      if (binding?.projectId === projectId) found.push({ sessionId, binding });
    }
    return found;
  }

  /** As the list's leader: withdraws stale offers, and polls when it is due and someone on the machine is idle. */
  private async lead(projectId: string, state: EngineState, config: DidaTodoConfig | undefined): Promise<void> {
    const now = this.deps.clock.now();
    let pace = this.lists.get(projectId);
    if (!pace) {
      pace = { lastPollAt: -Infinity, lastChangeAt: now, idleSince: new Map(), soon: false, polling: false };
      this.lists.set(projectId, pace);
    }
    await this.withdrawStale(projectId, state, now);
    if (now - this.sweptAt >= DEAD_HOLDER_SWEEP_MS) {
      this.sweptAt = now;
      await this.releaseDeadHolders(projectId, state);
    }
    const candidates = this.candidates(projectId, state, config, hostLabelOf((await this.options.engine()).deps));
    const idle = new Set(candidates.map((c) => c.sessionId));
    for (const id of [...pace.idleSince.keys()]) if (!idle.has(id)) pace.idleSince.delete(id);
    for (const id of idle) {
      if (pace.idleSince.has(id)) continue;
      pace.idleSince.set(id, now);
      pace.soon = true;
    }
    // Nothing idle on the machine: nobody could take work, so nothing is read.
    if (candidates.length === 0 || pace.polling) return;
    if (!pollDue(this.pace, pace, now, nextPacedLook(state, projectId, pace.lastPollAt, this.pace.baseMs))) return;
    pace.lastPollAt = now;
    pace.soon = false;
    // The session idle longest is offered work first.
    candidates.sort((a, b) => (pace.idleSince.get(a.sessionId) ?? now) - (pace.idleSince.get(b.sessionId) ?? now));
    const shared = sharedWork(state, (record) => record.livePid !== undefined && this.isAlive(record.livePid));
    pace.polling = true;
    const listPace = pace;
    const polled = withRequestPriority('poll', () =>
      this.poller.pollList(projectId, candidates, {
        offered: shared.offered,
        held: shared.held,
        handOff: (sessionId, work) => this.offer(sessionId, projectId, work),
        woke: (sessionId, key) => writeWoken(this.deps.state, sessionId, key, this.pid),
      }),
    )
      .then((outcome) => {
        if (outcome.fingerprint !== listPace.fingerprint || outcome.handed.length > 0) listPace.lastChangeAt = this.deps.clock.now();
        listPace.fingerprint = outcome.fingerprint;
      })
      .catch((error: unknown) => this.deps.log(`polling the Dida list failed (will retry): ${messageOf(error)}`))
      .finally(() => {
        listPace.polling = false;
        this.polls.delete(polled);
      });
    this.polls.add(polled);
  }

  /** Resolves once the polls running now have ended (their claims and hand-overs written). */
  async polled(): Promise<void> {
    while (this.polls.size > 0) await Promise.allSettled([...this.polls]);
  }

  /** Hands `work` (claimed for the session) to a session of another process. */
  private async offer(sessionId: string, projectId: string, work: WorkRecord): Promise<void> {
    const key = await writeOffer(this.deps.state, sessionId, projectId, work, this.deps.clock.now(), this.pid);
    this.deps.log(`claimed Work ${key} for session ${sessionId} of another process and handed it over`);
  }

  /** Offers nobody will take (process gone or stopped, or no look for OFFER_TTL_MS): removed, and the Work's claim released. */
  private async withdrawStale(projectId: string, state: EngineState, now: number): Promise<void> {
    for (const [sessionId, raw] of Object.entries(state.sessions)) {
      const record = raw as MarkedRecord;
      const offer = record.pollOffer;
      if (!offer || offer.projectId !== projectId) continue;
      const alive = record.livePid !== undefined && this.isAlive(record.livePid) && this.canLook(record.livePid);
      if (alive && now - offer.at < OFFER_TTL_MS) continue;
      if (!(await removeOffer(this.deps.state, sessionId, offer.key))) continue;
      await this.handOvers.release(await this.options.engine(), sessionId, offer.key, alive ? 'its session did not take it in time' : 'the process of its session has ended');
    }
  }

  /**
   * Works of this list the poller handed to a session of this machine that nobody will carry on: the session's process
   * died before the session's turn began (no turn for crash recovery to resume), or the session is on another Work now
   * (it went idle with this one unfinished and was handed a new one). Their claims are released at once, not after the
   * lease, and they are offered again.
   */
  private async releaseDeadHolders(projectId: string, state: EngineState): Promise<void> {
    const engine = await this.options.engine();
    const host = hostLabelOf(engine.deps);
    for (const [sessionId, raw] of Object.entries(state.sessions)) {
      const record = raw as MarkedRecord;
      if (!record.pollWoken?.length || record.turnOpenSince !== undefined || record.pollOffer) continue;
      const alive = record.livePid !== undefined && this.isAlive(record.livePid);
      const holder = `${host}#${sessionTag(sessionId)}`;
      for (const key of record.pollWoken) {
        if (alive && key === record.currentWork) continue;
        const work = state.works[key];
        if (work?.projectId !== projectId || work.phase !== 'open' || work.waiting || isSettled(work)) continue;
        if (work.claim?.holder === holder) {
          await this.handOvers.release(engine, sessionId, key, alive ? 'its session went on to another Work' : 'the process of its session ended before the session started on it');
        } else if (alive && !work.claim) {
          // Handed over but never claimed in Dida (the claim's write was refused): free to be offered again.
          await forgetWoken(this.deps.state, sessionId, key);
        }
      }
    }
  }
}

