// Fault injection: a queue of SimFaults matched against each request's route key, with skip/times accounting.
import * as z from 'zod/mini';
import { describeIssues } from '../common/schema-issues';

export type SimFaultKind = 'status' | 'latency' | 'drop' | 'truncate' | 'empty' | 'timeout' | 'redirect';
export const SIM_FAULT_KINDS: readonly SimFaultKind[] = ['status', 'latency', 'drop', 'truncate', 'empty', 'timeout', 'redirect'];

/** The statuses a `redirect` fault may answer with. */
export const REDIRECT_STATUSES: readonly number[] = [301, 302, 303, 307, 308];

export interface SimFault {
  /** A route key such as `POST /task`; omitted = any route. */
  route?: string;
  kind: SimFaultKind;
  /**
   * `status`: the status to answer. `empty`: the success status to send (default 201). `redirect`: 301, 302, 303,
   * 307 or 308 (default 302).
   */
  status?: number;
  /**
   * `redirect`: the Location header (default: the request's own path, as an http→https or host move would send).
   * The request is not applied.
   */
  location?: string;
  /** Sent as a Retry-After header: seconds, or a text as it is (an HTTP date, or garbage). */
  retryAfter?: number | string;
  /** `latency`: delay before the normal answer. */
  delayMs?: number;
  /** Let this many matching requests pass first (default 0). */
  skip?: number;
  /** How many matching requests to affect (default 1; Infinity = all). */
  times?: number;
}

interface ActiveFault {
  fault: SimFault;
  toSkip: number;
  remaining: number;
}

export class FaultQueue {
  private faults: ActiveFault[] = [];

  add(fault: SimFault): void {
    if (!SIM_FAULT_KINDS.includes(fault.kind)) throw new Error(`unknown fault kind ${String(fault.kind)}`);
    if (fault.kind === 'redirect' && fault.status !== undefined && !REDIRECT_STATUSES.includes(fault.status)) {
      throw new Error(`a redirect fault answers ${REDIRECT_STATUSES.join(', ')} (got ${fault.status})`);
    }
    const times = fault.times ?? 1;
    if (!(times > 0)) return;
    this.faults.push({ fault: { ...fault }, toSkip: Math.max(0, fault.skip ?? 0), remaining: times });
  }

  clear(): void {
    this.faults = [];
  }

  /** Faults not used up yet. */
  pending(): SimFault[] {
    return this.faults.map((f) => ({ ...f.fault, skip: f.toSkip, times: f.remaining }));
  }

  /**
   * The fault to apply to one request, or undefined. Faults are tried in the order they were added; the first
   * matching one that has skipped enough requests is used (and counted down); a matching fault still skipping
   * counts this request as skipped.
   */
  take(routeKey: string): SimFault | undefined {
    for (const active of this.faults) {
      if (active.fault.route !== undefined && active.fault.route !== routeKey) continue;
      if (active.toSkip > 0) {
        active.toSkip--;
        continue;
      }
      active.remaining--;
      if (active.remaining <= 0) this.faults = this.faults.filter((f) => f !== active);
      return active.fault;
    }
    return undefined;
  }
}

/** A SimFault as JSON (HTTP control API): `times: null` means Infinity. */
const FaultJsonSchema = z.object({
  route: z.optional(z.string()),
  kind: z.enum(['status', 'latency', 'drop', 'truncate', 'empty', 'timeout', 'redirect']),
  status: z.optional(z.number().check(z.int(), z.gte(100), z.lte(599))),
  location: z.optional(z.string()),
  retryAfter: z.optional(z.union([z.number().check(z.gte(0)), z.string()])),
  delayMs: z.optional(z.number().check(z.gte(0))),
  skip: z.optional(z.number().check(z.int(), z.gte(0))),
  times: z.optional(z.nullable(z.number().check(z.gte(0)))),
});

/** Reads a fault from JSON; throws an Error describing what is wrong. */
export function parseFaultJson(value: unknown): SimFault {
  const parsed = FaultJsonSchema.safeParse(value, { reportInput: true });
  if (!parsed.success) throw new Error(`invalid fault: ${describeIssues(parsed.error.issues)}`);
  const { times, ...rest } = parsed.data;
  const fault: SimFault = { ...rest };
  if (times === null) fault.times = Infinity;
  else if (times !== undefined) fault.times = times;
  return fault;
}
