// Shared setup of the CLI commands: global flags, the runtime, the endpoint, the token lookup and a fail-fast gateway.
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { FlagSpec, ParsedArgs } from './cli-args';
import { UsageError } from './cli-args';
import type { CliText } from './cli-locale';
import { CliFailure, EXIT, type GuardedIo } from './cli-output';
import { simulatorDownMessage } from './sim-address';
import type { DidaGateway } from '../dida/dida-gateway';
import { isDidaError } from '../dida/dida-error';
import { createHttpGateway, type DidaRegion } from '../dida/http-gateway';
import { resolveToken, type ResolvedToken } from '../dida/token-source';
import type { DidaTodoConfig } from '../store/config-schema';
import { displayPath } from '../store/paths';
import { openRuntime, resolveEndpoint, type Endpoint, type Runtime } from '../wiring/runtime';


/** What every command gets besides its arguments. */
export interface CliContext {
  env: NodeJS.ProcessEnv;
  /** The directory the command was started in (default for `--cwd`). */
  cwd: string;
  io: GuardedIo;
  /** The person's language. */
  text: CliText;
}

export const GLOBAL_FLAGS: Record<string, FlagSpec> = {
  config: { type: 'string', valueName: 'file', description: 'cli.flag.config' },
  'state-dir': { type: 'string', valueName: 'dir', description: 'cli.flag.stateDir' },
  'base-url': { type: 'string', valueName: 'url', description: 'cli.flag.baseUrl' },
  region: { type: 'string', valueName: 'region', description: 'cli.flag.region' },
};

export const CWD_FLAG: Record<string, FlagSpec> = {
  cwd: { type: 'string', valueName: 'dir', description: 'cli.flag.cwd' },
};

export interface GlobalOptions {
  json: boolean;
  configPath?: string;
  stateDir?: string;
  baseUrl?: string;
  region?: DidaRegion;
}

/** Reads and checks the global flags; a bad value is a usage error. */
export function globalOptions(flags: ParsedArgs['flags'], ctx: CliContext): GlobalOptions {
  const { t } = ctx.text;
  const options: GlobalOptions = { json: flags.json === true };
  const config = stringFlag(flags, 'config', ctx.text);
  if (config !== undefined) options.configPath = path.resolve(ctx.cwd, config);
  const stateDir = stringFlag(flags, 'state-dir', ctx.text);
  if (stateDir !== undefined) options.stateDir = path.resolve(ctx.cwd, stateDir);
  const region = stringFlag(flags, 'region', ctx.text);
  if (region !== undefined) {
    if (region !== 'dida365' && region !== 'ticktick') throw new UsageError(t('cli.usage.region', { value: region }));
    options.region = region;
  }
  const baseUrl = stringFlag(flags, 'base-url', ctx.text);
  if (baseUrl !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(baseUrl);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new UsageError(t('cli.usage.baseUrl', { value: baseUrl }));
    options.baseUrl = baseUrl.replace(/\/+$/, '');
  }
  return options;
}

export function stringFlag(flags: ParsedArgs['flags'], key: string, text: CliText): string | undefined {
  const value = flags[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(text.t('cli.usage.nonEmpty', { option: `--${key}` }));
  return value;
}

export function openCliRuntime(ctx: CliContext, options: GlobalOptions): Runtime {
  return openRuntime({
    env: ctx.env,
    ...(options.configPath ? { configPath: options.configPath } : {}),
    ...(options.stateDir ? { stateDir: options.stateDir } : {}),
  });
}

/**
 * The directory named by `--cwd` (relative to the current one), or the current directory. With `mustExist` (all
 * but `unbind`, which may clean up after a deleted folder) a missing directory is a usage error: a command about a
 * directory that is not there would only give misleading answers ("not bound").
 */
export async function targetDir(flags: ParsedArgs['flags'], ctx: CliContext, mustExist = true): Promise<string> {
  const raw = stringFlag(flags, 'cwd', ctx.text);
  const dir = path.resolve(ctx.cwd, raw ?? '.');
  if (!mustExist) return dir;
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory()) throw new UsageError(ctx.text.t('cli.usage.noSuchDir', { dir }));
  return dir;
}

/** The Open API endpoint in use: flags win over config.yaml (saved by `login`), which wins over Dida365. */
export function endpointFrom(options: GlobalOptions, config: Pick<DidaTodoConfig, 'region' | 'baseUrl'> | undefined): Endpoint {
  return resolveEndpoint([
    { source: 'flag', region: options.region, baseUrl: options.baseUrl },
    { source: 'config', region: config?.region, baseUrl: config?.baseUrl },
  ]);
}

/** Finds the token the way the plugin does (DIDA_TODO_TOKEN, credentials.json, the dida CLI's file). */
export function findToken(runtime: Runtime, env: NodeJS.ProcessEnv): Promise<ResolvedToken | undefined> {
  return resolveToken({
    env: { DIDA_TODO_TOKEN: env.DIDA_TODO_TOKEN },
    credentialsFile: runtime.paths.credentialsFile,
    didaCliConfigFile: runtime.paths.didaCliConfigFile,
  });
}

export type TokenInfo = Omit<ResolvedToken, 'token'>;

/** Where a token came from, for a person (never the token). */
export function describeSource(source: TokenInfo, homeDir: string | undefined, text: CliText): string {
  const home = homeDir || undefined;
  switch (source.source) {
    case 'env':
      return text.t('cli.source.env');
    case 'setting':
      return text.t('cli.source.setting');
    case 'credentials':
      return text.t('cli.source.credentials', { file: source.file ? displayPath(source.file, home) : 'credentials.json' });
    case 'dida-cli':
      return text.t('cli.source.didaCli', { file: source.file ? displayPath(source.file, home) : 'dida-cli/config.json' });
  }
}

/** Where the endpoint came from, for a person. */
export function describeEndpoint(endpoint: Endpoint, text: CliText): string {
  switch (endpoint.source) {
    case 'flag':
      return text.t('cli.endpoint.flag');
    case 'config':
      return endpoint.explicit ? text.t('cli.endpoint.configUrl') : text.t('cli.endpoint.configRegion');
    case 'row':
      return text.t('cli.endpoint.row');
    case 'default':
      return text.t('cli.endpoint.default');
  }
}

/** A gateway for one CLI command: one retry only, so a dead network fails in seconds, not minutes. */
export function quickGateway(token: string, endpoint: Endpoint): DidaGateway {
  return createHttpGateway({ token, baseUrl: endpoint.baseUrl, timeoutMs: 15_000, retry: { retries: 1, baseDelayMs: 200, maxDelayMs: 1_000, maxRetryAfterMs: 5_000 } });
}

export interface Connected {
  gateway: DidaGateway;
  source: TokenInfo;
  endpoint: Endpoint;
  config: DidaTodoConfig;
}

/** Reads config.yaml, resolves the token and endpoint and creates the gateway; no token is exit 3 with what to do. */
export async function connect(runtime: Runtime, ctx: CliContext, options: GlobalOptions): Promise<Connected> {
  const config = await runtime.config.read();
  const endpoint = endpointFrom(options, config);
  const found = await findToken(runtime, ctx.env);
  if (!found) throw new CliFailure(EXIT.noToken, 'no_token', ctx.text.t('cli.token.none'));
  ctx.io.hide(found.token);
  if (found.warning) ctx.io.err(`dida-todo: ${ctx.text.t('cli.token.modeWarning', { file: found.file ?? '' })}\n`);
  const { token, ...source } = found;
  return { gateway: quickGateway(token, endpoint), source, endpoint, config };
}

/** Rewrites a 401 so it names where the rejected token came from and what to do. */
export function explainRejection(error: unknown, source: TokenInfo, ctx: CliContext, endpoint?: Endpoint): unknown {
  if (isDidaError(error) && error.code === 'auth') return new CliFailure(EXIT.noToken, 'auth', rejectionMessage(source, ctx, endpoint));
  return error;
}

/**
 * explainRejection, and a network failure at a loopback address (a simulator) as "the simulator at … is not
 * running (start it with …)" instead of a network problem.
 */
export async function explainDidaFailure(error: unknown, source: TokenInfo, ctx: CliContext, endpoint: Endpoint, stateDir: string): Promise<unknown> {
  const down = await simulatorDownMessage(error, endpoint.baseUrl, stateDir, ctx.text, ctx.env.HOME || undefined);
  if (down !== undefined) return new CliFailure(EXIT.failure, 'network', down);
  return explainRejection(error, source, ctx, endpoint);
}

export function rejectionMessage(source: TokenInfo, ctx: CliContext, endpoint?: Endpoint): string {
  const { t } = ctx.text;
  const fix = source.source === 'env' ? t('cli.fix.envToken') : source.source === 'dida-cli' ? t('cli.fix.didaCliToken') : t('cli.fix.login');
  const where = endpoint ? endpoint.baseUrl : '';
  return t('cli.token.rejected', { source: describeSource(source, ctx.env.HOME, ctx.text), url: where, fix });
}
