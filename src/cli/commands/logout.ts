// `dida-todo logout`: deletes our credentials.json (never the dida CLI's file) and says which token is still in use.
import { rm, stat } from 'node:fs/promises';
import { helpText, parseArgs, type FlagSpec } from '../cli-args';
import type { CliIo } from '../cli-io';
import { createStyle, describeFailure, EXIT, printJson } from '../cli-output';
import { describeSource, findToken, globalOptions, GLOBAL_FLAGS, openCliRuntime, type CliContext } from '../cli-runtime';
import { displayPath } from '../../store/paths';

const FLAGS: Record<string, FlagSpec> = { ...GLOBAL_FLAGS };

export async function logoutCommand(argv: readonly string[], io: CliIo, ctx: CliContext): Promise<number> {
  const args = parseArgs(argv, FLAGS, 'logout');
  if (args.flags.help) {
    io.out(
      helpText(
        'dida-todo logout',
        'Deletes the token saved by `dida-todo login` (credentials.json). The official dida CLI\'s file is never touched;\nthe command tells you which token source is still active, if any.',
        FLAGS,
      ),
    );
    return EXIT.ok;
  }
  if (args.positionals.length > 0) io.fail(`\`dida-todo logout\` takes no arguments, got "${args.positionals[0]}".`);
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
  if (existed) await rm(file, { force: true });

  // What would be used now, so nobody thinks they are logged out while another token still works.
  let remaining: { source: string; file?: string; description: string } | undefined;
  let remainingProblem: string | undefined;
  try {
    const found = await findToken(runtime, ctx.env);
    if (found) {
      ctx.io.hide(found.token);
      remaining = { source: found.source, ...(found.file ? { file: found.file } : {}), description: describeSource(found, ctx.env.HOME) };
    }
  } catch (error) {
    remainingProblem = describeFailure(error).message;
  }

  const shown = displayPath(file, ctx.env.HOME || undefined);
  if (options.json) {
    printJson(io, { ok: true, removed: existed, credentialsFile: file, activeSource: remaining ?? null, ...(remainingProblem ? { activeSourceProblem: remainingProblem } : {}) });
    return EXIT.ok;
  }
  const style = createStyle(io, ctx.env, false);
  io.out(existed ? `${style.good('Logged out.')} Removed ${shown}.\n` : `No saved token: ${shown} does not exist.\n`);
  if (remaining) {
    const how =
      remaining.source === 'env'
        ? 'unset DIDA_TODO_TOKEN to stop using it'
        : remaining.source === 'dida-cli'
          ? 'run `dida auth logout` to remove it (dida-todo never edits that file)'
          : 'remove it to stop using it';
    io.out(style.warn(`Still active: the token from ${remaining.description}; ${how}.\n`));
  } else if (remainingProblem) {
    io.out(style.warn(`Another token source has a problem: ${remainingProblem}\n`));
  } else {
    io.out('No other Dida token is configured; dida-todo will not reach Dida until you log in again.\n');
  }
  return EXIT.ok;
}
