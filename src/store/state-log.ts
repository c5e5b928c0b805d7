// The on-disk form of a logged state (src/store/logged-state-store.ts keeps it): a snapshot `{ "version": N, "logGen": G,
// ...data }` and its change log `<file>.log` — a header line `{"gen":G}`, then one JSON line per changed entry
// (`{"c":collection,"k":key,"v":value}`, or `"d":1` for a deletion) or section (`{"s":name,"v":value}`). Loading a
// snapshot and replaying its log, folding in the lines appended since, and appending lines with one fsync.
import { closeSync, fstatSync, fsyncSync, ftruncateSync, openSync, readSync, statSync, writeSync } from 'node:fs';
import type * as z from 'zod/mini';
import { describeIssues } from '../common/schema-issues';
import { readFileIfExists } from './atomic-file';
import { displayPath } from './paths';
import type { FileId, Json, Loaded } from './state-shape';
import { parseVersioned, type VersionedFile } from './state-store';

/** What replaying a log checks its lines against. */
interface LogSpec {
  /** The snapshot file; the log is `<file>.log` beside it. */
  file: string;
  /** Record-valued keys whose entries are logged one by one, with the schema of one entry (e.g. `works`). */
  collections: Record<string, z.ZodMiniType>;
  /** Every other top-level key, logged whole when it changes, with its schema. */
  sections: Record<string, z.ZodMiniType>;
}

/** A logged state's files and schemas: what loading it needs. */
export interface StateFileSpec<T> extends VersionedFile<T>, LogSpec {
  /** Validates a whole snapshot (the data without `version` and `logGen`). */
  schema: z.ZodMiniType<T>;
  empty: () => T;
}

/** The snapshot or its log is damaged: the state is moved aside and read as empty. */
export class CorruptSnapshot extends Error {
  constructor(readonly problem: string) {
    super(problem);
  }
}

class CorruptLogError extends Error {}

export function logFileOf(file: string): string {
  return `${file}.log`;
}

export function fileId(file: string): FileId | undefined {
  try {
    const s = statSync(file);
    return { ino: s.ino, size: s.size, mtimeMs: s.mtimeMs };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

export function sameFile(a: FileId | undefined, b: FileId | undefined): boolean {
  return a?.ino === b?.ino && a?.size === b?.size && a?.mtimeMs === b?.mtimeMs;
}

/**
 * Loads the state from scratch: the snapshot (`snapshot` its identity as just seen, `undefined` when there is none) and
 * every line of its log. Throws `CorruptSnapshot` when either is damaged.
 */
export async function loadState<T>(spec: StateFileSpec<T>, snapshot: FileId | undefined): Promise<Loaded> {
  const text = snapshot === undefined ? undefined : await readFileIfExists(spec.file);
  const { data, gen, extra } = text === undefined ? { data: spec.empty() as Json, gen: 0, extra: {} } : parseSnapshot(spec, text);
  const loaded: Loaded = {
    sections: new Map(),
    sectionJson: new Map(),
    collections: new Map(),
    entryJson: new Map(),
    snapshot: text === undefined ? undefined : snapshot,
    logIno: undefined,
    logOffset: 0,
    gen,
    foreign: new Map(Object.entries(extra)),
  };
  for (const [name, value] of Object.entries(data)) {
    if (name in spec.collections) {
      const entries = new Map(Object.entries((value ?? {}) as Json));
      loaded.collections.set(name, entries);
      loaded.entryJson.set(name, new Map([...entries].map(([k, v]) => [k, JSON.stringify(v)])));
    } else {
      loaded.sections.set(name, value);
      loaded.sectionJson.set(name, JSON.stringify(value));
    }
  }
  for (const name of Object.keys(spec.collections)) {
    if (!loaded.collections.has(name)) {
      loaded.collections.set(name, new Map());
      loaded.entryJson.set(name, new Map());
    }
  }
  const log = fileId(logFileOf(spec.file));
  if (log) {
    loaded.logIno = log.ino;
    try {
      foldLog(spec, loaded, 0);
    } catch (error) {
      if (error instanceof CorruptLogError) throw new CorruptSnapshot(`the change log ${displayPath(logFileOf(spec.file))} is damaged (${error.message})`);
      throw error;
    }
  }
  return loaded;
}

/** Reads the log from `from` and applies its complete lines; a log of an older generation is skipped whole. */
export function foldLog(spec: LogSpec, loaded: Loaded, from: number): void {
  let fd: number;
  try {
    fd = openSync(logFileOf(spec.file), 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  try {
    const size = fstatSync(fd).size;
    if (size <= from) return;
    const buffer = Buffer.alloc(size - from);
    let read = 0;
    while (read < buffer.length) {
      const n = readSync(fd, buffer, read, buffer.length - read, from + read);
      if (n === 0) break;
      read += n;
    }
    const text = buffer.subarray(0, read).toString('utf8');
    const end = text.lastIndexOf('\n');
    if (end < 0) return;
    const lines = text.slice(0, end).split('\n');
    let offset = from;
    for (const [i, line] of lines.entries()) {
      const bytes = Buffer.byteLength(line) + 1;
      let record: Json;
      try {
        record = JSON.parse(line) as Json;
      } catch {
        throw new CorruptLogError(`line ${i + 1} after byte ${offset} is not JSON`);
      }
      if (from === 0 && i === 0) {
        if (typeof record.gen !== 'number') throw new CorruptLogError('the first line has no generation');
        // A log older than the snapshot was folded into it already (a crash between the two renames).
        if (record.gen !== loaded.gen) {
          loaded.logOffset = size;
          return;
        }
        offset += bytes;
        continue;
      }
      applyRecord(spec, loaded, record);
      offset += bytes;
    }
    loaded.logOffset = offset;
  } finally {
    closeSync(fd);
  }
}

/** Applies one line of the log to the held state (a section or collection a later version added is kept as written). */
function applyRecord(spec: LogSpec, loaded: Loaded, record: Json): void {
  if (typeof record.c === 'string' && typeof record.k === 'string') {
    const schema = spec.collections[record.c];
    const entries = loaded.collections.get(record.c);
    if (!schema || !entries) {
      if (record.c in spec.sections) throw new CorruptLogError(`${record.c} is not a collection`);
      keepForeignEntry(loaded, record.c, record.k, record.d === 1 ? undefined : record.v);
      return;
    }
    if (record.d === 1) {
      entries.delete(record.k);
      loaded.entryJson.get(record.c)?.delete(record.k);
      return;
    }
    const parsed = schema.safeParse(record.v);
    if (!parsed.success) throw new CorruptLogError(`${record.c}.${record.k}: ${describeIssues(parsed.error.issues)}`);
    entries.set(record.k, parsed.data);
    loaded.entryJson.get(record.c)?.set(record.k, JSON.stringify(parsed.data));
    return;
  }
  if (typeof record.s === 'string') {
    const schema = spec.sections[record.s];
    if (!schema) {
      if (record.s in spec.collections) throw new CorruptLogError(`${record.s} is not a section`);
      loaded.foreign.set(record.s, record.v);
      return;
    }
    const parsed = schema.safeParse(record.v);
    if (!parsed.success) throw new CorruptLogError(`${record.s}: ${describeIssues(parsed.error.issues)}`);
    loaded.sections.set(record.s, parsed.data);
    loaded.sectionJson.set(record.s, JSON.stringify(parsed.data));
    return;
  }
  throw new CorruptLogError('a line names neither an entry nor a section');
}

/** An entry of a collection a later version added: kept as written (`undefined` deletes it). */
function keepForeignEntry(loaded: Loaded, collection: string, key: string, value: unknown): void {
  const held = loaded.foreign.get(collection);
  const entries: Json = typeof held === 'object' && held !== null && !Array.isArray(held) ? (held as Json) : {};
  if (value === undefined) delete entries[key];
  else entries[key] = value;
  loaded.foreign.set(collection, entries);
}

function parseSnapshot<T>(spec: StateFileSpec<T>, text: string): { data: Json; gen: number; extra: Json } {
  const parsed = parseVersioned(text, spec, ['logGen']);
  if (!parsed.ok) throw new CorruptSnapshot(parsed.problem);
  const gen = parsed.meta.logGen;
  return { data: parsed.value as Json, gen: typeof gen === 'number' ? gen : 0, extra: parsed.extra };
}

/** Appends lines to the log with one fsync; a torn tail a dead writer left is cut first. */
export function appendLines(logFile: string, loaded: Loaded, lines: readonly string[]): void {
  const fd = openSync(logFile, 'r+');
  try {
    const size = fstatSync(fd).size;
    if (size > loaded.logOffset) ftruncateSync(fd, loaded.logOffset);
    const bytes = Buffer.from(`${lines.join('\n')}\n`);
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written, loaded.logOffset + written);
    fsyncSync(fd);
    loaded.logOffset += bytes.length;
  } finally {
    closeSync(fd);
  }
  const log = fileId(logFile);
  loaded.logIno = log?.ino;
}
