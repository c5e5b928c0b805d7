// The shapes of a Work's recorded usage and of the configured prices (validated where they are read).
import * as z from 'zod/mini';

export const ModelUsageSchema = z.object({
  requests: z._default(z.number(), 0),
  inputTokens: z._default(z.number(), 0),
  outputTokens: z._default(z.number(), 0),
  cacheReadTokens: z._default(z.number(), 0),
});

export const UsageSchema = z.object({
  /** Model answers (each a request that came back). */
  requests: z._default(z.number(), 0),
  /** Prompt tokens that were not cache hits, as the model reported them. */
  inputTokens: z._default(z.number(), 0),
  outputTokens: z._default(z.number(), 0),
  /** Prompt tokens served from the model service's cache (apart, where it reports them). */
  cacheReadTokens: z._default(z.number(), 0),
  /** Wall time of turns while the Work was current (ms). */
  ms: z._default(z.number(), 0),
  /** Automatic continuations (after a model error or a crash). */
  continuations: z._default(z.number(), 0),
  /** The share of the requests and tokens made after an automatic continuation, in the same turn. */
  continuedRequests: z._default(z.number(), 0),
  continuedTokens: z._default(z.number(), 0),
  /** Per model (for an estimated price). */
  models: z._default(z.record(z.string(), ModelUsageSchema), {}),
});

export type Usage = z.infer<typeof UsageSchema>;
export type ModelUsage = z.infer<typeof ModelUsageSchema>;

/** The usage already allowed when the person let a Work stopped by a limit go on (it does not count again). */
export const UsageAllowanceSchema = z.object({
  work: z.object({ tokens: z.number(), ms: z.number() }),
  round: z.number(),
  roundUsage: z.object({ tokens: z.number(), ms: z.number() }),
});
export type UsageAllowance = z.infer<typeof UsageAllowanceSchema>;

/** A Work's usage: per round ("1", "2", …), and the allowance the person gave after a stop. */
export const WorkUsageSchema = z.object({
  rounds: z._default(z.record(z.string(), UsageSchema), {}),
  allowance: z.optional(UsageAllowanceSchema),
});
export type WorkUsage = z.infer<typeof WorkUsageSchema>;

/** Prices per million tokens for one model (config.yaml `pricing`), in `currency` (default ¥). */
export const ModelPriceSchema = z.object({
  input: z.number().check(z.gte(0)),
  output: z.number().check(z.gte(0)),
  cacheRead: z.optional(z.number().check(z.gte(0))),
  currency: z.optional(z.string().check(z.minLength(1), z.maxLength(8))),
});
export type ModelPrice = z.infer<typeof ModelPriceSchema>;
export type Pricing = Record<string, ModelPrice>;

/** The spend guard: 0 turns a limit off. */
export interface SpendLimits {
  maxTokensPerWork: number;
  maxMinutesPerWork: number;
  maxTokensPerRound: number;
  maxMinutesPerRound: number;
}
