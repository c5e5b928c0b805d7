// The plugin row's config schema (a Standard Schema that cordis validates and fills with defaults).
import * as z from 'zod/mini';

export const DEFAULT_BACKOFF_SECONDS = [30, 60, 120, 300, 600];
export const DEFAULT_QUEUE_TRIGGERS = ['检查todo'];
/** The same as the core's DEFAULT_STOP_PHRASES (kept here so the row config loads without the engine). */
export const DEFAULT_STOP_PHRASES = ['停', '暂停', 'stop', 'pause'];

/** Names a misspelled key: zod/mini's default message for it is only "Invalid input" at the object, without the key. */
const unknownKeys = {
  error: (issue: { code?: string; keys?: readonly string[] }) =>
    issue.code === 'unrecognized_keys' && issue.keys?.length ? `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}` : undefined,
};

const DidaAccess = z.strictObject({
  /** `dida365` (China, default) or `ticktick` (international). */
  region: z._default(z.enum(['dida365', 'ticktick']), 'dida365'),
  /** Explicit Open API base URL, e.g. a simulator; wins over region. */
  baseUrl: z.optional(z.string().check(z.minLength(1))),
  /** Use the official `dida` CLI at this command instead of direct HTTP. */
  didaCommand: z.optional(z.string().check(z.minLength(1))),
  /** Per-request timeout in milliseconds. */
  timeoutMs: z._default(z.number().check(z.int(), z.minimum(1000), z.maximum(120_000)), 15_000),
}, unknownKeys);

export const RowConfig = z.strictObject({
  /** Language of everything written into Dida and shown to the model: zh (default) or en. */
  locale: z._default(z.enum(['zh', 'en']), 'zh'),
  /** How many times a stopped session is resumed automatically; 0 turns auto-continuation off. */
  maxAutoContinue: z._default(z.number().check(z.int(), z.minimum(0), z.maximum(50)), 5),
  /** Delays in seconds before each automatic resume; the last one repeats. */
  backoff: z._default(z.array(z.number().check(z.minimum(0), z.maximum(86_400))).check(z.minLength(1)), DEFAULT_BACKOFF_SECONDS),
  /** Poll the bound list for new work while the session is idle. */
  poll: z._default(z.boolean(), false),
  /** Minutes between polls. */
  pollIntervalMinutes: z._default(z.number().check(z.int(), z.minimum(1), z.maximum(1440)), 10),
  /** Exact human messages that allow one turn to pick work from the whole queue. */
  queueTriggers: z._default(z.array(z.string().check(z.minLength(1))).check(z.minLength(1)), DEFAULT_QUEUE_TRIGGERS),
  /** Whole comments by the list's owner on a running Work that pause it at the next step; [] turns them off. */
  stopPhrases: z._default(z.array(z.string().check(z.minLength(1))), DEFAULT_STOP_PHRASES),
  /** Path of config.yaml (default ~/.config/dida-todo/config.yaml). */
  configPath: z.optional(z.string().check(z.minLength(1))),
  /** Directory of state.json and locks (default ~/.local/state/dida-todo). */
  stateDir: z.optional(z.string().check(z.minLength(1))),
  /** How to reach Dida. */
  dida: z._default(DidaAccess, { region: 'dida365', timeoutMs: 15_000 }),
}, unknownKeys);
export type RowConfig = z.infer<typeof RowConfig>;
