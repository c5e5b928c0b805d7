// Resolves where dida-todo keeps its files (XDG directories, overridable by explicit paths).
import os from 'node:os';
import path from 'node:path';

export interface PathEnv {
  HOME?: string | undefined;
  XDG_CONFIG_HOME?: string | undefined;
  XDG_STATE_HOME?: string | undefined;
}

export interface DidaTodoPaths {
  /** Directory of config.yaml and credentials.json (`$XDG_CONFIG_HOME/dida-todo`). */
  configDir: string;
  configFile: string;
  credentialsFile: string;
  /** Directory of state.json and locks (`$XDG_STATE_HOME/dida-todo`). */
  stateDir: string;
  stateFile: string;
  lockDir: string;
  /** Token file of the official `dida` CLI (read only). */
  didaCliConfigFile: string;
}

export interface PathOverrides {
  configPath?: string | undefined;
  stateDir?: string | undefined;
}

function nonBlank(value: string | undefined): string | undefined {
  return value !== undefined && value.trim() !== '' ? value : undefined;
}

/** Computes every path from the environment; explicit overrides win over XDG variables, which win over the home directory. */
export function resolvePaths(env: PathEnv = process.env, overrides: PathOverrides = {}): DidaTodoPaths {
  const home = nonBlank(env.HOME) ?? os.homedir();
  const configHome = nonBlank(env.XDG_CONFIG_HOME) ?? path.join(home, '.config');
  const stateHome = nonBlank(env.XDG_STATE_HOME) ?? path.join(home, '.local', 'state');
  const configFile = overrides.configPath ? path.resolve(overrides.configPath) : path.join(configHome, 'dida-todo', 'config.yaml');
  const configDir = path.dirname(configFile);
  const stateDir = overrides.stateDir ? path.resolve(overrides.stateDir) : path.join(stateHome, 'dida-todo');
  return {
    configDir,
    configFile,
    credentialsFile: path.join(configDir, 'credentials.json'),
    stateDir,
    stateFile: path.join(stateDir, 'state.json'),
    lockDir: path.join(stateDir, 'locks'),
    didaCliConfigFile: path.join(home, '.config', 'dida-cli', 'config.json'),
  };
}

/** Shows `file` with `~` for the home directory, for messages a person reads. */
export function displayPath(file: string, home: string = os.homedir()): string {
  const resolved = path.resolve(file);
  const base = path.resolve(home);
  if (base !== path.parse(base).root && (resolved === base || resolved.startsWith(base + path.sep))) {
    return `~${resolved.slice(base.length)}`;
  }
  return resolved;
}
