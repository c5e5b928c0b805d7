// The per-call context of a Dida tool: the caller's session, and an engine and gateway bound to the turn's abort signal.
import type { ToolContext, ToolResult } from '../core/tools';
import { abortableGateway } from '../dida/abortable-gateway';
import type { WorkEngine } from '../core/engine/work-engine';
import type { Runtime } from '../wiring/runtime';
import type { AgentTracker } from '../runtime/session/agent-tracker';
import type { HostAgent } from '../runtime/session/session-ports';

export const SUBAGENT_REFUSAL =
  'The Dida tools belong to the main session; a subagent reports its results to its parent, which updates the Dida steps.';

/**
 * The context for one tool call: undefined for a caller that is not an agent, a refusal for a subagent. With a
 * signal, every Dida call of the tool carries it and none starts after the turn was stopped.
 */
export function toolContextFor(
  tracker: AgentTracker,
  runtime: Pick<Runtime, 'config' | 'gateway' | 'tokenSource'>,
  engine: () => Promise<WorkEngine>,
  agent: HostAgent | undefined,
  signal?: AbortSignal,
): ToolContext | ToolResult | undefined {
  if (!agent) return undefined;
  const track = tracker.get(agent.id) ?? tracker.add(agent);
  if (track.subagent) return { code: 'invalid_argument', message: SUBAGENT_REFUSAL };
  return {
    sessionId: agent.id,
    cwd: track.cwd,
    queueGranted: track.queueGranted,
    config: runtime.config,
    engine: signal ? async () => (await engine()).withSignal(signal) : engine,
    gateway: signal ? async () => abortableGateway(await runtime.gateway(), signal) : () => runtime.gateway(),
    tokenSource: () => runtime.tokenSource(),
    ...(signal ? { signal } : {}),
  };
}
