// `dida-todo unbind`: removes the binding of exactly one directory.
import { helpText, parseArgs, type FlagSpec } from '../cli-args';
import type { CliIo } from '../cli-io';
import { CliFailure, createStyle, EXIT, printJson } from '../cli-output';
import { CWD_FLAG, globalOptions, GLOBAL_FLAGS, openCliRuntime, targetDir, type CliContext } from '../cli-runtime';
import { resolveBinding, unbindList } from '../../core/bindings';

const FLAGS: Record<string, FlagSpec> = { ...CWD_FLAG, ...GLOBAL_FLAGS };

export async function unbindCommand(argv: readonly string[], io: CliIo, ctx: CliContext): Promise<number> {
  const args = parseArgs(argv, FLAGS, 'unbind');
  if (args.flags.help) {
    io.out(helpText('dida-todo unbind [--cwd dir]', 'Removes the binding of the directory (bindings of parent directories are kept). Dida is not contacted.', FLAGS));
    return EXIT.ok;
  }
  if (args.positionals.length > 0) io.fail(`\`dida-todo unbind\` takes no arguments, got "${args.positionals[0]}"; use --cwd <dir> to name another directory.`);
  const options = globalOptions(args.flags, ctx);
  const dir = await targetDir(args.flags, ctx, false);
  const runtime = openCliRuntime(ctx, options);
  const covering = await resolveBinding(runtime.config, dir);
  if (!covering) throw new CliFailure(EXIT.notBound, 'not_bound', `${dir} is not bound to a Dida list; nothing to unbind (see \`dida-todo status\`).`);
  if (covering.cwd !== dir) {
    throw new CliFailure(
      EXIT.notBound,
      'not_bound',
      `${dir} has no binding of its own; it uses the binding of ${covering.cwd}. Run \`dida-todo unbind --cwd ${covering.cwd}\` to remove that one.`,
    );
  }
  const removed = await unbindList(runtime.config, dir);
  if (!removed) throw new CliFailure(EXIT.notBound, 'not_bound', `${dir} is not bound to a Dida list; nothing to unbind.`);
  if (options.json) {
    printJson(io, { ok: true, cwd: removed.cwd, projectId: removed.projectId, label: removed.label ?? null });
    return EXIT.ok;
  }
  const style = createStyle(io, ctx.env, false);
  io.out(`${style.good('Unbound')} ${removed.cwd} (was "${removed.label ?? removed.projectId}", ${removed.projectId}). The Dida list itself is unchanged.\n`);
  return EXIT.ok;
}
