// The spend guard's stop: a Work past its limit waits for the person, as if they had paused it.
import type { EngineDeps } from '../work/engine-context';
import { formatTokens, type OverLimit } from '../usage/usage';
import type { SpendLimits } from '../usage/usage-schema';
import { waitForHuman } from './waiting';

/** The config.yaml key of a limit (named in the reminder, so the person knows what to raise). */
function settingOf(over: OverLimit): keyof SpendLimits {
  if (over.scope === 'work') return over.what === 'tokens' ? 'maxTokensPerWork' : 'maxMinutesPerWork';
  return over.what === 'tokens' ? 'maxTokensPerRound' : 'maxMinutesPerRound';
}

/**
 * The spend guard stops Work `key` as if the person had paused it: it waits for them with a 🙋 reminder that says what
 * it used and how to let it go on (set the priority back, which allows as much again, or raise the limit).
 */
export async function stopForSpend(deps: EngineDeps, key: string, over: OverLimit): Promise<void> {
  const vars = { used: over.what === 'tokens' ? formatTokens(deps.locale, over.used) : over.used, limit: over.what === 'tokens' ? formatTokens(deps.locale, over.limit) : over.limit, setting: settingOf(over) };
  await waitForHuman(deps, key, deps.locale.t(over.what === 'tokens' ? 'dida.waiting.cause.spend.tokens' : 'dida.waiting.cause.spend.minutes', vars), 'spend');
}
