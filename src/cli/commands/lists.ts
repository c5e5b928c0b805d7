// `dida-todo lists`: the account's lists with their ids, archived flag and the directories bound to them.
import { helpText, parseArgs, type FlagSpec } from '../cli-args';
import type { CliIo } from '../cli-io';
import { createStyle, EXIT, printJson, withProgress } from '../cli-output';
import { connect, explainDidaFailure, globalOptions, GLOBAL_FLAGS, openCliRuntime, type CliContext } from '../cli-runtime';
import { displayWidth, fitDisplay, padDisplay, safeText } from '../terminal-text';

const FLAGS: Record<string, FlagSpec> = { ...GLOBAL_FLAGS };

/** Widest name column (terminal columns); longer names are shortened with `…` and the table says so. */
const NAME_COLUMNS = 32;

export async function listsCommand(argv: readonly string[], io: CliIo, ctx: CliContext): Promise<number> {
  const { t } = ctx.text;
  const args = parseArgs(argv, FLAGS, 'lists', ctx.text);
  if (args.flags.help) {
    io.out(helpText('dida-todo lists', t('cli.lists.summary'), FLAGS, ctx.text));
    return EXIT.ok;
  }
  if (args.positionals.length > 0) io.fail(t('cli.common.noArguments', { command: 'lists', arg: args.positionals[0] as string }));
  const options = globalOptions(args.flags, ctx);
  const runtime = openCliRuntime(ctx, options);
  const { gateway, source, endpoint, config } = await connect(runtime, ctx, options);
  const projects = await withProgress(io, t('cli.lists.progress'), () => gateway.listProjects()).catch(async (error: unknown) => {
    throw await explainDidaFailure(error, source, ctx, endpoint, runtime.paths.stateDir);
  });
  const lists = projects.map((p) => ({
    id: p.id,
    name: p.name,
    archived: p.closed === true,
    boundDirs: config.bindings.filter((b) => b.projectId === p.id).map((b) => b.cwd),
  }));
  const known = new Set(projects.map((p) => p.id));
  const orphans = config.bindings.filter((b) => !known.has(b.projectId));
  if (options.json) {
    printJson(io, { ok: true, baseUrl: endpoint.baseUrl, lists, missingLists: orphans.map((b) => ({ cwd: b.cwd, projectId: b.projectId, label: b.label ?? null })) });
    return EXIT.ok;
  }
  const style = createStyle(io, ctx.env, false);
  if (lists.length === 0) io.out(`${t('cli.lists.none')}\n`);
  // Names come from Dida: shown terminal-safe, aligned by display width (CJK and emoji take two columns).
  const shown = lists.map((list) => fitDisplay(safeText(list.name), NAME_COLUMNS));
  const width = Math.max(4, ...shown.map((s) => displayWidth(s.text)));
  lists.forEach((list, i) => {
    const name = shown[i] as { text: string; cut: boolean };
    const flag = list.archived ? style.warn(` ${t('cli.lists.archived')}`) : '';
    const bound = list.boundDirs.length > 0 ? `  ← ${list.boundDirs.join(', ')}` : '';
    io.out(`${style.bold(padDisplay(name.text, width))}  ${style.dim(safeText(list.id))}${flag}${bound}\n`);
  });
  if (shown.some((s) => s.cut)) io.out(`${style.dim(t('cli.lists.shortened', { columns: NAME_COLUMNS }))}\n`);
  for (const b of orphans) {
    io.out(`${style.bad(t('cli.lists.missing', { dir: b.cwd, name: safeText(b.label ?? b.projectId), id: safeText(b.projectId) }))}\n`);
  }
  return EXIT.ok;
}
