// `dida-todo bind`: binds a directory to a Dida list by name (created when missing) or by id.
import { helpText, parseArgs, UsageError, type FlagSpec } from '../cli-args';
import type { CliIo } from '../cli-io';
import { createStyle, EXIT, printJson, withProgress } from '../cli-output';
import { connect, CWD_FLAG, explainRejection, globalOptions, GLOBAL_FLAGS, openCliRuntime, stringFlag, targetDir, type CliContext } from '../cli-runtime';
import { safeText } from '../terminal-text';
import { bindList, type BindOptions, type BindTarget } from '../../core/bindings';
import { isRouteTag } from '../../core/route-tags';
import { findBinding } from '../../store/config-store';
import { MAX_TITLE_LENGTH } from '../../core/text-guard';

const FLAGS: Record<string, FlagSpec> = {
  id: { type: 'string', valueName: 'id', description: 'cli.bind.flag.id' },
  tag: { type: 'string', valueName: 'tag', description: 'cli.bind.flag.tag' },
  'no-tag': { type: 'boolean', description: 'cli.bind.flag.noTag' },
  ...CWD_FLAG,
  ...GLOBAL_FLAGS,
};

export async function bindCommand(argv: readonly string[], io: CliIo, ctx: CliContext): Promise<number> {
  const { t } = ctx.text;
  const args = parseArgs(argv, FLAGS, 'bind', ctx.text);
  if (args.flags.help) {
    io.out(helpText('dida-todo bind "<list name>" [--tag tag] [--cwd dir]  |  dida-todo bind --id <id> [--tag tag] [--cwd dir]', t('cli.bind.summary'), FLAGS, ctx.text));
    return EXIT.ok;
  }
  const id = stringFlag(args.flags, 'id', ctx.text);
  let target: BindTarget;
  if (id !== undefined) {
    if (args.positionals.length > 0) io.fail(t('cli.bind.nameOrId'));
    target = { id: id.trim() };
  } else {
    if (args.positionals.length === 0) io.fail(t('cli.bind.needName'));
    if (args.positionals.length > 1) io.fail(t('cli.bind.oneName', { name: args.positionals.join(' ') }));
    const name = (args.positionals[0] as string).trim();
    if (name === '') io.fail(t('cli.bind.emptyName'));
    // Dida list names dida-todo creates or matches are at most MAX_TITLE_LENGTH characters; never cut one silently.
    if (name.length > MAX_TITLE_LENGTH) throw new UsageError(t('cli.bind.tooLong', { length: name.length, max: MAX_TITLE_LENGTH }));
    target = { name };
  }
  const tagFlag = stringFlag(args.flags, 'tag', ctx.text);
  if (tagFlag !== undefined && args.flags['no-tag']) throw new UsageError(t('cli.bind.tagOrNoTag'));
  if (tagFlag !== undefined && !isRouteTag(tagFlag)) throw new UsageError(t('cli.bind.badTag', { tag: safeText(tagFlag) }));
  const bindOptions: BindOptions = tagFlag !== undefined ? { tag: tagFlag } : args.flags['no-tag'] ? { tag: null } : {};
  const options = globalOptions(args.flags, ctx);
  const dir = await targetDir(args.flags, ctx);
  const runtime = openCliRuntime(ctx, options);
  const { gateway, source, endpoint } = await connect(runtime, ctx, options);
  const result = await withProgress(io, t('cli.bind.progress'), () => bindList(gateway, runtime.config, dir, target, bindOptions)).catch((error: unknown) => {
    throw explainRejection(error, source, ctx, endpoint);
  });
  const tag = findBinding(await runtime.config.read(), dir)?.tag;
  if (options.json) {
    printJson(io, { ok: true, cwd: result.binding.cwd, projectId: result.project.id, name: result.project.name, created: result.created, tag: tag ?? null, baseUrl: endpoint.baseUrl });
    return EXIT.ok;
  }
  const style = createStyle(io, ctx.env, false);
  const vars = { dir: result.binding.cwd, name: style.bold(`"${safeText(result.project.name)}"`), id: safeText(result.project.id) };
  io.out(`${style.good(t('cli.bind.bound'))} ${t(result.created ? 'cli.bind.createdLine' : 'cli.bind.line', vars)}\n`);
  if (tag) io.out(`${t('cli.bind.tagLine', { tag: safeText(tag) })}\n`);
  return EXIT.ok;
}
