// The shape of a live self-test report, and how its observations compare with the simulator and its variants.
import { DEFAULT_QUIRKS, type SimQuirks } from '../../sim/sim-task-ops';
import { SIM_VARIANT_NAMES, simVariantQuirks, type SimVariantName } from '../../sim/sim-variants';
import type { ProbeCheckId } from './live-probe-text';

export interface LiveObservation {
  id: ProbeCheckId;
  /** The question, in plain language. */
  what: string;
  /** What the account answered, in the simulator's terms where there is one (`honour`, `empty200`, …). */
  observed: string;
  /** What the simulator does by default (the `kind` variant). */
  simulatorDefault: string;
  matches: boolean;
  /** Extra facts seen on the way (e.g. the error body). */
  detail?: string;
}

export interface LiveProbeReport {
  listName: string;
  /** Set once the scratch list exists. */
  listId?: string;
  gateway: 'http' | 'cli';
  observations: LiveObservation[];
  /** Steps that failed; their observations are missing. */
  failures: Array<{ step: string; message: string }>;
  /** `ok` is false when something the probe created could not be removed; `leftBehind` says what. */
  cleanup: { ok: boolean; leftBehind: string[] };
  /** Every step ran and every observation matches the simulator's default. */
  allMatch: boolean;
  /** The simulator variants whose every setting matches what was observed (empty when a step failed). */
  matchingVariants: SimVariantName[];
}

/** Observations that follow a simulator quirk, as the quirk's value reads in a report. */
const FROM_QUIRKS: Partial<Record<ProbeCheckId, (quirks: SimQuirks) => string>> = {
  'item-ids-on-update': (q) => (q.rewriteItemIds ? 'rewritten' : 'kept'),
  'update-without-title': (q) => q.updateWithoutTitle,
  'status-on-update': (q) => q.statusOnUpdate,
  'deleted-task-read': (q) => q.deletedTaskRead,
  'comment-order': (q) => q.commentOrder,
  'create-sort-order': (q) => (q.sortOrderOnCreate === 'keep' ? 'kept' : 'not kept'),
};

/** What the simulator does for the other checks, whatever the variant. */
const FIXED: Record<Exclude<ProbeCheckId, keyof typeof FROM_QUIRKS>, string> = {
  'partial-update': 'all kept',
  'completed-task-read': 'readable',
  'repeat-without-dates': 'dropped',
  'comment-author-id': 'number',
  'comment-paging': 'honoured',
  'unknown-task-answer': '404',
  'malformed-id-answer': '500',
  'error-id': 'present',
  'inbox-as-project': 'refused',
};

/** What the simulator answers for a check under the given quirks (default: the simulator's defaults). */
export function expectedObservation(id: ProbeCheckId, quirks: SimQuirks = DEFAULT_QUIRKS): string {
  const fromQuirk = FROM_QUIRKS[id];
  return fromQuirk ? fromQuirk(quirks) : FIXED[id as keyof typeof FIXED];
}

/** Variants under which the simulator would have answered every observation the same (`not testable` ones skipped). */
export function variantsMatching(observations: readonly LiveObservation[]): SimVariantName[] {
  return SIM_VARIANT_NAMES.filter((name) => {
    const quirks = simVariantQuirks(name);
    return observations.every((o) => o.observed === 'not testable' || o.observed === expectedObservation(o.id, quirks));
  });
}
