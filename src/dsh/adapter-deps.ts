// What every adapter module is given: the dsh context, the row config, engine and stores, clock, log and lifetime.
import type { ConfigPort } from '../core/queue/bindings';
import type { StatePort } from '../core/work/engine-context';
import type { Locale } from '../core/text/locale';
import type { WorkEngine } from '../core/engine/work-engine';
import type { AgentTracker } from './agent-tracker';
import type { Clock } from './clock';
import type { HostSeams } from './host-seams';
import type { HostContext } from './ports';
import type { RowConfig } from './row-config';

/** The engine operations the adapter uses (tests hand in fakes with the same shape). */
export type EnginePort = Pick<
  WorkEngine,
  'sync' | 'queue' | 'claimNext' | 'settle' | 'currentWork' | 'waitForHuman' | 'switchTo' | 'withSignal' | 'releaseSession' | 'waitForModelFailure' | 'noteWaitUntil' | 'waitAfterAttempts' | 'noteHostGap' | 'takeNews'
>;

export interface AdapterDeps {
  ctx: HostContext;
  row: RowConfig;
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
  /** What the running dsh lacks of the surfaces the bundle uses (host-seams.ts); absent in module tests. */
  seams?: HostSeams;
}

/** The error text of an unknown failure. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
