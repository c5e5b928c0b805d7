// `dida-todo status`: token source, endpoint and reachability, bindings, pending acceptances and state problems.
// Reads only: it never writes config, credentials or state (a damaged state file is reported, not moved).
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { helpText, parseArgs, type FlagSpec } from '../cli-args';
import type { CliIo } from '../cli-io';
import { createStyle, describeFailure, EXIT, printJson, withProgress, type ExitCode, type Style } from '../cli-output';
import {
  CWD_FLAG,
  describeSource,
  findToken,
  globalOptions,
  GLOBAL_FLAGS,
  openCliRuntime,
  quickGateway,
  targetDir,
  type CliContext,
  type Endpoint,
  type GlobalOptions,
  type TokenInfo,
} from '../cli-runtime';
import { describeIssues } from '../../common/schema-issues';
import { checkList } from '../../core/bindings';
import { ENGINE_STATE_VERSION, EngineStateSchema, type EngineState } from '../../core/work-state';
import { isDidaError } from '../../dida/dida-error';
import { resolveBaseUrl } from '../../dida/http-gateway';
import type { Project } from '../../dida/types';
import { readFileIfExists } from '../../store/atomic-file';
import { defaultConfig, findBinding, type Binding, type DidaTodoConfig } from '../../store/config-store';
import { displayPath } from '../../store/paths';

const FLAGS: Record<string, FlagSpec> = { ...CWD_FLAG, ...GLOBAL_FLAGS };

const SUMMARY = `Shows which token is used (never the token), the Dida endpoint and whether it answers, the binding of the
directory and all bindings, Works waiting for acceptance or with a failed finalize, and state-file problems.
Exit 0 when the directory is ready; 3 without a working token, 1 when Dida or a local file fails, 4 when the
directory is not bound to an open list.`;

type ListState = 'open' | 'archived' | 'missing' | 'unknown';

interface Problem {
  severity: 'error' | 'warning';
  exitCode: ExitCode;
  code: string;
  message: string;
}

interface StateInfo {
  file: string;
  exists: boolean;
  works: number;
  state: EngineState | undefined;
  problem?: string;
  leftovers: string[];
}

export async function statusCommand(argv: readonly string[], io: CliIo, ctx: CliContext): Promise<number> {
  const args = parseArgs(argv, FLAGS, 'status');
  if (args.flags.help) {
    io.out(helpText('dida-todo status [--cwd dir]', SUMMARY, FLAGS));
    return EXIT.ok;
  }
  if (args.positionals.length > 0) io.fail(`\`dida-todo status\` takes no arguments, got "${args.positionals[0]}"; use --cwd <dir> for another directory.`);
  const options = globalOptions(args.flags, ctx);
  const dir = await targetDir(args.flags, ctx, false);
  const runtime = openCliRuntime(ctx, options);
  const problems: Problem[] = [];
  const home = ctx.env.HOME || undefined;

  // Local files first: they are shown even without a token or network.
  let config: DidaTodoConfig = defaultConfig();
  try {
    config = await runtime.config.read();
  } catch (error) {
    problems.push({ severity: 'error', exitCode: EXIT.failure, code: 'config_invalid', message: describeFailure(error).message });
  }
  const endpoint = endpointFrom(options, config);
  const state = await inspectState(runtime.paths.stateFile, runtime.paths.stateDir);
  if (state.problem) problems.push({ severity: 'error', exitCode: EXIT.failure, code: 'state_invalid', message: state.problem });
  for (const leftover of state.leftovers) {
    problems.push({
      severity: 'warning',
      exitCode: EXIT.ok,
      code: 'state_corrupt_copy',
      message: `A damaged state file was set aside at ${displayPath(leftover, home)}; look at it or delete it.`,
    });
  }

  // Token.
  let token: string | undefined;
  let source: TokenInfo | undefined;
  let tokenProblem: string | undefined;
  try {
    const found = await findToken(runtime, ctx.env);
    if (found) {
      ctx.io.hide(found.token);
      const { token: t, ...rest } = found;
      token = t;
      source = rest;
      if (found.warning) problems.push({ severity: 'warning', exitCode: EXIT.ok, code: 'credentials_mode', message: found.warning });
    }
  } catch (error) {
    tokenProblem = describeFailure(error).message;
  }
  if (tokenProblem) problems.push({ severity: 'error', exitCode: EXIT.noToken, code: 'token_invalid', message: tokenProblem });
  else if (!source) {
    problems.push({
      severity: 'error',
      exitCode: EXIT.noToken,
      code: 'no_token',
      message: 'No Dida token is configured: run `dida-todo login --token <token>` (personal API token from Dida: avatar → Settings → Account → API Token), or set DIDA_TODO_TOKEN.',
    });
  }

  // Reachability: one GET /project.
  let projects: Project[] | undefined;
  const reach: { checked: boolean; ok?: boolean; ms?: number; lists?: number; code?: string; message?: string } = { checked: false };
  const gateway = token ? quickGateway(token, endpoint) : undefined;
  if (gateway && source) {
    const started = performance.now();
    try {
      projects = await withProgress(io, `Contacting ${endpoint.baseUrl}`, () => gateway.listProjects());
      Object.assign(reach, { checked: true, ok: true, ms: Math.round(performance.now() - started), lists: projects.length });
    } catch (error) {
      const ms = Math.round(performance.now() - started);
      if (isDidaError(error) && error.code === 'auth') {
        const message = `Dida rejected the token from ${describeSource(source, home)} (401); run \`dida-todo login --token <token>\` with a current personal API token.`;
        Object.assign(reach, { checked: true, ok: false, ms, code: 'auth', message });
        problems.push({ severity: 'error', exitCode: EXIT.noToken, code: 'auth', message });
      } else {
        const failure = describeFailure(error);
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
  const bindings = config.bindings.map((b) => ({ cwd: b.cwd, projectId: b.projectId, label: b.label ?? null, list: listState(b.projectId) }));
  const covering: Binding | undefined = findBinding(config, dir);
  let binding: { cwd: string; projectId: string; label: string | null; inherited: boolean; list: ListState; message?: string } | null = null;
  if (covering) {
    binding = { cwd: covering.cwd, projectId: covering.projectId, label: covering.label ?? null, inherited: covering.cwd !== dir, list: 'unknown' };
    if (gateway && reach.ok) {
      try {
        const health = await checkList(gateway, covering);
        if (health.ok) binding.list = 'open';
        else {
          binding.list = health.code === 'list_closed' ? 'archived' : 'missing';
          binding.message = health.message;
          problems.push({ severity: 'error', exitCode: EXIT.notBound, code: health.code, message: health.message });
        }
      } catch (error) {
        const failure = describeFailure(error);
        binding.message = failure.message;
        problems.push({ severity: 'error', exitCode: failure.exitCode === EXIT.noToken ? EXIT.noToken : EXIT.failure, code: failure.code, message: failure.message });
      }
    }
  } else {
    problems.push({
      severity: 'error',
      exitCode: EXIT.notBound,
      code: 'not_bound',
      message: `${dir} is not bound to a Dida list; run \`dida-todo bind <list name> --cwd ${dir}\` (or \`dida-todo bind <list name>\` there).`,
    });
  }

  // Works from state.
  const labelOf = (projectId: string) => config.bindings.find((b) => b.projectId === projectId)?.label ?? projects?.find((p) => p.id === projectId)?.name ?? null;
  const works = Object.entries(state.state?.works ?? {});
  const pendingAcceptances = works
    .filter(([, w]) => w.phase === 'accepting')
    .map(([key, w]) => ({ work: key, title: w.title, projectId: w.projectId, list: labelOf(w.projectId), acceptanceTaskId: w.acceptance?.taskId ?? w.finalize?.acceptanceTaskId ?? null }));
  const finalizeErrors = works
    .filter(([, w]) => w.finalize?.lastError)
    .map(([key, w]) => ({ work: key, title: w.title, projectId: w.projectId, list: labelOf(w.projectId), phase: w.phase, lastError: w.finalize?.lastError as string, attempts: w.finalize?.attempts ?? 0 }));
  for (const f of finalizeErrors) {
    problems.push({ severity: 'warning', exitCode: EXIT.ok, code: 'finalize_failed', message: `Finalizing "${f.title}" failed (${f.attempts} attempt${f.attempts === 1 ? '' : 's'}): ${f.lastError}` });
  }

  const exitCode = pickExit(problems);
  const report = {
    ok: exitCode === EXIT.ok,
    exitCode,
    token: source ? { source: source.source, file: source.file ?? null } : null,
    ...(tokenProblem ? { tokenProblem } : {}),
    region: endpoint.region,
    baseUrl: endpoint.baseUrl,
    reachability: reach,
    cwd: dir,
    binding,
    bindings,
    pendingAcceptances,
    finalizeErrors,
    stateFile: { file: state.file, exists: state.exists, works: state.works, problem: state.problem ?? null },
    problems: problems.map(({ severity, code, message }) => ({ severity, code, message })),
  };

  if (options.json) printJson(io, report);
  else printHuman(io, createStyle(io, ctx.env, false), report, source, home, runtime.paths.configFile);
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

function endpointFrom(options: GlobalOptions, config: DidaTodoConfig): Endpoint {
  const region = options.region ?? config.region ?? 'dida365';
  const explicitUrl = options.baseUrl ?? config.baseUrl;
  return { region, baseUrl: resolveBaseUrl(region, explicitUrl), explicit: explicitUrl !== undefined };
}

/** Reads state.json without the store (which would move a damaged file aside): status must not change files. */
async function inspectState(file: string, dir: string): Promise<StateInfo> {
  const base = path.basename(file);
  const leftovers = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.startsWith(`${base}.corrupt-`)).map((n) => path.join(dir, n));
  const info: StateInfo = { file, exists: false, works: 0, state: undefined, leftovers };
  let text: string | undefined;
  try {
    text = await readFileIfExists(file);
  } catch (error) {
    info.problem = `Cannot read ${file}: ${(error as Error).message}.`;
    return info;
  }
  if (text === undefined) return info;
  info.exists = true;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    info.problem = `${file} is not valid JSON; dida-todo will set it aside and start with an empty state the next time it runs.`;
    return info;
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    info.problem = `${file} is not a JSON object; dida-todo will set it aside and start with an empty state the next time it runs.`;
    return info;
  }
  const { version, ...data } = raw as Record<string, unknown>;
  if (typeof version === 'number' && version > ENGINE_STATE_VERSION) {
    info.problem = `${file} has state version ${version}, written by a newer dida-todo (this one knows ${ENGINE_STATE_VERSION}); upgrade dida-todo.`;
    return info;
  }
  if (version !== ENGINE_STATE_VERSION) {
    info.problem = `${file} has no usable version field; dida-todo will set it aside and start with an empty state the next time it runs.`;
    return info;
  }
  const parsed = EngineStateSchema.safeParse(data, { reportInput: true });
  if (!parsed.success) {
    info.problem = `${file} does not match the state schema (${describeIssues(parsed.error.issues, 2)}); dida-todo will set it aside the next time it runs.`;
    return info;
  }
  info.state = parsed.data;
  info.works = Object.keys(parsed.data.works).length;
  return info;
}

interface HumanReport {
  exitCode: number;
  region: string;
  baseUrl: string;
  reachability: { checked: boolean; ok?: boolean; ms?: number; lists?: number; message?: string };
  tokenProblem?: string;
  cwd: string;
  binding: { cwd: string; projectId: string; label: string | null; inherited: boolean; list: ListState; message?: string } | null;
  bindings: Array<{ cwd: string; projectId: string; label: string | null; list: ListState }>;
  pendingAcceptances: Array<{ work: string; title: string; list: string | null; acceptanceTaskId: string | null }>;
  finalizeErrors: Array<{ work: string; title: string; lastError: string; attempts: number }>;
  stateFile: { file: string; exists: boolean; works: number; problem: string | null };
  problems: Array<{ severity: string; message: string }>;
}

function printHuman(io: CliIo, s: Style, r: HumanReport, source: TokenInfo | undefined, home: string | undefined, configFile: string): void {
  const row = (label: string, value: string) => io.out(`${s.bold(label.padEnd(12))}${value}\n`);
  const listWord = (state: ListState) => (state === 'open' ? s.good('open') : state === 'unknown' ? s.dim('not checked') : s.bad(state));
  row('Token', source ? describeSource(source, home) : s.bad(r.tokenProblem ?? 'none — run `dida-todo login --token <token>`'));
  const reach = !r.reachability.checked
    ? s.dim('not checked (no token)')
    : r.reachability.ok
      ? `${s.good('reachable')}, ${r.reachability.lists} list${r.reachability.lists === 1 ? '' : 's'}, ${r.reachability.ms} ms`
      : s.bad(`failed: ${r.reachability.message ?? ''}`);
  row('Dida', `${r.baseUrl} (region ${r.region}) — ${reach}`);
  row('Config', displayPath(configFile, home));
  if (r.binding) {
    const via = r.binding.inherited ? ` (via ${r.binding.cwd})` : '';
    row('Directory', `${r.cwd}${via} → "${r.binding.label ?? r.binding.projectId}" (${r.binding.projectId}) ${listWord(r.binding.list)}`);
  } else row('Directory', `${r.cwd} — ${s.warn('not bound')}`);
  row('Bindings', r.bindings.length === 0 ? 'none' : String(r.bindings.length));
  for (const b of r.bindings) io.out(`  ${b.cwd} → "${b.label ?? b.projectId}" (${b.projectId}) ${listWord(b.list)}\n`);
  row('Acceptance', r.pendingAcceptances.length === 0 ? 'nothing waiting' : `${r.pendingAcceptances.length} waiting for you in Dida`);
  for (const a of r.pendingAcceptances) io.out(`  "${a.title}"${a.list ? ` in "${a.list}"` : ''}${a.acceptanceTaskId ? ` (acceptance todo ${a.acceptanceTaskId})` : ''}\n`);
  if (r.finalizeErrors.length > 0) {
    row('Finalize', s.warn(`${r.finalizeErrors.length} failed`));
    for (const f of r.finalizeErrors) io.out(`  "${f.title}": ${f.lastError} (${f.attempts} attempt${f.attempts === 1 ? '' : 's'})\n`);
  }
  const stateText = r.stateFile.problem ? s.bad(r.stateFile.problem) : r.stateFile.exists ? `${r.stateFile.works} Work${r.stateFile.works === 1 ? '' : 's'}` : 'empty (no file yet)';
  row('State', `${displayPath(r.stateFile.file, home)} — ${stateText}`);
  const warnings = r.problems.filter((p) => p.severity === 'warning');
  for (const w of warnings) io.out(`${s.warn('Warning:')} ${w.message}\n`);
  io.out(r.exitCode === 0 ? `${s.good('Ready.')}\n` : '');
}
