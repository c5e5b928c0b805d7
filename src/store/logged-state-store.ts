// Owns one versioned state as a snapshot file plus an append-only log (its form: state-log.ts): a change writes only
// what it touched, and the log is folded into a new snapshot now and then.
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from './atomic-file';
import { withLock, type LockContext, type LockOptions } from './file-lock';
import { displayPath } from './paths';
import { appendLines, CorruptSnapshot, fileId, foldLog, loadState, logFileOf, sameFile, type StateFileSpec } from './state-log';
import { StateShape, type Json, type Loaded } from './state-shape';
import type { CorruptStateInfo, StateReadResult } from './state-store';

/** The state's files and schemas (`file` e.g. `resolvePaths().stateFile`), and how it is locked and compacted. */
export interface LoggedStateStoreOptions<T extends object> extends StateFileSpec<T> {
  lockDir: string;
  lockKey?: string;
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
    this.logFile = logFileOf(options.file);
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
      appendLines(this.logFile, loaded, lines.map((l) => l.text));
      this.shape.apply(loaded, lines);
      if (loaded.logOffset > (this.options.compactAtBytes ?? 512 * 1024)) await this.compact(loaded, lock);
    }
    return this.shape.view(loaded).value;
  }

  private withStateLock<R>(fn: (lock: LockContext) => Promise<R>): Promise<R> {
    return withLock(this.options.lockDir, this.options.lockKey ?? 'state', fn, this.options.lockOptions);
  }

  /** The state as on disk now: re-uses what is held, folds in new log lines, or loads from scratch. */
  private async refresh(): Promise<Loaded> {
    const snapshot = fileId(this.options.file);
    const log = fileId(this.logFile);
    const held = this.loaded;
    if (held && sameFile(held.snapshot, snapshot) && held.logIno === log?.ino && (log?.size ?? 0) >= held.logOffset) {
      if (log && log.size > held.logOffset) foldLog(this.options, held, held.logOffset);
      return held;
    }
    const loaded = await loadState(this.options, snapshot);
    this.loaded = loaded;
    return loaded;
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

