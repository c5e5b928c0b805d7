// `dida-todo queue`: the Works of the directory's bound list in the order an agent takes them, and for each one that is
// not executable here why not. It never claims a Work or writes a person's task (it reads the list as a session does).
import { helpText, parseArgs, type FlagSpec } from '../cli-args';
import type { CliIo } from '../cli-io';
import type { CliKey, CliText } from '../cli-locale';
import { CliFailure, createStyle, EXIT, printJson, withProgress, type Style } from '../cli-output';
import { connect, CWD_FLAG, explainRejection, globalOptions, GLOBAL_FLAGS, openCliRuntime, targetDir, type CliContext } from '../cli-runtime';
import { displayWidth, fitDisplay, padDisplay, safeText } from '../terminal-text';
import { isWorkError } from '../../core/work/engine-context';
import { getLocale } from '../../core/text/locale';
import { personQueue, type PersonQueueEntry } from '../../core/engine/queue-view';
import { formatTokens, totalTokens } from '../../core/usage/usage';
import type { Usage } from '../../core/usage/usage-schema';
import { normaliseRouteTag, routeFor } from '../../core/queue/route-tags';
import { WorkEngine } from '../../core/engine/work-engine';
import { findBinding } from '../../store/config-bindings';

const FLAGS: Record<string, FlagSpec> = { ...CWD_FLAG, ...GLOBAL_FLAGS };

/** Widest title column (terminal columns); longer titles are shortened with `…`. */
const TITLE_COLUMNS = 40;

/** Why a Work is not executable here, as `--json` names it (stable for scripts). */
export type QueueWhy = 'draft' | 'scheduled' | 'waiting' | 'held' | 'routed' | 'settled' | 'closed';

export function whyOf(entry: PersonQueueEntry): QueueWhy | null {
  switch (entry.reason) {
    case undefined:
      return null;
    case 'draft':
      return 'draft';
    case 'time_gate':
      return 'scheduled';
    case 'waiting_for_human':
      return 'waiting';
    case 'claimed':
      return 'held';
    case 'routed':
      return 'routed';
    case 'settled':
      return 'settled';
    case 'closed':
      return 'closed';
  }
}

export async function queueCommand(argv: readonly string[], io: CliIo, ctx: CliContext): Promise<number> {
  const { t } = ctx.text;
  const args = parseArgs(argv, FLAGS, 'queue', ctx.text);
  if (args.flags.help) {
    io.out(helpText('dida-todo queue [--cwd dir]', t('cli.queue.summary'), FLAGS, ctx.text));
    return EXIT.ok;
  }
  if (args.positionals.length > 0) io.fail(t('cli.common.noArguments', { command: 'queue', arg: args.positionals[0] as string }));
  const options = globalOptions(args.flags, ctx);
  const dir = await targetDir(args.flags, ctx);
  const runtime = openCliRuntime(ctx, options);
  const config = await runtime.config.read();
  const binding = findBinding(config, dir);
  if (!binding) throw new CliFailure(EXIT.notBound, 'not_bound', t('cli.status.notBound', { dir }));
  const { gateway, source, endpoint } = await connect(runtime, ctx, options);
  const queue = await withProgress(io, t('cli.queue.progress'), async () => {
    const timeZone = (await gateway.getPreference()).timeZone || Intl.DateTimeFormat().resolvedOptions().timeZone;
    const engine = new WorkEngine({
      gateway,
      state: runtime.state,
      locks: runtime.locks,
      now: () => Date.now(),
      locale: getLocale(config.locale ?? 'zh'),
      timeZone,
      hostLabel: config.hostLabel ?? runtime.hostLabel,
      log: (line) => io.err(`[dida-todo] ${line}\n`),
    });
    return personQueue(engine, binding.projectId, { ...(routeFor(config, binding) ? { route: routeFor(config, binding) } : {}), readHolders: true });
  }).catch((error: unknown) => {
    // A bound list that was deleted or archived: the directory is not bound to an open list (as `status` says).
    if (isWorkError(error) && (error.code === 'list_missing' || error.code === 'list_closed')) {
      throw new CliFailure(EXIT.notBound, error.code, safeText(error.forPeople ?? error.message));
    }
    throw explainRejection(error, source, ctx, endpoint);
  });
  const tag = binding.tag ? normaliseRouteTag(binding.tag) : null;
  if (options.json) {
    printJson(io, {
      ok: true,
      exitCode: EXIT.ok,
      cwd: dir,
      binding: { cwd: binding.cwd, projectId: binding.projectId, label: binding.label ?? null, tag },
      executable: queue.executable,
      works: queue.entries.map((e) => ({
        position: e.position ?? null,
        key: e.key,
        taskId: e.taskId,
        title: e.title,
        priority: e.priority,
        level: e.level,
        executable: e.position !== undefined,
        why: whyOf(e),
        day: e.day ?? null,
        gate: e.gate ?? null,
        routedTo: e.routedTo ?? null,
        holder: e.holder ? { host: e.holder.host, session: e.holder.session ?? null } : null,
        paused: e.paused ?? false,
        current: e.current ?? false,
        answered: e.answered ?? false,
        asking: e.asking ?? null,
        steps: e.steps,
        tags: e.tags,
        usage: usageJson(e.usage),
      })),
    });
    return EXIT.ok;
  }
  const style = createStyle(io, ctx.env, false);
  const list = `"${safeText(binding.label ?? binding.projectId)}"`;
  const head = t('cli.queue.heading', { list: style.bold(list), dir: binding.cwd, tag: tag ? ` #${safeText(tag)}` : '' });
  io.out(`${head}\n${t('cli.queue.counts', { executable: queue.executable, open: queue.entries.length })}\n`);
  if (queue.entries.length === 0) {
    io.out(`${t('cli.queue.empty')}\n`);
    return EXIT.ok;
  }
  printTable(io, style, queue.entries, ctx.text);
  return EXIT.ok;
}

/** A Work's usage as numbers for scripts (null before its first model answer). */
export function usageJson(usage: Usage | undefined) {
  if (!usage) return null;
  const { requests, inputTokens, outputTokens, cacheReadTokens, ms, continuations, continuedRequests, continuedTokens } = usage;
  return { requests, inputTokens, outputTokens, cacheReadTokens, tokens: totalTokens(usage), ms, continuations, continuedRequests, continuedTokens };
}

const LEVEL_KEYS: Record<PersonQueueEntry['level'], CliKey> = {
  none: 'cli.queue.level.none',
  low: 'cli.queue.level.low',
  medium: 'cli.queue.level.medium',
  high: 'cli.queue.level.high',
};

/** Why the Work is not executable here, in the person's language (Dida text in it made terminal-safe). */
export function whyText(entry: PersonQueueEntry, text: CliText): string {
  const { t } = text;
  if (entry.current && (entry.reason === undefined || entry.reason === 'claimed')) return t('cli.queue.why.current');
  if (entry.asking && entry.reason !== undefined) return t('cli.queue.why.asking', { number: entry.asking.number, text: safeText(entry.asking.text) });
  if (entry.answered && entry.reason !== undefined && entry.reason !== 'claimed') return t('cli.queue.why.answered');
  switch (entry.reason) {
    case undefined:
      return '';
    case 'draft':
      return t('cli.queue.why.draft');
    case 'time_gate':
      if (entry.gate === 'before_start') return t('cli.queue.why.laterToday');
      if (entry.gate === 'missed') return t('cli.queue.why.missed', { day: entry.day ?? '' });
      return t('cli.queue.why.scheduled', { day: entry.day ?? '' });
    case 'waiting_for_human':
      return t(entry.paused ? 'cli.queue.why.paused' : 'cli.queue.why.waiting');
    case 'claimed':
      if (!entry.holder) return t('cli.queue.why.heldElsewhere');
      if (!entry.holder.session) return t('cli.queue.why.heldBy', { host: safeText(entry.holder.host) });
      return t('cli.queue.why.heldBySession', { host: safeText(entry.holder.host), session: safeText(entry.holder.session) });
    case 'routed':
      return entry.routedTo ? t('cli.queue.why.routed', { tag: safeText(entry.routedTo) }) : t('cli.queue.why.routedElsewhere');
    case 'settled':
      return t('cli.queue.why.settled');
    case 'closed':
      return t('cli.queue.why.closed');
  }
}

/** One row per Work, columns aligned by display width; titles come from Dida and are terminal-safe. */
function printTable(io: CliIo, style: Style, entries: readonly PersonQueueEntry[], text: CliText): void {
  const { t } = text;
  const rows = entries.map((e) => ({
    place: e.position !== undefined ? String(e.position) : '–',
    level: t(LEVEL_KEYS[e.level]),
    title: fitDisplay(safeText(e.title), TITLE_COLUMNS).text,
    steps: e.steps.total > 0 ? `${e.steps.settled}/${e.steps.total}` : '',
    used: e.usage && e.usage.requests > 0 ? t('cli.queue.usage', { tokens: formatTokens(getLocale(text.id), totalTokens(e.usage)), requests: e.usage.requests }) : '',
    why: whyText(e, text),
    executable: e.position !== undefined,
  }));
  const header = { place: '#', level: t('cli.queue.col.priority'), title: t('cli.queue.col.work'), steps: t('cli.queue.col.steps'), used: t('cli.queue.col.usage'), why: t('cli.queue.col.why') };
  const width = (key: 'place' | 'level' | 'title' | 'steps' | 'used') => Math.max(displayWidth(header[key]), ...rows.map((r) => displayWidth(r[key])));
  const w = { place: width('place'), level: width('level'), title: width('title'), steps: width('steps'), used: width('used') };
  const line = (r: { place: string; level: string; title: string; steps: string; used: string; why: string }) =>
    `${padDisplay(r.place, w.place)}  ${padDisplay(r.level, w.level)}  ${padDisplay(r.title, w.title)}  ${padDisplay(r.steps, w.steps)}  ${padDisplay(r.used, w.used)}  ${r.why}`.trimEnd();
  io.out(`${style.dim(line(header))}\n`);
  for (const r of rows) {
    const shown = line(r);
    io.out(`${r.executable ? shown : style.dim(shown)}\n`);
  }
}
