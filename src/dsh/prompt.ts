// The system prompt section: shown to top-level sessions whose directory is bound right now.
import type { AgentTracker } from '../runtime/session/agent-tracker';
import type { SystemPromptService } from './ports';
import { SYSTEM_PROMPT_SECTION } from './prompt-text';

export const PROMPT_SECTION_NAME = 'dida-todo';
export const PROMPT_SECTION_ORDER = 450;

/** The section text for an agent: the Dida rules when its track is bound and not a subagent, else nothing. */
export function promptFor(tracker: AgentTracker, agentId: string | undefined): string {
  const track = agentId ? tracker.get(agentId) : undefined;
  return track?.binding && !track.subagent ? SYSTEM_PROMPT_SECTION : '';
}

/** Registers the section (re-evaluated for every request, so binding mid-session shows it from the next step on). */
export function registerPrompt(service: SystemPromptService | undefined, tracker: AgentTracker): void {
  service?.section({ name: PROMPT_SECTION_NAME, order: PROMPT_SECTION_ORDER, text: (context) => promptFor(tracker, context.agent?.id) });
}
