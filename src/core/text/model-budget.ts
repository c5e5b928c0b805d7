// Budgets for what the model reads: every field from Dida and every result has a cap, with a visible marker.
import { truncateGraphemes } from './text-guard';

/** Caps in characters (UTF-16 units) of each kind of text a result may carry. */
export const MODEL_BUDGET = {
  /** A task or list title. */
  title: 200,
  /** One checklist item (a step title). */
  item: 200,
  /** One resolution the agent wrote. */
  resolution: 300,
  /** A task's body (description), a comment, a reason. */
  body: 2500,
  /** The step list of one view, in characters; more steps are counted, and `todo get` shows any one. */
  steps: 4000,
  /** Works listed in one queue. */
  works: 20,
  /** A whole tool result (message and detail). */
  result: 8000,
} as const;

/**
 * `text` within `max` characters: longer text is cut at a grapheme boundary and ends with a visible marker saying how
 * many characters were left out (they stay in Dida).
 */
export function withinBudget(text: string, max: number): string {
  if (text.length <= max) return text;
  const marker = (n: number) => ` … (${n} more characters in Dida)`;
  const room = Math.max(0, max - marker(text.length).length);
  const kept = truncateGraphemes(text, room + 1).replace(/…$/, '');
  return `${kept}${marker(text.length - kept.length)}`;
}
