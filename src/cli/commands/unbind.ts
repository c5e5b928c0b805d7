// `dida-todo unbind`: removes the binding of exactly one directory.
import { helpText, parseArgs, type FlagSpec } from '../cli-args';
import type { CliIo } from '../cli-io';
import { CliFailure, createStyle, EXIT, printJson } from '../cli-output';
import { CWD_FLAG, globalOptions, GLOBAL_FLAGS, openCliRuntime, targetDir, type CliContext } from '../cli-runtime';
import { safeText } from '../terminal-text';
import { resolveBinding, unbindList } from '../../core/queue/bindings';

const FLAGS: Record<string, FlagSpec> = { ...CWD_FLAG, ...GLOBAL_FLAGS };

export async function unbindCommand(argv: readonly string[], io: CliIo, ctx: CliContext): Promise<number> {
  const { t } = ctx.text;
  const args = parseArgs(argv, FLAGS, 'unbind', ctx.text);
  if (args.flags.help) {
    io.out(helpText('dida-todo unbind [--cwd dir]', t('cli.unbind.summary'), FLAGS, ctx.text));
    return EXIT.ok;
  }
  if (args.positionals.length > 0) io.fail(t('cli.unbind.noArguments', { arg: args.positionals[0] as string }));
  const options = globalOptions(args.flags, ctx);
  const dir = await targetDir(args.flags, ctx, false);
  const runtime = openCliRuntime(ctx, options);
  const covering = await resolveBinding(runtime.config, dir);
  if (!covering) throw new CliFailure(EXIT.notBound, 'not_bound', t('cli.unbind.notBound', { dir }));
  if (covering.cwd !== dir) throw new CliFailure(EXIT.notBound, 'not_bound', t('cli.unbind.inherited', { dir, parent: covering.cwd }));
  const removed = await unbindList(runtime.config, dir);
  if (!removed) throw new CliFailure(EXIT.notBound, 'not_bound', t('cli.unbind.notBound', { dir }));
  if (options.json) {
    printJson(io, { ok: true, cwd: removed.cwd, projectId: removed.projectId, label: removed.label ?? null });
    return EXIT.ok;
  }
  const style = createStyle(io, ctx.env, false);
  io.out(`${style.good(t('cli.unbind.done'))} ${t('cli.unbind.line', { dir: removed.cwd, name: safeText(removed.label ?? removed.projectId), id: safeText(removed.projectId) })}\n`);
  return EXIT.ok;
}
