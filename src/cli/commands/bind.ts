// `dida-todo bind`: binds a directory to a Dida list by name (created when missing) or by id.
import { helpText, parseArgs, type FlagSpec } from '../cli-args';
import type { CliIo } from '../cli-io';
import { createStyle, EXIT, printJson, withProgress } from '../cli-output';
import { connect, CWD_FLAG, explainRejection, globalOptions, GLOBAL_FLAGS, openCliRuntime, stringFlag, targetDir, type CliContext } from '../cli-runtime';
import { bindList, type BindTarget } from '../../core/bindings';

const FLAGS: Record<string, FlagSpec> = {
  id: { type: 'string', valueName: 'id', description: 'Bind the list with this id (see `dida-todo lists`) instead of a name.' },
  ...CWD_FLAG,
  ...GLOBAL_FLAGS,
};

const SUMMARY = `Binds the directory to a Dida list. By name: the one open list with exactly that name, or a new list
when none has it; several open lists with the name are refused (bind by --id then). By id: the list must
exist and be open.`;

export async function bindCommand(argv: readonly string[], io: CliIo, ctx: CliContext): Promise<number> {
  const args = parseArgs(argv, FLAGS, 'bind');
  if (args.flags.help) {
    io.out(helpText('dida-todo bind <list name> [--cwd dir]  |  dida-todo bind --id <id> [--cwd dir]', SUMMARY, FLAGS));
    return EXIT.ok;
  }
  const id = stringFlag(args.flags, 'id');
  let target: BindTarget;
  if (id !== undefined) {
    if (args.positionals.length > 0) io.fail('Pass either a list name or --id <id>, not both.');
    target = { id: id.trim() };
  } else {
    if (args.positionals.length === 0) io.fail('Pass the name of the Dida list to bind (quote names with spaces), or --id <id>.');
    if (args.positionals.length > 1) io.fail(`Pass one list name; quote names with spaces, e.g. dida-todo bind "${args.positionals.join(' ')}".`);
    const name = (args.positionals[0] as string).trim();
    if (name === '') io.fail('The list name is empty; pass the name of the Dida list to bind.');
    target = { name };
  }
  const options = globalOptions(args.flags, ctx);
  const dir = await targetDir(args.flags, ctx, true);
  const runtime = openCliRuntime(ctx, options);
  const { gateway, source } = await connect(runtime, ctx, options);
  const result = await withProgress(io, 'Binding the list in Dida', () => bindList(gateway, runtime.config, dir, target)).catch((error: unknown) => {
    throw explainRejection(error, source, ctx);
  });
  if (options.json) {
    printJson(io, { ok: true, cwd: result.binding.cwd, projectId: result.project.id, name: result.project.name, created: result.created });
    return EXIT.ok;
  }
  const style = createStyle(io, ctx.env, false);
  io.out(
    `${style.good('Bound')} ${result.binding.cwd} → ${style.bold(`"${result.project.name}"`)} (${result.project.id})${result.created ? ' — a new Dida list was created' : ''}.\n`,
  );
  return EXIT.ok;
}

