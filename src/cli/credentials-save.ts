// Saves a token (credentials.json, 0600) together with the Dida it belongs to (config.yaml): both or neither.
import { rm } from 'node:fs/promises';
import { uninterruptible } from './cli-interrupt';
import type { CliContext } from './cli-runtime';
import { CliFailure, describeFailure, EXIT } from './cli-output';
import { readFileIfExists, writeFileAtomic } from '../store/atomic-file';
import type { DidaTodoConfig } from '../store/config-schema';
import { displayPath } from '../store/paths';
import type { Runtime } from '../wiring/runtime';

/**
 * How a login changes config.yaml: `baseUrl` becomes the checked address when --base-url was given and is removed
 * otherwise (a login to real Dida undoes `--base-url` and `sim --use`); `region` is saved when given.
 */
export function loginChange(flags: { baseUrl?: string | undefined; region?: DidaTodoConfig['region'] }, checkedBaseUrl: string): (config: DidaTodoConfig) => DidaTodoConfig {
  return (config) => {
    const next: DidaTodoConfig = { ...config };
    if (flags.baseUrl) next.baseUrl = checkedBaseUrl;
    else delete next.baseUrl;
    if (flags.region) next.region = flags.region;
    return next;
  };
}

export interface SavedLogin {
  /** Whether config.yaml's endpoint (baseUrl/region) changed. */
  configChanged: boolean;
  /** The base URL config.yaml held before (e.g. a simulator's), when this save replaced or removed it. */
  previousBaseUrl?: string;
}

/**
 * Writes the token, then applies `change` to config.yaml (only when it changes the endpoint, so an unchanged
 * config.yaml and its lock are never touched). When config.yaml cannot be written, credentials.json is put back as
 * it was and the CliFailure says what was and was not saved. Ctrl+C meanwhile takes effect once both are settled.
 */
export async function saveTokenAndEndpoint(
  runtime: Runtime,
  ctx: CliContext,
  token: string,
  before: DidaTodoConfig,
  change: (config: DidaTodoConfig) => DidaTodoConfig,
): Promise<SavedLogin> {
  return uninterruptible(() => saveBoth(runtime, ctx, token, before, change));
}

async function saveBoth(runtime: Runtime, ctx: CliContext, token: string, before: DidaTodoConfig, change: (config: DidaTodoConfig) => DidaTodoConfig): Promise<SavedLogin> {
  const file = runtime.paths.credentialsFile;
  const differs = (a: DidaTodoConfig, b: DidaTodoConfig) => a.baseUrl !== b.baseUrl || a.region !== b.region;
  const previousCredentials = await readFileIfExists(file).catch(() => undefined);
  await writeFileAtomic(file, `${JSON.stringify({ version: 1, token, savedAt: new Date().toISOString() }, null, 2)}\n`, { mode: 0o600, dirMode: 0o700 });
  let previousBaseUrl: string | undefined;
  let configChanged = false;
  try {
    if (differs(change(before), before)) {
      await runtime.config.update((config) => {
        const next = change(config);
        previousBaseUrl = config.baseUrl !== undefined && config.baseUrl !== next.baseUrl ? config.baseUrl : undefined;
        configChanged = differs(next, config);
        return configChanged ? next : config;
      });
    }
  } catch (error) {
    const restored = await (previousCredentials === undefined ? rm(file, { force: true }) : writeFileAtomic(file, previousCredentials, { mode: 0o600 })).then(
      () => true,
      () => false,
    );
    const reason = describeFailure(error, ctx.text).message;
    const shown = displayPath(file, ctx.env.HOME || undefined);
    throw new CliFailure(EXIT.failure, 'file_not_saved', ctx.text.t(restored ? 'cli.save.configFailed' : 'cli.save.configFailedKept', { reason, file: shown }));
  }
  return { configChanged, ...(previousBaseUrl ? { previousBaseUrl } : {}) };
}
