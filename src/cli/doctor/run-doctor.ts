// Runs the doctor's checks concurrently over one shared context and keeps the results in report order.
import os from 'node:os';
import path from 'node:path';
import { describeFailure } from '../cli-output';
import { simulatorDownMessage } from '../sim-address';
import { endpointFrom, findToken, quickGateway, type CliContext, type GlobalOptions } from '../cli-runtime';
import type { DidaTodoConfig } from '../../store/config-schema';
import type { Runtime } from '../../wiring/runtime';
import type { CheckResult, DoctorCheck, DoctorConnection, DoctorContext } from './doctor-types';
import { probeDsh, type DshProbe } from './dsh-probe';

function once<T>(fn: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => (pending ??= fn());
}

export interface DoctorSetup {
  cli: CliContext;
  runtime: Runtime;
  options: GlobalOptions;
  dir: string;
  profile: string;
}

/** The shared facts, each computed once. Close the returned `close` when done (it closes the gateway). */
export function doctorContext(setup: DoctorSetup): { ctx: DoctorContext; close(): Promise<void> } {
  const { cli, runtime, options } = setup;
  const config = once(async (): Promise<{ config?: DidaTodoConfig; error?: unknown }> => {
    try {
      return { config: await runtime.config.read() };
    } catch (error) {
      return { error };
    }
  });
  const dsh = once((): Promise<DshProbe> => probeDsh(cli.env, setup.profile));
  let opened: DoctorConnection | undefined;
  const connection = once(async (): Promise<DoctorConnection> => {
    const endpoint = endpointFrom(options, (await config()).config);
    try {
      const found = await findToken(runtime, cli.env);
      if (!found) return (opened = { endpoint });
      cli.io.hide(found.token);
      const { token, ...source } = found;
      const gateway = quickGateway(token, endpoint);
      opened = { endpoint, source, gateway };
      try {
        opened.projects = await gateway.listProjects();
      } catch (error) {
        opened.failure = describeFailure(error, cli.text);
        const down = await simulatorDownMessage(error, endpoint.baseUrl, runtime.paths.stateDir, cli.text, cli.env.HOME || undefined);
        if (down) opened.simulatorDown = down;
        delete opened.gateway;
        await gateway.close();
      }
      return opened;
    } catch (error) {
      return (opened = { endpoint, failure: describeFailure(error, cli.text) });
    }
  });
  const dshHome = cli.env.DSH_HOME?.trim() ? cli.env.DSH_HOME.trim() : '~/.dsh';
  const dshHomeDir = cli.env.DSH_HOME?.trim() || path.join(cli.env.HOME || os.homedir(), '.dsh');
  const ctx: DoctorContext = { text: cli.text, env: cli.env, dir: setup.dir, profile: setup.profile, dshHome, dshHomeDir, paths: runtime.paths, config, dsh, connection };
  return {
    ctx,
    close: async () => {
      await opened?.gateway?.close();
    },
  };
}

/** Runs every check at once; a check that throws becomes a `fail` line instead of ending the report. */
export async function runChecks(checks: readonly DoctorCheck[], ctx: DoctorContext): Promise<CheckResult[]> {
  const settled = await Promise.all(
    checks.map((check) =>
      check(ctx).catch((error: unknown): CheckResult[] => [
        { id: check.name || 'check', status: 'fail', title: check.name || 'check', detail: describeFailure(error, ctx.text).message },
      ]),
    ),
  );
  return settled.flat();
}
