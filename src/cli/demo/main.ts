// Entry of `npm run demo` (scripts/demo.mjs bundles this file with esbuild and calls demoMain).
import { cliLocaleFor } from '../cli';
import { isClone } from '../commands/demo';
import { cloneInstall } from '../install-commands';
import { DemoListError, realBackend, simulatorBackend, type DemoBackend } from './demo-backend';
import { demoUsage, DemoUsageError, parseDemoArgs, type DemoOptions } from './demo-args';
import { DshDemoHost } from './demo-dsh';
import { colorEnabled, demoStyle } from './demo-print';
import { runDemo, type DemoHost, type DemoIo } from './demo-runner';

export interface DemoMainIo extends DemoIo {
  readonly stdoutIsTTY?: boolean;
}

const processIo: DemoMainIo = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  get stdoutIsTTY() {
    return process.stdout.isTTY === true;
  },
};

export interface DemoMainDeps {
  /** Builds the host (default: the real dsh). */
  host?: (options: DemoOptions) => DemoHost;
  /** Builds the Dida backend (default: simulator, or the real account with --real). */
  backend?: (options: DemoOptions) => Promise<DemoBackend>;
  /** The clone the demo runs from (scripts/demo.mjs passes it): the last step shows the install from it too. */
  repoRoot?: string;
  /** The directory config.yaml's place is relative to (default process.cwd()). */
  cwd?: string;
}

/** Runs the demo; returns the exit code (0 ok, 1 something failed, 2 usage). Nothing is started before the arguments are valid. */
export async function demoMain(argv: readonly string[], io: DemoMainIo = processIo, env: NodeJS.ProcessEnv = process.env, deps: DemoMainDeps = {}): Promise<number> {
  // The person's language, as the `dida-todo` command decides it: config.yaml's `locale`, else LANG.
  const text = await cliLocaleFor([], env, deps.cwd ?? process.cwd());
  const { t } = text;
  let options: DemoOptions;
  try {
    options = parseDemoArgs(argv, env, text);
  } catch (error) {
    if (error instanceof DemoUsageError) {
      io.err(`demo: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  if (options.help) {
    io.out(demoUsage(text));
    return 0;
  }
  const style = demoStyle(colorEnabled(options.color, io.stdoutIsTTY, env), text);
  let backend: DemoBackend | undefined;
  let host: DemoHost | undefined;
  let cleaning: Promise<void> | undefined;
  const cleanup = () =>
    (cleaning ??= (async () => {
      await host?.close().catch(() => undefined);
      await backend?.close().catch(() => undefined);
    })());
  const onSignal = (signal: NodeJS.Signals) => {
    io.err(`\ndemo: ${t('cli.demo.signal', { signal })}\n`);
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    backend = deps.backend
      ? await deps.backend(options)
      : options.real
        ? realBackend(options.token as string, options.list as string, undefined, text)
        : await simulatorBackend();
    host = deps.host ? deps.host(options) : new DshDemoHost({ ...(options.apiKey ? { apiKey: options.apiKey } : {}), keep: options.keep, verbose: options.verbose, text });
    const clone = isClone(deps.repoRoot) ? cloneInstall(deps.repoRoot as string) : undefined;
    const outcome = await runDemo({ backend, host, io, style, ...(clone ? { clone } : {}) });
    if (options.real) io.out(`${t('cli.demo.realKept', { list: options.list as string })}\n`);
    return outcome.ok ? 0 : host.scripted ? 1 : 0;
  } catch (error) {
    if (error instanceof DemoListError) {
      io.err(`demo: ${error.message}\n`);
      return 1;
    }
    io.err(`demo: ${t('cli.demo.failed', { message: error instanceof Error ? error.message : String(error) })}\n`);
    return 1;
  } finally {
    const stopped = [backend?.kind === 'simulator' ? t('cli.demo.simStopped') : '', host?.scripted ? t('cli.demo.modelStopped') : '', t(options.keep ? 'cli.demo.homeKept' : 'cli.demo.homeRemoved')].filter(Boolean);
    await cleanup();
    io.out(style.dim(`${t('cli.demo.cleanedUp', { what: stopped.join(t('cli.demo.listSeparator')) })}\n`));
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
