// List names a person probably mistyped: the same name after normalisation (case, width, spaces, punctuation) or a
// small edit away ("工作清丹" for "工作清单"). Binding by name refuses such a name rather than creating a new list.

/**
 * Edit distance counting an insertion, a deletion, a substitution or a swap of two neighbours as one edit
 * (optimal string alignment), over code points, so a CJK character or an emoji is one unit.
 */
export function editDistance(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  const rows: number[][] = [];
  for (let i = 0; i <= x.length; i++) rows.push(Array.from({ length: y.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= x.length; i++) {
    const row = rows[i] as number[];
    const above = rows[i - 1] as number[];
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      let best = Math.min((above[j] as number) + 1, (row[j - 1] as number) + 1, (above[j - 1] as number) + cost);
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) best = Math.min(best, ((rows[i - 2] as number[])[j - 2] as number) + 1);
      row[j] = best;
    }
  }
  return (rows[x.length] as number[])[y.length] as number;
}

/**
 * A list name as a person means it: Unicode NFKC (full-width letters and digits become ASCII, compatibility forms
 * fold), lower case, and without spaces, punctuation and symbols (emoji included).
 */
export function normaliseListName(name: string): string {
  return name
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\s\p{P}\p{S}\p{Cf}]/gu, '');
}

/**
 * How many edits still count as "the same list, mistyped": none for names of one or two characters (normalised),
 * one up to nine characters, then one more for every five.
 */
export function nearNameLimit(normalised: string): number {
  const length = [...normalised].length;
  return length <= 2 ? 0 : Math.max(1, Math.floor(length / 5));
}

/**
 * The names among `existing` that `typed` is probably a typo of: equal after normalisation, or within
 * nearNameLimit edits of it (measured on the normalised forms). An exact match is not a near miss; callers look for
 * it first. Closest first.
 */
export function nearListNames(typed: string, existing: readonly string[]): string[] {
  const mine = normaliseListName(typed);
  const limit = nearNameLimit(mine);
  const found: Array<{ name: string; distance: number }> = [];
  for (const name of new Set(existing)) {
    if (name === typed) continue;
    const theirs = normaliseListName(name);
    if (mine === '' && theirs === '') continue;
    const distance = mine === theirs ? 0 : editDistance(mine, theirs);
    if (distance <= limit) found.push({ name, distance });
  }
  return found.sort((a, b) => a.distance - b.distance).map((f) => f.name);
}
