// Runs `dida-todo` commands in-process with a capturing io and a temporary HOME/XDG layout.
import { mkdtemp, rm, stat } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { main } from '../../src/cli/cli';
import { UsageError } from '../../src/cli/cli-args';
import type { CliIo } from '../../src/cli/cli-io';

export interface CliResult {
  code: number;
  out: string;
  err: string;
  /** stdout parsed as JSON. */
  json<T = Record<string, unknown>>(): T;
}

export interface LiveRun {
  /** stderr written so far. */
  err(): string;
  result: Promise<CliResult>;
}

export interface RunOptions {
  /** Text `login --token -` reads as its input line. */
  stdin?: string;
  /** Pretend stdout/stderr are terminals. */
  tty?: boolean;
  /** Extra environment variables. */
  env?: Record<string, string>;
  cwd?: string;
}

export interface CliHome {
  root: string;
  home: string;
  configDir: string;
  credentialsFile: string;
  configFile: string;
  stateDir: string;
  stateFile: string;
  /** A project directory inside the temp root. */
  project: string;
  env: Record<string, string>;
  run(argv: string[], options?: RunOptions): Promise<CliResult>;
  start(argv: string[], options?: RunOptions): LiveRun;
  cleanup(): Promise<void>;
}

export async function makeCliHome(): Promise<CliHome> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'dida-todo-cli-'));
  const home = path.join(root, 'home');
  const env = { HOME: home, XDG_CONFIG_HOME: path.join(root, 'xdg-config'), XDG_STATE_HOME: path.join(root, 'xdg-state') };
  const configDir = path.join(env.XDG_CONFIG_HOME, 'dida-todo');
  const stateDir = path.join(env.XDG_STATE_HOME, 'dida-todo');
  const project = path.join(root, 'project');
  const { mkdir } = await import('node:fs/promises');
  await mkdir(home, { recursive: true });
  await mkdir(project, { recursive: true });

  const start = (argv: string[], options: RunOptions = {}): LiveRun => {
    let out = '';
    let err = '';
    const io: CliIo = {
      out: (text) => void (out += text),
      err: (text) => void (err += text),
      fail: (message) => {
        throw new UsageError(message);
      },
      stdoutIsTTY: options.tty ?? false,
      stderrIsTTY: options.tty ?? false,
      ...(options.stdin !== undefined ? { readLine: async () => (options.stdin as string).split('\n')[0] as string } : {}),
    };
    const result = main(argv, io, { ...env, ...options.env }, options.cwd ?? project).then((code) => ({
      code,
      out,
      err,
      json<T>() {
        return JSON.parse(out) as T;
      },
    }));
    return { err: () => err, result };
  };

  return {
    root,
    home,
    configDir,
    credentialsFile: path.join(configDir, 'credentials.json'),
    configFile: path.join(configDir, 'config.yaml'),
    stateDir,
    stateFile: path.join(stateDir, 'state.json'),
    project,
    env,
    start,
    run: (argv, options) => start(argv, options).result,
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}

/** A 127.0.0.1 port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function modeOf(file: string): Promise<number> {
  return (await stat(file)).mode & 0o777;
}

export async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

/** The error output is exactly one line starting with `dida-todo:`. */
export function oneErrorLine(result: CliResult): string {
  const lines = result.err.split('\n').filter((l) => l.trim() !== '');
  if (lines.length !== 1) throw new Error(`expected one line on stderr, got ${lines.length}:\n${result.err}`);
  const line = lines[0] as string;
  if (!line.startsWith('dida-todo: ')) throw new Error(`stderr line does not start with "dida-todo: ": ${line}`);
  return line;
}
