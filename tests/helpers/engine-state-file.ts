// Reads the engine's state files the way a person would inspect them: the snapshot, then its change log folded in.
import fs from 'node:fs';

/**
 * The state at `file` (state.json plus state.json.log), or undefined when there is none. Synchronous and independent of
 * the store's code, so tests can poll it and check the on-disk format at the same time.
 */
export function readEngineStateFile(file: string): any {
  if (!fs.existsSync(file)) return undefined;
  const snapshot = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, any>;
  const log = `${file}.log`;
  if (!fs.existsSync(log)) return snapshot;
  const lines = fs.readFileSync(log, 'utf8').split('\n');
  lines.pop(); // the part after the last newline is a line still being written
  const [header, ...records] = lines;
  if (!header || JSON.parse(header).gen !== snapshot.logGen) return snapshot;
  for (const line of records) {
    const r = JSON.parse(line) as { c?: string; k?: string; v?: unknown; d?: number; s?: string };
    if (r.c && r.k) {
      snapshot[r.c] ??= {};
      if (r.d === 1) delete snapshot[r.c][r.k];
      else snapshot[r.c][r.k] = r.v;
    } else if (r.s) snapshot[r.s] = r.v;
  }
  return snapshot;
}
