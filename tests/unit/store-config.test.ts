import { mkdtemp, readFile, rm, stat, writeFile, utimes } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultConfig, type DidaTodoConfig } from '../../src/store/config-schema';
import { ConfigError } from '../../src/store/config-check';
import { findBinding, withBinding, withoutBinding } from '../../src/store/config-bindings';
import { createConfigReader, loadConfig, saveConfig, updateConfig } from '../../src/store/config-store';
import { displayPath } from '../../src/store/paths';
import { MAX_PRICE } from '../../src/store/config-schema';

let dir: string;
let file: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'dida-todo-config-'));
  file = path.join(dir, 'dida-todo', 'config.yaml');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function writeConfig(text: string): Promise<void> {
  await saveConfig(file, defaultConfig());
  await writeFile(file, text);
}

async function loadError(text: string): Promise<ConfigError> {
  await writeConfig(text);
  const error = await loadConfig(file).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return error as ConfigError;
}

describe('loadConfig', () => {
  it('returns the defaults for a missing file', async () => {
    expect(await loadConfig(file)).toEqual({ config: { version: 1, bindings: [] }, exists: false });
  });

  it('treats an empty file as the defaults', async () => {
    await writeConfig('# only a comment\n');
    expect(await loadConfig(file)).toEqual({ config: { version: 1, bindings: [] }, exists: true });
  });

  it('reads every documented key, applies poll defaults and normalizes binding directories', async () => {
    await writeConfig(
      [
        'region: ticktick',
        'baseUrl: http://127.0.0.1:4010/open/v1',
        'locale: en',
        'poll: { enabled: true }',
        'hostLabel: my-laptop',
        'bindings:',
        '  - cwd: /work/repo/',
        '    projectId: 0123abcd',
        '    label: 工作清单',
        '  - cwd: /work/other/../x',
        '    projectId: p2',
      ].join('\n'),
    );
    const { config, exists } = await loadConfig(file);
    expect(exists).toBe(true);
    expect(config).toEqual({
      version: 1,
      region: 'ticktick',
      baseUrl: 'http://127.0.0.1:4010/open/v1',
      locale: 'en',
      poll: { enabled: true, intervalMinutes: 10 },
      hostLabel: 'my-laptop',
      bindings: [
        { cwd: '/work/repo', projectId: '0123abcd', label: '工作清单' },
        { cwd: '/work/x', projectId: 'p2' },
      ],
    });
  });

  it('takes poll: true / false for short (the default intervals), and intervals alone leave it on by default', async () => {
    for (const [text, poll] of [
      ['poll: true', { enabled: true, intervalMinutes: 10 }],
      ['poll: false', { enabled: false, intervalMinutes: 10 }],
      ['poll: { intervalMinutes: 3 }', { intervalMinutes: 3 }],
    ] as const) {
      await writeConfig(`${text}\nbindings: []\n`);
      expect((await loadConfig(file)).config.poll, text).toEqual(poll);
    }
    const error = await loadError('poll: yes\n');
    expect(error.message).toContain('line 1, at poll: expected true, false, or { enabled, intervalMinutes, intervalSeconds }, got string');
    expect((await loadError('poll:\n  enabled: yes\n')).message).toContain('line 2, at poll.enabled: expected true or false, got string');
  });

  it('names the file, the key path and the fix for a relative binding directory', async () => {
    const error = await loadError('bindings:\n  - cwd: relative/dir\n    projectId: p1\n');
    expect(error.code).toBe('config_invalid');
    expect(error.file).toBe(file);
    expect(error.message).toBe(
      `${displayPath(file)}: line 2, at bindings[0].cwd: expected an absolute path. Fix the file or run \`dida-todo bind\` again.`,
    );
    expect(error.issues).toEqual([{ line: 2, path: 'bindings[0].cwd', problem: 'expected an absolute path' }]);
  });

  it('names the line of each unknown key and the closest valid key at that place', async () => {
    const error = await loadError('version: 1\nbaseUrl: http://127.0.0.1:1/open/v1\npol:\n  enabled: true\npoll:\n  enabeld: true\nbindings:\n  - cwd: /a\n    projectID: p\n    projectId: p\nxyzzy: 1\n');
    expect(error.issues).toEqual([
      { line: 3, path: '(root)', unknownKey: 'pol', suggestion: 'poll', problem: 'unknown key "pol"' },
      { line: 6, path: 'poll', unknownKey: 'enabeld', suggestion: 'enabled', problem: 'unknown key "enabeld"' },
      { line: 9, path: 'bindings[0]', unknownKey: 'projectID', suggestion: 'projectId', problem: 'unknown key "projectID"' },
      { line: 11, path: '(root)', unknownKey: 'xyzzy', problem: 'unknown key "xyzzy"' },
    ]);
    expect(error.message).toContain('line 3, at (root): unknown key "pol" (did you mean "poll"?)');
  });

  it('names unknown keys with their path', async () => {
    const error = await loadError('regoin: dida365\npoll:\n  enabled: true\n  every: 5\n');
    expect(error.message).toContain('at (root): unknown key "regoin"');
    expect(error.message).toContain('at poll: unknown key "every"');
    expect(error.message).toMatch(/Fix the file\.$/);
  });

  it.each([
    ['region: europe\n', 'at region: expected one of "dida365", "ticktick"'],
    ['locale: fr\n', 'at locale: expected one of "zh", "en"'],
    ['poll: { intervalMinutes: 0 }\n', 'at poll.intervalMinutes: must be at least 1'],
    ['poll: { intervalMinutes: 1441 }\n', 'at poll.intervalMinutes: must be at most 1440'],
    ['poll: { intervalMinutes: 2.5 }\n', 'at poll.intervalMinutes: expected int'],
    ['baseUrl: ftp://example.com\n', 'at baseUrl: expected an http(s) URL'],
    ['bindings:\n  - cwd: /a\n    projectId: ""\n', 'at bindings[0].projectId: must be at least 1 characters'],
    ['bindings:\n  - cwd: /a\n', 'at bindings[0].projectId: expected string, but it is missing'],
    ['bindings:\n  - cwd: /a\n    projectId: p\n  - cwd: /a/\n    projectId: q\n', 'at bindings[1].cwd: /a is already bound by bindings[0]'],
    ['- just\n- a list\n', 'at (root): expected object'],
  ])('rejects %j with %j', async (text, expected) => {
    const error = await loadError(text);
    expect(error.message).toContain(expected);
    expect(error.message.startsWith(`${displayPath(file)}: `)).toBe(true);
  });

  it('refuses a config written by a newer version and says to upgrade', async () => {
    const error = await loadError('version: 2\n');
    expect(error.message).toContain('at version: config version 2 was written by a newer dida-todo');
    expect(error.message).toMatch(/Upgrade dida-todo\.$/);
  });

  it('reports YAML syntax errors with the line number', async () => {
    const error = await loadError('region: dida365\nlocale: zh\nhostLabel: a: b\n');
    expect(error.message).toMatch(/YAML syntax error at line 3, column \d+: \S/);
    expect(error.message).not.toContain('\n');
    expect(error.message.startsWith(`${displayPath(file)}: `)).toBe(true);
  });

  it('reports duplicate keys as a syntax error with the line', async () => {
    const error = await loadError('locale: zh\nlocale: en\n');
    expect(error.message).toMatch(/at line 2, column 1: Map keys must be unique/);
  });
});

describe('pricing', () => {
  const priced = (line: string) => writeConfig(`pricing:\n  deepseek-chat: ${line}\n`);
  const problem = async () => ((await loadConfig(file).catch((e: unknown) => e)) as ConfigError).message;

  it('a price, a cache price and a currency as the review shows them are kept', async () => {
    await priced('{ input: 2, output: 8, cacheRead: 0.5, currency: "US$" }');
    expect((await loadConfig(file)).config.pricing).toEqual({ 'deepseek-chat': { input: 2, output: 8, cacheRead: 0.5, currency: 'US$' } });
    for (const currency of ['¥', '€', 'CNY', 'usd']) {
      await priced(`{ input: 1, output: 1, currency: "${currency}" }`);
      expect((await loadConfig(file)).config.pricing?.['deepseek-chat']?.currency).toBe(currency);
    }
  });

  it('a slip is a clear error naming its line and key, never a price or a currency in the review', async () => {
    await priced('{ input: .inf, output: 2 }');
    expect(await problem()).toContain('line 2, at pricing.deepseek-chat.input: expected number, got Infinity');
    await priced('{ input: .nan, output: 2 }');
    expect(await problem()).toContain('got NaN (not a number)');
    await priced('{ input: 1e30, output: 2 }');
    expect(await problem()).toContain(`at pricing.deepseek-chat.input: must be at most ${MAX_PRICE}`);
    await priced(`{ input: ${MAX_PRICE}, output: 2 }`);
    expect((await loadConfig(file)).config.pricing?.['deepseek-chat']?.input).toBe(MAX_PRICE);
    for (const currency of ['<b>x</b>', '\\n', 'a b', 'ABCDEFGHI', '']) {
      await priced(`{ input: 1, output: 1, currency: "${currency}" }`);
      expect(await problem(), currency).toContain('at pricing.deepseek-chat.currency: expected a currency symbol or code');
    }
    await priced('{ input: 1, outut: 2 }');
    expect(await problem()).toContain('unknown key "outut"');
  });
});

describe('route tags in bindings', () => {
  it('reads and writes a binding tag, with or without #', async () => {
    await writeConfig('bindings:\n  - cwd: /code/web\n    projectId: p1\n    tag: web\n  - cwd: /code/api\n    projectId: p1\n    tag: "#API"\n');
    const { config } = await loadConfig(file);
    expect(config.bindings.map((b) => b.tag)).toEqual(['web', '#API']);
    await saveConfig(file, config);
    expect(await readFile(file, 'utf8')).toContain('    tag: web\n');
    expect((await loadConfig(file)).config).toEqual(config);
  });

  it('names the line of a tag that cannot be a route tag, and suggests tag for a misspelt key', async () => {
    const bad = await loadError('bindings:\n  - cwd: /code/web\n    projectId: p1\n    tag: two words\n');
    expect(bad.issues).toEqual([{ line: 4, path: 'bindings[0].tag', problem: 'expected a route tag: letters or digits, then letters, digits, _ . - / (at most 64)' }]);
    const typo = await loadError('bindings:\n  - cwd: /code/web\n    projectId: p1\n    tga: web\n');
    expect(typo.issues[0]).toMatchObject({ line: 4, unknownKey: 'tga', suggestion: 'tag' });
  });
});

describe('saveConfig and updateConfig', () => {
  it('writes a round-trippable file with mode 0600 in a 0700 directory and a header comment', async () => {
    const config: DidaTodoConfig = {
      version: 1,
      region: 'dida365',
      hostLabel: 'box',
      bindings: [{ cwd: '/w/repo/', projectId: 'p1', label: '清单' }],
    };
    await saveConfig(file, config);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(file))).mode & 0o777).toBe(0o700);
    const text = await readFile(file, 'utf8');
    expect(text.startsWith('# dida-todo configuration')).toBe(true);
    expect((await loadConfig(file)).config).toEqual({ ...config, bindings: [{ cwd: '/w/repo', projectId: 'p1', label: '清单' }] });
  });

  it('keeps the existing header comment', async () => {
    await writeConfig('# my own notes\n# second line\nregion: dida365\n');
    await saveConfig(file, { version: 1, region: 'ticktick', bindings: [] });
    const text = await readFile(file, 'utf8');
    expect(text.startsWith('# my own notes\n# second line\n')).toBe(true);
    expect(text).toContain('region: ticktick');
  });

  it('refuses to save an invalid config', async () => {
    await expect(saveConfig(file, { version: 1, bindings: [{ cwd: 'rel', projectId: 'p' }] })).rejects.toBeInstanceOf(ConfigError);
    expect(await loadConfig(file)).toMatchObject({ exists: false });
  });

  it('updates under the lock and writes only when something changed', async () => {
    const lockDir = path.join(dir, 'locks');
    const next = await updateConfig(file, (c) => withBinding(c, { cwd: '/w/a', projectId: 'p1' }), { lockDir });
    expect(next.bindings).toEqual([{ cwd: '/w/a', projectId: 'p1' }]);
    const before = await stat(file, { bigint: true });
    await updateConfig(file, (c) => withBinding(c, { cwd: '/w/a/', projectId: 'p1' }), { lockDir });
    const after = await stat(file, { bigint: true });
    expect(after.ino).toBe(before.ino);
    expect(after.mtimeNs).toBe(before.mtimeNs);
  });

  it('serializes concurrent updates in one process without losing any', async () => {
    const lockDir = path.join(dir, 'locks');
    await Promise.all(
      Array.from({ length: 8 }, (_, i) => updateConfig(file, (c) => withBinding(c, { cwd: `/w/${i}`, projectId: `p${i}` }), { lockDir })),
    );
    expect((await loadConfig(file)).config.bindings).toHaveLength(8);
  });

  it('replaces the file a symbolic link points to and keeps the link', async () => {
    const { lstat, mkdir, readlink, symlink } = await import('node:fs/promises');
    const target = path.join(dir, 'dotfiles', 'dida.yaml');
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, '# my settings\nlocale: en\n');
    await mkdir(path.dirname(file), { recursive: true });
    await symlink(path.relative(path.dirname(file), target), file);
    await updateConfig(file, (c) => ({ ...c, hostLabel: 'desk' }), { lockDir: path.join(dir, 'locks') });
    expect((await lstat(file)).isSymbolicLink()).toBe(true);
    expect(await readlink(file)).toBe(path.relative(path.dirname(file), target));
    expect(await readFile(target, 'utf8')).toMatch(/^# my settings\n[\s\S]*locale: en[\s\S]*hostLabel: desk/);
  });

  it('a folder that cannot be created is a FileSaveError that says nothing was written and what to do', async () => {
    const { FileSaveError } = await import('../../src/store/atomic-file');
    await writeFile(path.join(dir, 'blocker'), 'a file where a folder should be');
    const inside = path.join(dir, 'blocker', 'dida-todo', 'config.yaml');
    const error = await saveConfig(inside, defaultConfig()).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(FileSaveError);
    expect(error).toMatchObject({ code: 'ENOTDIR', file: inside });
    expect((error as Error).message).toMatch(/^Could not save .*config\.yaml: .*\. Nothing was written; .* keeps its previous content\. Part of the path .* is a file, not a folder/);
    expect((error as Error).message).not.toMatch(/\.tmp/);
  });

  it('never overwrites an invalid file', async () => {
    await writeConfig('bindings: [{ cwd: rel, projectId: p }]\n');
    await expect(updateConfig(file, (c) => c, { lockDir: path.join(dir, 'locks') })).rejects.toBeInstanceOf(ConfigError);
    expect(await readFile(file, 'utf8')).toBe('bindings: [{ cwd: rel, projectId: p }]\n');
  });
});

describe('bindings', () => {
  const config: DidaTodoConfig = {
    version: 1,
    bindings: [
      { cwd: '/a', projectId: 'pa' },
      { cwd: '/a/b', projectId: 'pab' },
      { cwd: '/x/y', projectId: 'pxy' },
    ],
  };

  it('finds an exact match, also with a trailing slash or dot segments', () => {
    expect(findBinding(config, '/a/b')?.projectId).toBe('pab');
    expect(findBinding(config, '/a/b/')?.projectId).toBe('pab');
    expect(findBinding(config, '/a/c/../b')?.projectId).toBe('pab');
  });

  it('falls back to the deepest bound ancestor', () => {
    expect(findBinding(config, '/a/b/c/d')?.projectId).toBe('pab');
    expect(findBinding(config, '/a/c')?.projectId).toBe('pa');
  });

  it('does not treat a sibling with a common prefix as an ancestor', () => {
    expect(findBinding(config, '/a/bc')?.projectId).toBe('pa');
    expect(findBinding(config, '/x/yz')).toBeUndefined();
    expect(findBinding(config, '/x')).toBeUndefined();
  });

  it('treats a root binding as the ancestor of everything', () => {
    const rooted = withBinding(config, { cwd: '/', projectId: 'root' });
    expect(findBinding(rooted, '/q/r')?.projectId).toBe('root');
    expect(findBinding(rooted, '/a/b/c')?.projectId).toBe('pab');
  });

  it('replaces the binding of the same directory in place and removes exactly one directory', () => {
    const replaced = withBinding(config, { cwd: '/a/b/', projectId: 'new', label: 'L' });
    expect(replaced.bindings.map((b) => b.projectId)).toEqual(['pa', 'new', 'pxy']);
    expect(replaced.bindings[1]).toEqual({ cwd: '/a/b', projectId: 'new', label: 'L' });
    expect(config.bindings[1]?.projectId).toBe('pab');
    const removed = withoutBinding(replaced, '/a/b/');
    expect(removed.bindings.map((b) => b.cwd)).toEqual(['/a', '/x/y']);
    expect(withoutBinding(config, '/a/b/c').bindings).toHaveLength(3);
  });
});

describe('createConfigReader', () => {
  it('re-reads the file only when it changed', async () => {
    const reader = createConfigReader(file);
    expect(await reader.read()).toMatchObject({ exists: false });

    await saveConfig(file, { version: 1, locale: 'zh', bindings: [] });
    expect((await reader.read()).config.locale).toBe('zh');

    // Same signature: an edit that keeps size, mtime and inode is not seen (proves the cache is used).
    const before = await stat(file);
    await writeFile(file, (await readFile(file, 'utf8')).replace('locale: zh', 'locale: en'));
    await utimes(file, before.atime, before.mtime);
    const sameShape = await stat(file);
    if (sameShape.ctimeMs === before.ctimeMs) expect((await reader.read()).config.locale).toBe('zh');

    // A real edit (new mtime) is picked up without a new reader.
    await writeFile(file, 'locale: en\nhostLabel: box\n');
    expect((await reader.read()).config).toMatchObject({ locale: 'en', hostLabel: 'box' });
  });

  it('reports an invalid edit and recovers once the file is fixed', async () => {
    const reader = createConfigReader(file);
    await saveConfig(file, { version: 1, bindings: [] });
    await reader.read();
    await writeFile(file, 'locale: fr\n');
    await expect(reader.read()).rejects.toBeInstanceOf(ConfigError);
    await expect(reader.read()).rejects.toBeInstanceOf(ConfigError);
    await writeFile(file, 'locale: en\n');
    expect((await reader.read()).config.locale).toBe('en');
    await rm(file);
    expect(await reader.read()).toMatchObject({ exists: false, config: { bindings: [] } });
  });

  it('hands out copies so callers cannot change the cache', async () => {
    const reader = createConfigReader(file);
    await saveConfig(file, { version: 1, bindings: [{ cwd: '/a', projectId: 'p' }] });
    (await reader.read()).config.bindings.length = 0;
    expect((await reader.read()).config.bindings).toHaveLength(1);
  });
});

describe('the parsed form kept for a cold start', () => {
  const cacheOf = () => path.join(dir, 'state', 'config.parsed.json');
  const bound = (cwd: string) => `bindings:\n  - cwd: ${cwd}\n    projectId: p1\n`;

  it('answers for exactly the text it was made from; any edit is parsed again and kept anew', async () => {
    await writeConfig(bound('/a'));
    expect((await loadConfig(file, cacheOf())).config.bindings.map((b) => b.cwd)).toEqual(['/a']);
    const kept = JSON.parse(await readFile(cacheOf(), 'utf8')) as { hash: string; config: DidaTodoConfig };
    expect(kept.config.bindings[0]!.cwd).toBe('/a');
    // The kept form is what answers while the text is unchanged (proof: a doctored copy under the same hash is used).
    kept.config.bindings[0]!.cwd = '/kept';
    await writeFile(cacheOf(), JSON.stringify(kept));
    expect((await loadConfig(file, cacheOf())).config.bindings.map((b) => b.cwd)).toEqual(['/kept']);
    // One byte more in config.yaml: parsed again, and the kept form follows.
    await writeFile(file, `${bound('/a')}\n`);
    expect((await loadConfig(file, cacheOf())).config.bindings.map((b) => b.cwd)).toEqual(['/a']);
    expect((JSON.parse(await readFile(cacheOf(), 'utf8')) as { config: DidaTodoConfig }).config.bindings[0]!.cwd).toBe('/a');
  });

  it('a kept form that no longer validates, a damaged one, or one that cannot be written never hides the file or its errors', async () => {
    await writeConfig(bound('/a'));
    await loadConfig(file, cacheOf());
    const kept = JSON.parse(await readFile(cacheOf(), 'utf8')) as { hash: string; config: Record<string, unknown> };
    await writeFile(cacheOf(), JSON.stringify({ hash: kept.hash, config: { bindings: 'nonsense' } }));
    expect((await loadConfig(file, cacheOf())).config.bindings.map((b) => b.cwd)).toEqual(['/a']);
    await writeFile(cacheOf(), '{"hash":');
    expect((await loadConfig(file, cacheOf())).config.bindings.map((b) => b.cwd)).toEqual(['/a']);
    // An invalid config.yaml still names its line, cache or not.
    await writeFile(file, 'bindings:\n  - cwd: /a\n    projectid: p1\n');
    const error = await loadConfig(file, cacheOf()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toMatch(/line 3/);
    // A cache path that cannot be written (a directory stands there): the config is still read.
    await writeFile(file, bound('/b'));
    const blocked = path.join(dir, 'blocked');
    await saveConfig(path.join(blocked, 'x.yaml'), defaultConfig());
    expect((await loadConfig(file, blocked)).config.bindings.map((b) => b.cwd)).toEqual(['/b']);
  });
});
