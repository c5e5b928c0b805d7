// `dida-todo sim`: runs the Dida simulator in the foreground until interrupted, prints how to point dida-todo and
// dsh at it, and with --use does that for the person (undone by `dida-todo login` to real Dida).
import path from 'node:path';
import { helpText, intFlag, parseArgs, type FlagSpec } from '../cli-args';
import type { CliIo } from '../cli-io';
import { claimInterrupt } from '../cli-interrupt';
import { CliFailure, createStyle, EXIT } from '../cli-output';
import { globalOptions, GLOBAL_FLAGS, openCliRuntime, stringFlag, type CliContext } from '../cli-runtime';
import { saveTokenAndEndpoint } from '../credentials-save';
import { addressFileFor, readSavedAddress, simulatorAnswers, writeSavedAddress, writeSimRecord } from '../sim-address';
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

  // With --data, the port and token of the last run are kept beside the data file: a restart comes back on the same
  // address, so dida-todo and a running dsh keep working. --port and --token win (and are kept from then on).
  const addressFile = dataFile ? addressFileFor(path.resolve(ctx.cwd, dataFile)) : undefined;
  const last = addressFile ? await readSavedAddress(addressFile) : {};
  if (addressFile && last.problem) io.err(`dida-todo: ${t('cli.sim.addressUnreadable', { file: displayPath(addressFile, ctx.env.HOME || undefined), problem: last.problem })}\n`);
  const usePort = port ?? last.saved?.port;
  const useToken = token ?? last.saved?.token;
  const { startSimulator } = await import('../../sim/simulator');
  // The page speaks the configured language (config.yaml's `locale`, else Chinese like the bundle); a broken file is not this command's business.
  const pageLocale = (await runtime.config.read().catch(() => undefined))?.locale ?? 'zh';
  const sim = await startSimulator({ pageLocale, ...(usePort !== undefined ? { port: usePort } : {}), ...(useToken ? { token: useToken } : {}), ...(dataFile ? { dataFile: path.resolve(ctx.cwd, dataFile) } : {}) }).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EADDRINUSE') throw error;
    const url = `http://127.0.0.1:${usePort ?? 0}/open/v1`;
    if (useToken && (await simulatorAnswers(usePort ?? 0, useToken))) throw new CliFailure(EXIT.failure, 'sim_running', t('cli.sim.alreadyRunning', { url }));
    if (port === undefined && addressFile) throw new CliFailure(EXIT.failure, 'port_in_use', t('cli.sim.savedPortInUse', { port: usePort ?? 0, file: displayPath(addressFile, ctx.env.HOME || undefined) }));
    throw new CliFailure(EXIT.failure, 'port_in_use', t('cli.sim.portInUse', { port: usePort ?? 0 }));
  });
  const sameAddress = last.saved !== undefined && sim.port === last.saved.port && sim.token === last.saved.token;
  try {
    if (addressFile) await writeSavedAddress(addressFile, { port: sim.port, token: sim.token });
    await writeSimRecord(runtime.paths.stateDir, { baseUrl: sim.baseUrl, dataFile: dataFile ? path.resolve(ctx.cwd, dataFile) : null });
  } catch (error) {
    await sim.close();
    throw error;
  }
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
  if (options.json) io.out(`${JSON.stringify({ baseUrl: sim.baseUrl, token: sim.token, pageUrl: sim.pageUrl, used: use, configFile: runtime.paths.configFile, addressFile: addressFile ?? null, sameAddress })}\n`);
  else {
    const style = createStyle(io, ctx.env, false);
    io.out(`${style.good(t('cli.sim.listening', { url: sim.baseUrl }))}\n`);
    io.out(`${t('cli.sim.token', { token: sim.token })}\n`);
    io.out(`${t('cli.sim.page')}\n    ${sim.pageUrl}\n`);
    if (sameAddress && addressFile) io.out(`${style.dim(t('cli.sim.sameAddress', { file: displayPath(addressFile, home) }))}\n`);
    else if (addressFile) io.out(`${style.dim(t('cli.sim.addressKept', { file: displayPath(addressFile, home) }))}\n`);
    io.out('\n');
    if (use) {
      io.out(`${t('cli.sim.used', { config: displayPath(runtime.paths.configFile, home), credentials: displayPath(runtime.paths.credentialsFile, home) })}\n`);
      // On the same address and token a running dsh keeps working; only a new address needs its restart.
      if (!(sameAddress && addressFile)) io.out(`${t('cli.sim.restartDsh')}\n    dsh --profile web\n`);
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
