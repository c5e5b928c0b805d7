// `dida-todo lists`: the account's lists with their ids, archived flag and the directories bound to them.
import { helpText, parseArgs, type FlagSpec } from '../cli-args';
import type { CliIo } from '../cli-io';
import { createStyle, EXIT, printJson, withProgress } from '../cli-output';
import { connect, explainRejection, globalOptions, GLOBAL_FLAGS, openCliRuntime, type CliContext } from '../cli-runtime';

const FLAGS: Record<string, FlagSpec> = { ...GLOBAL_FLAGS };

export async function listsCommand(argv: readonly string[], io: CliIo, ctx: CliContext): Promise<number> {
  const args = parseArgs(argv, FLAGS, 'lists');
  if (args.flags.help) {
    io.out(helpText('dida-todo lists', "Shows the account's Dida lists (name, id, archived) and which directories are bound to each.", FLAGS));
    return EXIT.ok;
  }
  if (args.positionals.length > 0) io.fail(`\`dida-todo lists\` takes no arguments, got "${args.positionals[0]}".`);
  const options = globalOptions(args.flags, ctx);
  const runtime = openCliRuntime(ctx, options);
  const config = await runtime.config.read();
  const { gateway, source } = await connect(runtime, ctx, options);
  const projects = await withProgress(io, 'Reading your Dida lists', () => gateway.listProjects()).catch((error: unknown) => {
    throw explainRejection(error, source, ctx);
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
    printJson(io, { ok: true, lists, missingLists: orphans.map((b) => ({ cwd: b.cwd, projectId: b.projectId, label: b.label ?? null })) });
    return EXIT.ok;
  }
  const style = createStyle(io, ctx.env, false);
  if (lists.length === 0) io.out('This account has no lists yet; `dida-todo bind <name>` creates one.\n');
  const width = Math.min(40, Math.max(4, ...lists.map((l) => l.name.length)));
  for (const list of lists) {
    const flag = list.archived ? style.warn(' [archived]') : '';
    const bound = list.boundDirs.length > 0 ? `  ← ${list.boundDirs.join(', ')}` : '';
    io.out(`${style.bold(list.name.padEnd(width))}  ${style.dim(list.id)}${flag}${bound}\n`);
  }
  for (const b of orphans) {
    io.out(style.bad(`Bound list missing: ${b.cwd} → "${b.label ?? b.projectId}" (${b.projectId}) no longer exists; run \`dida-todo bind\` there again.\n`));
  }
  return EXIT.ok;
}
