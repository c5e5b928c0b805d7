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

/** `npm pack`'s file name for this version: `dida-todo-<version>.tgz`. */
export const PACKED_FILE = `dida-todo-${PACKAGE_VERSION}.tgz`;

/** The install commands from a clone: pack it, then install the packed file (the `github:` address needs the repository). */
export interface CloneInstall {
  /** `cd <clone> && npm pack && dsh plugin --profile <profile> add <clone>/dida-todo-<version>.tgz` */
  dshPluginAdd(profile?: string): string;
  /** `cd <clone> && npm pack && npm install -g <clone>/dida-todo-<version>.tgz` */
  npmInstallGlobal: string;
}

/** A path as one shell word (quoted only when it needs to be). */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

export function cloneInstall(root: string): CloneInstall {
  const pack = `cd ${shellWord(root)} && npm pack`;
  const packed = shellWord(`${root.replace(/\/+$/, '')}/${PACKED_FILE}`);
  return {
    dshPluginAdd: (profile = 'web') => `${pack} && dsh plugin --profile ${profile} add ${packed}`,
    npmInstallGlobal: `${pack} && npm install -g ${packed}`,
  };
}
