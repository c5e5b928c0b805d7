import { mkdtemp, readFile, readdir, rm, stat, writeFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

const failures = vi.hoisted(() => ({ rename: undefined as Error | undefined, write: undefined as Error | undefined }));

vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...actual,
    rename: async (...args: Parameters<typeof actual.rename>) => {
      if (failures.rename) throw failures.rename;
      return actual.rename(...args);
    },
    open: async (...args: Parameters<typeof actual.open>) => {
      const handle = await actual.open(...args);
      if (failures.write && args[1] === 'wx') {
        const error = failures.write;
        handle.writeFile = async () => {
          throw error;
        };
      }
      return handle;
    },
  };
});

const { readFileIfExists, removeOrphanedTempFiles, writeFileAtomic } = await import('../../src/store/atomic-file');

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'dida-todo-atomic-'));
  failures.rename = undefined;
  failures.write = undefined;
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('writeFileAtomic', () => {
  it('creates missing directories with 0700 and the file with 0600', async () => {
    const file = path.join(dir, 'a', 'b', 'state.json');
    await writeFileAtomic(file, '{"x":1}');
    expect(await readFile(file, 'utf8')).toBe('{"x":1}');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(file))).mode & 0o777).toBe(0o700);
    expect(await readdir(path.dirname(file))).toEqual(['state.json']);
  });

  it('replaces an existing file and gives it the requested mode', async () => {
    const file = path.join(dir, 'config.yaml');
    await writeFile(file, 'old', { mode: 0o644 });
    await writeFileAtomic(file, 'new', { mode: 0o640 });
    expect(await readFile(file, 'utf8')).toBe('new');
    expect((await stat(file)).mode & 0o777).toBe(0o640);
  });

  it('leaves an existing directory mode alone', async () => {
    const sub = path.join(dir, 'shared');
    await mkdir(sub, { mode: 0o755 });
    await writeFileAtomic(path.join(sub, 'f'), 'x');
    expect((await stat(sub)).mode & 0o777).toBe(0o755);
  });

  it('removes the temp file and keeps the old content when the rename fails', async () => {
    const file = path.join(dir, 'state.json');
    await writeFile(file, 'old content');
    failures.rename = Object.assign(new Error('simulated EIO'), { code: 'EIO' });
    await expect(writeFileAtomic(file, 'new content')).rejects.toThrow('simulated EIO');
    expect(await readFile(file, 'utf8')).toBe('old content');
    expect(await readdir(dir)).toEqual(['state.json']);
  });

  it('removes the temp file and keeps the old content when writing fails', async () => {
    const file = path.join(dir, 'state.json');
    await writeFile(file, 'old content');
    failures.write = Object.assign(new Error('simulated ENOSPC'), { code: 'ENOSPC' });
    await expect(writeFileAtomic(file, 'new content')).rejects.toThrow('simulated ENOSPC');
    expect(await readFile(file, 'utf8')).toBe('old content');
    expect(await readdir(dir)).toEqual(['state.json']);
  });

  it('fails without leaving a temp file when the target is a non-empty directory', async () => {
    const target = path.join(dir, 'busy');
    await mkdir(target);
    await writeFile(path.join(target, 'inside'), 'x');
    await expect(writeFileAtomic(target, 'data')).rejects.toThrow();
    expect(await readdir(dir)).toEqual(['busy']);
  });
});

describe('readFileIfExists', () => {
  it('returns undefined for a missing file and the text otherwise', async () => {
    expect(await readFileIfExists(path.join(dir, 'missing'))).toBeUndefined();
    await writeFile(path.join(dir, 'present'), 'héllo');
    expect(await readFileIfExists(path.join(dir, 'present'))).toBe('héllo');
  });

  it('throws other errors', async () => {
    await expect(readFileIfExists(dir)).rejects.toMatchObject({ code: 'EISDIR' });
  });
});

describe('removeOrphanedTempFiles', () => {
  it('removes temp files of dead writers only', async () => {
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    const file = path.join(dir, 'state.json');
    await writeFile(file, 'current');
    await writeFile(path.join(dir, `.state.json.${dead}.0123456789ab.tmp`), 'partial');
    await writeFile(path.join(dir, `.state.json.${process.pid}.0123456789ab.tmp`), 'in flight');
    await writeFile(path.join(dir, `.other.json.${dead}.0123456789ab.tmp`), 'not ours');
    expect(await removeOrphanedTempFiles(file)).toBe(1);
    expect((await readdir(dir)).sort()).toEqual([`.other.json.${dead}.0123456789ab.tmp`, `.state.json.${process.pid}.0123456789ab.tmp`, 'state.json']);
    expect(await removeOrphanedTempFiles(path.join(dir, 'missing', 'x'))).toBe(0);
  });
});
