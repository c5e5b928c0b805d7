// Owns crash-safe file replacement: temp file in the same directory, fsync, rename, directory fsync.
// A failure is a FileSaveError that names the file, says nothing was written, and what to do.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs/promises';
import path from 'node:path';

export interface AtomicWriteOptions {
  /** Mode of the written file (default 0o600), applied regardless of the umask. */
  mode?: number;
  /** Mode of the directory when this call creates it (default 0o700). */
  dirMode?: number;
  /** Runs synchronously right before the rename; throwing leaves the file unchanged. */
  beforeRename?: () => void;
}

/**
 * A file could not be saved. Nothing was written: the file keeps its previous content (or still does not exist).
 * `code` is the file-system error code (EACCES, EPERM, EROFS, ENOSPC, …) and `dir` the folder that must be writable.
 */
export class FileSaveError extends Error {
  override readonly name = 'FileSaveError';
  readonly code: string;
  constructor(
    readonly file: string,
    readonly dir: string,
    cause: unknown,
  ) {
    const code = (cause as NodeJS.ErrnoException | undefined)?.code ?? 'EIO';
    const reason = cause instanceof Error ? cause.message.replace(/, \w+ '[^']*'( -> '[^']*')?$/, '') : String(cause);
    super(`Could not save ${file}: ${reason}. Nothing was written; ${file} keeps its previous content. ${fixFor(code, dir)}`, { cause });
    this.code = code;
  }
}

/** What a person can do about a failed save, by file-system error code. */
export function fixFor(code: string, dir: string): string {
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return `Make ${dir} writable for you (e.g. \`chmod u+w ${dir}\`), or point dida-todo at another folder.`;
    case 'EROFS':
      return `${dir} is on a read-only file system; point dida-todo at a writable folder.`;
    case 'ENOSPC':
    case 'EDQUOT':
      return 'The disk is full; free some space and try again.';
    case 'ENOTDIR':
    case 'EEXIST':
      return `Part of the path ${dir} is a file, not a folder; move it away or point dida-todo elsewhere.`;
    default:
      return `Check that ${dir} exists and is writable, then try again.`;
  }
}

/**
 * Replaces `file` with `data` so that readers and crashes only ever see the old or the new content.
 * Creates the directory when missing. On any failure the temp file is removed, the old file is left
 * intact, and a FileSaveError is thrown (its message keeps the original error's text).
 */
export async function writeFileAtomic(file: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
  const dir = path.dirname(path.resolve(file));
  try {
    await replaceFile(file, dir, data, options);
  } catch (err) {
    throw err instanceof FileSaveError ? err : new FileSaveError(path.resolve(file), dir, err);
  }
}

async function replaceFile(file: string, dir: string, data: string | Uint8Array, options: AtomicWriteOptions): Promise<void> {
  const mode = options.mode ?? 0o600;
  const dirMode = options.dirMode ?? 0o700;
  await ensureDir(dir, dirMode);
  const temp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const handle = await fs.open(temp, 'wx', mode);
    try {
      await handle.writeFile(data);
      await handle.chmod(mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
    // A writer that lost its lock while it was paused must not replace what the new holder wrote.
    options.beforeRename?.();
    await fs.rename(temp, file);
  } catch (err) {
    await fs.rm(temp, { force: true });
    throw err;
  }
  await syncDir(dir);
}

/**
 * Removes temp files that `writeFileAtomic(file, …)` left behind in processes that died mid-write
 * (their pid no longer runs). Returns how many were removed; never throws for a missing directory.
 */
export async function removeOrphanedTempFiles(file: string): Promise<number> {
  const dir = path.dirname(path.resolve(file));
  const prefix = `.${path.basename(file)}.`;
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
  let removed = 0;
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const match = /^(\d+)\.[0-9a-f]{12}\.tmp$/.exec(name.slice(prefix.length));
    if (!match || isRunning(Number(match[1]))) continue;
    await fs.rm(path.join(dir, name), { force: true });
    removed++;
  }
  return removed;
}

function isRunning(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Creates `dir` (and missing parents) and gives it `mode` when this call created it. */
export async function ensureDir(dir: string, mode = 0o700): Promise<void> {
  const created = await fs.mkdir(dir, { recursive: true, mode });
  if (created !== undefined) await fs.chmod(dir, mode);
}

/**
 * Reads a UTF-8 file, or returns undefined when it does not exist (also when a folder on its path is a file, so
 * the save that follows reports the real problem). Other errors are thrown.
 */
export async function readFileIfExists(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw err;
  }
}

async function syncDir(dir: string): Promise<void> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(dir, 'r');
  } catch {
    // Some platforms cannot open directories; the rename is still atomic there, only less durable.
    return;
  }
  try {
    await handle.sync();
  } catch {
    // Directory fsync is unsupported on some file systems (EINVAL/EISDIR); durability is best effort there.
  } finally {
    await handle.close();
  }
}
