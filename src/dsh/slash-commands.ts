// `/dida …` in dsh web: the person's controls without the model. Parses the command, calls the engine and the
// bindings, and answers in the person's language; the rules (what is queued, what a pause does) are the core's.
import { bindList, NearListNameError, unbindList } from '../core/queue/bindings';
import { isWorkError } from '../core/work/engine-context';
import { getLocale, type Locale, type MessageKey } from '../core/text/locale';
import { pauseCurrentWork, resumeCurrentWork } from '../core/phone/person-controls';
import { personQueue, type PersonQueueEntry } from '../core/engine/queue-view';
import { askLine } from '../core/phone/desk-asks';
import { normaliseRouteTag, routeFor } from '../core/queue/route-tags';
import { truncateGraphemes } from '../core/text/text-guard';
import type { WorkEngine } from '../core/engine/work-engine';
import { visibleSteps, SETTLED } from '../core/work/work-state';
import type { Runtime } from '../wiring/runtime';
import type { AdapterDeps } from './adapter-deps';
import { messageOf } from '../runtime/session/runtime-deps';
import type { AgentTrack } from '../runtime/session/agent-tracker';
import type { LiveBinding } from '../runtime/session/live-binding';
import { PAUSE_CANCEL_REASON } from '../runtime/phone/pause-guard';
import type { SlashInvocation, SlashResult } from './ports';
import { canWake, sendOwnMessage } from '../runtime/session/messages';
import type { HostAgent } from '../runtime/session/session-ports';
import type { StretchCounter } from '../runtime/session/stretch-counter';

/** Works listed in a `/dida queue` answer at most. */
export const SLASH_QUEUE_SHOWN = 30;
/** Longest Dida title shown in an answer (graphemes). */
const TITLE_MAX = 80;

/** The note that starts the turn `/dida run` asked for; the turn is given the queue as with the trigger phrase. */
export const RUN_NOTE = '[dida-todo] The person asked (with /dida run) to take work from the Dida queue now.';
/** The note that lets a session carry on with a Work the person resumed with `/dida resume`. */
export const RESUME_NOTE = '[dida-todo] The person resumed the current Work (with /dida resume): carry on with it; todo list shows where it stands.';

export type SlashSubcommand = 'help' | 'status' | 'queue' | 'bind' | 'unbind' | 'pause' | 'resume' | 'run';
const SUBCOMMANDS: readonly SlashSubcommand[] = ['help', 'status', 'queue', 'bind', 'unbind', 'pause', 'resume', 'run'];

/** `/dida <sub> <argument>`: the subcommand (case ignored) and the rest of the line, trimmed. Empty input is `help`. */
export function parseSlash(rawInput: string): { sub: SlashSubcommand; argument: string } | { unknown: string } {
  const input = rawInput.trim();
  if (input === '') return { sub: 'help', argument: '' };
  const [word = '', ...rest] = input.split(/\s+/);
  const sub = word.toLowerCase();
  const argument = input.slice(word.length).trim();
  void rest;
  return (SUBCOMMANDS as readonly string[]).includes(sub) ? { sub: sub as SlashSubcommand, argument } : { unknown: word };
}

/** Dida text in an answer: one line, no control or bidi characters, bounded. */
function plain(text: string, max = TITLE_MAX): string {
  // eslint-disable-next-line no-control-regex
  return truncateGraphemes(text.replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]+/g, ' ').trim(), max);
}

export interface SlashParts {
  deps: AdapterDeps;
  runtime: Runtime;
  engine: () => Promise<WorkEngine>;
  binding: LiveBinding;
  counter: StretchCounter;
  /** The session's track, introduced to the host when it is not known yet (and its binding resolved). */
  track: (agent: HostAgent) => Promise<AgentTrack | undefined>;
}

export class SlashCommands {
  constructor(private readonly parts: SlashParts) {}

  private locale(): Locale {
    const configured = this.parts.binding.config?.locale;
    return configured ? getLocale(configured) : this.parts.deps.locale;
  }

  private say(key: MessageKey, vars?: Record<string, string | number>): string {
    return this.locale().t(key, vars);
  }

  /** Answers one invocation; never throws (a failure is an error answer naming what went wrong). */
  async answer(invocation: SlashInvocation): Promise<SlashResult> {
    const parsed = parseSlash(invocation.rawInput);
    const trigger = this.parts.deps.settings.queueTriggers[0] ?? '检查todo';
    if ('unknown' in parsed) return { kind: 'error', text: `${this.say('dsh.command.unknown', { sub: plain(parsed.unknown, 40) })}\n\n${this.say('dsh.command.help', { trigger })}` };
    if (parsed.sub === 'help') return { kind: 'success', text: this.say('dsh.command.help', { trigger }) };
    try {
      const track = await this.parts.track(invocation.agent);
      if (!track || track.subagent) return { kind: 'error', text: this.say('dsh.command.resume.none') };
      await this.parts.binding.refresh();
      switch (parsed.sub) {
        case 'status':
          return await this.status(track);
        case 'queue':
          return await this.queue(track);
        case 'bind':
          return await this.bind(track, parsed.argument);
        case 'unbind':
          return await this.unbind(track);
        case 'pause':
          return await this.pause(track);
        case 'resume':
          return await this.resume(track);
        case 'run':
          return this.run(track, trigger);
      }
    } catch (error) {
      this.parts.deps.log(`/dida ${parsed.sub} failed: ${messageOf(error)}`);
      const message = isWorkError(error) ? (error.forPeople ?? error.message) : messageOf(error);
      return { kind: 'error', text: this.say('dsh.command.failed', { error: message }) };
    }
  }

  private notBound(track: AgentTrack): SlashResult {
    return { kind: 'success', text: this.say('dsh.command.notBound', { dir: track.cwd }) };
  }

  private async readQueue(track: AgentTrack) {
    const binding = track.binding;
    if (!binding) return undefined;
    const config = this.parts.binding.config;
    const route = config ? routeFor(config, binding) : undefined;
    const queue = await personQueue(await this.parts.engine(), binding.projectId, { sessionId: track.sessionId, ...(route ? { route } : {}), readHolders: true });
    return { binding, queue };
  }

  private async status(track: AgentTrack): Promise<SlashResult> {
    const read = await this.readQueue(track);
    if (!read) return this.notBound(track);
    const { binding, queue } = read;
    const tag = binding.tag ? ` #${normaliseRouteTag(binding.tag)}` : '';
    const lines = [this.say('dsh.command.status.head', { list: plain(binding.label ?? binding.projectId), tag, executable: queue.executable, open: queue.entries.length })];
    lines.push(this.say('dsh.command.status.dir', { dir: binding.cwd }));
    const work = await (await this.parts.engine()).currentWork(track.sessionId);
    if (work && work.phase === 'open') {
      const steps = visibleSteps(work);
      const ask = work.asks?.[0];
      const state = work.waiting ? this.say(work.waiting.pausedBy ? 'dsh.command.status.paused' : 'dsh.command.status.waiting') : ask ? this.say('dsh.command.status.asking', { number: ask.number, text: plain(askLine(ask)) }) : '';
      lines.push(this.say('dsh.command.status.current', { title: plain(work.title), settled: steps.filter((s) => SETTLED.has(s.status)).length, total: steps.length, state }));
    } else lines.push(this.say('dsh.command.status.currentNone'));
    lines.push(this.say('dsh.command.status.more'));
    return { kind: 'success', text: lines.join('\n') };
  }

  private why(entry: PersonQueueEntry): string {
    if (entry.current && (entry.reason === undefined || entry.reason === 'claimed')) return this.say('dsh.command.why.current');
    if (entry.asking && entry.reason !== undefined) return this.say('dsh.command.why.asking', { number: entry.asking.number, text: plain(entry.asking.text) });
    if (entry.answered && entry.reason !== undefined && entry.reason !== 'claimed') return this.say('dsh.command.why.answered');
    switch (entry.reason) {
      case undefined:
        return '';
      case 'draft':
        return this.say('dsh.command.why.draft');
      case 'time_gate':
        if (entry.gate === 'before_start') return this.say('dsh.command.why.laterToday');
        return this.say(entry.gate === 'missed' ? 'dsh.command.why.missed' : 'dsh.command.why.scheduled', { day: entry.day ?? '' });
      case 'waiting_for_human':
        return this.say(entry.paused ? 'dsh.command.why.paused' : 'dsh.command.why.waiting');
      case 'claimed':
        if (!entry.holder) return this.say('dsh.command.why.heldElsewhere');
        if (!entry.holder.session) return this.say('dsh.command.why.heldBy', { host: plain(entry.holder.host, 40) });
        return this.say('dsh.command.why.heldBySession', { host: plain(entry.holder.host, 40), session: plain(entry.holder.session, 16) });
      case 'routed':
        return entry.routedTo ? this.say('dsh.command.why.routed', { tag: plain(entry.routedTo, 64) }) : this.say('dsh.command.why.routedElsewhere');
      case 'settled':
        return this.say('dsh.command.why.settled');
      case 'closed':
        return this.say('dsh.command.why.closed');
    }
  }

  private async queue(track: AgentTrack): Promise<SlashResult> {
    const read = await this.readQueue(track);
    if (!read) return this.notBound(track);
    const { binding, queue } = read;
    const lines = [this.say('dsh.command.queue.head', { list: plain(binding.label ?? binding.projectId), executable: queue.executable, open: queue.entries.length })];
    if (queue.entries.length === 0) lines.push(this.say('dsh.command.queue.empty'));
    for (const entry of queue.entries.slice(0, SLASH_QUEUE_SHOWN)) {
      const place = entry.position !== undefined ? `${entry.position}.` : '–';
      const steps = entry.steps.total > 0 ? ` ${entry.steps.settled}/${entry.steps.total}` : '';
      const why = entry.reason || entry.current ? ` — ${this.why(entry)}` : '';
      lines.push(`${place} [${this.say(`dsh.command.level.${entry.level}` as MessageKey)}] ${plain(entry.title)}${steps}${why}`);
    }
    if (queue.entries.length > SLASH_QUEUE_SHOWN) lines.push(this.say('dsh.command.queue.more', { count: queue.entries.length - SLASH_QUEUE_SHOWN }));
    return { kind: 'success', text: lines.join('\n') };
  }

  private async bind(track: AgentTrack, argument: string): Promise<SlashResult> {
    // `--create` first: a new list even when the name is close to an open list's.
    const create = /^--create(\s|$)/.test(argument);
    const name = create ? argument.slice('--create'.length).trim() : argument;
    if (name === '') return { kind: 'error', text: this.say('dsh.command.bind.needName') };
    let result: Awaited<ReturnType<typeof bindList>>;
    try {
      result = await bindList(await this.parts.runtime.gateway(), this.parts.runtime.config, track.cwd, { name }, create ? { allowNearName: true } : {});
    } catch (error) {
      if (!(error instanceof NearListNameError)) throw error;
      const names = error.near.map((n) => `「${plain(n)}」`).join(this.say('dsh.command.bind.or'));
      return { kind: 'error', text: this.say('dsh.command.bind.nearName', { name: plain(name), names }) };
    }
    await this.parts.binding.refresh();
    const vars = { dir: track.cwd, list: plain(result.project.name) };
    return { kind: 'success', text: this.say(result.created ? 'dsh.command.bind.created' : 'dsh.command.bind.done', vars) };
  }

  private async unbind(track: AgentTrack): Promise<SlashResult> {
    const covering = track.binding;
    if (!covering) return { kind: 'success', text: this.say('dsh.command.unbind.none', { dir: track.cwd }) };
    if (covering.cwd !== track.cwd) return { kind: 'error', text: this.say('dsh.command.unbind.inherited', { dir: track.cwd, parent: covering.cwd }) };
    const removed = await unbindList(this.parts.runtime.config, track.cwd);
    await this.parts.binding.refresh();
    if (!removed) return { kind: 'success', text: this.say('dsh.command.unbind.none', { dir: track.cwd }) };
    return { kind: 'success', text: this.say('dsh.command.unbind.done', { dir: track.cwd, list: plain(removed.label ?? removed.projectId) }) };
  }

  private async pause(track: AgentTrack): Promise<SlashResult> {
    if (!track.binding) return this.notBound(track);
    const outcome = await pauseCurrentWork((await this.parts.engine()).deps, track.sessionId);
    if (outcome.status === 'no_current_work') return { kind: 'error', text: this.say('dsh.command.pause.none') };
    if (outcome.status === 'already_waiting') return { kind: 'success', text: this.say('dsh.command.pause.already', { title: plain(outcome.work.title) }) };
    // A running turn stops now (as a pause from the phone stops it at the next step); its Work waits for the person.
    if (track.agent.status === 'running') {
      try {
        track.agent.cancel?.({ kind: 'hook', reason: PAUSE_CANCEL_REASON }, { keepInbox: true });
      } catch (error) {
        this.parts.deps.log(`could not stop the turn of ${track.sessionId}: ${messageOf(error)}`);
      }
    }
    return { kind: 'success', text: this.say('dsh.command.pause.done', { title: plain(outcome.work.title) }) };
  }

  private async resume(track: AgentTrack): Promise<SlashResult> {
    if (!track.binding) return this.notBound(track);
    const outcome = await resumeCurrentWork((await this.parts.engine()).deps, track.sessionId);
    if (outcome.status === 'no_current_work') return { kind: 'error', text: this.say('dsh.command.resume.none') };
    if (outcome.status === 'not_waiting') return { kind: 'error', text: this.say('dsh.command.resume.notWaiting', { title: plain(outcome.work.title) }) };
    await this.parts.counter.note(track.sessionId, { kind: 'human_message' });
    if (track.agent.status === 'idle' && canWake(track.agent)) sendOwnMessage((message) => track.agent.followup(message), RESUME_NOTE, this.parts.deps.newId());
    return { kind: 'success', text: this.say('dsh.command.resume.done', { title: plain(outcome.work.title) }) };
  }

  /** The same grant as the trigger phrase: the next turn may pick from the queue and is given it. */
  private async run(track: AgentTrack, trigger: string): Promise<SlashResult> {
    if (!track.binding) return this.notBound(track);
    if (track.agent.status !== 'idle') return { kind: 'error', text: this.say('dsh.command.run.busy') };
    track.queueGranted = true;
    track.grantPending = true;
    await this.parts.counter.note(track.sessionId, { kind: 'human_message' });
    // Without agent.followup the grant waits for the person's next message in this session.
    if (canWake(track.agent)) sendOwnMessage((message) => track.agent.followup(message), RUN_NOTE, this.parts.deps.newId());
    return { kind: 'success', text: this.say('dsh.command.run.done', { trigger }) };
  }
}
