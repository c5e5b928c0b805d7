// Shared setup of the CLI commands: global flags, the runtime, the token lookup and a fail-fast Dida gateway.
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { FlagSpec, ParsedArgs } from './cli-args';
import { UsageError } from './cli-args';
import { CliFailure, EXIT, type GuardedIo } from './cli-output';
import type { DidaGateway } from '../dida/dida-gateway';
import { isDidaError } from '../dida/dida-error';
import { createHttpGateway, resolveBaseUrl, type DidaRegion } from '../dida/http-gateway';
import { resolveToken, type ResolvedToken } from '../dida/token-source';
import { displayPath } from '../store/paths';
import { NO_TOKEN_MESSAGE, openRuntime, type Runtime } from '../wiring/runtime';

/** What every command gets besides its arguments. */
export interface CliContext {
  env: NodeJS.ProcessEnv;
  /** The directory the command was started in (default for `--cwd`). */
  cwd: string;
  io: GuardedIo;
}

export const GLOBAL_FLAGS: Record<string, FlagSpec> = {
  config: { type: 'string', valueName: 'file', description: 'Use this config.yaml (credentials.json sits beside it).' },
  'state-dir': { type: 'string', valueName: 'dir', description: 'Keep state.json and locks in this directory.' },
  'base-url': { type: 'string', valueName: 'url', description: 'Dida Open API base URL (e.g. the simulator).' },
  region: { type: 'string', valueName: 'region', description: 'dida365 (default) or ticktick.' },
};

export const CWD_FLAG: Record<string, FlagSpec> = {
  cwd: { type: 'string', valueName: 'dir', description: 'The working directory (default: the current one).' },
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
  const options: GlobalOptions = { json: flags.json === true };
  const config = stringFlag(flags, 'config');
  if (config !== undefined) options.configPath = path.resolve(ctx.cwd, config);
  const stateDir = stringFlag(flags, 'state-dir');
  if (stateDir !== undefined) options.stateDir = path.resolve(ctx.cwd, stateDir);
  const region = stringFlag(flags, 'region');
  if (region !== undefined) {
    if (region !== 'dida365' && region !== 'ticktick') throw new UsageError(`Option --region must be dida365 or ticktick, got "${region}".`);
    options.region = region;
  }
  const baseUrl = stringFlag(flags, 'base-url');
  if (baseUrl !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(baseUrl);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      throw new UsageError(`Option --base-url must be an http(s) URL such as http://127.0.0.1:8080/open/v1, got "${baseUrl}".`);
    }
    options.baseUrl = baseUrl;
  }
  return options;
}

export function stringFlag(flags: ParsedArgs['flags'], key: string): string | undefined {
  const value = flags[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`Option --${key} needs a non-empty value.`);
  return value;
}

export function openCliRuntime(ctx: CliContext, options: GlobalOptions): Runtime {
  return openRuntime({
    env: ctx.env,
    ...(options.configPath ? { configPath: options.configPath } : {}),
    ...(options.stateDir ? { stateDir: options.stateDir } : {}),
    ...(options.region ? { region: options.region } : {}),
    ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}),
  });
}

/** The directory named by `--cwd` (relative to the current one), or the current directory. */
export async function targetDir(flags: ParsedArgs['flags'], ctx: CliContext, mustExist: boolean): Promise<string> {
  const raw = stringFlag(flags, 'cwd');
  const dir = path.resolve(ctx.cwd, raw ?? '.');
  if (mustExist) {
    const info = await stat(dir).catch(() => undefined);
    if (!info?.isDirectory()) throw new UsageError(`${dir} is not an existing directory; pass --cwd <dir> with the project directory to bind.`);
  }
  return dir;
}

export interface Endpoint {
  region: DidaRegion;
  baseUrl: string;
  /** True when the base URL was given explicitly (flag or config), not derived from the region. */
  explicit: boolean;
}

/** The Open API endpoint in use: flags win over config.yaml, which wins over the dida365 default. */
export async function endpointOf(runtime: Runtime, options: GlobalOptions): Promise<Endpoint> {
  const config = await runtime.config.read();
  const region = options.region ?? config.region ?? 'dida365';
  const explicitUrl = options.baseUrl ?? config.baseUrl;
  return { region, baseUrl: resolveBaseUrl(region, explicitUrl), explicit: explicitUrl !== undefined };
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
export function describeSource(source: TokenInfo, homeDir: string | undefined): string {
  const home = homeDir || undefined;
  switch (source.source) {
    case 'env':
      return 'the DIDA_TODO_TOKEN environment variable';
    case 'setting':
      return 'the dida token setting';
    case 'credentials':
      return `${source.file ? displayPath(source.file, home) : 'credentials.json'} (dida-todo login)`;
    case 'dida-cli':
      return `${source.file ? displayPath(source.file, home) : 'the dida CLI config'} (the official dida CLI)`;
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
}

/** Resolves the token and endpoint and creates the gateway; no token is exit 3 with what to do. */
export async function connect(runtime: Runtime, ctx: CliContext, options: GlobalOptions): Promise<Connected> {
  const endpoint = await endpointOf(runtime, options);
  const found = await findToken(runtime, ctx.env);
  if (!found) throw new CliFailure(EXIT.noToken, 'no_token', NO_TOKEN_MESSAGE);
  ctx.io.hide(found.token);
  if (found.warning) ctx.io.err(`dida-todo: warning: ${found.warning}\n`);
  const { token, ...source } = found;
  return { gateway: quickGateway(token, endpoint), source, endpoint };
}

/** Rewrites a 401 so it names where the rejected token came from. */
export function explainRejection(error: unknown, source: TokenInfo, ctx: CliContext): unknown {
  if (isDidaError(error) && error.code === 'auth') {
    const fix =
      source.source === 'env'
        ? 'set DIDA_TODO_TOKEN to a current personal API token or unset it'
        : source.source === 'dida-cli'
          ? 'run `dida-todo login --token <token>` (or `dida auth login` again)'
          : 'run `dida-todo login --token <token>` with a current personal API token';
    return new CliFailure(EXIT.noToken, 'auth', `Dida rejected the token from ${describeSource(source, ctx.env.HOME)} (401); ${fix}.`);
  }
  return error;
}
