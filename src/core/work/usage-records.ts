// Recording what a Work cost: model answers, turn time and automatic continuations are added to the current round of
// the session's current Work, in the state only (no Dida request); the spend guard reads the same numbers.
import type { EngineDeps } from './engine-context';
import { addUsage, DEFAULT_SPEND_LIMITS, emptyUsage, overLimit, roundOf, usageOf, type OverLimit } from '../usage/usage';
import type { Pricing, SpendLimits, Usage } from '../usage/usage-schema';

/** The spend settings in force (config.yaml's `limits` and `pricing`; the defaults without them). */
export interface SpendSettings {
  limits: SpendLimits;
  pricing?: Pricing;
}

export async function spendSettingsOf(deps: Pick<EngineDeps, 'spendSettings'>): Promise<SpendSettings> {
  return deps.spendSettings ? await deps.spendSettings() : { limits: DEFAULT_SPEND_LIMITS };
}

/**
 * Adds `delta` to the current round of Work `key` (any phase but closed). False when there is no such Work (the
 * caller keeps the usage for the Work the session takes next in the turn).
 */
export async function recordUsage(deps: Pick<EngineDeps, 'state'>, key: string, delta: Partial<Usage>): Promise<boolean> {
  let recorded = false;
  await deps.state.update((state) => {
    const work = state.works[key];
    if (!work || work.phase === 'closed') return;
    const entry = (state.usage[key] ??= { rounds: {} });
    const round = String(roundOf(work));
    entry.rounds[round] = addUsage(entry.rounds[round] ?? emptyUsage(), delta);
    recorded = true;
  });
  return recorded;
}

/** The session's current Work, when it is not closed (the Work a model answer of the session counts toward). */
export async function usageTarget(deps: Pick<EngineDeps, 'state'>, sessionId: string): Promise<string | undefined> {
  const state = await deps.state.read();
  const key = state.sessions[sessionId]?.currentWork;
  return key && state.works[key] && state.works[key].phase !== 'closed' ? key : undefined;
}

/** The limit the session's current open Work has passed, if any (the spend guard stops it at the next boundary). */
export async function spendOverLimit(deps: Pick<EngineDeps, 'state' | 'spendSettings'>, key: string): Promise<OverLimit | undefined> {
  const state = await deps.state.read();
  const work = state.works[key];
  if (!work || work.phase !== 'open' || work.waiting) return undefined;
  return overLimit(usageOf(state, key), (await spendSettingsOf(deps)).limits);
}
