// Runs the built `dida-todo` executable (dsh-plugin/cli.mjs) as a real child process with a temporary HOME/XDG layout.
// `tty: true` runs it inside a pseudo-terminal (util-linux `script`), so stdin, stdout and stderr are terminals.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const BUILT_CLI = path.join(ROOT, 'dsh-plugin', 'cli.mjs');

export interface CliResult {
  code: number | null;
  out: string;
  err: string;
  /** stdout parsed as JSON. */
  json<T = Record<string, unknown>>(): T;
}

export interface LiveRun {
  /** stderr (or, under `tty`, everything the terminal showed) so far. */
  err(): string;
  out(): string;
  /** Types into the command's standard input. */
  write(text: string): void;
  /** Resolves once `pattern` has appeared on stderr/stdout (or the run ended). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  signal(name: NodeJS.Signals): void;
  result: Promise<CliResult>;
}

export interface RunOptions {
  /** Text written to standard input (then closed). Without it, stdin is closed at once (no input). */
  stdin?: string;
  /** Keep standard input open for `LiveRun.write` (start only). */
  keepStdin?: boolean;
  /** Run inside a pseudo-terminal: stdin/stdout/stderr are terminals; all output arrives as `out`. */
  tty?: boolean;
  /** Extra environment variables. */
  env?: Record<string, string>;
  cwd?: string;
  /** Kill the run after this long (default 30 s). */
  timeoutMs?: number;
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

function shellQuote(arg: string): string {
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** Starts the built CLI with exactly `env` (plus PATH) and returns a handle on the running process. */
export function startCli(argv: string[], env: Record<string, string>, options: RunOptions = {}): LiveRun {
  const fullEnv: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env, ...options.env };
  const command = [process.execPath, BUILT_CLI, ...argv];
  const child = options.tty
    ? spawn('script', ['-qefc', command.map(shellQuote).join(' '), '/dev/null'], { cwd: options.cwd, env: { ...fullEnv, TERM: fullEnv.TERM ?? 'xterm' }, stdio: ['pipe', 'pipe', 'pipe'] })
    : spawn(command[0] as string, command.slice(1), { cwd: options.cwd, env: fullEnv, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const waiters: Array<() => void> = [];
  const wake = () => {
    for (const w of waiters.splice(0)) w();
  };
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    wake();
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    err += d;
    wake();
  });
  if (options.stdin !== undefined) child.stdin.end(options.stdin);
  else if (!options.keepStdin && !options.tty) child.stdin.end();
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
  let ended = false;
  const result = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      ended = true;
      clearTimeout(timer);
      wake();
      resolve({
        code,
        out,
        err,
        json<T>() {
          return JSON.parse(out) as T;
        },
      });
    });
  });
  return {
    err: () => (options.tty ? out : err),
    out: () => out,
    write: (text) => void child.stdin.write(text),
    signal: (name) => void child.kill(name),
    async waitFor(pattern, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(out + err) && !ended) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}; output so far:\n${out}\n${err}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 200);
        });
      }
    },
    result,
  };
}

export async function makeCliHome(): Promise<CliHome> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'dida-todo-cli-'));
  const home = path.join(root, 'home');
  const env = { HOME: home, XDG_CONFIG_HOME: path.join(root, 'xdg-config'), XDG_STATE_HOME: path.join(root, 'xdg-state') };
  const configDir = path.join(env.XDG_CONFIG_HOME, 'dida-todo');
  const stateDir = path.join(env.XDG_STATE_HOME, 'dida-todo');
  const project = path.join(root, 'project');
  await mkdir(home, { recursive: true });
  await mkdir(project, { recursive: true });
  const start = (argv: string[], options: RunOptions = {}) => startCli(argv, env, { cwd: project, ...options });
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

/**
 * The one `dida-todo:` line on stderr, allowing the progress lines a slow machine adds before it ("Contacting ……"):
 * for failures that follow a Dida request, whose progress line appears only when the request takes over a second.
 */
export function failureLine(result: CliResult): string {
  const lines = result.err.split('\n').filter((l) => l.trim() !== '');
  const failures = lines.filter((l) => l.startsWith('dida-todo: '));
  const others = lines.filter((l) => !l.startsWith('dida-todo: ') && !l.trimEnd().endsWith('…'));
  if (failures.length !== 1 || others.length > 0) throw new Error(`expected one "dida-todo: " line (besides progress lines) on stderr:\n${result.err}`);
  return failures[0] as string;
}
