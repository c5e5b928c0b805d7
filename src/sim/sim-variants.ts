// Named simulator profiles: today's kind simulator, three live profiles that together cover every quirk value of the
// engine suites, one whose creates do not keep sortOrder, and the kind simulator behind the live service's reported
// rate limit.
import { DEFAULT_QUIRKS, mergeQuirks, type SimQuirks } from './sim-task-ops';

export type SimVariantName = 'kind' | 'live-a' | 'live-b' | 'live-c' | 'live-d';
/** Variants that only limit how fast Dida answers, not what it answers (the live self-test cannot tell them apart). */
export type SimLimitVariantName = 'rate-limit';
/** Every name `DIDA_SIM_VARIANT` may take. */
export type SelectableSimVariant = SimVariantName | SimLimitVariantName;

/**
 * `kind` is the simulator as it always was (status ignored on update, deleted tasks answer 404, an update without
 * title is applied, comments oldest-first in pages of 200). The `live-*` profiles are answers the live service may
 * give (docs/decisions/0030); across live-a/b/c every value of every quirk but `sortOrderOnCreate` occurs at least
 * once, and `live-d` is the Dida that assigns its own sortOrder to a create (docs/decisions/0062).
 */
export const SIM_VARIANTS: Record<SelectableSimVariant, Partial<SimQuirks>> = {
  kind: {
    statusOnUpdate: 'ignore',
    deletedTaskRead: '404',
    updateWithoutTitle: 'apply',
    commentOrder: 'oldest-first',
    commentPageSize: 200,
  },
  'live-a': {
    statusOnUpdate: 'honour',
    deletedTaskRead: 'readable',
    updateWithoutTitle: 'ignore',
    commentOrder: 'newest-first',
    commentPageSize: 50,
  },
  'live-b': {
    statusOnUpdate: 'honour',
    deletedTaskRead: 'empty200',
    updateWithoutTitle: 'apply',
    commentOrder: 'newest-first',
    commentPageSize: 200,
  },
  'live-c': {
    statusOnUpdate: 'honour',
    deletedTaskRead: '500',
    updateWithoutTitle: 'ignore',
    commentOrder: 'oldest-first',
    commentPageSize: 50,
  },
  // A Dida that does not keep the sortOrder a create sends: the fact own creates rest on (decision 0009) fails, so
  // the engine suites are not run under it by `npm test`; engine-own-creates.test.ts shows what the bundle does.
  'live-d': {
    statusOnUpdate: 'honour',
    deletedTaskRead: '404',
    updateWithoutTitle: 'apply',
    commentOrder: 'oldest-first',
    commentPageSize: 200,
    sortOrderOnCreate: 'assign',
  },
  /**
   * The kind simulator behind the rate limit one client of the live service reported: per token 100 requests a minute
   * and 300 in five minutes, and beyond them a 429 with and without Retry-After, with a JSON and an empty body
   * (alternating). Tests shorten its windows with the `rateLimitWindowMs` quirk (see RATE_LIMIT_TEST_WINDOW_MS).
   */
  'rate-limit': {
    statusOnUpdate: 'ignore',
    deletedTaskRead: '404',
    updateWithoutTitle: 'apply',
    commentOrder: 'oldest-first',
    commentPageSize: 200,
    rateLimitPerMinute: 100,
    rateLimitPerFiveMinutes: 300,
    rateLimitWindowMs: 60_000,
    rateLimitRetryAfter: 'alternate',
    rateLimitBody: 'alternate',
  },
};

const LIMIT_ONLY: ReadonlySet<string> = new Set<SimLimitVariantName>(['rate-limit']);

/** The variants that differ in what Dida answers (the profiles the live self-test compares against). */
export const SIM_VARIANT_NAMES = Object.keys(SIM_VARIANTS).filter((name) => !LIMIT_ONLY.has(name)) as SimVariantName[];

/** Every variant `DIDA_SIM_VARIANT` may name. */
export const SELECTABLE_SIM_VARIANTS = Object.keys(SIM_VARIANTS) as SelectableSimVariant[];

/**
 * The short window the engine suites run the rate-limit variant with (a "minute" of one second, five seconds for the
 * long window): they make far more requests per minute than a session, so a real minute would starve them (decision 0086).
 */
export const RATE_LIMIT_TEST_WINDOW_MS = 1_000;

/** Whether the quirks limit the rate of requests. */
export function limitsRate(quirks: Partial<SimQuirks>): boolean {
  return (quirks.rateLimitPerMinute ?? 0) > 0 || (quirks.rateLimitPerFiveMinutes ?? 0) > 0;
}

/** The environment variable that picks the variant the engine suites run under. */
export const SIM_VARIANT_ENV = 'DIDA_SIM_VARIANT';

export function isSimVariantName(value: string): value is SelectableSimVariant {
  return (SELECTABLE_SIM_VARIANTS as string[]).includes(value);
}

/** The whole quirk set of a variant (its fields over the simulator defaults). */
export function simVariantQuirks(name: SelectableSimVariant): SimQuirks {
  return mergeQuirks(DEFAULT_QUIRKS, SIM_VARIANTS[name]);
}

/**
 * The variant named by `DIDA_SIM_VARIANT` (default `kind`) and its quirks, for `startSimulator({ quirks })`.
 * Throws an Error listing the known names when the variable names no variant.
 */
export function simVariantFromEnv(env: NodeJS.ProcessEnv = process.env): { name: SelectableSimVariant; quirks: Partial<SimQuirks> } {
  const raw = (env[SIM_VARIANT_ENV] ?? '').trim();
  const name = raw === '' ? 'kind' : raw;
  if (!isSimVariantName(name)) {
    throw new Error(`${SIM_VARIANT_ENV}=${JSON.stringify(raw)} names no simulator variant; use one of ${SELECTABLE_SIM_VARIANTS.join(', ')} (or leave it unset for kind).`);
  }
  return { name, quirks: { ...SIM_VARIANTS[name] } };
}
