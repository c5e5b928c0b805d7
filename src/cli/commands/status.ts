// `dida-todo status`: token source, the endpoint in use and whether it answers, bindings, pending acceptances and
// state problems. Reads only: it never writes config, credentials or state (a damaged state file is reported, not moved).
import os from 'node:os';
import { helpText, parseArgs, type FlagSpec } from '../cli-args';
import type { CliIo } from '../cli-io';
import type { CliText } from '../cli-locale';
import { configErrorMessage, createStyle, describeFailure, EXIT, printJson, withProgress, type ExitCode, type Style } from '../cli-output';
import { CWD_FLAG, describeEndpoint, describeSource, endpointFrom, findToken, globalOptions, GLOBAL_FLAGS, openCliRuntime, quickGateway, rejectionMessage, targetDir, type CliContext, type TokenInfo } from '../cli-runtime';
import type { Endpoint } from '../../wiring/runtime';
import { simulatorDownMessage } from '../sim-address';
import { displayWidth, padDisplay, safeText } from '../terminal-text';
import { checkList } from '../../core/queue/bindings';
import { normaliseRouteTag } from '../../core/queue/route-tags';
import { workOverview, type WaitReason } from '../../core/engine/work-overview';
import { formatMinutes, formatTokens } from '../../core/usage/usage';
import { getLocale } from '../../core/text/locale';
import { usageJson } from './queue';
import { isDidaError } from '../../dida/dida-error';
import type { Project } from '../../dida/types';
import type { Binding, DidaTodoConfig } from '../../store/config-schema';
import { ConfigError } from '../../store/config-check';
import { findBinding } from '../../store/config-bindings';
import { displayPath } from '../../store/paths';
import { budgetLines, budgetStatus, type BudgetStatus } from './status-budget';
import { inspectState } from './status-state';

const FLAGS: Record<string, FlagSpec> = { ...CWD_FLAG, ...GLOBAL_FLAGS };

type ListState = 'open' | 'archived' | 'missing' | 'unknown';

interface Problem {
  severity: 'error' | 'warning';
  exitCode: ExitCode;
  code: string;
  message: string;
}

export async function statusCommand(argv: readonly string[], io: CliIo, ctx: CliContext): Promise<number> {
  const { t } = ctx.text;
  const args = parseArgs(argv, FLAGS, 'status', ctx.text);
  if (args.flags.help) {
    io.out(helpText('dida-todo status [--cwd dir]', t('cli.status.summary'), FLAGS, ctx.text));
    return EXIT.ok;
  }
  if (args.positionals.length > 0) io.fail(t('cli.status.noArguments', { arg: args.positionals[0] as string }));
  const options = globalOptions(args.flags, ctx);
  const dir = await targetDir(args.flags, ctx);
  const runtime = openCliRuntime(ctx, options);
  const problems: Problem[] = [];
  const home = ctx.env.HOME || undefined;

  // Local files first: they are shown even without a token or network. A broken config.yaml is never replaced by
  // defaults: the Dida it names is unknown, so Dida is not contacted (it might be the wrong one) and no binding is shown.
  let config: DidaTodoConfig | undefined;
  let configProblem: string | undefined;
  try {
    config = await runtime.config.read();
  } catch (error) {
    configProblem = error instanceof ConfigError ? configErrorMessage(error, ctx.text, home) : describeFailure(error, ctx.text).message;
    problems.push({ severity: 'error', exitCode: EXIT.failure, code: 'config_invalid', message: configProblem });
  }
  const endpoint = endpointFrom(options, config);
  // Without a readable config.yaml (and no --base-url/--region) nobody knows which Dida is meant.
  const endpointKnown = config !== undefined || endpoint.source === 'flag';
  const state = await inspectState(runtime.paths.stateFile, runtime.paths.stateDir, ctx.text);
  if (state.problem) problems.push({ severity: 'error', exitCode: EXIT.failure, code: 'state_invalid', message: state.problem });
  for (const leftover of state.leftovers) {
    problems.push({ severity: 'warning', exitCode: EXIT.ok, code: 'state_corrupt_copy', message: t('cli.status.corruptCopy', { file: displayPath(leftover, home) }) });
  }

  // Token.
  let token: string | undefined;
  let source: TokenInfo | undefined;
  let tokenProblem: string | undefined;
  try {
    const found = await findToken(runtime, ctx.env);
    if (found) {
      ctx.io.hide(found.token);
      const { token: value, ...rest } = found;
      token = value;
      source = rest;
      if (found.warning) problems.push({ severity: 'warning', exitCode: EXIT.ok, code: 'credentials_mode', message: t('cli.token.modeWarning', { file: found.file ?? '' }) });
    }
  } catch (error) {
    tokenProblem = describeFailure(error, ctx.text).message;
  }
  if (tokenProblem) problems.push({ severity: 'error', exitCode: EXIT.noToken, code: 'token_invalid', message: tokenProblem });
  else if (!source) problems.push({ severity: 'error', exitCode: EXIT.noToken, code: 'no_token', message: t('cli.token.none') });

  // Reachability: one GET /project, only when config.yaml says which Dida.
  let projects: Project[] | undefined;
  const reach: { checked: boolean; ok?: boolean; ms?: number; lists?: number; code?: string; message?: string } = { checked: false };
  const gateway = token && endpointKnown ? quickGateway(token, endpoint) : undefined;
  if (gateway && source) {
    const started = performance.now();
    try {
      projects = await withProgress(io, t('cli.status.contacting', { url: endpoint.baseUrl }), () => gateway.listProjects());
      Object.assign(reach, { checked: true, ok: true, ms: Math.round(performance.now() - started), lists: projects.length });
    } catch (error) {
      const ms = Math.round(performance.now() - started);
      if (isDidaError(error) && error.code === 'auth') {
        const message = rejectionMessage(source, ctx, endpoint);
        Object.assign(reach, { checked: true, ok: false, ms, code: 'auth', message });
        problems.push({ severity: 'error', exitCode: EXIT.noToken, code: 'auth', message });
      } else {
        const down = await simulatorDownMessage(error, endpoint.baseUrl, runtime.paths.stateDir, ctx.text, home);
        const failure = down !== undefined ? { code: 'network', message: down } : describeFailure(error, ctx.text);
        Object.assign(reach, { checked: true, ok: false, ms, code: failure.code, message: failure.message });
        problems.push({ severity: 'error', exitCode: EXIT.failure, code: failure.code, message: failure.message });
      }
    }
  }

  // Bindings.
  const listState = (projectId: string): ListState => {
    if (!projects) return 'unknown';
    const project = projects.find((p) => p.id === projectId);
    if (!project) return 'missing';
    return project.closed ? 'archived' : 'open';
  };
  const bindings = (config?.bindings ?? []).map((b) => ({ cwd: b.cwd, projectId: b.projectId, label: b.label ?? null, tag: b.tag ?? null, list: listState(b.projectId) }));
  const covering: Binding | undefined = config ? findBinding(config, dir) : undefined;
  let binding: { cwd: string; projectId: string; label: string | null; tag: string | null; inherited: boolean; list: ListState; message?: string } | null = null;
  if (covering) {
    binding = { cwd: covering.cwd, projectId: covering.projectId, label: covering.label ?? null, tag: covering.tag ?? null, inherited: covering.cwd !== dir, list: 'unknown' };
    if (gateway && reach.ok) {
      try {
        const health = await checkList(gateway, covering);
        if (health.ok) binding.list = 'open';
        else {
          binding.list = health.code === 'list_closed' ? 'archived' : 'missing';
          binding.message = safeText(health.message);
          problems.push({ severity: 'error', exitCode: EXIT.notBound, code: health.code, message: binding.message });
        }
      } catch (error) {
        const failure = describeFailure(error, ctx.text);
        binding.message = failure.message;
        problems.push({ severity: 'error', exitCode: failure.exitCode === EXIT.noToken ? EXIT.noToken : EXIT.failure, code: failure.code, message: failure.message });
      }
    }
  } else if (config) {
    problems.push({ severity: 'error', exitCode: EXIT.notBound, code: 'not_bound', message: t('cli.status.notBound', { dir }) });
  }

  // Works from state.
  const labelOf = (projectId: string) => config?.bindings.find((b) => b.projectId === projectId)?.label ?? projects?.find((p) => p.id === projectId)?.name ?? null;
  const works = Object.entries(state.state?.works ?? {});
  const pendingAcceptances = works
    .filter(([, w]) => w.phase === 'accepting')
    .map(([key, w]) => ({ work: key, title: w.title, projectId: w.projectId, list: labelOf(w.projectId), acceptanceTaskId: w.acceptance?.taskId ?? w.finalize?.acceptanceTaskId ?? null }));
  const finalizeErrors = works
    .filter(([, w]) => w.finalize?.lastError)
    .map(([key, w]) => ({ work: key, title: w.title, projectId: w.projectId, list: labelOf(w.projectId), phase: w.phase, lastError: w.finalize?.lastError as string, attempts: w.finalize?.attempts ?? 0 }));
  for (const f of finalizeErrors) {
    problems.push({
      severity: 'warning',
      exitCode: EXIT.ok,
      code: 'finalize_failed',
      message: ctx.text.plural('cli.status.finalizeFailed', f.attempts, { title: safeText(f.title), error: safeText(f.lastError) }),
    });
  }

  // The open Works of the directory's list: who holds each one, why it waits.
  const hostLabel = config?.hostLabel ?? os.hostname();
  const openWorks = covering && state.state ? workOverview(state.state, covering.projectId, Date.now(), hostLabel) : [];

  const exitCode = pickExit(problems);
  const report: StatusReport = {
    ok: exitCode === EXIT.ok,
    exitCode,
    token: source ? { source: source.source, file: source.file ?? null } : null,
    ...(tokenProblem ? { tokenProblem } : {}),
    region: endpointKnown ? endpoint.region : null,
    baseUrl: endpointKnown ? endpoint.baseUrl : null,
    endpoint: endpointKnown ? { region: endpoint.region, baseUrl: endpoint.baseUrl, source: endpoint.source, explicit: endpoint.explicit } : null,
    reachability: reach,
    configFile: { file: runtime.paths.configFile, problem: configProblem ?? null },
    cwd: dir,
    binding,
    bindings,
    pendingAcceptances,
    finalizeErrors,
    works: openWorks.map((w) => ({
      work: w.key,
      title: w.title,
      phase: w.phase,
      steps: w.steps,
      holder: w.holder ? { host: w.holder.host, session: w.holder.session, since: new Date(w.holder.since).toISOString(), alive: w.holder.alive } : null,
      waiting: w.waiting ? { reason: w.waiting.reason, since: new Date(w.waiting.since).toISOString() } : null,
      asking: (w.asking ?? []).map((a) => ({ number: a.number, kind: a.kind, text: a.text, since: new Date(a.since).toISOString() })),
      commentsWaitingSince: w.commentsWaitingSince !== undefined ? new Date(w.commentsWaitingSince).toISOString() : null,
      usage: usageJson(w.usage),
    })),
    rebuilt: (state.state?.rebuilt ?? []).map((r) => ({ at: new Date(r.at).toISOString(), what: r.what })),
    budget: budgetStatus(runtime.paths.stateDir, config?.budget),
    stateFile: { file: state.file, exists: state.exists, works: state.works, problem: state.problem ?? null },
    problems: problems.map(({ severity, code, message }) => ({ severity, code, message })),
  };

  if (options.json) printJson(io, report);
  else printHuman(io, createStyle(io, ctx.env, false), report, { source, home, text: ctx.text, endpoint });
  if (exitCode !== EXIT.ok) {
    const top = problems.find((p) => p.exitCode === exitCode) as Problem;
    io.err(`dida-todo: ${top.message}\n`);
  }
  return exitCode;
}

function pickExit(problems: Problem[]): ExitCode {
  for (const code of [EXIT.noToken, EXIT.failure, EXIT.notBound] as const) {
    if (problems.some((p) => p.exitCode === code)) return code;
  }
  return EXIT.ok;
}

interface StatusReport {
  ok: boolean;
  exitCode: number;
  token: { source: string; file: string | null } | null;
  tokenProblem?: string;
  region: string | null;
  baseUrl: string | null;
  endpoint: { region: string; baseUrl: string; source: string; explicit: boolean } | null;
  reachability: { checked: boolean; ok?: boolean; ms?: number; lists?: number; message?: string };
  configFile: { file: string; problem: string | null };
  cwd: string;
  binding: { cwd: string; projectId: string; label: string | null; tag: string | null; inherited: boolean; list: ListState; message?: string } | null;
  bindings: Array<{ cwd: string; projectId: string; label: string | null; tag: string | null; list: ListState }>;
  pendingAcceptances: Array<{ work: string; title: string; list: string | null; acceptanceTaskId: string | null }>;
  finalizeErrors: Array<{ work: string; title: string; lastError: string; attempts: number }>;
  /** The open Works of the directory's list: who holds each (alive: true here and running, false stopped, null another machine), why it waits. */
  works: Array<{
    work: string;
    title: string;
    phase: string;
    steps: { done: number; total: number };
    holder: { host: string; session: string; since: string; alive: boolean | null } | null;
    waiting: { reason: WaitReason; since: string } | null;
    /** dsh's own questions and approvals waiting for the person (answerable at the desk or in Dida). */
    asking: Array<{ number: number; kind: string; text: string; since: string }>;
    commentsWaitingSince: string | null;
    usage: ReturnType<typeof usageJson>;
  }>;
  /** What was rebuilt from Dida after the state file was lost (review todos whose records were gone). */
  rebuilt: Array<{ at: string; what: string }>;
  /** The machine-wide Dida request budget of each account used in the last 5 minutes (status-budget.ts). */
  budget: BudgetStatus[];
  stateFile: { file: string; exists: boolean; works: number; problem: string | null };
  problems: Array<{ severity: string; message: string }>;
}

interface PrintContext {
  source: TokenInfo | undefined;
  home: string | undefined;
  text: CliText;
  endpoint: Endpoint;
}

/** The table a person reads. Everything that came from Dida (list names, Work titles, errors) is terminal-safe. */
function printHuman(io: CliIo, s: Style, r: StatusReport, p: PrintContext): void {
  const { t } = p.text;
  const labels = ['cli.status.row.token', 'cli.status.row.dida', 'cli.status.row.config', 'cli.status.row.directory', 'cli.status.row.bindings', 'cli.status.row.works', 'cli.status.row.acceptance', 'cli.status.row.finalize', 'cli.status.row.rebuilt', 'cli.status.row.state', 'cli.status.row.budget'] as const;
  const column = Math.max(...labels.map((k) => displayWidth(t(k)))) + 2;
  const row = (key: (typeof labels)[number], value: string) => io.out(`${s.bold(padDisplay(t(key), column))}${value}\n`);
  const listWord = (state: ListState) => (state === 'open' ? s.good(t('cli.status.list.open')) : state === 'unknown' ? s.dim(t('cli.status.list.unknown')) : s.bad(t(state === 'archived' ? 'cli.status.list.archived' : 'cli.status.list.missing')));
  const name = (label: string | null, id: string) => `"${safeText(label ?? id)}" (${safeText(id)})`;
  const tagged = (tag: string | null) => (tag ? ` ${t('cli.status.routeTag', { tag: safeText(normaliseRouteTag(tag)) })}` : '');

  row('cli.status.row.token', p.source ? describeSource(p.source, p.home, p.text) : s.bad(r.tokenProblem ?? t('cli.status.noToken')));
  const reach = !r.reachability.checked
    ? s.dim(r.configFile.problem ? t('cli.status.notCheckedConfig') : t('cli.status.notCheckedToken'))
    : r.reachability.ok
      ? `${s.good(t('cli.status.reachable'))}, ${p.text.plural('cli.status.lists', r.reachability.lists ?? 0)}, ${r.reachability.ms} ms`
      : s.bad(t('cli.status.failed', { reason: r.reachability.message ?? '' }));
  if (r.baseUrl === null) row('cli.status.row.dida', reach);
  else {
    row('cli.status.row.dida', `${r.baseUrl} — ${reach}`);
    io.out(`${' '.repeat(column)}${s.dim(describeEndpoint(p.endpoint, p.text))}\n`);
  }
  row('cli.status.row.config', r.configFile.problem ? s.bad(r.configFile.problem) : displayPath(r.configFile.file, p.home));
  if (r.binding) {
    const via = r.binding.inherited ? t('cli.status.via', { dir: r.binding.cwd }) : '';
    row('cli.status.row.directory', `${r.cwd}${via} → ${name(r.binding.label, r.binding.projectId)}${tagged(r.binding.tag)} ${listWord(r.binding.list)}`);
  } else row('cli.status.row.directory', `${r.cwd} — ${s.warn(r.configFile.problem ? t('cli.status.list.unknown') : t('cli.status.notBoundShort'))}`);
  row('cli.status.row.bindings', r.configFile.problem ? s.dim(t('cli.status.list.unknown')) : r.bindings.length === 0 ? t('cli.status.none') : String(r.bindings.length));
  for (const b of r.bindings) io.out(`  ${b.cwd} → ${name(b.label, b.projectId)}${tagged(b.tag)} ${listWord(b.list)}\n`);
  if (r.binding) {
    row('cli.status.row.works', r.works.length === 0 ? t('cli.status.worksNone') : p.text.plural('cli.status.works', r.works.length));
    const when = (iso: string) => {
      const d = new Date(iso);
      const two = (n: number) => String(n).padStart(2, '0');
      return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}`;
    };
    for (const w of r.works) {
      const parts = [t('cli.status.work.steps', w.steps)];
      for (const a of w.asking) parts.push(s.warn(t('cli.status.work.asking', { number: a.number, since: when(a.since), text: safeText(a.text) })));
      if (w.waiting) parts.push(s.warn(t(`cli.status.work.wait.${w.waiting.reason}`, { since: when(w.waiting.since) })));
      else if (!w.holder || w.holder.alive === false) parts.push(t('cli.status.work.free'));
      if (w.holder) {
        const vars = { host: safeText(w.holder.host), session: safeText(w.holder.session || '-'), since: when(w.holder.since) };
        parts.push(w.holder.alive === true ? t('cli.status.work.heldAlive', vars) : w.holder.alive === false ? s.dim(t('cli.status.work.heldGone', vars)) : t('cli.status.work.heldRemote', vars));
      }
      if (w.usage && w.usage.requests > 0) parts.push(t('cli.status.work.usage', { tokens: formatTokens(getLocale(p.text.id), w.usage.tokens), requests: w.usage.requests, minutes: formatMinutes(w.usage.ms) }));
      if (w.commentsWaitingSince) parts.push(s.warn(t('cli.status.work.commentsLate', { since: when(w.commentsWaitingSince) })));
      io.out(`  "${safeText(w.title)}": ${parts.join('; ')}\n`);
    }
  }
  row('cli.status.row.acceptance', r.pendingAcceptances.length === 0 ? t('cli.status.nothingWaiting') : p.text.plural('cli.status.waiting', r.pendingAcceptances.length));
  for (const a of r.pendingAcceptances) {
    const list = a.list ? t('cli.status.inList', { list: safeText(a.list) }) : '';
    const todo = a.acceptanceTaskId ? t('cli.status.acceptanceTodo', { id: safeText(a.acceptanceTaskId) }) : '';
    io.out(`  "${safeText(a.title)}"${list}${todo}\n`);
  }
  if (r.finalizeErrors.length > 0) {
    row('cli.status.row.finalize', s.warn(p.text.plural('cli.status.finalizeCount', r.finalizeErrors.length)));
    for (const f of r.finalizeErrors) io.out(`  "${safeText(f.title)}": ${safeText(f.lastError)} (${p.text.plural('cli.status.attempts', f.attempts)})\n`);
  }
  if (r.rebuilt.length > 0) {
    row('cli.status.row.rebuilt', s.warn(p.text.plural('cli.status.rebuiltCount', r.rebuilt.length)));
    for (const b of r.rebuilt) io.out(`  ${b.at.slice(0, 16).replace('T', ' ')}  ${safeText(b.what)}\n`);
  }
  const stateText = r.stateFile.problem ? s.bad(r.stateFile.problem) : r.stateFile.exists ? p.text.plural('cli.status.works', r.stateFile.works) : t('cli.status.stateEmpty');
  row('cli.status.row.state', `${displayPath(r.stateFile.file, p.home)} — ${stateText}`);
  budgetLines(r.budget, t).forEach((line, i) => {
    const text = line.warn ? s.warn(line.text) : line.text;
    if (i === 0) row('cli.status.row.budget', text);
    else io.out(`${' '.repeat(column)}${text}\n`);
  });
  for (const w of r.problems.filter((x) => x.severity === 'warning')) io.out(`${s.warn(t('cli.status.warning'))} ${w.message}\n`);
  io.out(r.exitCode === 0 ? `${s.good(t('cli.status.ready'))}\n` : '');
}
