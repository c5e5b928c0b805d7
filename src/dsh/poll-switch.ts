// Whether this process takes part in the machine's polling, following config.yaml while it runs: on by default in
// long-lived profiles (web, sdk), never in a one-shot run; `poll: false` (or `enabled: false`) turns it off, and a
// change is taken up within one poll interval, without a restart.
import { pollSettingsOf, type DidaTodoConfig } from '../store/config-schema';
import type { AdapterDeps } from './adapter-deps';
import { messageOf } from '../runtime/session/runtime-deps';
import type { MachinePoller } from '../runtime/polling/machine-poller';
import type { PollPace } from '../runtime/polling/poll-pace';
import type { RowConfig } from './row-config';

export interface PollSwitchOptions {
  /** A one-shot run ends with its turn: it never polls. */
  oneShot: boolean;
  /** Reads config.yaml again (a stat when unchanged) and resolves with it. */
  refresh(): Promise<DidaTodoConfig | undefined>;
  /** Builds the machine poller (loaded when polling first starts) and the pace a config asks for. */
  create(): Promise<{ poller: MachinePoller; pace(configured: ReturnType<typeof pollSettingsOf>): PollPace }>;
}

/** Whether polling is wanted: config.yaml's `poll` wins over the row's; a one-shot never polls. */
export function pollingWanted(row: Pick<RowConfig, 'poll'>, config: DidaTodoConfig | undefined, oneShot: boolean): boolean {
  if (oneShot) return false;
  return pollSettingsOf(config)?.enabled ?? row.poll;
}

export class PollSwitch {
  private poller: MachinePoller | undefined;
  private starting: Promise<void> | undefined;
  private stopCheck: (() => void) | undefined;
  private paceKey: string | undefined;
  private paceOf: ((configured: ReturnType<typeof pollSettingsOf>) => PollPace) | undefined;

  constructor(
    private readonly deps: AdapterDeps,
    private readonly options: PollSwitchOptions,
  ) {}

  /** The machine poller while this process takes part. */
  get current(): MachinePoller | undefined {
    return this.poller;
  }

  /** Applies `config` now, then looks at config.yaml again every poll interval (a stat when it did not change). */
  begin(config: DidaTodoConfig | undefined): void {
    this.apply(config);
    if (this.options.oneShot || this.stopCheck) return;
    this.stopCheck = this.deps.clock.every(this.deps.settings.pollSeconds * 1000, () => {
      if (this.deps.lifetime.aborted) return;
      void this.options.refresh().then((next) => next && this.apply(next), () => undefined);
    });
  }

  /** Starts, restarts (a new pace) or stops the machine poller as `config` asks. */
  apply(config: DidaTodoConfig | undefined): void {
    if (this.deps.lifetime.aborted) return;
    const wanted = pollingWanted(this.deps.settings, config, this.options.oneShot);
    const settings = pollSettingsOf(config);
    if (!wanted) {
      if (this.poller) this.deps.log('polling is turned off in config.yaml: this process stops polling');
      void this.stop();
      return;
    }
    const key = JSON.stringify(settings ?? null);
    if (this.poller && this.paceOf && key !== this.paceKey) {
      // Another pace in config.yaml: the same poller goes on at it.
      this.paceKey = key;
      this.poller.start(this.paceOf(settings));
      return;
    }
    if (this.poller || this.starting) return;
    this.paceKey = key;
    this.starting = this.options
      .create()
      .then(({ poller, pace }) => {
        if (this.deps.lifetime.aborted) return void poller.close();
        this.poller = poller;
        this.paceOf = pace;
        poller.start(pace(settings));
      })
      .catch((error: unknown) => this.deps.log(`polling could not start: ${messageOf(error)}`))
      .finally(() => (this.starting = undefined));
  }

  private async stop(): Promise<void> {
    await this.starting;
    const poller = this.poller;
    this.poller = undefined;
    this.paceKey = undefined;
    await poller?.close();
  }

  /** Stops polling and the checks of config.yaml (the plugin is unloading). */
  async close(): Promise<void> {
    this.stopCheck?.();
    this.stopCheck = undefined;
    await this.stop();
  }
}
