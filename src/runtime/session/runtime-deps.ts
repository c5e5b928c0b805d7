// What every runtime module is given: the host, its settings, engine and stores, clock, log and lifetime.
import type { WorkEngine } from '../../core/engine/work-engine';
import type { ConfigPort } from '../../core/queue/bindings';
import type { Locale } from '../../core/text/locale';
import type { StatePort } from '../../core/work/engine-context';
import type { AgentTracker } from './agent-tracker';
import type { Clock } from './clock';
import type { HostPort } from './session-ports';

/** The engine operations the runtime uses (tests hand in fakes with the same shape). */
export type EnginePort = Pick<
  WorkEngine,
  'sync' | 'queue' | 'claimNext' | 'settle' | 'currentWork' | 'waitForHuman' | 'switchTo' | 'withSignal' | 'releaseSession' | 'waitForModelFailure' | 'noteWaitUntil' | 'waitAfterAttempts' | 'noteHostGap' | 'takeNews'
>;

/** The settings the runtime reads (the host's configuration gives them: dsh's plugin row). */
export interface RuntimeSettings {
  /** How many times a stopped session is resumed automatically; 0 turns auto-continuation off. */
  maxAutoContinue: number;
  /** Delays in seconds before each automatic resume; the last one repeats. */
  backoff: number[];
  /** Longest wait, in minutes, for a model limit's known reset before the Work goes to the person instead. */
  maxWaitMinutes: number;
  /** Whole comments by the list's owner on a running Work that pause it at the next step; [] turns them off. */
  stopPhrases: string[];
  /** The host's own questions and approvals of a session holding a Work are shown in Dida and can be answered there. */
  askInDida: boolean;
}

export interface RuntimeDeps {
  host: HostPort;
  settings: RuntimeSettings;
  state: StatePort;
  config: ConfigPort;
  locale: Locale;
  engine(): Promise<EnginePort>;
  tracker: AgentTracker;
  clock: Clock;
  log(line: string): void;
  /** Aborted when the plugin is disposed: every wait ends, nothing new starts. */
  lifetime: AbortSignal;
  /** Message ids (random in production, counters in tests). */
  newId(): string;
}

/** The error text of an unknown failure. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
