// What the running dsh offers of the surfaces this bundle uses (decision 0122): each is probed at apply, per session or
// as sessions run, and one that is missing is told once — a log line, the seam report `dida-todo doctor` reads, and for
// continuation and the phone loop a comment on the Work that loses it (seam-notices.ts). Nothing here throws.
import { readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { ensureDir, readFileIfExists, writeFileAtomic } from '../store/atomic-file';
import type { HostContext } from './ports';
import { ownSourceKind } from '../runtime/session/messages';
import type { HostAgent } from '../runtime/session/session-ports';

/** What a Work loses when its session's dsh lacks a surface: automatic continuation, or the phone loop. */
export type SeamGap = 'continuation' | 'phone';

export interface Seam {
  id: string;
  /** The dsh surface as dsh names it. */
  surface: string;
  /** What does not work without it (the log's words; doctor and Dida say it in the person's language). */
  lost: string;
  gap?: SeamGap;
  /** Found missing only as sessions run (a surface that may show up later); the report keeps it until it is seen. */
  observed?: true;
}

/** Every dsh surface the bundle uses, in the order doctor lists them (docs/install.md, "dsh versions"). */
export const SEAMS = [
  { id: 'tools', surface: 'ctx.tools.register', lost: "the model's Dida tools (todo, todo_work, dida_todo_setup)" },
  { id: 'events', surface: 'ctx.on', lost: 'following sessions: binding, continuation and the phone loop' },
  { id: 'preStep', surface: 'agent/pre-step', lost: "the task panel, the queue on the trigger phrase, and answers and pauses at step boundaries", gap: 'phone', observed: true },
  { id: 'requestError', surface: 'agent/request-error', lost: 'automatic continuation after a failed model request', gap: 'continuation', observed: true },
  { id: 'inbox', surface: 'agent/inbox/inserted', lost: "noticing a person's message while it waits (it is noticed when dsh admits it instead)", observed: true },
  { id: 'followup', surface: 'agent.followup', lost: 'waking an idle session: an answer from Dida, work the poller found, /dida run, crash recovery', gap: 'phone' },
  { id: 'inject', surface: 'agent.inject', lost: 'queueing a note when it cannot be added to the session at once' },
  { id: 'append', surface: 'agent.session.append', lost: 'the task panel and the note a continued request carries' },
  { id: 'cancel', surface: 'agent.cancel', lost: 'stopping a running turn when its Work is paused from Dida (the pause holds from the next step)', gap: 'phone' },
  { id: 'restrict', surface: 'agent.ctx.tools.restrict', lost: 'hiding todo and todo_work from sessions whose directory is not bound' },
  { id: 'panel', surface: 'sessionProjections (todos)', lost: "the current Work's steps in dsh's task panel", observed: true },
  { id: 'systemPrompt', surface: 'ctx.systemPrompt', lost: 'the Dida rules in the system prompt (the tools still describe them)' },
  { id: 'commands', surface: 'ctx.commands', lost: '/dida in dsh web (the dida-todo command does the same)' },
  { id: 'goals', surface: 'ctx.goals', lost: 'a dsh goal counting as unfinished work, and crash recovery re-arming it' },
  { id: 'resume', surface: 'ctx.agents.resume', lost: 'resuming an interrupted session at start, before it is opened again' },
  { id: 'userQuestions', surface: 'ctx.userQuestions', lost: "dsh's questions shown and answered in Dida" },
  { id: 'approval', surface: 'approval/request', lost: "dsh's approvals shown and answered in Dida" },
  { id: 'ownKind', surface: 'own message source kind', lost: 'nothing: the bundle sends its messages with the shared plugin kind instead', observed: true },
] as const satisfies readonly Seam[];

export type SeamId = (typeof SEAMS)[number]['id'];

/** The file in the state directory that keeps, per dsh version, what it lacked when it last ran with the bundle. */
export const SEAM_REPORT_FILE = 'dsh-seams.json';

export interface SeamReport {
  version: 1;
  dsh: Record<string, { at: number; missing: SeamId[]; sourceKind: string }>;
}

/** How long after apply the start report is made if no session shows up first (services may still be arriving). */
export const ANNOUNCE_AFTER_MS = 3_000;

const BY_ID = new Map<string, Seam>(SEAMS.map((s) => [s.id, s]));

/** The seam of `id` (undefined for an id this version does not know). */
export function seamOf(id: string): Seam | undefined {
  return BY_ID.get(id);
}

/**
 * The version of the dsh this process was started from: the `@deepseek-ai/dsh` manifest above the started script
 * (`…/@deepseek-ai/dsh/lib/bin.js`); undefined when the process was not started from dsh's CLI.
 */
export function runningDshVersion(entry: string | undefined = process.argv[1]): string | undefined {
  if (!entry) return undefined;
  let dir: string;
  try {
    dir = path.dirname(realpathSync(entry));
  } catch {
    return undefined;
  }
  for (let i = 0; i < 6; i++, dir = path.dirname(dir)) {
    let manifest: { name?: unknown; version?: unknown } | undefined;
    try {
      manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
    } catch {
      // No manifest in this folder (or not JSON): look further up.
      continue;
    }
    if (manifest?.name === '@deepseek-ai/dsh') return typeof manifest.version === 'string' ? manifest.version : undefined;
    if (manifest?.name !== undefined) return undefined;
  }
  return undefined;
}

/** Reads a seam report; an absent, unreadable or foreign file is an empty one. */
export function parseSeamReport(text: string | undefined): SeamReport {
  try {
    const parsed = JSON.parse(text ?? '') as Partial<SeamReport>;
    if (parsed?.version === 1 && parsed.dsh && typeof parsed.dsh === 'object') return { version: 1, dsh: parsed.dsh };
  } catch {
    // Not a report: start a new one.
  }
  return { version: 1, dsh: {} };
}

export interface HostSeamsOptions {
  /** Where the report is kept (none: no report). */
  stateDir?: string | undefined;
  log: (line: string) => void;
  /** The running dsh's version (default: found from the started script); undefined writes no report. */
  version?: string | undefined;
  now?: () => number;
}

/** The seams of one dsh process: what is missing, said once each. */
export class HostSeams {
  readonly dshVersion: string | undefined;
  private readonly missing = new Set<SeamId>();
  private readonly seenPresent = new Set<SeamId>();
  private readonly said = new Set<SeamId>();
  private readonly listeners: Array<(id: SeamId) => void> = [];
  private announced = false;
  private agentProbed = false;
  private writing: Promise<void> = Promise.resolve();
  private readonly file: string | undefined;

  constructor(private readonly options: HostSeamsOptions) {
    this.dshVersion = 'version' in options ? options.version : runningDshVersion();
    this.file = options.stateDir ? path.join(options.stateDir, SEAM_REPORT_FILE) : undefined;
  }

  /** The dsh as the log and Dida name it: `dsh 0.2.0-rc.2`, or just `dsh` when its version is unknown. */
  get dshName(): string {
    return this.dshVersion ? `dsh ${this.dshVersion}` : 'dsh';
  }

  /** Whether `id` is known missing in this process. */
  lacks(id: SeamId): boolean {
    return this.missing.has(id);
  }

  /** The gaps this process's dsh causes (continuation, the phone loop). */
  gaps(): SeamGap[] {
    const gaps = new Set<SeamGap>();
    for (const id of this.missing) {
      const gap = seamOf(id)?.gap;
      if (gap) gaps.add(gap);
    }
    return [...gaps];
  }

  /** Calls `listener` for each seam found missing from now on (the host comments on the Works that lose it). */
  onLack(listener: (id: SeamId) => void): void {
    this.listeners.push(listener);
  }

  /**
   * `id` is missing (`detail`: how it showed). Before the start report it is only recorded; after it, it is said now.
   * A seam seen working in this process (`present`) is never reported missing.
   */
  lack(id: SeamId, detail?: string): void {
    if (this.missing.has(id) || this.seenPresent.has(id)) return;
    this.missing.add(id);
    if (detail) this.options.log(`${seamOf(id)?.surface ?? id}: ${detail}`);
    if (!this.announced) return;
    this.say([id]);
    this.persist();
    for (const listener of [...this.listeners]) {
      try {
        listener(id);
      } catch (error) {
        this.options.log(`telling about ${id}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  /** `id` worked in this process: a report that listed it missing for this dsh is corrected. */
  present(id: SeamId): void {
    if (this.seenPresent.has(id) || this.missing.has(id)) return;
    this.seenPresent.add(id);
    if (this.announced && seamOf(id)?.observed) this.persist();
  }

  /** Apply-time probes of the services (read again at the start report: some arrive after apply). */
  probeServices(ctx: HostContext): void {
    const get = (name: string): any => {
      try {
        return ctx.get(name);
      } catch {
        // A context that throws for a name has no such service here.
        return undefined;
      }
    };
    if (typeof get('goals')?.get !== 'function') this.lack('goals');
    if (typeof get('systemPrompt')?.section !== 'function') this.lack('systemPrompt');
    if (typeof get('commands')?.register !== 'function') this.lack('commands');
    if (typeof get('sessionProjections')?.snapshot !== 'function') this.lack('panel');
    if (typeof ctx?.agents?.resume !== 'function') this.lack('resume');
  }

  /** The first top-level session's agent: what dsh lets the bundle do with it. */
  probeAgent(agent: HostAgent): void {
    // An agent without a session tells nothing of what dsh's agents offer: the next one is looked at instead.
    if (this.agentProbed || typeof agent?.session !== 'object' || agent.session === null) return;
    this.agentProbed = true;
    if (typeof agent.followup !== 'function') this.lack('followup');
    if (typeof agent.inject !== 'function') this.lack('inject');
    if (typeof agent.session?.append !== 'function') this.lack('append');
    if (typeof agent.cancel !== 'function') this.lack('cancel');
    if (typeof agent.ctx?.tools?.restrict !== 'function') this.lack('restrict');
  }

  /** The start report: logged once when something is missing, and kept for doctor. */
  announce(ctx: HostContext): void {
    if (this.announced) return;
    this.probeServices(ctx);
    this.announced = true;
    if (this.missing.size > 0) this.say([...this.missing]);
    this.persist();
    const ids = [...this.missing];
    for (const id of ids) for (const listener of [...this.listeners]) listener(id);
  }

  private say(ids: SeamId[]): void {
    const fresh = ids.filter((id) => !this.said.has(id));
    if (fresh.length === 0) return;
    for (const id of fresh) this.said.add(id);
    const parts = fresh.map((id) => `${seamOf(id)?.surface ?? id} (without it: ${seamOf(id)?.lost ?? 'unknown'})`);
    this.options.log(`this ${this.dshName} lacks ${parts.join('; ')}. Everything else works; \`dida-todo doctor\` lists what is missing.`);
  }

  /** Writes this dsh version's entry of the report when it changed (serialised; a failure is logged, nothing thrown). */
  private persist(): void {
    const version = this.dshVersion;
    const file = this.file;
    if (!version || !file) return;
    this.writing = this.writing
      .then(async () => {
        const report = parseSeamReport(await readFileIfExists(file));
        const before = report.dsh[version];
        const kept = (before?.missing ?? []).filter((id) => seamOf(id)?.observed && !this.seenPresent.has(id));
        const missing = SEAMS.map((s) => s.id).filter((id) => this.missing.has(id) || kept.includes(id));
        const sourceKind = ownSourceKind();
        if (before && before.sourceKind === sourceKind && before.missing.join() === missing.join()) return;
        report.dsh[version] = { at: (this.options.now ?? Date.now)(), missing, sourceKind };
        await ensureDir(path.dirname(file));
        await writeFileAtomic(file, `${JSON.stringify(report, null, 2)}\n`);
      })
      .catch((error: unknown) => this.options.log(`could not keep what this dsh lacks in ${file}: ${error instanceof Error ? error.message : String(error)}`));
  }

  /** Resolves once the report is written (tests; disposal). */
  written(): Promise<void> {
    return this.writing;
  }
}
