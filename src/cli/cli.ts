// `dida-todo` command line: picks the language, dispatches to one module per command, prints failures as one line.
import path from 'node:path';
import { UsageError } from './cli-args';
import { setInterruptContext } from './cli-interrupt';
import { processIo, type CliIo } from './cli-io';
import { cliText, pickCliLocale, type CliKey, type CliText } from './cli-locale';
import { describeFailure, guardIo, printJson } from './cli-output';
import type { CliContext } from './cli-runtime';
import { PACKAGE_VERSION } from './install-commands';
import { closestWord } from './near-miss';
import { afterLabel, padDisplay } from './terminal-text';
import { readFileIfExists } from '../store/atomic-file';
import { parseConfigText } from '../store/config-check';
import { resolvePaths } from '../store/paths';

type Command = (argv: readonly string[], io: CliIo, ctx: CliContext) => Promise<number>;

const COMMANDS: Record<string, { summary: CliKey; load: () => Promise<Command> }> = {
  doctor: { summary: 'cli.summary.doctor', load: async () => (await import('./commands/doctor')).doctorCommand },
  login: { summary: 'cli.summary.login', load: async () => (await import('./commands/login')).loginCommand },
  logout: { summary: 'cli.summary.logout', load: async () => (await import('./commands/logout')).logoutCommand },
  status: { summary: 'cli.summary.status', load: async () => (await import('./commands/status')).statusCommand },
  queue: { summary: 'cli.summary.queue', load: async () => (await import('./commands/queue')).queueCommand },
  bind: { summary: 'cli.summary.bind', load: async () => (await import('./commands/bind')).bindCommand },
  unbind: { summary: 'cli.summary.unbind', load: async () => (await import('./commands/unbind')).unbindCommand },
  lists: { summary: 'cli.summary.lists', load: async () => (await import('./commands/lists')).listsCommand },
  sim: { summary: 'cli.summary.sim', load: async () => (await import('./commands/sim')).simCommand },
  demo: { summary: 'cli.summary.demo', load: async () => (await import('./commands/demo')).demoCommand },
};

function usage(text: CliText): string {
  const rows = Object.entries(COMMANDS).map(([name, c]) => `  ${padDisplay(name, 10)}${text.t(c.summary)}`);
  return `${afterLabel(text.t('cli.help.usage'), 'dida-todo <command> [options]')}\n\n${text.t('cli.help.commands')}\n${rows.join('\n')}\n\n${text.t('cli.help.footer')}\n`;
}

/** The config.yaml a command will use: `--config <file>` when given, else the XDG default. */
function configPathOf(argv: readonly string[], env: NodeJS.ProcessEnv, cwd: string): string {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') break;
    if (arg === '--config' && argv[i + 1] !== undefined) return path.resolve(cwd, argv[i + 1] as string);
    if (arg.startsWith('--config=')) return path.resolve(cwd, arg.slice('--config='.length));
  }
  return resolvePaths(env).configFile;
}

/** The folders a command may write in (config.yaml's and state.json's), for the Ctrl+C clean-up. */
function writtenDirs(argv: readonly string[], env: NodeJS.ProcessEnv, cwd: string): string[] {
  let stateDir = resolvePaths(env).stateDir;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') break;
    if (arg === '--state-dir' && argv[i + 1] !== undefined) stateDir = path.resolve(cwd, argv[i + 1] as string);
    else if (arg.startsWith('--state-dir=')) stateDir = path.resolve(cwd, arg.slice('--state-dir='.length));
  }
  return [path.dirname(configPathOf(argv, env, cwd)), stateDir];
}

/** "Unknown command", with the closest command when one is near (`stauts` → `status`). */
function unknownCommand(name: string, text: CliText): UsageError {
  const near = closestWord(name, [...Object.keys(COMMANDS), 'help']);
  return new UsageError(near ? text.t('cli.usage.unknownCommandNear', { command: name, suggestion: near }) : text.t('cli.usage.unknownCommand', { command: name }));
}

/** The CLI's language: config.yaml's `locale` (when the file reads cleanly), else LC_ALL / LC_MESSAGES / LANG. */
export async function cliLocaleFor(argv: readonly string[], env: NodeJS.ProcessEnv, cwd: string): Promise<CliText> {
  let configured: string | undefined;
  try {
    const file = configPathOf(argv, env, cwd);
    const content = await readFileIfExists(file);
    if (content !== undefined) configured = (await parseConfigText(content, file)).locale;
  } catch {
    // A broken or unreadable config.yaml: the language falls back to the environment; the command reports the file.
    configured = undefined;
  }
  return cliText(pickCliLocale(configured, env));
}

/**
 * Runs one command. `env` (default process.env) gives HOME, XDG_*, LANG and DIDA_TODO_TOKEN; `cwd` (default
 * process.cwd()) is the directory `--cwd` is relative to. Returns the exit code.
 */
export async function main(argv: readonly string[], io: CliIo = processIo, env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): Promise<number> {
  const text = await cliLocaleFor(argv, env, cwd);
  setInterruptContext({ dirs: writtenDirs(argv, env, cwd), stoppedLine: `dida-todo: ${text.t('cli.interrupt.stopped')}`, finishingLine: `dida-todo: ${text.t('cli.interrupt.finishing')}` });
  // `help <command>` is `<command> --help`.
  if (argv[0] === 'help' && argv[1] !== undefined && !argv[1].startsWith('-')) return main([argv[1], '--help'], io, env, cwd);
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-V' || name === 'version') {
    io.out(argv.includes('--json') ? `${JSON.stringify({ name: 'dida-todo', version: PACKAGE_VERSION, node: process.version })}\n` : `dida-todo ${PACKAGE_VERSION}\n`);
    return 0;
  }
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out(usage(text));
    if (name !== undefined) return 0;
    io.err(`dida-todo: ${text.t('cli.usage.noCommand')}\n`);
    return 2;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  const guarded = guardIo(io);
  try {
    if (!command) throw unknownCommand(name, text);
    return await (await command.load())(rest, guarded, { env, cwd, io: guarded, text });
  } catch (error) {
    const failure = describeFailure(error, text);
    guarded.err(`dida-todo: ${failure.message}\n`);
    if (rest.includes('--json')) printJson(guarded, { ok: false, exitCode: failure.exitCode, error: { code: failure.code, message: failure.message } });
    return failure.exitCode;
  }
}
