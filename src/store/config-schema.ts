// The schema of config.yaml: what each key may hold, the defaults, and the normalized form of a bound directory.
import path from 'node:path';
import * as z from 'zod/mini';

export const CONFIG_VERSION = 1;

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

/** A price per million tokens: beyond this it is a slip of the keyboard (1e30), never a price. */
export const MAX_PRICE = 1_000_000;
const PRICE = z.number().check(z.gte(0), z.lte(MAX_PRICE));
/** A currency as the review shows it before the amount: a symbol or a code (¥, $, CNY, US$), nothing else. */
const CURRENCY = z.string().check(z.regex(/^[\p{Sc}\p{Lu}\p{Ll}]{1,8}$/u, { error: 'expected a currency symbol or code (¥, $, CNY…): up to 8 letters or currency signs' }));

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
  /** Prices per million tokens by model name (shown as an estimated cost in the review todo). */
  pricing: z.optional(z.record(z.string().check(z.minLength(1)), z.strictObject({ input: PRICE, output: PRICE, cacheRead: z.optional(PRICE), currency: z.optional(CURRENCY) }))),
  /** The spend guard: per Work and per round; 0 turns a limit off. */
  limits: z.optional(
    z.strictObject({
      maxTokensPerWork: z.optional(z.int().check(z.gte(0))),
      maxMinutesPerWork: z.optional(z.int().check(z.gte(0))),
      maxTokensPerRound: z.optional(z.int().check(z.gte(0))),
      maxMinutesPerRound: z.optional(z.int().check(z.gte(0))),
    }),
  ),
  bindings: z._default(z.array(BindingSchema), []),
});

export type DidaTodoConfig = z.output<typeof ConfigSchema>;
export type Binding = z.output<typeof BindingSchema>;

/** The configuration used when config.yaml does not exist. */
export function defaultConfig(): DidaTodoConfig {
  return { version: CONFIG_VERSION, bindings: [] };
}

/** Normalizes a directory for bindings: absolute, resolved, without a trailing slash. */
export function normalizeCwd(cwd: string): string {
  return path.resolve(cwd);
}
