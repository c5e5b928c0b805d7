// Owns config.yaml: its schema, reading with clear errors, atomic saving, change-aware re-reading and bindings.
import { createHash } from 'node:crypto';
import { readlink, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import * as z from 'zod/mini';
import { describeIssues } from '../common/schema-issues';
import { readFileIfExists, writeFileAtomic } from './atomic-file';
import { withLock, type LockOptions } from './file-lock';
import { displayPath } from './paths';

export const CONFIG_VERSION = 1;

/** Loads the yaml library lazily (it is a separate chunk of the bundle). */
async function loadYaml(): Promise<typeof import('yaml')> {
  const imported = (await import('yaml')) as typeof import('yaml') & { default?: typeof import('yaml') };
  return typeof imported.parseDocument === 'function' ? imported : (imported.default as typeof import('yaml'));
}
export const DEFAULT_POLL_INTERVAL_MINUTES = 10;
/** The default request budget (the same as DEFAULT_BUDGET in src/dida/request-budget.ts). */
export const DEFAULT_BUDGET_PER_MINUTE = 60;
export const DEFAULT_BUDGET_PER_FIVE_MINUTES = 240;

/** A route tag as written: optional leading `#`, then letters or digits first, then letters, digits, `_ . - /` (at most 64). */
const ROUTE_TAG_TEXT = /^\s*#*[\p{L}\p{N}][\p{L}\p{N}_.\-/]{0,63}\s*$/u;

const BindingSchema = z.strictObject({
  cwd: z.string().check(z.refine((value) => path.isAbsolute(value), { error: 'expected an absolute path' })),
  projectId: z.string().check(z.minLength(1)),
  label: z.optional(z.string()),
  /** Route tag: tasks with this Dida tag run only in directories bound with it. */
  tag: z.optional(z.string().check(z.refine((value) => ROUTE_TAG_TEXT.test(value.normalize('NFKC')), { error: 'expected a route tag: letters or digits, then letters, digits, _ . - / (at most 64)' }))),
});

export const ConfigSchema = z.strictObject({
  version: z._default(z.literal(CONFIG_VERSION), CONFIG_VERSION),
  region: z.optional(z.enum(['dida365', 'ticktick'])),
  baseUrl: z.optional(z.url({ protocol: /^https?$/, error: 'expected an http(s) URL' })),
  locale: z.optional(z.enum(['zh', 'en'])),
  poll: z.optional(
    z.strictObject({
      enabled: z._default(z.boolean(), false),
      intervalMinutes: z._default(z.int().check(z.gte(1), z.lte(1440)), DEFAULT_POLL_INTERVAL_MINUTES),
      /** Seconds between polls while sessions are idle and the list changes (the interval grows to intervalMinutes in quiet). */
      intervalSeconds: z.optional(z.int().check(z.gte(5), z.lte(3600))),
    }),
  ),
  /** The machine-wide Dida request budget of the account (every process and session of this machine shares it). */
  budget: z.optional(
    z.strictObject({
      perMinute: z._default(z.int().check(z.gte(1), z.lte(1000)), DEFAULT_BUDGET_PER_MINUTE),
      perFiveMinutes: z._default(z.int().check(z.gte(1), z.lte(5000)), DEFAULT_BUDGET_PER_FIVE_MINUTES),
    }),
  ),
  /** Whole comments by the list's owner that pause a running Work (wins over the plugin row's; [] turns them off). */
  stopPhrases: z.optional(z.array(z.string().check(z.minLength(1)))),
  hostLabel: z.optional(z.string().check(z.minLength(1))),
  bindings: z._default(z.array(BindingSchema), []),
});

export type DidaTodoConfig = z.output<typeof ConfigSchema>;
export type Binding = z.output<typeof BindingSchema>;

export interface LoadedConfig {
  config: DidaTodoConfig;
  /** False when the file is missing and `config` holds the defaults. */
  exists: boolean;
}

const DEFAULT_HEADER =
  '# dida-todo configuration. `dida-todo bind` edits it; hand edits are picked up without a restart.\n';

/** One problem found in config.yaml: where it is and what is wrong. */
export interface ConfigIssue {
  /** 1-based line of the offending key or value, when the file was parsed far enough to know it. */
  line?: number;
  /** Key path such as `poll.intervalMinutes` or `bindings[0].cwd`; `(root)` for the file itself. */
  path: string;
  /** The unknown key itself, for an unknown-key issue. */
  unknownKey?: string;
  /** The closest valid key at that place ("did you mean"), for an unknown key. */
  suggestion?: string;
  /** What is wrong, in English (e.g. `expected one of "zh", "en"`). */
  problem: string;
}

/**
 * config.yaml is unreadable as YAML or does not match the schema. The message names the file, each problem's line
 * and key, the closest valid key for a misspelt one, and the fix; `issues` carries the same as data.
 */
export class ConfigError extends Error {
  readonly code = 'config_invalid' as const;
  constructor(
    readonly file: string,
    readonly detail: string,
    readonly fix = 'Fix the file.',
    readonly issues: readonly ConfigIssue[] = [],
  ) {
    super(`${displayPath(file)}: ${detail}. ${fix}`);
    this.name = 'ConfigError';
  }
}

/** The keys config.yaml allows at each place (for "did you mean"). */
const KNOWN_KEYS: Record<string, readonly string[]> = {
  '': ['version', 'region', 'baseUrl', 'locale', 'poll', 'budget', 'stopPhrases', 'hostLabel', 'bindings'],
  poll: ['enabled', 'intervalMinutes', 'intervalSeconds'],
  budget: ['perMinute', 'perFiveMinutes'],
  binding: ['cwd', 'projectId', 'label', 'tag'],
};

/** The closest of `candidates` to `key` (case ignored, at most a third of its letters different), if any. */
export function closestKey(key: string, candidates: readonly string[]): string | undefined {
  let best: { key: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (!best || distance < best.distance) best = { key: candidate, distance };
  }
  return best && best.distance <= Math.max(2, Math.floor(key.length / 3)) ? best.key : undefined;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j] as number;
      row[j] = Math.min(above + 1, (row[j - 1] as number) + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length] as number;
}

/** The configuration used when config.yaml does not exist. */
export function defaultConfig(): DidaTodoConfig {
  return { version: CONFIG_VERSION, bindings: [] };
}

/** Normalizes a directory for bindings: absolute, resolved, without a trailing slash. */
export function normalizeCwd(cwd: string): string {
  return path.resolve(cwd);
}

/** Where keys and values sit in the file, for line numbers in errors. */
interface SourceMap {
  lineOf(path: readonly PropertyKey[], unknownKey?: string): number | undefined;
}

/** Parses config.yaml text; `file` is used in error messages only. Throws `ConfigError`. */
export async function parseConfigText(text: string, file: string): Promise<DidaTodoConfig> {
  const YAML = await loadYaml();
  const lineCounter = new YAML.LineCounter();
  const doc = YAML.parseDocument(text, { lineCounter });
  const syntaxError = doc.errors[0];
  if (syntaxError) {
    const pos = syntaxError.linePos?.[0];
    const where = pos ? ` at line ${pos.line}, column ${pos.col}` : '';
    const reason = syntaxError.message.replace(/ at line \d+, column \d+:[\s\S]*$/, '').trim();
    throw new ConfigError(file, `YAML syntax error${where}: ${reason}`, undefined, [{ ...(pos ? { line: pos.line } : {}), path: '(root)', problem: `YAML syntax error: ${reason}` }]);
  }
  const source: SourceMap = {
    lineOf(path, unknownKey) {
      const node = path.length === 0 ? doc.contents : doc.getIn(path as unknown[], true);
      let offset: number | undefined;
      if (unknownKey !== undefined && YAML.isMap(node)) {
        const pair = node.items.find((item) => YAML.isScalar(item.key) && String(item.key.value) === unknownKey);
        offset = YAML.isScalar(pair?.key) ? pair.key.range?.[0] : undefined;
      } else if (YAML.isNode(node)) offset = node.range?.[0];
      return offset === undefined ? undefined : lineCounter.linePos(offset).line;
    },
  };
  return validateConfig(doc.toJS() ?? {}, file, source);
}

/** Validates an already parsed value against the schema and normalizes binding directories. Throws `ConfigError`. */
export function validateConfig(raw: unknown, file: string, source?: SourceMap): DidaTodoConfig {
  if (isRecord(raw) && typeof raw.version === 'number' && raw.version > CONFIG_VERSION) {
    throw new ConfigError(
      file,
      `at version: config version ${raw.version} was written by a newer dida-todo (this one knows version ${CONFIG_VERSION})`,
      'Upgrade dida-todo.',
      [{ ...lineAt(source, ['version']), path: 'version', problem: `config version ${raw.version} was written by a newer dida-todo` }],
    );
  }
  const result = ConfigSchema.safeParse(raw, { reportInput: true });
  if (!result.success) {
    const issues = result.error.issues;
    const touchesBindings = issues.some((issue) => issue.path[0] === 'bindings');
    // In reading order: the person fixes the file top to bottom.
    const located = issues.flatMap((issue) => locateIssue(issue, source)).sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity));
    throw new ConfigError(file, located.map(describeLocated).join('; '), touchesBindings ? 'Fix the file or run `dida-todo bind` again.' : undefined, located);
  }
  const config = result.data;
  const seen = new Map<string, number>();
  config.bindings = config.bindings.map((binding, index) => {
    const cwd = normalizeCwd(binding.cwd);
    const first = seen.get(cwd);
    if (first !== undefined) {
      const problem = `${cwd} is already bound by bindings[${first}]`;
      const issue: ConfigIssue = { ...lineAt(source, ['bindings', index, 'cwd']), path: `bindings[${index}].cwd`, problem };
      throw new ConfigError(file, describeLocated(issue), 'Fix the file or run `dida-todo bind` again.', [issue]);
    }
    seen.set(cwd, index);
    return { ...binding, cwd };
  });
  return config;
}

function lineAt(source: SourceMap | undefined, path: readonly PropertyKey[], unknownKey?: string): { line?: number } {
  const line = source?.lineOf(path, unknownKey);
  return line === undefined ? {} : { line };
}

/** One schema issue as located problems; an unknown-keys issue becomes one problem per key, each with its line. */
function locateIssue(issue: z.core.$ZodIssue, source: SourceMap | undefined): ConfigIssue[] {
  const path = formatKeyPath(issue.path);
  if (issue.code === 'unrecognized_keys') {
    const place = issue.path.length === 0 ? '' : issue.path[0] === 'bindings' ? 'binding' : String(issue.path[0]);
    return issue.keys.map((key) => {
      const suggestion = closestKey(key, KNOWN_KEYS[place] ?? []);
      return { ...lineAt(source, issue.path, key), path, unknownKey: key, ...(suggestion ? { suggestion } : {}), problem: `unknown key ${JSON.stringify(key)}` };
    });
  }
  return [{ ...lineAt(source, issue.path), path, problem: describeIssues([issue]).replace(/^at [^:]*: /, '') }];
}

function describeLocated(issue: ConfigIssue): string {
  const line = issue.line === undefined ? '' : `line ${issue.line}, `;
  const hint = issue.suggestion ? ` (did you mean ${JSON.stringify(issue.suggestion)}?)` : '';
  return `${line}at ${issue.path}: ${issue.problem}${hint}`;
}

function formatKeyPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(root)';
  return path.map((key, i) => (typeof key === 'number' ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`)).join('');
}

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

/**
 * The binding for `cwd`: an exact match, else the deepest bound ancestor directory (by whole path segments),
 * else undefined.
 */
export function findBinding(config: DidaTodoConfig, cwd: string): Binding | undefined {
  const target = normalizeCwd(cwd);
  let best: Binding | undefined;
  let bestLength = -1;
  for (const binding of config.bindings) {
    const bound = normalizeCwd(binding.cwd);
    if (bound === target) return binding;
    const prefix = bound.endsWith(path.sep) ? bound : bound + path.sep;
    if (target.startsWith(prefix) && bound.length > bestLength) {
      best = binding;
      bestLength = bound.length;
    }
  }
  return best;
}

/** A copy of `config` where `binding` (cwd normalized) replaces the binding of the same directory, or is appended. */
export function withBinding(config: DidaTodoConfig, binding: Binding): DidaTodoConfig {
  const normalized: Binding = { ...binding, cwd: normalizeCwd(binding.cwd) };
  const index = config.bindings.findIndex((b) => normalizeCwd(b.cwd) === normalized.cwd);
  const bindings = index >= 0 ? config.bindings.map((b, i) => (i === index ? normalized : b)) : [...config.bindings, normalized];
  return { ...config, bindings };
}

/** A copy of `config` without the binding of exactly `cwd` (ancestors are kept). */
export function withoutBinding(config: DidaTodoConfig, cwd: string): DidaTodoConfig {
  const target = normalizeCwd(cwd);
  return { ...config, bindings: config.bindings.filter((b) => normalizeCwd(b.cwd) !== target) };
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

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
