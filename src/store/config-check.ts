// Reading config.yaml's text with errors a person can act on: each problem's line and key path, the closest valid key
// for a misspelt one ("did you mean"), and the fix.
import * as z from 'zod/mini';
import { describeIssues } from '../common/schema-issues';
import { CONFIG_VERSION, ConfigSchema, normalizeCwd, type DidaTodoConfig } from './config-schema';
import { displayPath } from './paths';

/** Loads the yaml library lazily (it is a separate chunk of the bundle). */
export async function loadYaml(): Promise<typeof import('yaml')> {
  const imported = (await import('yaml')) as typeof import('yaml') & { default?: typeof import('yaml') };
  return typeof imported.parseDocument === 'function' ? imported : (imported.default as typeof import('yaml'));
}
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
  '': ['version', 'region', 'baseUrl', 'locale', 'poll', 'budget', 'stopPhrases', 'hostLabel', 'pricing', 'limits', 'bindings'],
  poll: ['enabled', 'intervalMinutes', 'intervalSeconds'],
  budget: ['perMinute', 'perFiveMinutes'],
  limits: ['maxTokensPerWork', 'maxMinutesPerWork', 'maxTokensPerRound', 'maxMinutesPerRound'],
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

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
