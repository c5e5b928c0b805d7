// The one place the install commands come from: `repository` and `version` in package.json.
import { repository, version } from '../../package.json';

export const PACKAGE_VERSION: string = version;

/** `owner/name` of the GitHub repository in package.json's `repository` (a URL or a `github:` shorthand). */
export function repositorySlug(repo: string | { url?: string } = repository): string {
  const url = typeof repo === 'string' ? repo : (repo.url ?? '');
  const match = /^(?:github:)?([\w.-]+)\/([\w.-]+?)$/.exec(url) ?? /github\.com[/:]([\w.-]+)\/([\w.-]+?)(?:\.git)?\/?$/.exec(url);
  if (!match) throw new Error(`package.json "repository" is not a GitHub repository: ${url}`);
  return `${match[1]}/${match[2]}`;
}

/** The install spec dsh and npm understand: `github:owner/name`. */
export function installSpec(): string {
  return `github:${repositorySlug()}`;
}

/** The repository's web address (for "see the README"). */
export function repositoryUrl(): string {
  return `https://github.com/${repositorySlug()}`;
}

export interface InstallCommands {
  /** Installs the bundle into a dsh profile. */
  dshPluginAdd(profile?: string): string;
  /** Installs the `dida-todo` command globally with npm. */
  npmInstallGlobal: string;
  /** Links the `dida-todo` command that ships inside the bundle a dsh profile installed. */
  linkFromProfile(dshHome?: string, profile?: string): string;
}

export const INSTALL: InstallCommands = {
  dshPluginAdd: (profile = 'web') => `dsh plugin --profile ${profile} add ${installSpec()}`,
  npmInstallGlobal: `npm install -g ${installSpec()}`,
  linkFromProfile: (dshHome = '~/.dsh', profile = 'web') => `ln -sf ${dshHome}/profiles/${profile}/node_modules/dida-todo/dsh-plugin/cli.mjs ~/.local/bin/dida-todo`,
};
