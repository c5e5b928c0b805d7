// Named simulator profiles: today's kind simulator and three live profiles that together cover every quirk value.
import { DEFAULT_QUIRKS, mergeQuirks, type SimQuirks } from './sim-task-ops';

export type SimVariantName = 'kind' | 'live-a' | 'live-b' | 'live-c';

/**
 * `kind` is the simulator as it always was (status ignored on update, deleted tasks answer 404, an update without
 * title is applied, comments oldest-first in pages of 200). The `live-*` profiles are answers the live service may
 * give (docs/decisions/0030); across the three, every value of every quirk occurs at least once.
 */
export const SIM_VARIANTS: Record<SimVariantName, Partial<SimQuirks>> = {
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
};

export const SIM_VARIANT_NAMES = Object.keys(SIM_VARIANTS) as SimVariantName[];

/** The environment variable that picks the variant the engine suites run under. */
export const SIM_VARIANT_ENV = 'DIDA_SIM_VARIANT';

export function isSimVariantName(value: string): value is SimVariantName {
  return (SIM_VARIANT_NAMES as string[]).includes(value);
}

/** The whole quirk set of a variant (its fields over the simulator defaults). */
export function simVariantQuirks(name: SimVariantName): SimQuirks {
  return mergeQuirks(DEFAULT_QUIRKS, SIM_VARIANTS[name]);
}

/**
 * The variant named by `DIDA_SIM_VARIANT` (default `kind`) and its quirks, for `startSimulator({ quirks })`.
 * Throws an Error listing the known names when the variable names no variant.
 */
export function simVariantFromEnv(env: NodeJS.ProcessEnv = process.env): { name: SimVariantName; quirks: Partial<SimQuirks> } {
  const raw = (env[SIM_VARIANT_ENV] ?? '').trim();
  const name = raw === '' ? 'kind' : raw;
  if (!isSimVariantName(name)) {
    throw new Error(`${SIM_VARIANT_ENV}=${JSON.stringify(raw)} names no simulator variant; use one of ${SIM_VARIANT_NAMES.join(', ')} (or leave it unset for kind).`);
  }
  return { name, quirks: { ...SIM_VARIANTS[name] } };
}
