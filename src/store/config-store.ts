// Owns config.yaml: reading it (its schema in config-schema.ts, its errors in config-check.ts), atomic saving,
// change-aware re-reading and bindings.
import { createHash } from 'node:crypto';
import { readlink, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { readFileIfExists, writeFileAtomic } from './atomic-file';
import { withLock, type LockOptions } from './file-lock';
import { ConfigError, loadYaml, parseConfigText, validateConfig } from './config-check';
import { CONFIG_VERSION, defaultConfig, type DidaTodoConfig } from './config-schema';


export interface LoadedConfig {
  config: DidaTodoConfig;
  /** False when the file is missing and `config` holds the defaults. */
  exists: boolean;
}

const DEFAULT_HEADER =
  '# dida-todo configuration. `dida-todo bind` edits it; hand edits are picked up without a restart.\n';

/**
 * Reads config.yaml; a missing file yields the defaults with `exists: false`. Throws `ConfigError` for invalid content.
 * With `parsedCache`, the parsed form is kept in that file under a hash of the text (and of CONFIG_VERSION): a later
 * read of the same text validates the kept form instead of loading and running the YAML parser (~20 ms at a cold
 * start). The cache can only answer for the exact text it was made from; it is best effort both ways.
 */
export async function loadConfig(file: string, parsedCache?: string): Promise<LoadedConfig> {
  const text = await readFileIfExists(file);
  if (text === undefined) return { config: defaultConfig(), exists: false };
  if (parsedCache === undefined) return { config: await parseConfigText(text, file), exists: true };
  const hash = createHash('sha256').update(`${CONFIG_VERSION}\n${text}`).digest('hex');
  const kept = await readParsedCache(parsedCache, hash);
  if (kept !== undefined) {
    try {
      return { config: validateConfig(kept, file), exists: true };
    } catch {
      // The full parse below says where the problem is.
    }
  }
  const config = await parseConfigText(text, file);
  await writeFileAtomic(parsedCache, JSON.stringify({ hash, config }), { mode: 0o600, dirMode: 0o700 }).catch(() => undefined);
  return { config, exists: true };
}

async function readParsedCache(file: string, hash: string): Promise<unknown> {
  try {
    const kept = JSON.parse((await readFileIfExists(file)) ?? 'null') as { hash?: unknown; config?: unknown } | null;
    return kept?.hash === hash ? kept.config : undefined;
  } catch {
    return undefined;
  }
}

/** Serializes a config as YAML in a stable key order, behind `header` (a comment block). */
export async function serializeConfig(config: DidaTodoConfig, header = DEFAULT_HEADER): Promise<string> {
  const YAML = await loadYaml();
  const ordered = dropUndefined({
    version: config.version,
    region: config.region,
    baseUrl: config.baseUrl,
    locale: config.locale,
    poll: config.poll,
    budget: config.budget,
    stopPhrases: config.stopPhrases,
    hostLabel: config.hostLabel,
    pricing: config.pricing,
    limits: config.limits,
    bindings: config.bindings.map((b) => dropUndefined({ cwd: b.cwd, projectId: b.projectId, label: b.label, tag: b.tag })),
  });
  return header + YAML.stringify(ordered);
}

/**
 * Validates and atomically writes config.yaml (mode 0600, directory 0700). The leading comment block of the
 * existing file is kept; a new file gets a default header. When config.yaml is a symbolic link, the file it points
 * to is replaced and the link stays. Throws `ConfigError` when `config` is invalid, `FileSaveError` when it cannot
 * be written (nothing is written then).
 */
export async function saveConfig(file: string, config: DidaTodoConfig): Promise<void> {
  const valid = validateConfig(config, file);
  const existing = await readFileIfExists(file);
  const header = (existing !== undefined ? leadingComment(existing) : '') || DEFAULT_HEADER;
  await writeFileAtomic(await linkTarget(file), await serializeConfig(valid, header), { mode: 0o600, dirMode: 0o700 });
}

/** The file a path names once symbolic links are followed (a dangling link's target too); the path itself otherwise. */
export async function linkTarget(file: string): Promise<string> {
  try {
    return await realpath(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
  }
  try {
    return path.resolve(path.dirname(file), await readlink(file));
  } catch {
    // Not a link (or gone): the path itself.
    return file;
  }
}

export interface UpdateConfigOptions extends LockOptions {
  lockDir: string;
}

/**
 * Read-modify-write of config.yaml under the cross-process lock "config". `fn` gets the current config (the
 * defaults when missing) and returns the next one; the file is written only when the result differs.
 * Throws `ConfigError` when the current file is invalid (it is never overwritten then), or `LockTimeoutError`.
 */
export async function updateConfig(
  file: string,
  fn: (config: DidaTodoConfig) => DidaTodoConfig | Promise<DidaTodoConfig>,
  options: UpdateConfigOptions,
): Promise<DidaTodoConfig> {
  const { lockDir, ...lockOptions } = options;
  return withLock(
    lockDir,
    'config',
    async () => {
      const { config } = await loadConfig(file);
      const before = await serializeConfig(config);
      const next = validateConfig(await fn(config), file);
      if ((await serializeConfig(next)) !== before) await saveConfig(file, next);
      return next;
    },
    lockOptions,
  );
}

/** Gives the current config, re-reading the file only when it changed (one `stat` per call otherwise). */
export interface ConfigReader {
  readonly file: string;
  /** Throws `ConfigError` while the file is invalid; recovers as soon as it is fixed. */
  read(): Promise<LoadedConfig>;
}

/**
 * Creates a `ConfigReader` for `file`; edits to the file are seen on the next `read()` without a restart.
 * `parsedCache`: see `loadConfig`.
 */
export function createConfigReader(file: string, parsedCache?: string): ConfigReader {
  let cached: { signature: string; result: LoadedConfig } | { signature: string; error: unknown } | undefined;
  return {
    file,
    async read() {
      const signature = await fileSignature(file);
      if (cached?.signature !== signature) {
        try {
          cached = { signature, result: await loadConfig(file, parsedCache) };
        } catch (error) {
          if (!(error instanceof ConfigError)) throw error;
          cached = { signature, error };
        }
      }
      if ('error' in cached) throw cached.error;
      return { config: structuredClone(cached.result.config), exists: cached.result.exists };
    },
  };
}

async function fileSignature(file: string): Promise<string> {
  try {
    const s = await stat(file, { bigint: true });
    return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw err;
  }
}

function leadingComment(text: string): string {
  const lines = text.split('\n');
  const kept: string[] = [];
  for (const line of lines) {
    if (!line.startsWith('#')) break;
    kept.push(line);
  }
  return kept.length > 0 ? kept.join('\n') + '\n' : '';
}

function dropUndefined<T extends Record<string, unknown>>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
