// How this copy of dida-todo was installed, so the doctor prints an install command that works from here: from a git
// clone the `github:` address may not be what the person has (a fork, local changes, no network), so the clone is packed.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { INSTALL, PACKAGE_VERSION } from '../install-commands';

/**
 * The folder of the dida-todo package this code runs from when it is a git checkout (a `.git` folder or file right
 * there, as a clone or a worktree has); undefined for an installed copy (a dsh profile, `npm install -g`).
 */
export function cloneRoot(from: string = fileURLToPath(import.meta.url)): string | undefined {
  for (let dir = path.dirname(from); ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest)) {
      let name: unknown;
      try {
        name = (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name;
      } catch {
        name = undefined;
      }
      if (name === 'dida-todo') return existsSync(path.join(dir, '.git')) ? dir : undefined;
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}

function shellWord(text: string): string {
  return /^[\w@%+=:,./~-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The commands that install this bundle into `profile`: packed from the clone it runs from, else its `github:` address. */
export function bundleInstallCommands(profile: string, clone: string | undefined = cloneRoot()): string[] {
  if (!clone) return [INSTALL.dshPluginAdd(profile)];
  const tarball = path.join(clone, `dida-todo-${PACKAGE_VERSION}.tgz`);
  return [`cd ${shellWord(clone)} && npm pack`, `dsh plugin --profile ${profile} add ${shellWord(tarball)}`];
}
