// The repository evidence port over plain git: argv only (never a shell), a timeout and an output cap per command.
import { execFile } from 'node:child_process';
import { MAX_COMMITS_PER_STEP, MAX_FILES_PER_COMMIT, type CommitEvidence, type RepoEvidencePort } from '../core/evidence/repo-evidence';
import { repoWebOf } from './git-remote-url';

export interface GitEvidenceOptions {
  /** The git program (default `git` from PATH). */
  git?: string;
  /** Per command (default 5 s). */
  timeoutMs?: number;
  /** Output read per command at most (default 512 KiB); a longer output is cut and only whole records are used. */
  maxBytes?: number;
  log?: (line: string) => void;
}

const FULL_SHA = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;
const REF_NAME = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$/;
const MAX_SUBJECT = 200;
const MAX_PATH = 300;

/** The environment git runs with: nothing that points it at another repository, and never a prompt. */
function gitEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^GIT_(?:DIR|WORK_TREE|INDEX_FILE|OBJECT_DIRECTORY|ALTERNATE_OBJECT_DIRECTORIES|NAMESPACE|COMMON_DIR|PREFIX)$/.test(key)) env[key] = value;
  }
  env.GIT_TERMINAL_PROMPT = '0';
  env.GIT_OPTIONAL_LOCKS = '0';
  return env;
}

/** The NUL-terminated fields of `output`; what follows the last NUL of a cut output is a cut field and dropped. */
function nulFields(output: string, complete: boolean): string[] {
  const fields = output.split('\0');
  if (!complete || output.endsWith('\0')) fields.pop();
  return fields;
}

/**
 * Parses `log -z --format=%H%x00%h%x00%s` output: NUL-separated fields, three per commit. No field can hold a NUL (git
 * cuts a subject at one, and `%s` is one line), so commit text cannot move a field boundary. Each full id must be
 * lower-case hex of `idLength` digits and its abbreviation a prefix of it; the first commit that does not parse ends
 * the list (nothing after it is trusted). When the output was cut (`complete` false) its last commit is dropped.
 */
export function parseCommitList(output: string, complete: boolean, idLength: number): Array<{ id: string; sha: string; subject: string }> {
  const fields = nulFields(output, complete);
  const whole = Math.floor(fields.length / 3);
  const fullId = new RegExp(`^[0-9a-f]{${idLength}}$`);
  const commits: Array<{ id: string; sha: string; subject: string }> = [];
  for (let i = 0; i < whole; i++) {
    const [id = '', abbrev = '', subject = ''] = fields.slice(i * 3, i * 3 + 3);
    if (!fullId.test(id) || !/^[0-9a-f]{4,}$/.test(abbrev) || !id.startsWith(abbrev)) break;
    commits.push({ id, sha: abbrev.length >= 7 ? abbrev : id.slice(0, 7), subject: subject.slice(0, MAX_SUBJECT) });
  }
  return commits;
}

/** Parses `diff-tree -z --name-only` output (NUL-terminated paths); a path cut by the output cap is dropped. */
export function parsePaths(output: string, complete: boolean): { files: string[]; more: number } {
  const files = nulFields(output, complete).filter((p) => p !== '');
  return { files: files.slice(0, MAX_FILES_PER_COMMIT).map((f) => f.slice(0, MAX_PATH)), more: Math.max(0, files.length - MAX_FILES_PER_COMMIT) };
}

/** Plain git in a working directory, bounded. */
export function gitEvidence(options: GitEvidenceOptions = {}): RepoEvidencePort {
  const program = options.git ?? 'git';
  const timeout = options.timeoutMs ?? 5000;
  const maxBuffer = options.maxBytes ?? 512 * 1024;

  /** stdout of `git <args>` in `cwd` (and whether it is whole), or undefined when git failed, is missing or timed out. */
  function run(cwd: string, args: readonly string[]): Promise<{ out: string; complete: boolean } | undefined> {
    return new Promise((resolve) => {
      execFile(
        program,
        ['-c', 'core.quotepath=off', '-c', 'log.showSignature=false', '-c', 'color.ui=false', ...args],
        { cwd, timeout, maxBuffer, env: gitEnv(), windowsHide: true, encoding: 'utf8' },
        (error, stdout) => {
          if (!error) return resolve({ out: stdout, complete: true });
          if ((error as NodeJS.ErrnoException).code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER') return resolve({ out: String(stdout ?? ''), complete: false });
          const code = (error as NodeJS.ErrnoException).code;
          // A directory that is not a repository answers a non-zero exit: that is "no evidence", not worth a line.
          if (typeof code === 'string' || error.killed) options.log?.(`git ${args[0]} in ${cwd} did not answer: ${error.message.split('\n')[0]}`);
          resolve(undefined);
        },
      );
    });
  }

  async function line(cwd: string, args: readonly string[]): Promise<string | undefined> {
    const result = await run(cwd, args);
    const text = result?.complete ? result.out.trim() : '';
    return text === '' ? undefined : text;
  }

  return {
    async head(cwd) {
      const sha = await line(cwd, ['rev-parse', '--verify', '-q', 'HEAD^{commit}']);
      return sha && FULL_SHA.test(sha) ? sha : undefined;
    },

    async commitsSince(cwd, sha) {
      if (!FULL_SHA.test(sha)) return undefined;
      const range = `${sha}..HEAD`;
      const listed = await run(cwd, ['log', '-z', '--no-color', '--format=%H%x00%h%x00%s', `-n${MAX_COMMITS_PER_STEP}`, range, '--']);
      if (!listed) return undefined;
      const commits: CommitEvidence[] = [];
      for (const { id, sha: abbrev, subject } of parseCommitList(listed.out, listed.complete, sha.length).reverse()) {
        // One call per commit: a path may hold any byte but NUL, so only a NUL-terminated list of one commit is unambiguous.
        const changed = await run(cwd, ['diff-tree', '-r', '-z', '--root', '--no-commit-id', '--name-only', '--no-ext-diff', id, '--']);
        const { files, more: moreFiles } = changed ? parsePaths(changed.out, changed.complete) : { files: [], more: 0 };
        commits.push({ sha: abbrev, subject, files, moreFiles });
      }
      const count = Number(await line(cwd, ['rev-list', '--count', range, '--']));
      const more = Number.isInteger(count) && count > commits.length ? count - commits.length : 0;
      return { commits, more };
    },

    async remote(cwd) {
      const ref = await line(cwd, ['symbolic-ref', '-q', '--short', 'HEAD']);
      const branch = ref && REF_NAME.test(ref) ? ref : undefined;
      const tracked = branch ? await line(cwd, ['config', '--get', `branch.${branch}.remote`]) : undefined;
      const names = (await line(cwd, ['remote']))?.split('\n').map((n) => n.trim()) ?? [];
      const name = [tracked, 'origin', names[0]].find((n): n is string => !!n && REF_NAME.test(n) && names.includes(n));
      const url = name ? await line(cwd, ['remote', 'get-url', name]) : undefined;
      const web = url ? repoWebOf(url) : undefined;
      if (!branch && !web) return undefined;
      return { ...(branch ? { branch } : {}), ...(web ? { web } : {}) };
    },
  };
}
