// `dida-todo sim`: runs the Dida simulator in the foreground until interrupted, prints how to point dida-todo and
// dsh at it, and with --use does that for the person (undone by `dida-todo login` to real Dida).
import { helpText, intFlag, parseArgs, type FlagSpec } from '../cli-args';
import type { CliIo } from '../cli-io';
import { claimInterrupt } from '../cli-interrupt';
import { CliFailure, createStyle, EXIT } from '../cli-output';
import { globalOptions, GLOBAL_FLAGS, openCliRuntime, stringFlag, type CliContext } from '../cli-runtime';
import { saveTokenAndEndpoint } from '../credentials-save';
import { displayPath } from '../../store/paths';

const { 'base-url': _baseUrl, region: _region, ...FILE_FLAGS } = GLOBAL_FLAGS;

const FLAGS: Record<string, FlagSpec> = {
  port: { type: 'string', valueName: 'N', description: 'cli.sim.flag.port' },
  data: { type: 'string', valueName: 'file', description: 'cli.sim.flag.data' },
  token: { type: 'string', valueName: 'token', description: 'cli.sim.flag.token' },
  use: { type: 'boolean', description: 'cli.sim.flag.use' },
  ...FILE_FLAGS,
};

export async function simCommand(argv: readonly string[], io: CliIo, ctx: CliContext): Promise<number> {
  const { t } = ctx.text;
  const args = parseArgs(argv, FLAGS, 'sim', ctx.text);
  if (args.flags.help) {
    io.out(helpText('dida-todo sim [--port N] [--data file] [--token T] [--use]', t('cli.sim.summary'), FLAGS, ctx.text));
    return EXIT.ok;
  }
  if (args.positionals.length > 0) io.fail(t('cli.common.noArguments', { command: 'sim', arg: args.positionals[0] as string }));
  const options = globalOptions(args.flags, ctx);
  const port = intFlag(args.flags, 'port', 0, 65_535, ctx.text);
  const token = stringFlag(args.flags, 'token', ctx.text);
  const dataFile = stringFlag(args.flags, 'data', ctx.text);
  const use = args.flags.use === true;
  const runtime = openCliRuntime(ctx, options);
  // --use edits config.yaml: a broken one is refused before anything starts.
  if (use) await runtime.config.read();

  const { startSimulator } = await import('../../sim/simulator');
  const sim = await startSimulator({ ...(port !== undefined ? { port } : {}), ...(token ? { token } : {}), ...(dataFile ? { dataFile } : {}) }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'EADDRINUSE') throw new CliFailure(EXIT.failure, 'port_in_use', t('cli.sim.portInUse', { port: port ?? 0 }));
    throw error;
  });
  try {
    // What `login --base-url <sim>` with the simulator's token saves, without the check (the simulator just started).
    if (use) await saveTokenAndEndpoint(runtime, ctx, sim.token, await runtime.config.read(), (config) => ({ ...config, baseUrl: sim.baseUrl }));
  } catch (error) {
    await sim.close();
    throw error;
  }

  // Ctrl+C is handled from before the first line is printed: whoever reads "Press Ctrl+C" may press it at once.
  // Stopping the simulator is what Ctrl+C is for here: it exits 0.
  let release = () => {};
  const stopped = new Promise<void>((resolve) => {
    release = claimInterrupt(() => resolve());
  });
  const home = ctx.env.HOME || undefined;
  // One JSON line, so a script can read it and keep the simulator running.
  if (options.json) io.out(`${JSON.stringify({ baseUrl: sim.baseUrl, token: sim.token, used: use, configFile: runtime.paths.configFile })}\n`);
  else {
    const style = createStyle(io, ctx.env, false);
    io.out(`${style.good(t('cli.sim.listening', { url: sim.baseUrl }))}\n`);
    io.out(`${t('cli.sim.token', { token: sim.token })}\n\n`);
    if (use) {
      io.out(`${t('cli.sim.used', { config: displayPath(runtime.paths.configFile, home), credentials: displayPath(runtime.paths.credentialsFile, home) })}\n`);
      io.out(`${t('cli.sim.restartDsh')}\n    dsh --profile web\n`);
    } else {
      io.out(`${t('cli.sim.pointCli')}\n    echo ${sim.token} | dida-todo login --token - --base-url ${sim.baseUrl}\n`);
      io.out(`${t('cli.sim.pointDsh')}\n    dsh --profile web\n`);
      io.out(`${style.dim(t('cli.sim.orUse'))}\n`);
    }
    io.out(`${t('cli.sim.back')}\n    dida-todo login --token -\n\n`);
    io.out(`${t('cli.sim.stop')}\n`);
  }
  await stopped;
  release();
  await sim.close();
  if (use && !options.json) io.err(`${t('cli.sim.stillUsed')}\n`);
  return EXIT.ok;
}
