// Owns one versioned state as a snapshot file plus an append-only log: a change writes only what it touched.
import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, fsyncSync, openSync, readSync, renameSync, rmSync, statSync, writeSync, ftruncateSync } from 'node:fs';
import path from 'node:path';
import type * as z from 'zod/mini';
import { describeIssues } from '../common/schema-issues';
import { readFileIfExists, writeFileAtomic } from './atomic-file';
import { withLock, type LockContext, type LockOptions } from './file-lock';
import { displayPath } from './paths';
import { parseVersioned, type CorruptStateInfo, type StateReadResult } from './state-store';
import { StateShape, type FileId, type Json, type Loaded } from './state-shape';

export interface LoggedStateStoreOptions<T extends object> {
  /** The snapshot file, e.g. `resolvePaths().stateFile`; the log is `<file>.log` beside it. */
  file: string;
  lockDir: string;
  lockKey?: string;
  /** Validates a whole snapshot (the data without `version` and `logGen`). */
  schema: z.ZodMiniType<T>;
  /** Record-valued keys whose entries are logged one by one, with the schema of one entry (e.g. `works`). */
  collections: Record<string, z.ZodMiniType>;
  /** Every other top-level key, logged whole when it changes, with its schema. */
  sections: Record<string, z.ZodMiniType>;
  version: number;
  empty: () => T;
  migrate?: (data: Record<string, unknown>, fromVersion: number) => unknown;
  onCorrupt?: (info: CorruptStateInfo) => void;
  lockOptions?: Omit<LockOptions, 'signal'>;
  /** The log is folded into a new snapshot once it is this large (default 512 KiB). */
  compactAtBytes?: number;
}

/** Thrown when the state lock was lost while this process was paused: nothing was written; the update is redone. */
class StateLockLostError extends Error {
  constructor(file: string) {
    super(`The lock of ${displayPath(file)} was taken over while this process was paused; the update is redone.`);
    this.name = 'StateLockLostError';
  }
}

class CorruptLogError extends Error {}

function fileId(file: string): FileId | undefined {
  try {
    const s = statSync(file);
    return { ino: s.ino, size: s.size, mtimeMs: s.mtimeMs };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function sameFile(a: FileId | undefined, b: FileId | undefined): boolean {
  return a?.ino === b?.ino && a?.size === b?.size && a?.mtimeMs === b?.mtimeMs;
}

/**
 * A versioned state `{ "version": N, ...data }` kept as a compact snapshot plus a log of changes (`<file>.log`, one JSON
 * line per changed entry or section). Reading re-uses what this process already holds and folds in only the log lines
 * appended since; an update validates and appends only the entries it changed (one fsync), and folds the log into a
 * new snapshot now and then. Reads hand out copies, so callers may mutate what they get. Reads never fail on damage:
 * a corrupt snapshot or log is moved aside, reported, and the empty state is used; a torn last line (a writer that
 * died mid-append) is ignored. A file written by a newer version is left alone (`StateError('state_too_new')`).
 */
export class LoggedStateStore<T extends object> {
  private loaded: Loaded | undefined;
  private readonly logFile: string;

  private readonly shape: StateShape<T>;

  constructor(private readonly options: LoggedStateStoreOptions<T>) {
    this.shape = new StateShape(options);
    this.logFile = `${options.file}.log`;
  }

  get file(): string {
    return this.options.file;
  }

  async read(): Promise<T> {
    return (await this.readResult()).value;
  }

  async readResult(): Promise<StateReadResult<T>> {
    try {
      const loaded = await this.refresh();
      return { value: this.shape.view(loaded).value, exists: loaded.snapshot !== undefined || loaded.logIno !== undefined };
    } catch (error) {
      if (!(error instanceof CorruptSnapshot)) throw error;
      return this.withStateLock(async () => this.quarantined(error.problem));
    }
  }

  /** Reads without ever changing a file (a damaged state is reported, not moved aside): for `dida-todo status`. */
  async peek(): Promise<{ value?: T; exists: boolean; problem?: string }> {
    try {
      const loaded = await this.refresh();
      return { value: this.shape.view(loaded).value, exists: loaded.snapshot !== undefined || loaded.logIno !== undefined };
    } catch (error) {
      if (error instanceof CorruptSnapshot) return { exists: true, problem: error.problem };
      throw error;
    }
  }

  /**
   * Read-modify-write under the cross-process lock. `fn` may mutate its argument (and return nothing) or return a new
   * value. Only the
   * entries and sections that changed are validated and appended to the log. Returns the new value.
   * Throws `StateError` (too new, or `fn` produced data the schema rejects) or `LockTimeoutError`.
   */
  async update(fn: (current: T) => T | void | Promise<T | void>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.withStateLock((lock) => this.updateLocked(fn, lock));
      } catch (error) {
        if (!(error instanceof StateLockLostError) || attempt >= 3) throw error;
      }
    }
  }

  private async updateLocked(fn: (current: T) => T | void | Promise<T | void>, lock: LockContext): Promise<T> {
    let loaded: Loaded;
    try {
      loaded = await this.refresh();
    } catch (error) {
      if (!(error instanceof CorruptSnapshot)) throw error;
      await this.quarantined(error.problem);
      loaded = await this.refresh();
    }
    const view = this.shape.view(loaded);
    const returned = await fn(view.value);
    const lines = returned === undefined || returned === view.value ? this.shape.changesOf(view, loaded) : this.shape.replacementOf(returned as Json, loaded);
    if (lines.length === 0) return this.shape.view(loaded).value;
    if (!lock.stillHeld()) throw new StateLockLostError(this.options.file);
    if (loaded.snapshot === undefined || loaded.logIno === undefined) {
      // No snapshot or no log yet (a new or a version 1 state): the first write makes both, with this change in it.
      this.shape.apply(loaded, lines);
      await this.compact(loaded, lock);
    } else {
      this.appendLines(loaded, lines.map((l) => l.text));
      this.shape.apply(loaded, lines);
      if (loaded.logOffset > (this.options.compactAtBytes ?? 512 * 1024)) await this.compact(loaded, lock);
    }
    return this.shape.view(loaded).value;
  }

  private withStateLock<R>(fn: (lock: LockContext) => Promise<R>): Promise<R> {
    return withLock(this.options.lockDir, this.options.lockKey ?? 'state', fn, this.options.lockOptions);
  }

  // ---- reading ------------------------------------------------------------------------------------------------

  /** The state as on disk now: re-uses what is held, folds in new log lines, or loads from scratch. */
  private async refresh(): Promise<Loaded> {
    const snapshot = fileId(this.options.file);
    const log = fileId(this.logFile);
    const held = this.loaded;
    if (held && sameFile(held.snapshot, snapshot) && held.logIno === log?.ino && (log?.size ?? 0) >= held.logOffset) {
      if (log && log.size > held.logOffset) this.foldLog(held, held.logOffset);
      return held;
    }
    const loaded = await this.load(snapshot);
    this.loaded = loaded;
    return loaded;
  }

  private async load(snapshot: FileId | undefined): Promise<Loaded> {
    const text = snapshot === undefined ? undefined : await readFileIfExists(this.options.file);
    const { data, gen, extra } = text === undefined ? { data: this.options.empty() as Json, gen: 0, extra: {} } : this.parseSnapshot(text);
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
      if (name in this.options.collections) {
        const entries = new Map(Object.entries((value ?? {}) as Json));
        loaded.collections.set(name, entries);
        loaded.entryJson.set(name, new Map([...entries].map(([k, v]) => [k, JSON.stringify(v)])));
      } else {
        loaded.sections.set(name, value);
        loaded.sectionJson.set(name, JSON.stringify(value));
      }
    }
    for (const name of Object.keys(this.options.collections)) {
      if (!loaded.collections.has(name)) {
        loaded.collections.set(name, new Map());
        loaded.entryJson.set(name, new Map());
      }
    }
    const log = fileId(this.logFile);
    if (log) {
      loaded.logIno = log.ino;
      try {
        this.foldLog(loaded, 0);
      } catch (error) {
        if (error instanceof CorruptLogError) throw new CorruptSnapshot(`the change log ${displayPath(this.logFile)} is damaged (${error.message})`);
        throw error;
      }
    }
    return loaded;
  }

  /** Reads the log from `from` and applies its complete lines; a log of an older generation is skipped whole. */
  private foldLog(loaded: Loaded, from: number): void {
    let fd: number;
    try {
      fd = openSync(this.logFile, 'r');
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
        this.applyRecord(loaded, record);
        offset += bytes;
      }
      loaded.logOffset = offset;
    } finally {
      closeSync(fd);
    }
  }

  private applyRecord(loaded: Loaded, record: Json): void {
    if (typeof record.c === 'string' && typeof record.k === 'string') {
      const schema = this.options.collections[record.c];
      const entries = loaded.collections.get(record.c);
      if (!schema || !entries) {
        if (record.c in this.options.sections) throw new CorruptLogError(`${record.c} is not a collection`);
        this.keepForeignEntry(loaded, record.c, record.k, record.d === 1 ? undefined : record.v);
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
      const schema = this.options.sections[record.s];
      if (!schema) {
        if (record.s in this.options.collections) throw new CorruptLogError(`${record.s} is not a section`);
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
  private keepForeignEntry(loaded: Loaded, collection: string, key: string, value: unknown): void {
    const held = loaded.foreign.get(collection);
    const entries: Json = typeof held === 'object' && held !== null && !Array.isArray(held) ? (held as Json) : {};
    if (value === undefined) delete entries[key];
    else entries[key] = value;
    loaded.foreign.set(collection, entries);
  }

  private parseSnapshot(text: string): { data: Json; gen: number; extra: Json } {
    const parsed = parseVersioned(text, this.options, ['logGen']);
    if (!parsed.ok) throw new CorruptSnapshot(parsed.problem);
    const gen = parsed.meta.logGen;
    return { data: parsed.value as Json, gen: typeof gen === 'number' ? gen : 0, extra: parsed.extra };
  }

  // ---- writing ---------------------------------------------------------------------------------------------------

  /** Appends lines to the log with one fsync; a torn tail a dead writer left is cut first. */
  private appendLines(loaded: Loaded, lines: readonly string[]): void {
    const fd = openSync(this.logFile, 'r+');
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
    const log = fileId(this.logFile);
    loaded.logIno = log?.ino;
  }

  /** Writes the held state as a new snapshot (next generation) and starts an empty log for it. */
  private async compact(loaded: Loaded, lock: LockContext): Promise<void> {
    const gen = loaded.gen + 1;
    const data: Json = { version: this.options.version, logGen: gen };
    for (const [name, value] of loaded.foreign) data[name] = value;
    for (const [name, value] of loaded.sections) data[name] = value;
    for (const [name, entries] of loaded.collections) data[name] = Object.fromEntries(entries);
    await writeFileAtomic(this.options.file, `${JSON.stringify(data)}\n`, {
      mode: 0o600,
      dirMode: 0o700,
      beforeRename: () => {
        if (!lock.stillHeld()) throw new StateLockLostError(this.options.file);
      },
    });
    const temp = path.join(path.dirname(this.logFile), `.${path.basename(this.logFile)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
    const header = Buffer.from(`${JSON.stringify({ gen })}\n`);
    const fd = openSync(temp, 'wx', 0o600);
    try {
      writeSync(fd, header);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, this.logFile);
    loaded.gen = gen;
    loaded.snapshot = fileId(this.options.file);
    loaded.logIno = fileId(this.logFile)?.ino;
    loaded.logOffset = header.length;
  }

  private async quarantined(problem: string): Promise<StateReadResult<T>> {
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const movedTo = `${this.options.file}.corrupt-${stamp}`;
    try {
      renameSync(this.options.file, movedTo);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    try {
      renameSync(this.logFile, `${movedTo}.log`);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    this.loaded = undefined;
    const info: CorruptStateInfo = {
      file: this.options.file,
      movedTo,
      problem,
      message: `${displayPath(this.options.file)} was damaged (${problem}); it was moved to ${displayPath(movedTo)} and dida-todo continues with an empty state.`,
    };
    this.options.onCorrupt?.(info);
    return { value: this.options.empty(), exists: false, corrupt: info };
  }

  /** Removes the snapshot and its log (tests). */
  removeFiles(): void {
    rmSync(this.options.file, { force: true });
    rmSync(this.logFile, { force: true });
    this.loaded = undefined;
  }
}

class CorruptSnapshot extends Error {
  constructor(readonly problem: string) {
    super(problem);
  }
}
