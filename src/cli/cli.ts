// `dida-todo` command line: dispatches to one module per command.
import { UsageError } from './cli-args';
import { processIo, type CliIo } from './cli-io';

type Command = (argv: readonly string[], io: CliIo) => Promise<number>;

const COMMANDS: Record<string, { summary: string; load: () => Promise<Command> }> = {
  sim: { summary: 'Run a local Dida365 simulator.', load: async () => (await import('./commands/sim')).simCommand },
};

const USAGE = `Usage: dida-todo <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(10)}${c.summary}`)
  .join('\n')}

Run \`dida-todo <command> --help\` for the options of a command.
`;

export async function main(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out(USAGE);
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS[name];
  try {
    if (!command) throw new UsageError(`Unknown command "${name}"; run \`dida-todo --help\` to see the commands.`);
    return await (await command.load())(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`dida-todo: ${error.message}\n`);
      return 2;
    }
    io.err(`dida-todo: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

