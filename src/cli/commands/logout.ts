// `dida-todo logout`: deletes our credentials.json (never the dida CLI's file) and says which token is still in use.
import { rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { helpText, parseArgs, type FlagSpec } from '../cli-args';
import type { CliIo } from '../cli-io';
import { CliFailure, createStyle, describeFailure, EXIT, fsFix, printJson } from '../cli-output';
import { describeSource, findToken, globalOptions, GLOBAL_FLAGS, openCliRuntime, type CliContext } from '../cli-runtime';
import { displayPath } from '../../store/paths';

const FLAGS: Record<string, FlagSpec> = { ...GLOBAL_FLAGS };

export async function logoutCommand(argv: readonly string[], io: CliIo, ctx: CliContext): Promise<number> {
  const { t } = ctx.text;
  const args = parseArgs(argv, FLAGS, 'logout', ctx.text);
  if (args.flags.help) {
    io.out(helpText('dida-todo logout', t('cli.logout.summary'), FLAGS, ctx.text));
    return EXIT.ok;
  }
  if (args.positionals.length > 0) io.fail(t('cli.common.noArguments', { command: 'logout', arg: args.positionals[0] as string }));
  const options = globalOptions(args.flags, ctx);
  const runtime = openCliRuntime(ctx, options);
  const file = runtime.paths.credentialsFile;
  const existed = await stat(file).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return false;
      throw error;
    },
  );
  if (existed) {
    await rm(file, { force: true }).catch((error: NodeJS.ErrnoException) => {
      const code = error.code ?? 'EIO';
      throw new CliFailure(EXIT.failure, 'file_not_removed', t('cli.logout.cannotRemove', { file, code, fix: fsFix(code, path.dirname(file), ctx.text) }));
    });
  }

  // What would be used now, so nobody thinks they are logged out while another token still works.
  let remaining: { source: string; file?: string; description: string } | undefined;
  let remainingProblem: string | undefined;
  try {
    const found = await findToken(runtime, ctx.env);
    if (found) {
      ctx.io.hide(found.token);
      remaining = { source: found.source, ...(found.file ? { file: found.file } : {}), description: describeSource(found, ctx.env.HOME, ctx.text) };
    }
  } catch (error) {
    remainingProblem = describeFailure(error, ctx.text).message;
  }

  const shown = displayPath(file, ctx.env.HOME || undefined);
  if (options.json) {
    printJson(io, { ok: true, removed: existed, credentialsFile: file, activeSource: remaining ?? null, ...(remainingProblem ? { activeSourceProblem: remainingProblem } : {}) });
    return EXIT.ok;
  }
  const style = createStyle(io, ctx.env, false);
  io.out(existed ? `${style.good(t('cli.logout.done'))} ${t('cli.logout.removed', { file: shown })}\n` : `${t('cli.logout.nothing', { file: shown })}\n`);
  if (remaining) {
    const how = remaining.source === 'env' ? t('cli.logout.howEnv') : remaining.source === 'dida-cli' ? t('cli.logout.howDidaCli') : t('cli.logout.howOther');
    io.out(`${style.warn(t('cli.logout.stillActive', { source: remaining.description, how }))}\n`);
  } else if (remainingProblem) {
    io.out(`${style.warn(t('cli.logout.otherProblem', { problem: remainingProblem }))}\n`);
  } else {
    io.out(`${t('cli.logout.noneLeft')}\n`);
  }
  return EXIT.ok;
}
