// The logged state store: a snapshot plus a change log; a change writes only what it touched, readers fold it in.
import { appendFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { LoggedStateStore } from '../../src/store/logged-state-store';
import type { CorruptStateInfo } from '../../src/store/state-store';

const Item = z.object({ n: z.number(), note: z._default(z.string(), '') });
const sections = { meta: z._default(z.record(z.string(), z.string()), {}), list: z._default(z.array(z.number()), []) };
const Schema = z.object({ items: z._default(z.record(z.string(), Item), {}), ...sections });
type State = z.output<typeof Schema>;

let dir: string;
let file: string;
let corrupt: CorruptStateInfo[];

function store(compactAtBytes?: number): LoggedStateStore<State> {
  return new LoggedStateStore<State>({
    file,
    lockDir: path.join(dir, 'locks'),
    schema: Schema,
    collections: { items: Item },
    sections,
    version: 2,
    migrate: (data) => data,
    empty: () => ({ items: {}, meta: {}, list: [] }),
    onCorrupt: (info) => corrupt.push(info),
    lockOptions: { staleMs: 2000 },
    ...(compactAtBytes ? { compactAtBytes } : {}),
  });
}

async function logLines(): Promise<string[]> {
  return (await readFile(`${file}.log`, 'utf8')).split('\n').filter(Boolean);
}

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'dida-logged-'));
  file = path.join(dir, 'state.json');
  corrupt = [];
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('LoggedStateStore', () => {
  it('writes only what a change touched: one log line for one entry among a thousand', async () => {
    const s = store();
    await s.update((state) => {
      for (let i = 0; i < 1000; i++) state.items[`k${i}`] = { n: i, note: 'x'.repeat(50) };
    });
    const before = await logLines();
    await s.update((state) => {
      (state.items.k500 as { n: number }).n = -1;
    });
    const after = await logLines();
    expect(after.length - before.length).toBe(1);
    expect(JSON.parse(after.at(-1) as string)).toEqual({ c: 'items', k: 'k500', v: { n: -1, note: 'x'.repeat(50) } });
    // Reading every entry without changing any writes nothing.
    await s.update((state) => void Object.values(state.items).reduce((sum, item) => sum + item.n, 0));
    expect(await logLines()).toHaveLength(after.length);
    expect((await store().read()).items.k500?.n).toBe(-1);
  });

  it('hands out copies: mutating what was read changes nothing', async () => {
    const s = store();
    await s.update((state) => {
      state.items.a = { n: 1, note: '' };
      state.meta.x = 'y';
    });
    const read = await s.read();
    (read.items.a as { n: number }).n = 99;
    read.meta.x = 'changed';
    const again = await s.read();
    expect(again.items.a?.n).toBe(1);
    expect(again.meta.x).toBe('y');
  });

  it('folds in what another process appended, deletions and sections included', async () => {
    const mine = store();
    const theirs = store();
    await mine.update((state) => {
      state.items.a = { n: 1, note: '' };
      state.items.b = { n: 2, note: '' };
    });
    expect(Object.keys((await theirs.read()).items).sort()).toEqual(['a', 'b']);
    await theirs.update((state) => {
      delete state.items.a;
      state.items.c = { n: 3, note: '' };
      state.list.push(7);
    });
    const seen = await mine.read();
    expect(Object.keys(seen.items).sort()).toEqual(['b', 'c']);
    expect(seen.list).toEqual([7]);
  });

  it('folds the log into a new snapshot once it is large, and readers follow', async () => {
    const s = store(2000);
    const other = store(2000);
    for (let i = 0; i < 40; i++) await s.update((state) => void (state.items[`k${i % 5}`] = { n: i, note: 'y'.repeat(40) }));
    expect((await readFile(`${file}.log`, 'utf8')).length).toBeLessThan(2100);
    const snapshot = JSON.parse(await readFile(file, 'utf8')) as { logGen: number; version: number };
    expect(snapshot.version).toBe(2);
    expect(snapshot.logGen).toBeGreaterThan(1);
    expect((await other.read()).items.k4?.n).toBe(39);
    expect((await readdir(dir)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('ignores a torn last line (a writer that died mid-append) and cuts it before the next write', async () => {
    const s = store();
    await s.update((state) => void (state.items.a = { n: 1, note: '' }));
    await appendFile(`${file}.log`, '{"c":"items","k":"b","v":{"n":');
    expect(Object.keys((await store().read()).items)).toEqual(['a']);
    await store().update((state) => void (state.items.c = { n: 3, note: '' }));
    expect(Object.keys((await store().read()).items).sort()).toEqual(['a', 'c']);
    expect((await readFile(`${file}.log`, 'utf8')).endsWith('\n')).toBe(true);
    expect(corrupt).toEqual([]);
  });

  it('skips a log of an older generation (a crash between the snapshot and the new log)', async () => {
    const s = store(500);
    for (let i = 0; i < 10; i++) await s.update((state) => void (state.items[`k${i}`] = { n: i, note: 'z'.repeat(30) }));
    const gen = (JSON.parse(await readFile(file, 'utf8')) as { logGen: number }).logGen;
    await writeFile(`${file}.log`, `${JSON.stringify({ gen: gen - 1 })}\n${JSON.stringify({ c: 'items', k: 'k0', v: { n: -5 } })}\n`);
    expect((await store().read()).items.k0?.n).toBe(0);
  });

  it('moves a damaged log aside with its snapshot and reports it, never losing the ability to go on', async () => {
    const s = store();
    await s.update((state) => void (state.items.a = { n: 1, note: '' }));
    const text = await readFile(`${file}.log`, 'utf8');
    await writeFile(`${file}.log`, `${text}not json at all\n${JSON.stringify({ c: 'items', k: 'b', v: { n: 2 } })}\n`);
    const fresh = store();
    const result = await fresh.readResult();
    expect(result.value.items).toEqual({});
    expect(result.corrupt?.problem).toMatch(/change log .* is damaged \(line 2 .* is not JSON\)/);
    expect((await readdir(dir)).filter((n) => n.includes('.corrupt-')).length).toBe(2);
    await fresh.update((state) => void (state.items.z = { n: 26, note: '' }));
    expect(Object.keys((await store().read()).items)).toEqual(['z']);
  });

  it('reads a version 1 file (one whole file) and keeps it going', async () => {
    await writeFile(file, JSON.stringify({ version: 1, items: { old: { n: 1 } }, meta: { a: 'b' }, list: [] }));
    const s = store();
    expect((await s.read()).items.old).toEqual({ n: 1, note: '' });
    await s.update((state) => void (state.items.new = { n: 2, note: '' }));
    const again = await store().read();
    expect(Object.keys(again.items).sort()).toEqual(['new', 'old']);
    expect(again.meta).toEqual({ a: 'b' });
  });

  it('a later version’s own sections and collections are kept by an older one: read past, written back, never called damage', async () => {
    // The later version: one more section and one more collection, same state version.
    const Later = z.object({ ...Schema.shape, extra: z._default(z.string(), ''), tags: z._default(z.record(z.string(), z.number()), {}) });
    const later = () =>
      new LoggedStateStore<z.output<typeof Later>>({
        file,
        lockDir: path.join(dir, 'locks'),
        schema: Later,
        collections: { items: Item, tags: z.number() },
        sections: { ...sections, extra: z._default(z.string(), '') },
        version: 2,
        empty: () => ({ items: {}, meta: {}, list: [], extra: '', tags: {} }),
        onCorrupt: (info) => corrupt.push(info),
        lockOptions: { staleMs: 2000 },
        compactAtBytes: 200,
      });
    const newer = later();
    await newer.update((state) => {
      state.extra = 'in the snapshot';
      state.tags.a = 1;
      state.items.k1 = { n: 1, note: 'x'.repeat(300) };
    });
    // Now in the log only: a section line and collection lines the older version does not know.
    await newer.update((state) => {
      state.extra = 'in the log';
      state.tags.b = 2;
      delete state.tags.a;
    });
    expect((await logLines()).some((line) => line.includes('"s":"extra"'))).toBe(true);
    const older = store(200);
    const read = await older.read();
    expect(corrupt).toEqual([]);
    expect(read.items.k1?.n).toBe(1);
    expect(read).not.toHaveProperty('extra');
    // The older version writes, and folds the log into a new snapshot (it is over 200 bytes): the later data goes along.
    await older.update((state) => {
      state.items.k2 = { n: 2, note: 'y'.repeat(300) };
    });
    expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({ extra: 'in the log', tags: { b: 2 } });
    const back = await later().read();
    expect(corrupt).toEqual([]);
    expect(back.extra).toBe('in the log');
    expect(back.tags).toEqual({ b: 2 });
    expect(back.items.k2?.n).toBe(2);
  });

  it('a log line that uses a known name the wrong way (a section as a collection) is still damage', async () => {
    await store().update((state) => {
      state.list = [1];
    });
    await appendFile(`${file}.log`, `${JSON.stringify({ c: 'meta', k: 'x', v: 'y' })}\n`);
    await store().read();
    expect(corrupt).toHaveLength(1);
    expect(corrupt[0]!.problem).toContain('meta is not a collection');
  });

  it('refuses an invalid change and leaves the files as they were', async () => {
    const s = store();
    await s.update((state) => void (state.items.a = { n: 1, note: '' }));
    const log = await readFile(`${file}.log`, 'utf8');
    await expect(s.update((state) => void ((state.items.a as unknown as { n: string }).n = 'not a number'))).rejects.toThrow(/state is invalid at items\.a/);
    expect(await readFile(`${file}.log`, 'utf8')).toBe(log);
  });

  it('peeks without changing files, also when the state is damaged', async () => {
    await writeFile(file, '{ not json');
    const peeked = await store().peek();
    expect(peeked.problem).toMatch(/not valid JSON/);
    expect(await readFile(file, 'utf8')).toBe('{ not json');
  });
});
