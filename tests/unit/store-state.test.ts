import { mkdtemp, readFile, readdir, rm, stat, writeFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { StateError, StateStore, type CorruptStateInfo } from '../../src/store/state-store';
import { createTestStateStore, emptyTestState, TestStateSchema } from '../helpers/store-test-state';

let dir: string;
let file: string;
let lockDir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'dida-todo-state-'));
  file = path.join(dir, 'state', 'state.json');
  lockDir = path.join(dir, 'state', 'locks');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function storeWithReports(): { store: StateStore<z.output<typeof TestStateSchema>>; reports: CorruptStateInfo[] } {
  const reports: CorruptStateInfo[] = [];
  const store = new StateStore({
    file,
    lockDir,
    schema: TestStateSchema,
    version: 1,
    empty: emptyTestState,
    onCorrupt: (info) => reports.push(info),
  });
  return { store, reports };
}

async function putFile(text: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text);
}

describe('StateStore.read', () => {
  it('returns empty() for a missing file without creating it', async () => {
    const { store } = storeWithReports();
    expect(await store.readResult()).toEqual({ value: { counter: 0, works: {} }, exists: false });
    await expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('writes { version, ...data } with mode 0600 in a 0700 directory and reads it back', async () => {
    const { store } = storeWithReports();
    const next = await store.update((s) => ({ ...s, counter: 3 }));
    expect(next.counter).toBe(3);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ version: 1, counter: 3, works: {} });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(file))).mode & 0o777).toBe(0o700);
    expect(await store.readResult()).toEqual({ value: { counter: 3, works: {} }, exists: true });
  });

  it.each([
    ['bad JSON', '{"version": 1, "counter": ', /not valid JSON/],
    ['a non-object', '[1, 2]', /at \(root\): expected a JSON object/],
    ['a missing version', '{"counter": 1, "works": {}}', /at version: expected an integer schema version/],
    ['an older version without migration', '{"version": 0, "counter": 1, "works": {}}', /at version: version 0 is older than 1/],
    ['a schema mismatch', '{"version": 1, "counter": 1, "works": {"w1": {"title": "t", "status": "lost", "notes": []}}}', /at works\.w1\.status: expected one of "open", "done"/],
  ])('moves %s aside, reports it and continues with empty()', async (_label, text, problem) => {
    await putFile(text);
    const { store, reports } = storeWithReports();
    const result = await store.readResult();
    expect(result.value).toEqual(emptyTestState());
    expect(result.exists).toBe(false);
    expect(reports).toHaveLength(1);
    const info = reports[0]!;
    expect(result.corrupt).toEqual(info);
    expect(info.problem).toMatch(problem);
    expect(info.movedTo).toMatch(/state\.json\.corrupt-\d{4}-\d\d-\d\dT[\d-]+Z$/);
    expect(info.message).toContain(file);
    expect(info.message).toContain(info.movedTo);
    expect(info.message).toContain(info.problem);
    expect(await readFile(info.movedTo, 'utf8')).toBe(text);
    await expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' });
    // Reading again does not report again: the damaged file is no longer in the way.
    await store.read();
    expect(reports).toHaveLength(1);
  });

  it('keeps earlier corrupt copies when the same file is damaged twice', async () => {
    const { store, reports } = storeWithReports();
    await putFile('garbage 1');
    await store.read();
    await putFile('garbage 2');
    await store.read();
    expect(reports).toHaveLength(2);
    expect(reports[0]!.movedTo).not.toBe(reports[1]!.movedTo);
    const copies = (await readdir(path.dirname(file))).filter((name) => name.includes('.corrupt-'));
    expect(copies).toHaveLength(2);
  });

  it('update() starts from empty() after moving a corrupt file aside', async () => {
    await putFile('{oops');
    const { store, reports } = storeWithReports();
    await store.update((s) => ({ ...s, counter: s.counter + 1 }));
    expect(reports).toHaveLength(1);
    expect(await store.read()).toEqual({ counter: 1, works: {} });
  });

  it('refuses a file from a newer version and leaves it in place', async () => {
    const text = '{"version": 7, "counter": 1, "works": {}, "newThing": true}';
    await putFile(text);
    const { store, reports } = storeWithReports();
    const error = await store.read().catch((err: unknown) => err);
    expect(error).toBeInstanceOf(StateError);
    expect((error as StateError).code).toBe('state_too_new');
    expect((error as StateError).message).toMatch(/state version 7, written by a newer dida-todo .*Upgrade dida-todo/);
    await expect(store.update((s) => s)).rejects.toBeInstanceOf(StateError);
    expect(await readFile(file, 'utf8')).toBe(text);
    expect(reports).toHaveLength(0);
  });

  it('migrates an older version when a migration is given', async () => {
    await putFile('{"version": 1, "count": 4}');
    const store = new StateStore({
      file,
      lockDir,
      schema: TestStateSchema,
      version: 2,
      empty: emptyTestState,
      migrate: (data, from) => (from === 1 ? { counter: data.count, works: {} } : data),
    });
    expect(await store.read()).toEqual({ counter: 4, works: {} });
  });
});

describe('StateStore.update', () => {
  it('does not write when the value is unchanged, also when fn mutates in place', async () => {
    const { store } = storeWithReports();
    await store.update((s) => ({ ...s, counter: 1 }));
    const before = await stat(file, { bigint: true });
    await store.update((s) => s);
    await store.update((s) => ({ ...s }));
    let after = await stat(file, { bigint: true });
    expect(after.ino).toBe(before.ino);
    expect(after.mtimeNs).toBe(before.mtimeNs);

    await store.update((s) => {
      s.counter = 2;
      return s;
    });
    after = await stat(file, { bigint: true });
    expect(after.ino).not.toBe(before.ino);
    expect(await store.read()).toEqual({ counter: 2, works: {} });
  });

  it('does not create the file for an unchanged empty state', async () => {
    const { store } = storeWithReports();
    await store.update((s) => s);
    await expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses to write a value the schema rejects and keeps the file', async () => {
    const { store } = storeWithReports();
    await store.update((s) => ({ ...s, counter: 5 }));
    const error = await store.update((s) => ({ ...s, counter: 1.5 })).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(StateError);
    expect((error as StateError).code).toBe('state_invalid_update');
    expect((error as StateError).message).toContain('at counter');
    expect(await store.read()).toEqual({ counter: 5, works: {} });
  });

  it('serializes concurrent updates in one process', async () => {
    const store = createTestStateStore(file, lockDir);
    await Promise.all(Array.from({ length: 20 }, () => store.update((s) => ({ ...s, counter: s.counter + 1 }))));
    expect((await store.read()).counter).toBe(20);
  });

  it('releases the lock when fn throws', async () => {
    const store = createTestStateStore(file, lockDir);
    await expect(store.update(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect((await store.update((s) => ({ ...s, counter: 9 }))).counter).toBe(9);
  });
});
