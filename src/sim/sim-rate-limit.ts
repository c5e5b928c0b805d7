// The simulator's rate limiter (the rate-limit quirks): per-token sliding windows, and the 429 the live service may send
// beyond them — with or without Retry-After, with a Dida error body or an empty one.
import type { SimQuirks } from './sim-task-ops';
import { errorBody, SimHttpError } from './sim-util';

export type RateLimitQuirks = Pick<SimQuirks, 'rateLimitPerMinute' | 'rateLimitPerFiveMinutes' | 'rateLimitWindowMs' | 'rateLimitRetryAfter' | 'rateLimitBody'>;

export class SimRateLimiter {
  /** Per token: the times of the requests that were let through in the last five windows. */
  private readonly stamps = new Map<string, number[]>();
  private refusals = 0;

  /** How many requests the limiter answered with 429 (since the start or the last reset). */
  get refused(): number {
    return this.refusals;
  }

  reset(): void {
    this.stamps.clear();
    this.refusals = 0;
  }

  /**
   * Counts one request of `token` at `now`, or answers the 429 it gets. Refused requests do not count towards the
   * windows. Undefined when the quirks set no limit or the request is within both windows.
   */
  check(token: string, now: number, quirks: RateLimitQuirks): SimHttpError | undefined {
    const short = quirks.rateLimitPerMinute;
    const long = quirks.rateLimitPerFiveMinutes;
    if (short <= 0 && long <= 0) return undefined;
    const windowMs = quirks.rateLimitWindowMs;
    const kept = (this.stamps.get(token) ?? []).filter((t) => t > now - 5 * windowMs);
    this.stamps.set(token, kept);
    let freeAt = 0;
    for (const [limit, span] of [
      [short, windowMs],
      [long, 5 * windowMs],
    ] as const) {
      if (limit <= 0) continue;
      const inWindow = kept.filter((t) => t > now - span);
      if (inWindow.length >= limit) freeAt = Math.max(freeAt, (inWindow[inWindow.length - limit] as number) + span);
    }
    if (freeAt === 0) {
      kept.push(now);
      return undefined;
    }
    const n = this.refusals++;
    const withRetryAfter = quirks.rateLimitRetryAfter === 'send' || (quirks.rateLimitRetryAfter === 'alternate' && n % 2 === 0);
    const withBody = quirks.rateLimitBody === 'json' || (quirks.rateLimitBody === 'alternate' && Math.floor(n / 2) % 2 === 0);
    const headers: Record<string, string> = withRetryAfter ? { 'Retry-After': String(Math.max(1, Math.ceil((freeAt - now) / 1000))) } : {};
    return new SimHttpError(429, withBody ? errorBody('too_many_requests', 'Too many requests, please slow down') : undefined, headers);
  }
}
