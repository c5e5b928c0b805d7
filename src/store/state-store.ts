// Owns one versioned JSON state file: validated reads, corrupt-file quarantine, locked atomic updates.
import { access, rename } from 'node:fs/promises';
import type * as z from 'zod/mini';
import { describeIssues } from '../common/schema-issues';
import { readFileIfExists, removeOrphanedTempFiles, writeFileAtomic } from './atomic-file';
import { withLock, type LockContext, type LockOptions } from './file-lock';
import { displayPath } from './paths';

export interface StateStoreOptions<T extends object> {
  /** The state file, e.g. `resolvePaths().stateFile`. */
  file: string;
  /** Directory of the cross-process locks, e.g. `resolvePaths().lockDir`. */
  lockDir: string;
  /** Lock key for updates (default "state"). */
  lockKey?: string;
  /** Validates the data part (the file minus its `version` field, so the data must not have a `version` key). */
  schema: z.ZodMiniType<T>;
  /** The schema version this code writes; files with another version are treated per `migrate`. */
  version: number;
  /** The value used when the file is missing or was moved aside as corrupt. */
  empty: () => T;
  /** Upgrades data of an older version to the shape of `version`; without it an older file counts as corrupt. */
  migrate?: (data: Record<string, unknown>, fromVersion: number) => unknown;
  /** Called once per quarantined file. */
  onCorrupt?: (info: CorruptStateInfo) => void;
  lockOptions?: Omit<LockOptions, 'signal'>;
}

/** A damaged state file that was moved aside. */
export interface CorruptStateInfo {
  file: string;
  /** Where the damaged copy now lives (`<file>.corrupt-<timestamp>`). */
  movedTo: string;
  /** What was wrong, with the key path when the schema failed. */
  problem: string;
  /** One sentence for a person: the file, the problem, where the copy is. */
  message: string;
}

export interface StateReadResult<T> {
  value: T;
  /** False when the file was missing (or was moved aside) and `value` is `empty()`. */
  exists: boolean;
  /** Set when the file was corrupt and moved aside during this read. */
  corrupt?: CorruptStateInfo;
}

export type StateErrorCode = 'state_too_new' | 'state_invalid_update';

/** A state file this version must not touch, or an update that would write invalid data. */
export class StateError extends Error {
  constructor(
    readonly code: StateErrorCode,
    readonly file: string,
    message: string,
  ) {
    super(message);
    this.name = 'StateError';
  }
}

/** The state lock was lost (this process was paused past its stale time); the update is redone. */
class StateLockLostError extends Error {
  constructor(file: string) {
    super(`The lock of ${displayPath(file)} was taken over while this process was paused; the update is redone.`);
    this.name = 'StateLockLostError';
  }
}

export interface VersionedFile<T> {
  file: string;
  version: number;
  schema: z.ZodMiniType<T>;
  migrate?: (data: Record<string, unknown>, fromVersion: number) => unknown;
}

/**
 * Reads `{ "version": N, ...data }` text: checks the version, migrates older data, validates the rest. Top-level
 * fields named in `meta` (bookkeeping such as a log generation) are set aside and returned apart. A newer version
 * throws `StateError('state_too_new')`; anything else wrong is a problem to report.
 */
export function parseVersioned<T>(
  text: string,
  spec: VersionedFile<T>,
  meta: readonly string[] = [],
): { ok: true; value: T; meta: Record<string, unknown>; extra: Record<string, unknown> } | { ok: false; problem: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { ok: false, problem: `not valid JSON (${(err as Error).message})` };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { ok: false, problem: 'at (root): expected a JSON object' };
  const { version: fileVersion, ...rest } = raw as Record<string, unknown>;
  const kept: Record<string, unknown> = {};
  for (const key of meta) {
    kept[key] = rest[key];
    delete rest[key];
  }
  if (typeof fileVersion !== 'number' || !Number.isInteger(fileVersion)) return { ok: false, problem: 'at version: expected an integer schema version' };
  if (fileVersion > spec.version) {
    throw new StateError(
      'state_too_new',
      spec.file,
      `${displayPath(spec.file)} has state version ${fileVersion}, written by a newer dida-todo (this one knows version ${spec.version}). Upgrade dida-todo; the file was left untouched.`,
    );
  }
  let candidate: unknown = rest;
  if (fileVersion < spec.version) {
    if (!spec.migrate) return { ok: false, problem: `at version: version ${fileVersion} is older than ${spec.version} and cannot be migrated` };
    try {
      candidate = spec.migrate(rest, fileVersion);
    } catch (err) {
      return { ok: false, problem: `migrating from version ${fileVersion} failed (${(err as Error).message})` };
    }
  }
  const result = spec.schema.safeParse(candidate, { reportInput: true });
  if (!result.success) return { ok: false, problem: describeIssues(result.error.issues) };
  // Keys of this version's file the schema does not know (a later dida-todo of the same version added them): kept aside.
  const extra: Record<string, unknown> = {};
  const known = result.data as Record<string, unknown>;
  if (fileVersion === spec.version && typeof known === 'object' && known !== null) for (const [key, value] of Object.entries(rest)) if (!(key in known)) extra[key] = value;
  return { ok: true, value: result.data, meta: kept, extra };
}

type Parsed<T> = { kind: 'missing' } | { kind: 'ok'; value: T } | { kind: 'corrupt'; problem: string; raw: string };

/**
 * A JSON state file `{ "version": N, ...data }` (mode 0600, directory 0700).
 * Reads never fail on damage: a corrupt file is moved aside, reported, and `empty()` is used.
 * A file written by a newer version is left alone and `StateError('state_too_new')` is thrown.
 */
export class StateStore<T extends object> {
  private orphansChecked = false;

  constructor(private readonly options: StateStoreOptions<T>) {}

  get file(): string {
    return this.options.file;
  }

  /** The current value (see `readResult`). */
  async read(): Promise<T> {
    return (await this.readResult()).value;
  }

  /** The current value, whether the file existed, and the quarantine report when it was corrupt. */
  async readResult(): Promise<StateReadResult<T>> {
    const text = await readFileIfExists(this.options.file);
    const parsed = this.parse(text);
    if (parsed.kind === 'ok') return { value: parsed.value, exists: true };
    if (parsed.kind === 'missing') return { value: this.options.empty(), exists: false };
    return this.withStateLock(() => this.readLocked());
  }

  /**
   * Read-modify-write under the cross-process lock. `fn` may mutate its argument or return a new value.
   * Writes atomically, and only when the serialized value changed. Returns the new value. The first write of
   * an instance also removes temp files left by writers that died mid-write.
   * Throws `StateError` (too new, or `fn` produced data the schema rejects) or `LockTimeoutError`.
   */
  async update(fn: (current: T) => T | Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.updateOnce(fn);
      } catch (error) {
        // The lock was taken over while this process was paused: nothing was written; read again and redo.
        if (!(error instanceof StateLockLostError) || attempt >= 3) throw error;
      }
    }
  }

  private async updateOnce(fn: (current: T) => T | Promise<T>): Promise<T> {
    return this.withStateLock(async (lock) => {
      const { value } = await this.readLocked();
      const before = this.serialize(value);
      const next = await fn(value);
      const checked = this.options.schema.safeParse(next, { reportInput: true });
      if (!checked.success) {
        throw new StateError(
          'state_invalid_update',
          this.options.file,
          `Refusing to write ${displayPath(this.options.file)}: the new state is invalid ${describeIssues(checked.error.issues)}. This is a dida-todo bug; the file was left unchanged.`,
        );
      }
      const after = this.serialize(checked.data);
      if (after !== before) {
        if (!this.orphansChecked) {
          this.orphansChecked = true;
          await removeOrphanedTempFiles(this.options.file);
        }
        await writeFileAtomic(this.options.file, after, {
          mode: 0o600,
          dirMode: 0o700,
          beforeRename: () => {
            if (!lock.stillHeld()) throw new StateLockLostError(this.options.file);
          },
        });
      }
      return checked.data;
    });
  }

  private withStateLock<R>(fn: (lock: LockContext) => Promise<R>): Promise<R> {
    return withLock(this.options.lockDir, this.options.lockKey ?? 'state', fn, this.options.lockOptions);
  }

  /** Reads while holding the lock, moving a corrupt file aside. */
  private async readLocked(): Promise<StateReadResult<T>> {
    const text = await readFileIfExists(this.options.file);
    const parsed = this.parse(text);
    if (parsed.kind === 'ok') return { value: parsed.value, exists: true };
    if (parsed.kind === 'missing') return { value: this.options.empty(), exists: false };
    const corrupt = await this.quarantine(parsed.problem);
    this.options.onCorrupt?.(corrupt);
    return { value: this.options.empty(), exists: false, corrupt };
  }

  private parse(text: string | undefined): Parsed<T> {
    if (text === undefined) return { kind: 'missing' };
    const parsed = parseVersioned(text, this.options);
    return parsed.ok ? { kind: 'ok', value: parsed.value } : { kind: 'corrupt', raw: text, problem: parsed.problem };
  }

  private async quarantine(problem: string): Promise<CorruptStateInfo> {
    const { file } = this.options;
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    let movedTo = `${file}.corrupt-${stamp}`;
    for (let n = 1; await exists(movedTo); n++) movedTo = `${file}.corrupt-${stamp}-${n}`;
    await rename(file, movedTo);
    return {
      file,
      movedTo,
      problem,
      message: `${displayPath(file)} was damaged (${problem}); it was moved to ${displayPath(movedTo)} and dida-todo continues with an empty state.`,
    };
  }

  private serialize(value: T): string {
    return `${JSON.stringify({ version: this.options.version, ...value }, null, 2)}\n`;
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    // access() fails for a missing path, which is the answer we want.
    return false;
  }
}
