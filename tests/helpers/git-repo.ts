// A real temporary git repository for evidence tests: init, commit files, set a (fake) remote, switch branches.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export interface TestRepo {
  dir: string;
  git(...args: string[]): string;
  /** Writes each file (path → content) and commits them with `message`; returns the full commit id. */
  commit(message: string, files: Record<string, string>): Promise<string>;
  head(): string;
  close(): Promise<void>;
}

const ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.invalid',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_TERMINAL_PROMPT: '0',
};

export async function makeRepo(options: { branch?: string; remote?: string } = {}): Promise<TestRepo> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dida-git-'));
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, env: ENV, encoding: 'utf8' }).trim();
  git('init', '-q', '-b', options.branch ?? 'main');
  git('config', 'commit.gpgsign', 'false');
  if (options.remote) git('remote', 'add', 'origin', options.remote);
  return {
    dir,
    git,
    async commit(message, files) {
      for (const [file, content] of Object.entries(files)) {
        await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
        await writeFile(path.join(dir, file), content);
      }
      git('add', '-A');
      git('commit', '-q', '--allow-empty', '-m', message);
      return git('rev-parse', 'HEAD');
    },
    head: () => git('rev-parse', 'HEAD'),
    close: () => rm(dir, { recursive: true, force: true }),
  };
}
