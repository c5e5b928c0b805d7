// A cheap look at a logged state (snapshot + change log, see state-log.ts) without a schema or a full load:
// the first-load layer uses it to decide whether anything waits for the full plugin. Both files are read once per look.
import { readFileSync } from 'node:fs';

export type SectionPeek = { known: true; value: unknown } | { known: false };

export interface StatePeek {
  /**
   * The latest value of section `name`: the last complete log line that wrote it when the log belongs to the
   * snapshot, else the snapshot's. `mark` is a text the value must contain to be worth parsing: a snapshot without it
   * answers `undefined` without a parse (the snapshot may be large; the log line is one section). Anything it cannot
   * read with certainty answers `{ known: false }`; the caller then assumes the worst.
   */
  section(name: string, mark: string): SectionPeek;
  /** Whether the snapshot or the log holds any of `marks` (a file that could not be read counts as holding them). */
  mentions(marks: readonly string[]): boolean;
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Reads the state at `file` (and `<file>.log`) once, for any number of questions. */
export function peekState(file: string): StatePeek {
  let snapshot: string | undefined;
  let log: string | undefined;
  let unreadable = false;
  try {
    snapshot = readText(file);
    log = readText(`${file}.log`);
  } catch {
    unreadable = true;
  }
  const snapshotGen = snapshot === undefined ? '0' : /^\{"version":\d+,"logGen":(\d+)[,}]/.exec(snapshot)?.[1];
  // The log's complete lines, when the log belongs to the snapshot ('' when there is none; undefined when unclear).
  let lines: string | undefined = '';
  if (log !== undefined && log.length > 0) {
    const firstEnd = log.indexOf('\n');
    const header = firstEnd < 0 ? undefined : /^\{"gen":(\d+)\}$/.exec(log.slice(0, firstEnd))?.[1];
    if (header === undefined) lines = undefined;
    // Only complete lines count, as for the store: a line cut by a crash was never written.
    else if (Number(header) === Number(snapshotGen)) lines = log.slice(0, log.lastIndexOf('\n') + 1);
  }
  return {
    section(name, mark) {
      if (unreadable || snapshotGen === undefined || lines === undefined) return { known: false };
      const at = lines.lastIndexOf(`\n{"s":${JSON.stringify(name)},"v":`);
      if (at >= 0) {
        try {
          const record = JSON.parse(lines.slice(at + 1, lines.indexOf('\n', at + 1))) as { v?: unknown };
          return { known: true, value: record.v };
        } catch {
          return { known: false };
        }
      }
      if (snapshot === undefined || !snapshot.includes(mark)) return { known: true, value: undefined };
      try {
        return { known: true, value: (JSON.parse(snapshot) as Record<string, unknown>)[name] };
      } catch {
        return { known: false };
      }
    },
    mentions(marks) {
      if (unreadable) return true;
      return [snapshot, log].some((text) => text !== undefined && marks.some((mark) => text.includes(mark)));
    },
  };
}

/** One section of the state at `file` (see `StatePeek.section`). */
export function peekSection(file: string, name: string, mark: string): SectionPeek {
  return peekState(file).section(name, mark);
}
