// Composition root shared by the dsh adapter and the CLI: paths, config, state, locks, token and gateway.
import os from 'node:os';
import path from 'node:path';
import { createCliGateway } from '../dida/cli-gateway';
import { DidaError } from '../dida/dida-error';
import type { DidaGateway } from '../dida/dida-gateway';
import { createHttpGateway, resolveBaseUrl, type DidaRegion } from '../dida/http-gateway';
import { accountKey, createRequestBudget, DEFAULT_BUDGET, withRequestPriority, type BudgetLimits, type RequestGate } from '../dida/request-budget';
import { resolveToken, type ResolvedToken } from '../dida/token-source';
import type { ConfigPort } from '../core/queue/bindings';
import type { LockPort, StatePort } from '../core/work/engine-context';
import { getLocale, type Locale, type LocaleId } from '../core/text/locale';
import { WorkEngine } from '../core/engine/work-engine';
import { ENGINE_STATE_SECTIONS, ENGINE_STATE_VERSION, EngineStateSchema, WorkRecordSchema, emptyEngineState, type EngineState } from '../core/work/work-state';
import { DEFAULT_STOP_PHRASES } from '../core/phone/phone-signals';
import { DEFAULT_SPEND_LIMITS } from '../core/usage/usage';
import type { DidaTodoConfig } from '../store/config-schema';
import { createConfigReader, updateConfig } from '../store/config-store';
import { withLock, type LockOptions } from '../store/file-lock';
import { resolvePaths, type DidaTodoPaths } from '../store/paths';
import { LoggedStateStore } from '../store/logged-state-store';
import { WorkUsageSchema } from '../core/usage/usage-schema';
import { budgetStore } from '../store/budget-store';
import { readAccountFacts, writeAccountFacts } from '../store/account-facts';
import type { RepoEvidencePort } from '../core/evidence/repo-evidence';
import type { CorruptStateInfo } from '../store/state-store';

export interface RuntimeOptions {
  env?: NodeJS.ProcessEnv;
  configPath?: string;
  stateDir?: string;
  /** Explicit token (plugin setting or CLI flag); wins over every other source. */
  token?: string;
  /** The plugin row's region and base URL; config.yaml's (saved by `dida-todo login`) win over them. */
  region?: DidaRegion;
  baseUrl?: string;
  didaCommand?: string;
  timeoutMs?: number;
  locale?: LocaleId;
  hostLabel?: string;
  /** How long progress comments wait to be coalesced (default 60 s). */
  progressWindowMs?: number;
  /** The plugin row's stop phrases (config.yaml's win). */
  stopPhrases?: readonly string[];
  /** Leave the machine-wide request budget out (default: every request of the gateway goes through it). */
  budget?: false;
  log?: (line: string) => void;
}

export interface Runtime {
  paths: DidaTodoPaths;
  config: ConfigPort;
  state: StatePort;
  locks: LockPort;
  locale: Locale;
  hostLabel: string;
  progressWindowMs?: number;
  /** The plugin row's stop phrases (config.yaml's win). */
  stopPhrases?: readonly string[];
  /** Resolves the token and creates the gateway once; throws DidaError `auth` when no token is configured. */
  gateway(): Promise<DidaGateway>;
  /** Where the token comes from (never the token), or undefined when there is none. */
  tokenSource(): Promise<Omit<ResolvedToken, 'token'> | undefined>;
  /**
   * A name of the Dida account the gateway talks to (a hash of its base URL and token; see accountKey), known once the
   * gateway was created; what the machine-wide budget and the poller election are keyed by.
   */
  account(): Promise<string>;
  /** Corrupt state files moved aside during this runtime's life. */
  readonly corruptions: CorruptStateInfo[];
  close(): Promise<void>;
}

export interface EngineStoreOptions {
  stateFile: string;
  lockDir: string;
  lockOptions?: Omit<LockOptions, 'signal'>;
  onCorrupt?: (info: CorruptStateInfo) => void;
  /** The change log is folded into a new snapshot at this size (default 512 KiB). */
  compactAtBytes?: number;
}

/** The engine's state store (snapshot plus change log) at `stateFile`. */
export function engineStateStore(options: EngineStoreOptions): LoggedStateStore<EngineState> {
  return new LoggedStateStore<EngineState>({
    file: options.stateFile,
    lockDir: options.lockDir,
    schema: EngineStateSchema,
    collections: { works: WorkRecordSchema, usage: WorkUsageSchema },
    sections: ENGINE_STATE_SECTIONS,
    version: ENGINE_STATE_VERSION,
    // Version 1 is the same data in one file; its first write here starts the snapshot and log.
    migrate: (data) => data,
    empty: emptyEngineState,
    ...(options.onCorrupt ? { onCorrupt: options.onCorrupt } : {}),
    ...(options.lockOptions ? { lockOptions: options.lockOptions } : {}),
    ...(options.compactAtBytes !== undefined ? { compactAtBytes: options.compactAtBytes } : {}),
  });
}

/** The engine's state file and cross-process locks as the ports the engine takes. */
export function openEngineStore(options: EngineStoreOptions): { state: StatePort; locks: LockPort } {
  const store = engineStateStore(options);
  return {
    state: { read: () => store.read(), update: (fn) => store.update(async (current) => (await fn(current)) ?? current) },
    locks: { withLock: (key, fn) => withLock(options.lockDir, key, (held) => fn(held), options.lockOptions) },
  };
}

/** One place that may say which Dida to talk to: a command-line flag, config.yaml, or the plugin row. */
export interface EndpointLayer {
  source: 'flag' | 'config' | 'row';
  region?: DidaRegion | undefined;
  baseUrl?: string | undefined;
}

export interface Endpoint {
  region: DidaRegion;
  baseUrl: string;
  /** True when the base URL was given explicitly (not derived from the region). */
  explicit: boolean;
  /** Which layer decided; `default` when none said anything (Dida365). */
  source: EndpointLayer['source'] | 'default';
}

/**
 * The Dida endpoint, from layers given highest first (CLI: flags, then config.yaml; dsh: config.yaml, then the
 * plugin row). The first layer that names a base URL or a region decides: its base URL, else its region's service
 * (so `login --region ticktick` means real TickTick even when config.yaml points at a simulator). The region shown
 * is the deciding layer's, else the next layer's that has one, else dida365.
 */
export function resolveEndpoint(layers: readonly EndpointLayer[]): Endpoint {
  const deciding = layers.find((layer) => layer.baseUrl !== undefined || layer.region !== undefined);
  const region = deciding?.region ?? layers.find((layer) => layer.region !== undefined)?.region ?? 'dida365';
  const explicitUrl = deciding?.baseUrl;
  return { region, baseUrl: resolveBaseUrl(region, explicitUrl), explicit: explicitUrl !== undefined, source: deciding?.source ?? 'default' };
}

export const NO_TOKEN_MESSAGE =
  'No Dida token is configured: run `dida-todo login --token <token>` (personal API token from Dida: avatar → Settings → Account → API Token), or set DIDA_TODO_TOKEN.';

export function openRuntime(options: RuntimeOptions = {}): Runtime {
  const env = options.env ?? process.env;
  const paths = resolvePaths(env, { configPath: options.configPath, stateDir: options.stateDir });
  // The parsed form of config.yaml is kept beside the state, so a cold start need not load the YAML parser.
  const reader = createConfigReader(paths.configFile, path.join(paths.stateDir, 'config.parsed.json'));
  const corruptions: CorruptStateInfo[] = [];
  const { state, locks } = openEngineStore({
    stateFile: paths.stateFile,
    lockDir: paths.lockDir,
    onCorrupt: (info) => {
      corruptions.push(info);
      options.log?.(info.message);
    },
  });
  const config: ConfigPort = {
    read: async () => (await reader.read()).config,
    update: (fn) => updateConfig(paths.configFile, fn, { lockDir: paths.lockDir }),
  };
  let gatewayPromise: Promise<DidaGateway> | undefined;
  let accountName: string | undefined;

  /** The budget limits in force: config.yaml's, else the defaults (also while config.yaml cannot be read). */
  const limits = async (): Promise<BudgetLimits> => (await reader.read().catch(() => undefined))?.config.budget ?? DEFAULT_BUDGET;
  const gateFor = (key: string, baseUrl: string): RequestGate | undefined => {
    accountName = key;
    if (options.budget === false) return undefined;
    return createRequestBudget({ store: budgetStore(paths.stateDir, paths.lockDir, key), limits, baseUrl, ...(options.log ? { log: options.log } : {}) });
  };

  const lookup = () =>
    resolveToken({
      setting: options.token,
      env: { DIDA_TODO_TOKEN: env.DIDA_TODO_TOKEN },
      credentialsFile: paths.credentialsFile,
      didaCliConfigFile: paths.didaCliConfigFile,
    });

  async function build(): Promise<DidaGateway> {
    const cfg: DidaTodoConfig = (await reader.read()).config;
    const didaCommand = options.didaCommand;
    if (didaCommand) {
      const gate = gateFor(accountKey(`dida-cli:${didaCommand}`, ''), `dida-cli:${didaCommand}`);
      return createCliGateway({ command: didaCommand, ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}), ...(gate ? { gate } : {}) });
    }
    const found = await lookup();
    if (!found) throw new DidaError({ code: 'auth', message: NO_TOKEN_MESSAGE });
    if (found.warning) options.log?.(found.warning);
    // config.yaml is what `dida-todo login` and `dida-todo sim --use` save, so it wins over the plugin row.
    const endpoint = resolveEndpoint([
      { source: 'config', region: cfg.region, baseUrl: cfg.baseUrl },
      { source: 'row', region: options.region, baseUrl: options.baseUrl },
    ]);
    const gate = gateFor(accountKey(endpoint.baseUrl, found.token.trim()), endpoint.baseUrl);
    return createHttpGateway({
      token: found.token,
      region: endpoint.region,
      baseUrl: endpoint.baseUrl,
      ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
      ...(gate ? { gate } : {}),
    });
  }

  function gateway(): Promise<DidaGateway> {
    gatewayPromise ??= build().catch((error: unknown) => {
      gatewayPromise = undefined;
      throw error;
    });
    return gatewayPromise;
  }

  return {
    paths,
    config,
    state,
    locks,
    locale: getLocale(options.locale ?? 'zh'),
    hostLabel: options.hostLabel ?? os.hostname(),
    ...(options.progressWindowMs !== undefined ? { progressWindowMs: options.progressWindowMs } : {}),
    ...(options.stopPhrases !== undefined ? { stopPhrases: options.stopPhrases } : {}),
    corruptions,
    gateway,
    async account() {
      await gateway();
      return accountName as string;
    },
    async tokenSource() {
      const found = await lookup();
      if (!found) return undefined;
      const { token: _token, ...rest } = found;
      return rest;
    },
    async close() {
      const pending = gatewayPromise;
      gatewayPromise = undefined;
      if (pending) await (await pending.catch(() => undefined))?.close();
    },
  };
}

/** The git evidence port, loaded at its first use (a step that starts or completes), not with the plugin. */
export function gitEvidencePort(log?: (line: string) => void): RepoEvidencePort {
  let port: Promise<RepoEvidencePort> | undefined;
  const load = () => (port ??= import('./git-evidence').then((m) => m.gitEvidence(log ? { log } : {})));
  return {
    head: async (cwd) => (await load()).head(cwd),
    commitsSince: async (cwd, sha) => (await load()).commitsSince(cwd, sha),
    remote: async (cwd) => (await load()).remote(cwd),
  };
}

/** A time zone kept from Dida's preference is used without asking for this long (then read again in the background). */
export const ZONE_FRESH_MS = 24 * 60 * 60_000;

/**
 * The account's time zone: the one kept in the state folder from an earlier read of Dida's preference (read again in
 * the background once a day old), else read now and kept; this machine's zone when Dida cannot say.
 */
async function accountZone(runtime: Runtime, gateway: DidaGateway, log?: (line: string) => void): Promise<string> {
  // This machine's zone only when Dida does not say: the first Intl.DateTimeFormat of a process costs ~10 ms.
  const localZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone;
  const key = await Promise.resolve()
    .then(() => runtime.account())
    .catch(() => undefined);
  const stateDir = runtime.paths?.stateDir;
  const kept = key && stateDir ? readAccountFacts(stateDir, key) : {};
  const read = async () => {
    const zone = (await gateway.getPreference()).timeZone;
    if (zone && key && stateDir) writeAccountFacts(stateDir, key, { ...readAccountFacts(stateDir, key), timeZone: zone, timeZoneReadAt: Date.now() });
    return zone;
  };
  if (kept.timeZone) {
    if (Date.now() - (kept.timeZoneReadAt ?? 0) > ZONE_FRESH_MS) {
      void withRequestPriority('background', read).catch((error: unknown) => log?.(`could not read the Dida time zone again (keeping ${kept.timeZone}): ${error instanceof Error ? error.message : String(error)}`));
    }
    return kept.timeZone;
  }
  try {
    return (await read()) || localZone();
  } catch (error) {
    const zone = localZone();
    log?.(`could not read the Dida time zone, using ${zone}: ${error instanceof Error ? error.message : String(error)}`);
    return zone;
  }
}

/**
 * A lazily created WorkEngine over the runtime. The account's time zone comes from Dida's preference, kept in the
 * state folder between runs (see accountZone). A failure to create it (no token) is retried on the next call.
 */
export function engineProvider(runtime: Runtime, log?: (line: string) => void): () => Promise<WorkEngine> {
  let pending: Promise<WorkEngine> | undefined;
  const make = async (): Promise<WorkEngine> => {
    const gateway = await runtime.gateway();
    const timeZone = await accountZone(runtime, gateway, log);
    // config.yaml is the person's own setting and wins over the plugin row for the locale and the host label. While it
    // is invalid no engine is made (its claims would be signed with another host label): the error says what to fix.
    const settings = await runtime.config.read();
    let lastGood = settings;
    const current = async () => {
      try {
        lastGood = await runtime.config.read();
      } catch (error) {
        log?.(`config.yaml cannot be read now, its last readable limits, prices and stop phrases stay in force: ${error instanceof Error ? error.message : String(error)}`);
      }
      return lastGood;
    };
    return new WorkEngine({
      gateway,
      state: runtime.state,
      locks: runtime.locks,
      now: () => Date.now(),
      locale: settings.locale ? getLocale(settings.locale) : runtime.locale,
      timeZone,
      hostLabel: settings.hostLabel ?? runtime.hostLabel,
      ...(runtime.progressWindowMs !== undefined ? { progressWindowMs: runtime.progressWindowMs } : {}),
      evidence: gitEvidencePort(log),
      // config.yaml is read again each time: its limits and prices change without a restart (a broken edit keeps the last).
      spendSettings: async () => {
        const cfg = await current();
        return { limits: { ...DEFAULT_SPEND_LIMITS, ...(cfg.limits ?? {}) }, ...(cfg.pricing ? { pricing: cfg.pricing } : {}) };
      },
      // config.yaml is read again each time: its stop phrases change without a restart (a broken edit keeps the last).
      stopPhrases: async () => (await current()).stopPhrases ?? runtime.stopPhrases ?? DEFAULT_STOP_PHRASES,
      ...(log ? { log } : {}),
    });
  };
  return () => {
    pending ??= make().catch((error: unknown) => {
      pending = undefined;
      throw error;
    });
    return pending;
  };
}
