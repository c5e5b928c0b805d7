// `dida-todo bind`: binds a directory to a Dida list by name (created when missing) or by id; refuses a name that
// looks like a typo of an open list, and the home folder or `/`, unless told otherwise.
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { helpText, parseArgs, UsageError, type FlagSpec } from '../cli-args';
import type { CliIo } from '../cli-io';
import { CliFailure, createStyle, EXIT, printJson, withProgress } from '../cli-output';
import { connect, CWD_FLAG, explainDidaFailure, globalOptions, GLOBAL_FLAGS, openCliRuntime, stringFlag, targetDir, type CliContext } from '../cli-runtime';
import { nearListNames } from '../../core/text/near-names';
import { safeText } from '../terminal-text';
import { bindList, type BindOptions, type BindTarget } from '../../core/queue/bindings';
import type { DidaGateway } from '../../dida/dida-gateway';
import type { Project } from '../../dida/types';
import { isRouteTag } from '../../core/queue/route-tags';
import { findBinding } from '../../store/config-bindings';
import { MAX_TITLE_LENGTH, sanitizeForDida } from '../../core/text/text-guard';

const FLAGS: Record<string, FlagSpec> = {
  id: { type: 'string', valueName: 'id', description: 'cli.bind.flag.id' },
  tag: { type: 'string', valueName: 'tag', description: 'cli.bind.flag.tag' },
  'no-tag': { type: 'boolean', description: 'cli.bind.flag.noTag' },
  create: { type: 'boolean', description: 'cli.bind.flag.create' },
  force: { type: 'boolean', description: 'cli.bind.flag.force' },
  ...CWD_FLAG,
  ...GLOBAL_FLAGS,
};

export async function bindCommand(argv: readonly string[], io: CliIo, ctx: CliContext): Promise<number> {
  const { t } = ctx.text;
  const args = parseArgs(argv, FLAGS, 'bind', ctx.text);
  if (args.flags.help) {
    io.out(helpText('dida-todo bind "<list name>" [--create] [--tag tag] [--cwd dir]  |  dida-todo bind --id <id> [--tag tag] [--cwd dir]', t('cli.bind.summary'), FLAGS, ctx.text));
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
  if (args.flags.create === true) bindOptions.allowNearName = true;
  const options = globalOptions(args.flags, ctx);
  const dir = await targetDir(args.flags, ctx);
  if (args.flags.force !== true) await refuseWideFolder(dir, ctx);
  const runtime = openCliRuntime(ctx, options);
  const { gateway, source, endpoint } = await connect(runtime, ctx, options);
  const result = await withProgress(io, t('cli.bind.progress'), async () => {
    // One read of the lists serves the typo check and the binding, so both see the same lists.
    const projects = await gateway.listProjects();
    if ('name' in target && args.flags.create !== true) refuseNearName(target.name, projects, ctx);
    return bindList(withLists(gateway, projects), runtime.config, dir, target, bindOptions);
  }).catch(async (error: unknown) => {
    throw await explainDidaFailure(error, source, ctx, endpoint, runtime.paths.stateDir);
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

/**
 * Binding the home folder or `/` would bind every directory below it; refused (exit 2, before Dida is asked) unless
 * --force is given. Symbolic links are followed on both sides.
 */
async function refuseWideFolder(dir: string, ctx: CliContext): Promise<void> {
  const real = await realpath(dir).catch(() => dir);
  const home = ctx.env.HOME?.trim() ? await realpath(path.resolve(ctx.env.HOME)).catch(() => path.resolve(ctx.env.HOME as string)) : undefined;
  const which = real === path.parse(real).root ? 'cli.bind.rootFolder' : home !== undefined && real === home ? 'cli.bind.homeFolder' : undefined;
  if (which) throw new UsageError(ctx.text.t(which, { dir }));
}

/**
 * A name no open list has exactly, but that is the same as an open list's name after normalisation (case, width,
 * spaces, punctuation) or within a small edit of it, is taken for a typo: refused with the near names, unless
 * --create says a new list is meant. Names far from every list create a new list, as always.
 */
function refuseNearName(typed: string, projects: readonly Project[], ctx: CliContext): void {
  const name = sanitizeForDida(typed, { maxLength: MAX_TITLE_LENGTH, singleLine: true });
  const open = projects.filter((p) => !p.closed).map((p) => p.name);
  if (open.includes(name)) return;
  const near = nearListNames(name, open).slice(0, 3);
  if (near.length === 0) return;
  const names = near.map((n) => `「${safeText(n)}」`).join(ctx.text.t('cli.bind.or'));
  throw new CliFailure(EXIT.usage, 'list_near_miss', ctx.text.t('cli.bind.nearName', { name: safeText(name), names }));
}

/** The gateway, answering listProjects with lists already read (everything else goes to Dida). */
function withLists(gateway: DidaGateway, projects: Project[]): DidaGateway {
  return new Proxy(gateway, {
    get(target, prop) {
      if (prop === 'listProjects') return async () => projects;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
