// A cheap look at one section of a logged state (snapshot + change log, see logged-state-store.ts) without a schema
// or a full load: the first-load layer uses it to decide at dsh start whether anything waits for the full plugin.
import { readFileSync } from 'node:fs';

export type SectionPeek = { known: true; value: unknown } | { known: false };

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * The latest value of section `name` of the state at `file`: the last complete log line that wrote it when the log
 * belongs to the snapshot, else the snapshot's. `mark` is a text the value must contain to be worth parsing: a
 * snapshot without it answers `undefined` without a parse (the snapshot may be large; the log line is one section).
 * Anything it cannot read with certainty answers `{ known: false }`; the caller then assumes the worst.
 */
export function peekSection(file: string, name: string, mark: string): SectionPeek {
  let snapshot: string | undefined;
  let log: string | undefined;
  try {
    snapshot = readText(file);
    log = readText(`${file}.log`);
  } catch {
    return { known: false };
  }
  const snapshotGen = snapshot === undefined ? 0 : /^\{"version":\d+,"logGen":(\d+)[,}]/.exec(snapshot)?.[1];
  if (snapshotGen === undefined) return { known: false };
  if (log !== undefined && log.length > 0) {
    const firstEnd = log.indexOf('\n');
    const header = firstEnd < 0 ? undefined : /^\{"gen":(\d+)\}$/.exec(log.slice(0, firstEnd))?.[1];
    if (header === undefined) return { known: false };
    if (Number(header) === Number(snapshotGen)) {
      // Only complete lines count, as for the store: a line cut by a crash was never written.
      const complete = log.slice(0, log.lastIndexOf('\n') + 1);
      const at = complete.lastIndexOf(`\n{"s":${JSON.stringify(name)},"v":`);
      if (at >= 0) {
        try {
          const record = JSON.parse(complete.slice(at + 1, complete.indexOf('\n', at + 1))) as { v?: unknown };
          return { known: true, value: record.v };
        } catch {
          return { known: false };
        }
      }
    }
  }
  if (snapshot === undefined || !snapshot.includes(mark)) return { known: true, value: undefined };
  try {
    return { known: true, value: (JSON.parse(snapshot) as Record<string, unknown>)[name] };
  } catch {
    return { known: false };
  }
}
