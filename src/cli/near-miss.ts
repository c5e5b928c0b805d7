// Near misses a person types: the closest command or option ("did you mean `status`?"); list names that are
// probably mistyped are found by the core (src/core/text/near-names.ts).
import { editDistance } from '../core/text/near-names';

/**
 * The candidate closest to `word` (case ignored) when it is at most two edits away, or a third of the word for long
 * words; undefined when nothing is that close or `word` is itself a candidate. Ties go to the first candidate.
 */
export function closestWord(word: string, candidates: Iterable<string>): string | undefined {
  const typed = word.toLowerCase();
  let best: { word: string; distance: number } | undefined;
  for (const candidate of candidates) {
    if (candidate === word) return undefined;
    const distance = editDistance(typed, candidate.toLowerCase());
    if (!best || distance < best.distance) best = { word: candidate, distance };
  }
  const limit = Math.max(2, Math.floor([...typed].length / 3));
  return best && best.distance <= limit && best.distance < [...typed].length ? best.word : undefined;
}
