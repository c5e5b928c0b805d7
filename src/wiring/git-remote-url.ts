// Turns a git remote URL (https or ssh, GitHub/GitLab/Gitee) into the repository's web home; anything else has none.
import type { RepoWeb } from '../core/evidence/repo-evidence';

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** The forge a host serves: github.com, gitlab.com (or a host named gitlab.*), gitee.com; undefined for others. */
function forgeOf(host: string): RepoWeb['kind'] | undefined {
  const name = host.toLowerCase().replace(/^www\./, '');
  if (name === 'github.com' || name === 'ssh.github.com') return 'github';
  if (name === 'gitee.com') return 'gitee';
  if (name === 'gitlab.com' || name === 'altssh.gitlab.com' || /^gitlab\.[a-z0-9.-]+$/.test(name)) return 'gitlab';
  return undefined;
}

/** Host and path of a remote URL: `https://[user@]host[:port]/path`, `ssh://[user@]host[:port]/path`, `git://…` or `[user@]host:path`. */
function split(url: string): { host: string; path: string } | undefined {
  const text = url.trim();
  const full = /^(?:https?|ssh|git|git\+ssh|ssh\+git):\/\/(?:[^@/]*@)?([^/:?#]+)(?::\d+)?\/([^?#]*)$/i.exec(text);
  if (full) return { host: full[1] as string, path: full[2] as string };
  const scp = /^(?:[^@/:]+@)?([^/:]+):(?!\/\/)([^?#]*)$/.exec(text);
  if (scp) return { host: scp[1] as string, path: scp[2] as string };
  return undefined;
}

/**
 * The web home (`https://host/owner/repo`) of a remote on GitHub, GitLab (subgroups kept) or Gitee, from its https or
 * ssh URL; credentials and ports are never carried over. Undefined for any other host or a path that is not plain
 * owner/repo names.
 */
export function repoWebOf(url: string): RepoWeb | undefined {
  const parts = split(url);
  if (!parts) return undefined;
  const kind = forgeOf(parts.host);
  if (!kind) return undefined;
  const segments = parts.path
    .replace(/^\/+|\/+$/g, '')
    .replace(/\.git$/i, '')
    .split('/');
  if (segments.length < 2 || segments.some((s) => !NAME.test(s))) return undefined;
  if (kind !== 'gitlab' && segments.length !== 2) return undefined;
  const host = parts.host.toLowerCase().replace(/^www\./, '').replace(/^ssh\.github\.com$/, 'github.com').replace(/^altssh\.gitlab\.com$/, 'gitlab.com');
  return { kind, base: `https://${host}/${segments.join('/')}` };
}
