// What a Work cost: model requests, tokens as the model reported them, wall time and automatic continuations, per
// round of the Work; the one plain line the review todo shows; an estimated price; and the spend guard's limits.
import type { Locale } from '../text/locale';
import type { ModelUsage, Pricing, SpendLimits, Usage, UsageAllowance, WorkUsage } from './usage-schema';


/** A Work's recorded usage with the Work's round (the state's `usage` entry and `works[key].round`). */
export interface UsageHolder {
  usage?: WorkUsage | undefined;
  round?: number | undefined;
}

/** The holder of Work `key` in `state`. */
export function usageOf(state: { usage: Record<string, WorkUsage>; works: Record<string, { round?: number | undefined }> }, key: string): UsageHolder {
  return { usage: state.usage[key], round: state.works[key]?.round };
}

/** One model answer's usage as dsh reports it (`assistant/message` `usage`: disjoint counts). */
export interface AnswerUsage {
  model?: string;
  inputTokens?: number;
  outputTokens?: number;
  cacheReadTokens?: number;
}

export function emptyUsage(): Usage {
  return { requests: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, ms: 0, continuations: 0, continuedRequests: 0, continuedTokens: 0, models: {} };
}

/** A count from the model's report: a finite, non-negative whole number (anything else counts 0). */
function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

/** The usage of one answer (`continued`: made after an automatic continuation in the same turn). */
export function answerUsage(answer: AnswerUsage, continued: boolean): Usage {
  const input = count(answer.inputTokens);
  const output = count(answer.outputTokens);
  const cache = count(answer.cacheReadTokens);
  const model = typeof answer.model === 'string' && answer.model.trim() !== '' ? answer.model.trim() : 'unknown';
  return {
    ...emptyUsage(),
    requests: 1,
    inputTokens: input,
    outputTokens: output,
    cacheReadTokens: cache,
    continuedRequests: continued ? 1 : 0,
    continuedTokens: continued ? input + output + cache : 0,
    models: { [model]: { requests: 1, inputTokens: input, outputTokens: output, cacheReadTokens: cache } },
  };
}

export function addUsage(a: Usage, b: Partial<Usage>): Usage {
  const models: Record<string, ModelUsage> = structuredClone(a.models);
  for (const [name, m] of Object.entries(b.models ?? {})) {
    const have = (models[name] ??= { requests: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0 });
    have.requests += m.requests;
    have.inputTokens += m.inputTokens;
    have.outputTokens += m.outputTokens;
    have.cacheReadTokens += m.cacheReadTokens;
  }
  return {
    requests: a.requests + (b.requests ?? 0),
    inputTokens: a.inputTokens + (b.inputTokens ?? 0),
    outputTokens: a.outputTokens + (b.outputTokens ?? 0),
    cacheReadTokens: a.cacheReadTokens + (b.cacheReadTokens ?? 0),
    ms: a.ms + (b.ms ?? 0),
    continuations: a.continuations + (b.continuations ?? 0),
    continuedRequests: a.continuedRequests + (b.continuedRequests ?? 0),
    continuedTokens: a.continuedTokens + (b.continuedTokens ?? 0),
    models,
  };
}

export function totalTokens(u: Pick<Usage, 'inputTokens' | 'outputTokens' | 'cacheReadTokens'>): number {
  return u.inputTokens + u.outputTokens + u.cacheReadTokens;
}

/** The Work's round (1 for the first). */
export function roundOf(work: Pick<UsageHolder, 'round'>): number {
  return work.round ?? 1;
}

/** The usage of the Work's current round. */
export function roundUsage(work: Pick<UsageHolder, 'usage' | 'round'>): Usage {
  return work.usage?.rounds[String(roundOf(work))] ?? emptyUsage();
}

/** The usage of every round of the Work. */
export function workUsage(work: Pick<UsageHolder, 'usage'>): Usage {
  return Object.values(work.usage?.rounds ?? {}).reduce((sum, u) => addUsage(sum, u), emptyUsage());
}



/**
 * The estimated price of `usage` with `pricing` (per model; a model without a price makes the estimate unknown:
 * undefined, so the line shows only tokens). Undefined without pricing or when the currencies differ.
 */
export function estimatedCost(usage: Usage, pricing: Pricing | undefined): { amount: number; currency: string } | undefined {
  if (!pricing || usage.requests === 0) return undefined;
  let amount = 0;
  let currency: string | undefined;
  for (const [model, m] of Object.entries(usage.models)) {
    const price = pricing[model];
    if (!price) return undefined;
    const unit = price.currency ?? '¥';
    if (currency !== undefined && currency !== unit) return undefined;
    currency = unit;
    amount += (m.inputTokens * price.input + m.outputTokens * price.output + m.cacheReadTokens * (price.cacheRead ?? price.input)) / 1_000_000;
  }
  return currency === undefined ? undefined : { amount, currency };
}

/** A token count as people read it: `980`, `1.2万` / `12.3k`. */
export function formatTokens(locale: Locale, n: number): string {
  if (locale.id === 'zh') return n >= 10_000 ? `${(n / 10_000).toFixed(n >= 1_000_000 ? 0 : 1).replace(/\.0$/, '')}万` : n.toLocaleString('en-US');
  return n >= 1000 ? `${(n / 1000).toFixed(n >= 100_000 ? 0 : 1).replace(/\.0$/, '')}k` : String(n);
}

/** Minutes as people read them (at least 1 once anything ran). */
export function formatMinutes(ms: number): number {
  return ms <= 0 ? 0 : Math.max(1, Math.round(ms / 60_000));
}

/**
 * The one plain line of the review todo: tokens (cache hits apart), requests, time, continuations, and an estimated
 * price when pricing is configured for every model used. Empty when nothing was recorded (a Work done elsewhere).
 */
export function usageLine(locale: Locale, usage: Usage, pricing?: Pricing, total?: Usage): string {
  if (usage.requests === 0) return '';
  const vars = {
    tokens: formatTokens(locale, totalTokens(usage)),
    cache: formatTokens(locale, usage.cacheReadTokens),
    requests: usage.requests,
    minutes: formatMinutes(usage.ms),
    continuations: usage.continuations,
  };
  const parts = [usage.cacheReadTokens > 0 ? locale.t('dida.usage.tokensCache', vars) : locale.t('dida.usage.tokens', vars), locale.t('dida.usage.requests', vars), locale.t('dida.usage.minutes', vars)];
  if (usage.continuations > 0) parts.push(locale.t('dida.usage.continuations', vars));
  const cost = estimatedCost(usage, pricing);
  if (cost) parts.push(locale.t('dida.usage.cost', { cost: `${cost.currency}${cost.amount < 0.01 ? cost.amount.toFixed(4) : cost.amount.toFixed(2)}` }));
  let line = locale.t('dida.usage.line', { parts: parts.join(locale.t('dida.usage.separator')) });
  if (total && total.requests > usage.requests) line += locale.t('dida.usage.total', { tokens: formatTokens(locale, totalTokens(total)), requests: total.requests });
  return line;
}


/** Generous per Work, off per round; see docs/decisions/0058. */
export const DEFAULT_SPEND_LIMITS: SpendLimits = { maxTokensPerWork: 5_000_000, maxMinutesPerWork: 240, maxTokensPerRound: 0, maxMinutesPerRound: 0 };

export interface OverLimit {
  what: 'tokens' | 'minutes';
  scope: 'work' | 'round';
  used: number;
  limit: number;
}

/**
 * The first limit the Work has passed, counting from the allowance the person gave when they let it go on after a
 * stop (`usageAllowance`: the usage then); undefined while within every limit.
 */
export function overLimit(work: UsageHolder, limits: SpendLimits): OverLimit | undefined {
  const base = work.usage?.allowance;
  const all = workUsage(work);
  const round = roundUsage(work);
  const since = (u: Usage, b: { tokens: number; ms: number } | undefined) => ({ tokens: totalTokens(u) - (b?.tokens ?? 0), ms: u.ms - (b?.ms ?? 0) });
  const w = since(all, base?.work);
  const r = since(round, base?.round === roundOf(work) ? base.roundUsage : undefined);
  const checks: Array<[OverLimit['what'], OverLimit['scope'], number, number]> = [
    ['tokens', 'work', w.tokens, limits.maxTokensPerWork],
    ['minutes', 'work', w.ms / 60_000, limits.maxMinutesPerWork],
    ['tokens', 'round', r.tokens, limits.maxTokensPerRound],
    ['minutes', 'round', r.ms / 60_000, limits.maxMinutesPerRound],
  ];
  for (const [what, scope, used, limit] of checks) if (limit > 0 && used >= limit) return { what, scope, used: Math.round(used), limit };
  return undefined;
}

/** The allowance recorded when the person lets a Work stopped by a limit go on: the usage so far does not count again. */
export function allowanceNow(work: Pick<UsageHolder, 'usage' | 'round'>): UsageAllowance {
  const all = workUsage(work);
  const round = roundUsage(work);
  return { work: { tokens: totalTokens(all), ms: all.ms }, round: roundOf(work), roundUsage: { tokens: totalTokens(round), ms: round.ms } };
}
