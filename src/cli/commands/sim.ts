// `dida-todo sim`: runs the Dida simulator in the foreground until interrupted.
import { helpText, intFlag, parseArgs, type FlagSpec } from '../cli-args';
import type { CliIo } from '../cli-io';

const FLAGS: Record<string, FlagSpec> = {
  port: { type: 'string', valueName: 'port', description: 'Port on 127.0.0.1 (default: a free one).' },
  data: { type: 'string', valueName: 'file', description: 'Keep the simulated Dida in this JSON file.' },
  token: { type: 'string', valueName: 'token', description: 'Bearer token to accept (default: a random one).' },
};

export async function simCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const args = parseArgs(argv, FLAGS, 'sim');
  if (args.flags.help) {
    io.out(helpText('dida-todo sim [--port N] [--data file] [--token T]', 'Runs a local Dida365 simulator for trying dida-todo without an account.', FLAGS));
    return 0;
  }
  if (args.positionals.length > 0) io.fail(`\`dida-todo sim\` takes no arguments, got "${args.positionals[0]}".`);
  const port = intFlag(args.flags, 'port', 0, 65_535);
  const token = typeof args.flags.token === 'string' ? args.flags.token : undefined;
  const dataFile = typeof args.flags.data === 'string' ? args.flags.data : undefined;
  const { startSimulator } = await import('../../sim/simulator');
  const sim = await startSimulator({ ...(port !== undefined ? { port } : {}), ...(token ? { token } : {}), ...(dataFile ? { dataFile } : {}) });
  if (args.flags.json) io.out(`${JSON.stringify({ baseUrl: sim.baseUrl, token: sim.token })}\n`);
  else {
    io.out(`Dida simulator listening at ${sim.baseUrl}\n`);
    io.out(`Token: ${sim.token}\n`);
    io.out(`Try:   curl -H "Authorization: Bearer ${sim.token}" ${sim.baseUrl}/project\n`);
    io.out('Press Ctrl+C to stop.\n');
  }
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await sim.close();
  return 0;
}
