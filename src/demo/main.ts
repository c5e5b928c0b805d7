// Entry of `npm run demo` (scripts/demo.mjs bundles this file with esbuild and calls demoMain).
import { DemoListError, realBackend, simulatorBackend, type DemoBackend } from './demo-backend';
import { DEMO_USAGE, DemoUsageError, parseDemoArgs, type DemoOptions } from './demo-args';
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
  /** The clone the demo runs from (default: found from this module). */
  repoRoot?: string;
}

/** Runs the demo; returns the exit code (0 ok, 1 something failed, 2 usage). Nothing is started before the arguments are valid. */
export async function demoMain(argv: readonly string[], io: DemoMainIo = processIo, env: NodeJS.ProcessEnv = process.env, deps: DemoMainDeps = {}): Promise<number> {
  let options: DemoOptions;
  try {
    options = parseDemoArgs(argv, env);
  } catch (error) {
    if (error instanceof DemoUsageError) {
      io.err(`demo: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  if (options.help) {
    io.out(DEMO_USAGE);
    return 0;
  }
  const style = demoStyle(colorEnabled(options.color, io.stdoutIsTTY, env));
  let backend: DemoBackend | undefined;
  let host: DemoHost | undefined;
  let cleaning: Promise<void> | undefined;
  const cleanup = () =>
    (cleaning ??= (async () => {
      await host?.close().catch(() => undefined);
      await backend?.close().catch(() => undefined);
    })());
  const onSignal = (signal: NodeJS.Signals) => {
    io.err(`\ndemo: ${signal}, cleaning up…\n`);
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    backend = deps.backend
      ? await deps.backend(options)
      : options.real
        ? realBackend(options.token as string, options.list as string)
        : await simulatorBackend();
    host = deps.host ? deps.host(options) : new DshDemoHost({ ...(options.apiKey ? { apiKey: options.apiKey } : {}), keep: options.keep, verbose: options.verbose });
    const outcome = await runDemo({ backend, host, io, style });
    if (options.real) io.out(`Your Dida list "${options.list}" keeps what the demo did: open Dida and have a look.\n`);
    return outcome.ok ? 0 : host.scripted ? 1 : 0;
  } catch (error) {
    if (error instanceof DemoListError) {
      io.err(`demo: ${error.message}\n`);
      return 1;
    }
    io.err(`demo: failed: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    const stopped = [backend?.kind === 'simulator' ? 'simulator stopped' : '', host?.scripted ? 'model server stopped' : '', options.keep ? 'temporary dsh home KEPT (--keep)' : 'temporary dsh home removed'].filter(Boolean);
    await cleanup();
    io.out(style.dim(`Cleaned up: ${stopped.join(', ')}; the dsh install cache is kept for next time.\n`));
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
