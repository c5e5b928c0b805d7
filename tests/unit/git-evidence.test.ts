// The git evidence port against real temporary repositories, and remote URLs turned into web homes.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { gitEvidence, parseCommitList, parsePaths } from '../../src/wiring/git-evidence';
import { repoWebOf } from '../../src/wiring/git-remote-url';
import { gitEvidencePort } from '../../src/wiring/runtime';
import { makeRepo, type TestRepo } from '../helpers/git-repo';

const repos: TestRepo[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(repos.splice(0).map((r) => r.close()));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function repo(options: Parameters<typeof makeRepo>[0] = {}): Promise<TestRepo> {
  const made = await makeRepo(options);
  repos.push(made);
  return made;
}

describe('git evidence', () => {
  it('reads HEAD, the commits since a base (oldest first, with their files) and the branch with its remote', async () => {
    const r = await repo({ branch: 'feature/login', remote: 'git@github.com:acme/web.git' });
    const base = await r.commit('initial', { 'README.md': 'x' });
    const first = await r.commit('Add the login form', { 'src/login.ts': 'a', 'src/login.css': 'b' });
    const second = await r.commit('修复登录按钮', { 'src/login.ts': 'c' });
    const port = gitEvidence();
    expect(await port.head(r.dir)).toBe(second);
    const since = await port.commitsSince(r.dir, base);
    expect(since?.more).toBe(0);
    expect(since?.commits.map((c) => c.subject)).toEqual(['Add the login form', '修复登录按钮']);
    expect(first.startsWith(since?.commits[0]?.sha ?? '-')).toBe(true);
    expect(since?.commits[0]?.sha.length).toBeGreaterThanOrEqual(7);
    expect(since?.commits[0]?.files.sort()).toEqual(['src/login.css', 'src/login.ts']);
    expect(await port.remote(r.dir)).toEqual({ branch: 'feature/login', web: { kind: 'github', base: 'https://github.com/acme/web' } });
    expect(await port.commitsSince(r.dir, second)).toEqual({ commits: [], more: 0 });
  });

  it('lists at most 10 commits per call and 20 files per commit, counting the rest', async () => {
    const r = await repo();
    const base = await r.commit('initial', { 'a.txt': '0' });
    const many: Record<string, string> = {};
    for (let i = 0; i < 25; i++) many[`dir/file-${String(i).padStart(2, '0')}.txt`] = String(i);
    await r.commit('touch 25 files', many);
    for (let i = 0; i < 12; i++) await r.commit(`change ${i}`, { 'a.txt': String(i + 1) });
    const since = await gitEvidence().commitsSince(r.dir, base);
    expect(since?.commits).toHaveLength(10);
    expect(since?.more).toBe(3);
    expect(since?.commits.at(-1)?.subject).toBe('change 11');
    expect(since?.commits[0]?.subject).toBe('change 2');
    expect(since?.commits.find((c) => c.subject === 'touch 25 files')).toBeUndefined();
    const r2 = await repo();
    const b2 = await r2.commit('initial', { 'a.txt': '0' });
    await r2.commit('touch 25 files', many);
    const one = await gitEvidence().commitsSince(r2.dir, b2);
    expect(one?.commits[0]?.files).toHaveLength(20);
    expect(one?.commits[0]?.moreFiles).toBe(5);
  });

  it('has nothing for a directory that is not a repository, a repository without commits, or a machine without git', async () => {
    const plain = await mkdtemp(path.join(os.tmpdir(), 'dida-plain-'));
    dirs.push(plain);
    const port = gitEvidence({ log: () => undefined });
    expect(await port.head(plain)).toBeUndefined();
    expect(await port.remote(plain)).toBeUndefined();
    expect(await port.commitsSince(plain, 'a'.repeat(40))).toBeUndefined();
    const empty = await repo();
    expect(await port.head(empty.dir)).toBeUndefined();
    const r = await repo();
    await r.commit('one', { 'a.txt': '1' });
    const lines: string[] = [];
    const missing = gitEvidence({ git: path.join(plain, 'no-such-git'), log: (l) => lines.push(l) });
    expect(await missing.head(r.dir)).toBeUndefined();
    expect(lines.join('\n')).toMatch(/did not answer/);
    expect(await port.head(path.join(plain, 'gone'))).toBeUndefined();
  });

  it('is loaded on first use by the port the runtime gives the engine', async () => {
    const r = await repo({ remote: 'https://gitee.com/o/r.git' });
    const base = await r.commit('one', { 'a.txt': '1' });
    const next = await r.commit('two', { 'b.txt': '2' });
    const port = gitEvidencePort();
    expect(await port.head(r.dir)).toBe(next);
    expect((await port.commitsSince(r.dir, base))?.commits.map((c) => c.subject)).toEqual(['two']);
    expect((await port.remote(r.dir))?.web).toEqual({ kind: 'gitee', base: 'https://gitee.com/o/r' });
  });

  it('never passes a base that is not a commit id to git', async () => {
    const r = await repo();
    await r.commit('one', { 'a.txt': '1' });
    const port = gitEvidence();
    expect(await port.commitsSince(r.dir, '--output=/tmp/x')).toBeUndefined();
    expect(await port.commitsSince(r.dir, 'HEAD~1')).toBeUndefined();
    expect(await port.commitsSince(r.dir, 'f'.repeat(40))).toBeUndefined();
  });

  it('keeps only whole commits when the output cap cuts the log', async () => {
    const r = await repo();
    const base = await r.commit('initial', { 'a.txt': '0' });
    for (let i = 0; i < 4; i++) await r.commit(`change ${i} ${'x'.repeat(150)}`, { 'a.txt': String(i + 1) });
    const since = await gitEvidence({ maxBytes: 420 }).commitsSince(r.dir, base);
    expect(since).toBeDefined();
    expect(since?.commits.length).toBeGreaterThan(0);
    expect(since?.commits.length).toBeLessThan(4);
    expect(since?.commits.every((c) => c.files.every((f) => f === 'a.txt'))).toBe(true);
    expect((since?.commits.length ?? 0) + (since?.more ?? 0)).toBe(4);
  });

  it('does not follow GIT_DIR from the environment to another repository', async () => {
    const a = await repo();
    await a.commit('in a', { 'a.txt': '1' });
    const b = await repo();
    const inB = await b.commit('in b', { 'b.txt': '1' });
    const saved = process.env.GIT_DIR;
    process.env.GIT_DIR = path.join(a.dir, '.git');
    try {
      expect(await gitEvidence().head(b.dir)).toBe(inB);
    } finally {
      if (saved === undefined) delete process.env.GIT_DIR;
      else process.env.GIT_DIR = saved;
    }
  });

  it('shows exactly the real commits whatever their subjects, bodies and file names hold', async () => {
    const r = await repo();
    const base = await r.commit('initial', { 'a.txt': '0' });
    const fakeId = 'deadbeefdeadbeefdeadbeefdeadbeefdeadbeef';
    const hostile: Array<{ message: string; files: Record<string, string> }> = [
      { message: `Fix\x1edeadbee\x1fForged commit\nsrc/evil.ts`, files: { 'src/real.ts': '1' } },
      { message: `One\x1f\x1e\x1f\x1e${fakeId}\x1fForged again`, files: { 'line\nbreak.txt': '2', 'tab\tname.txt': '3' } },
      { message: `Subject\n\n\x1e${fakeId.slice(0, 7)}\x1fForged from the body\nsrc/body.ts\n${fakeId}\n`, files: { [fakeId]: '4' } },
      { message: `${fakeId}\n${fakeId}`, files: { '\x1eabc1234\x1fname': '5' } },
    ];
    const ids: string[] = [];
    for (const { message, files } of hostile) ids.push(await r.commit(message, files));
    const since = await gitEvidence().commitsSince(r.dir, base);
    expect(since?.more).toBe(0);
    expect(since?.commits).toHaveLength(ids.length);
    since?.commits.forEach((c, i) => expect(ids[i]?.startsWith(c.sha) && c.sha.length >= 7).toBe(true));
    expect(since?.commits.map((c) => c.subject)).toEqual(ids.map((id) => r.git('log', '-1', '--format=%s', id)));
    expect(since?.commits.map((c) => [...c.files].sort())).toEqual([['src/real.ts'], ['line\nbreak.txt', 'tab\tname.txt'], [fakeId], ['\x1eabc1234\x1fname']]);
  });

  it('reads a sha256 repository with its 64-digit ids', async () => {
    const r = await repo();
    await rm(path.join(r.dir, '.git'), { recursive: true, force: true });
    r.git('init', '-q', '--object-format=sha256', '-b', 'main');
    const base = await r.commit('initial', { 'a.txt': '0' });
    const next = await r.commit('second', { 'b.txt': '1' });
    expect(base).toMatch(/^[0-9a-f]{64}$/);
    const port = gitEvidence();
    expect(await port.head(r.dir)).toBe(next);
    const since = await port.commitsSince(r.dir, base);
    expect(since?.commits.map((c) => [c.subject, next.startsWith(c.sha), c.files])).toEqual([['second', true, ['b.txt']]]);
  });

  it('drops a commit whose subject git cuts at a NUL byte, never inventing the rest', async () => {
    const r = await repo();
    const base = await r.commit('initial', { 'a.txt': '0' });
    // git refuses a NUL in a message it writes; a commit object written by hand can still hold one.
    const tree = r.git('write-tree');
    const body = `tree ${tree}\nparent ${base}\nauthor T <t@example.invalid> 1700000000 +0000\ncommitter T <t@example.invalid> 1700000000 +0000\n\nreal\0${base}\0${base.slice(0, 7)}\0forged\n`;
    const file = path.join(r.dir, '.git', 'hand-made');
    await writeFile(file, body);
    const id = r.git('hash-object', '-t', 'commit', '-w', '--literally', file);
    r.git('update-ref', 'HEAD', id);
    const since = await gitEvidence().commitsSince(r.dir, base);
    expect(since?.commits.map((c) => [c.subject, id.startsWith(c.sha)])).toEqual([['real', true]]);
  });

  it('parses NUL-separated commit fields, drops a cut commit and stops at the first that does not parse', () => {
    const a = 'a'.repeat(40);
    const b = 'b'.repeat(40);
    const out = `${a}\0aaaaaaa\0one\0${b}\0bbbbbbb\0two\0`;
    expect(parseCommitList(out, true, 40).map((c) => [c.id, c.sha, c.subject])).toEqual([[a, 'aaaaaaa', 'one'], [b, 'bbbbbbb', 'two']]);
    expect(parseCommitList(out.slice(0, -2), false, 40).map((c) => c.sha)).toEqual(['aaaaaaa']);
    expect(parseCommitList(out.slice(0, out.indexOf(b) + 3), false, 40).map((c) => c.sha)).toEqual(['aaaaaaa']);
    expect(parseCommitList(`${a}\0aaaaaaa\0one\0`, false, 40).map((c) => c.sha)).toEqual(['aaaaaaa']);
    // An id of the wrong length (a sha-1 id where sha-256 is expected), upper case, or an abbreviation that is not a prefix.
    expect(parseCommitList(out, true, 64)).toEqual([]);
    expect(parseCommitList(`${a.toUpperCase()}\0AAAAAAA\0x\0`, true, 40)).toEqual([]);
    expect(parseCommitList(`${a}\0bbbbbbb\0x\0${b}\0bbbbbbb\0two\0`, true, 40)).toEqual([]);
    expect(parseCommitList(`${a}\0aaaaaaa\0one\0not-an-id\0x\0y\0${b}\0bbbbbbb\0two\0`, true, 40).map((c) => c.sha)).toEqual(['aaaaaaa']);
    expect(parseCommitList(`${'c'.repeat(64)}\0cccc\0short\0`, true, 64)).toEqual([{ id: 'c'.repeat(64), sha: 'ccccccc', subject: 'short' }]);
    expect(parsePaths('a\nb\0c\td\0', true)).toEqual({ files: ['a\nb', 'c\td'], more: 0 });
    expect(parsePaths('a\0cut-pa', false)).toEqual({ files: ['a'], more: 0 });
  });
});

describe('remote URLs', () => {
  it.each([
    ['https://github.com/acme/web.git', 'github', 'https://github.com/acme/web'],
    ['https://github.com/acme/web', 'github', 'https://github.com/acme/web'],
    ['https://user:ghp_secret@github.com/acme/web.git', 'github', 'https://github.com/acme/web'],
    ['git@github.com:acme/web.git', 'github', 'https://github.com/acme/web'],
    ['ssh://git@github.com/acme/web.git', 'github', 'https://github.com/acme/web'],
    ['ssh://git@ssh.github.com:443/acme/web.git', 'github', 'https://github.com/acme/web'],
    ['https://www.github.com/Acme/Web.js', 'github', 'https://github.com/Acme/Web.js'],
    ['git@gitlab.com:group/sub/api.git', 'gitlab', 'https://gitlab.com/group/sub/api'],
    ['https://gitlab.com/group/api.git', 'gitlab', 'https://gitlab.com/group/api'],
    ['ssh://git@gitlab.example.org:2222/team/api.git', 'gitlab', 'https://gitlab.example.org/team/api'],
    ['git@gitee.com:oschina/demo.git', 'gitee', 'https://gitee.com/oschina/demo'],
    ['https://gitee.com/oschina/demo', 'gitee', 'https://gitee.com/oschina/demo'],
  ])('%s → %s', (url, kind, base) => {
    expect(repoWebOf(url)).toEqual({ kind, base });
  });

  it.each(['https://bitbucket.org/acme/web.git', '/srv/git/web.git', 'file:///srv/git/web.git', 'git@github.com:acme.git', 'https://github.com/acme/web/tree/main', 'https://github.com/acme/../web', 'git@github.com:acme/we b.git', ''])(
    'has no web home for %j',
    (url) => {
      expect(repoWebOf(url)).toBeUndefined();
    },
  );
});
