// `dida-todo` command line: dispatches to one module per command.
import { UsageError } from './cli-args';
import { processIo, type CliIo } from './cli-io';
import { describeFailure, guardIo, printJson } from './cli-output';
import type { CliContext } from './cli-runtime';

type Command = (argv: readonly string[], io: CliIo, ctx: CliContext) => Promise<number>;

const COMMANDS: Record<string, { summary: string; load: () => Promise<Command> }> = {
  login: { summary: 'Save a Dida token (personal API token or OAuth) after checking it works.', load: async () => (await import('./commands/login')).loginCommand },
  logout: { summary: 'Forget the token saved by `login`.', load: async () => (await import('./commands/logout')).logoutCommand },
  status: { summary: 'Show the token source, Dida reachability, bindings and pending work.', load: async () => (await import('./commands/status')).statusCommand },
  bind: { summary: 'Bind a directory to a Dida list (by name or --id).', load: async () => (await import('./commands/bind')).bindCommand },
  unbind: { summary: 'Remove the binding of a directory.', load: async () => (await import('./commands/unbind')).unbindCommand },
  lists: { summary: "List the account's Dida lists and the directories bound to them.", load: async () => (await import('./commands/lists')).listsCommand },
  sim: { summary: 'Run a local Dida365 simulator.', load: async () => (await import('./commands/sim')).simCommand },
  demo: { summary: 'How to run the guided demo (from a clone: `npm run demo`).', load: async () => (await import('./commands/demo')).demoCommand },
};

const USAGE = `Usage: dida-todo <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(10)}${c.summary}`)
  .join('\n')}

Run \`dida-todo <command> --help\` for the options of a command.

Exit codes: 0 ok, 1 operational failure, 2 usage error, 3 not logged in or token rejected, 4 not bound.
`;

/**
 * Runs one command. `env` (default process.env) gives HOME, XDG_* and DIDA_TODO_TOKEN; `cwd` (default
 * process.cwd()) is the directory `--cwd` is relative to. Returns the exit code.
 */
export async function main(argv: readonly string[], io: CliIo = processIo, env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out(USAGE);
    if (name !== undefined) return 0;
    io.err('dida-todo: no command given; run `dida-todo --help` to see the commands.\n');
    return 2;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  const guarded = guardIo(io);
  try {
    if (!command) throw new UsageError(`Unknown command "${name}"; run \`dida-todo --help\` to see the commands.`);
    return await (await command.load())(rest, guarded, { env, cwd, io: guarded });
  } catch (error) {
    const failure = describeFailure(error);
    guarded.err(`dida-todo: ${failure.message}\n`);
    if (rest.includes('--json')) printJson(guarded, { ok: false, exitCode: failure.exitCode, error: { code: failure.code, message: failure.message } });
    return failure.exitCode;
  }
}
