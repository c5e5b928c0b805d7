// The plugin row's config: a small hand-written Standard Schema (cordis validates it and fills in the defaults), kept
// free of libraries so the plugin's first load stays small.
import type { RuntimeSettings } from '../runtime/session/runtime-deps';

export const DEFAULT_BACKOFF_SECONDS = [30, 60, 120, 300, 600];
import { DEFAULT_QUEUE_TRIGGERS } from '../core/queue/queue-trigger';
/** The same as the core's DEFAULT_STOP_PHRASES (kept here so the row config loads without the engine). */
export const DEFAULT_STOP_PHRASES = ['停', '暂停', 'stop', 'pause'];

export interface DidaAccess {
  /** `dida365` (China, default) or `ticktick` (international). */
  region: 'dida365' | 'ticktick';
  /** Explicit Open API base URL, e.g. a simulator; wins over region. */
  baseUrl?: string;
  /** Use the official `dida` CLI at this command instead of direct HTTP. */
  didaCommand?: string;
  /** Per-request timeout in milliseconds. */
  timeoutMs: number;
}

export interface RowConfig extends RuntimeSettings {
  /** Language of everything written into Dida and shown to the model: zh (default) or en. */
  locale: 'zh' | 'en';
  /** Poll the bound list for new work while sessions are idle (long-lived profiles only; config.yaml's `poll` wins). */
  poll: boolean;
  /** Seconds between polls while sessions are idle and the list changes. */
  pollSeconds: number;
  /** The longest time between polls, in minutes, reached after long quiet (one poll per interval before). */
  pollIntervalMinutes: number;
  /** Exact human messages that allow one turn to pick work from the whole queue. */
  queueTriggers: string[];
  /** Seconds step changes and their progress comments wait so a burst of them (a step's start and finish) goes to Dida as one write and one comment. */
  progressWindowSeconds: number;
  /** Where dsh has no answerer of its own (headless, sdk), how long a long-lived session waits for the answer in Dida. */
  maxAnswerWaitMinutes: number;
  /** The same for a one-shot headless run (it holds the run open meanwhile). */
  oneShotAnswerWaitMinutes: number;
  /** Path of config.yaml (default ~/.config/dida-todo/config.yaml). */
  configPath?: string;
  /** Directory of state.json and locks (default ~/.local/state/dida-todo). */
  stateDir?: string;
  /** How to reach Dida. */
  dida: DidaAccess;
}

interface Issue {
  message: string;
  path?: PropertyKey[];
}

type Field = (value: unknown, path: string[], issues: Issue[]) => unknown;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function integer(min: number, max: number): Field {
  return (v, path, issues) => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) issues.push({ message: `expected an integer from ${min} to ${max}`, path });
    return v;
  };
}

function oneOf(values: readonly string[]): Field {
  return (v, path, issues) => {
    if (typeof v !== 'string' || !values.includes(v)) issues.push({ message: `expected one of ${values.map((x) => JSON.stringify(x)).join(', ')}`, path });
    return v;
  };
}

const nonEmptyString: Field = (v, path, issues) => {
  if (typeof v !== 'string' || v.length === 0) issues.push({ message: 'expected a non-empty string', path });
  return v;
};

const boolean: Field = (v, path, issues) => {
  if (typeof v !== 'boolean') issues.push({ message: 'expected true or false', path });
  return v;
};

function list(item: Field, { allowEmpty = false } = {}): Field {
  return (v, path, issues) => {
    if (!Array.isArray(v) || (v.length === 0 && !allowEmpty)) {
      issues.push({ message: allowEmpty ? 'expected a list' : 'expected a non-empty list', path });
      return v;
    }
    v.forEach((x, i) => item(x, [...path, String(i)], issues));
    return [...v];
  };
}

const seconds: Field = (v, path, issues) => {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 86_400) issues.push({ message: 'expected seconds from 0 to 86400', path });
  return v;
};

interface Shape {
  [key: string]: { field: Field; default?: () => unknown };
}

/** Validates an object against a shape: unknown keys are named, missing keys take their defaults. */
function object(shape: Shape): Field {
  return (v, path, issues) => {
    const input = v === undefined ? {} : v;
    if (!isObject(input)) {
      issues.push({ message: 'expected an object', path });
      return v;
    }
    const unknown = Object.keys(input).filter((k) => !(k in shape));
    if (unknown.length) issues.push({ message: `unknown key${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => JSON.stringify(k)).join(', ')}`, path });
    const out: Record<string, unknown> = {};
    for (const [key, { field, default: fallback }] of Object.entries(shape)) {
      if (input[key] === undefined) {
        if (fallback) out[key] = fallback();
        continue;
      }
      out[key] = field(input[key], [...path, key], issues);
    }
    return out;
  };
}

const DIDA_SHAPE: Shape = {
  region: { field: oneOf(['dida365', 'ticktick']), default: () => 'dida365' },
  baseUrl: { field: nonEmptyString },
  didaCommand: { field: nonEmptyString },
  timeoutMs: { field: integer(1000, 120_000), default: () => 15_000 },
};

const ROW_SHAPE: Shape = {
  locale: { field: oneOf(['zh', 'en']), default: () => 'zh' },
  maxAutoContinue: { field: integer(0, 50), default: () => 5 },
  backoff: { field: list(seconds), default: () => [...DEFAULT_BACKOFF_SECONDS] },
  maxWaitMinutes: { field: integer(0, 24 * 60), default: () => 300 },
  poll: { field: boolean, default: () => true },
  pollSeconds: { field: integer(5, 3600), default: () => 20 },
  pollIntervalMinutes: { field: integer(1, 1440), default: () => 10 },
  queueTriggers: { field: list(nonEmptyString), default: () => [...DEFAULT_QUEUE_TRIGGERS] },
  progressWindowSeconds: { field: integer(0, 3600), default: () => 60 },
  stopPhrases: { field: list(nonEmptyString, { allowEmpty: true }), default: () => [...DEFAULT_STOP_PHRASES] },
  askInDida: { field: boolean, default: () => true },
  maxAnswerWaitMinutes: { field: integer(1, 24 * 60), default: () => 30 },
  oneShotAnswerWaitMinutes: { field: integer(1, 24 * 60), default: () => 10 },
  configPath: { field: nonEmptyString },
  stateDir: { field: nonEmptyString },
  dida: { field: object(DIDA_SHAPE), default: () => ({ region: 'dida365', timeoutMs: 15_000 }) },
};

/** Every key of the row config (for the patch file's comments). */
export const ROW_CONFIG_KEYS: readonly string[] = Object.keys(ROW_SHAPE);
export const DIDA_ACCESS_KEYS: readonly string[] = Object.keys(DIDA_SHAPE);

const validateRow = object(ROW_SHAPE);

type Result = { value: RowConfig; issues?: undefined } | { issues: Issue[] };

function validate(value: unknown): Result {
  const issues: Issue[] = [];
  const out = validateRow(value, [], issues) as RowConfig;
  return issues.length ? { issues } : { value: out };
}

/** The row config as a Standard Schema (what cordis accepts as a plugin `Config`). */
export const RowConfig = {
  '~standard': { version: 1 as const, vendor: 'dida-todo', validate },
  /** Like zod's safeParse, for callers and tests. */
  safeParse(value: unknown): { success: true; data: RowConfig } | { success: false; issues: Issue[] } {
    const result = validate(value);
    return 'value' in result && result.value ? { success: true, data: result.value } : { success: false, issues: result.issues ?? [] };
  },
};
