// The guided demo: seed a Dida list, let an agent work it through a host (real dsh, or an in-process stand-in in
// tests), and print each step the way the person sees it in Dida.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Behaviour } from '../../local-dsh/scripted-model';
import { cliText, type CliText } from '../cli-locale';
import { INSTALL, repositoryUrl, type CloneInstall } from '../install-commands';
import { safeText } from '../terminal-text';
import { parseDidaDate } from '../../dida/dida-date';
import type { Task } from '../../dida/types';
import type { DemoBackend, SeededList } from './demo-backend';
import { clock, heading, renderAcceptance, renderComment, renderList, renderTask, seconds, type DemoStyle } from './demo-print';
import { DEMO_WORK, FIRST_PROMPT, firstSessionScript, REWORK_COMMENT, SECOND_PROMPT, secondSessionScript } from './demo-script';
import { commentsOf, DidaWatch, taskOf, type WatchEvent } from './demo-view';

export interface SessionResult {
  code: number | null;
  stdout: string;
  stderr: string;
  durationMs: number;
  timedOut: boolean;
}

export interface PreparedHost {
  /** The project directory the agent runs in (bound to the list). */
  projectDir: string;
  /** dida-todo's config.yaml as the agent's host will read it. */
  configFile: string;
  /** The working dsh the demo used, offered to the person at the end (absent for stand-in hosts). */
  dsh?: DemoDshInstall;
}

/** Where the demo's dsh lives: its launcher, the Node ≥ 22.19 and pnpm it needs on PATH. */
export interface DemoDshInstall {
  dshBin: string;
  nodeBinDir: string;
  pnpmBinDir: string;
}

/** Runs agent sessions: the real dsh headless (src/cli/demo/demo-dsh.ts) or an in-process stand-in (tests). */
export interface DemoHost {
  /** True when a scripted model answers (false: the real DeepSeek model). */
  readonly scripted: boolean;
  /** How a session is started, for the narration (e.g. `dsh --profile headless`). */
  readonly command: string;
  /** Installs what is needed and creates an isolated home and project directory; `log` prints progress. */
  prepare(log: (line: string) => void): Promise<PreparedHost>;
  /** One session with `prompt`; `script` is what the scripted model answers (ignored by a real model). */
  runSession(prompt: string, script: Behaviour[], env: Record<string, string>): Promise<SessionResult>;
  close(): Promise<void>;
}

export interface DemoIo {
  out(text: string): void;
  err(text: string): void;
}

export interface RunDemoOptions {
  backend: DemoBackend;
  host: DemoHost;
  io: DemoIo;
  style: DemoStyle;
  now?: () => number;
  /** Pause between model answers of the scripted sessions (ms). */
  paceMs?: number;
  /** The clone the demo runs from: the last step also shows how to install the bundle from it. */
  clone?: CloneInstall;
}

export interface DemoOutcome {
  ok: boolean;
  /** Why the demo is not ok (the scripted run should always be). */
  problems: string[];
  seeded?: SeededList;
  acceptance?: Task;
  rework?: Task;
}

const TOTAL_STEPS = 6;

/** Writes dida-todo's config.yaml binding the project directory to the list (plus the simulator URL). */
export function writeBindingConfig(configFile: string, projectDir: string, list: Pick<SeededList, 'projectId' | 'name'>, baseUrl?: string): void {
  fs.mkdirSync(path.dirname(configFile), { recursive: true });
  const lines = ['# Written by the dida-todo demo.', 'version: 1'];
  if (baseUrl) lines.push(`baseUrl: ${JSON.stringify(baseUrl)}`);
  lines.push('bindings:', `  - cwd: ${JSON.stringify(projectDir)}`, `    projectId: ${JSON.stringify(list.projectId)}`, `    label: ${JSON.stringify(list.name)}`);
  fs.writeFileSync(configFile, `${lines.join('\n')}\n`);
}

function lastLines(text: string, count: number): string[] {
  return text
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== '')
    .slice(-count);
}

/** Runs the whole demo and prints it. Never throws for a failed expectation: it returns the problems instead. */
export async function runDemo(options: RunDemoOptions): Promise<DemoOutcome> {
  const { backend, host, io, style: s } = options;
  const { t } = s.text;
  const now = options.now ?? Date.now;
  const out = (line = '') => io.out(`${line}\n`);
  const problems: string[] = [];
  const outcome: DemoOutcome = { ok: false, problems };
  const started = now();
  const gateway = backend.gateway;

  out(s.bold(t('cli.demo.title')));
  const where = backend.kind === 'simulator' ? t('cli.demo.whereSim', { url: backend.baseUrl ?? '' }) : t('cli.demo.whereReal', { list: safeText(backend.listName ?? '') });
  out(`  ${t('cli.demo.dida', { where })}`);
  out(`  ${t('cli.demo.agent', { command: host.command, model: host.scripted ? t('cli.demo.scriptedModel') : s.warn(t('cli.demo.realModel')) })}`);

  // 1. The list the person wrote.
  out(heading(1, TOTAL_STEPS, t('cli.demo.step1'), s));
  const seeded = await backend.seed();
  outcome.seeded = seeded;
  const before = (await gateway.getProjectData(seeded.projectId)).tasks;
  for (const line of renderList(seeded.name, before, s)) out(line);
  out(s.dim(`  ${t('cli.demo.step1.note', { work: DEMO_WORK.title, draft: safeText(seeded.draft.title) })}`));

  // 2. dsh, the bundle and the binding.
  out(heading(2, TOTAL_STEPS, t('cli.demo.step2'), s));
  const prepared = await host.prepare((line) => out(`  ${line}`));
  writeBindingConfig(prepared.configFile, prepared.projectDir, seeded, backend.baseUrl);
  out(`  ${t('cli.demo.bound', { dir: prepared.projectDir })}`);
  out(`     ${t('cli.demo.boundTo', { name: safeText(seeded.name) })}  ${s.dim(t('cli.demo.boundNote', { file: prepared.configFile, name: safeText(seeded.name) }))}`);
  const env = { DIDA_TODO_TOKEN: backend.token };

  // 3. The agent works the list.
  out(heading(3, TOTAL_STEPS, t('cli.demo.step3', { command: host.command, prompt: FIRST_PROMPT }), s));
  out(s.dim(`  ${t('cli.demo.step3.note', { prompt: FIRST_PROMPT })}`));
  const sessionStart = now();
  const stamp = (ms: number) => s.dim(`+${((ms - sessionStart) / 1000).toFixed(1)}s`.padEnd(6));
  const titles = new Map<string, string>([[seeded.work.id, seeded.work.title]]);
  const onEvent = (event: WatchEvent) => {
    switch (event.kind) {
      case 'comment':
        for (const line of renderComment(event.comment, s, '  ', `${stamp(event.atMs)}  `)) out(line);
        break;
      case 'item':
        out(`  ${stamp(event.atMs)}  ${event.done ? s.good('☑') : '☐'} ${safeText(event.item)} ${s.dim(t(event.done ? 'cli.demo.ticked' : 'cli.demo.unticked'))}`);
        break;
      case 'completed':
        out(`  ${stamp(event.atMs)}  ${s.good('☑')} ${s.good(t('cli.demo.completed', { title: safeText(event.taskTitle) }))}`);
        break;
      case 'task':
        titles.set(event.task.id, event.task.title);
        out(`  ${stamp(event.atMs)}  ${s.accent('＋')} ${t('cli.demo.newTodo', { title: s.bold(safeText(event.task.title)) })}`);
        break;
    }
  };
  const watch = new DidaWatch({ gateway, projectId: seeded.projectId, taskId: seeded.work.id, knownTaskIds: before.map((t) => t.id), onEvent, now });
  await watch.start();
  let first: SessionResult;
  try {
    first = await host.runSession(FIRST_PROMPT, firstSessionScript(options.paceMs), env);
  } finally {
    await watch.stop();
  }
  reportSession(first, t('cli.demo.firstSession'), s, out, problems);

  // 4. What the person sees now.
  out(heading(4, TOTAL_STEPS, t('cli.demo.step4'), s));
  const work = await taskOf(gateway, seeded.projectId, seeded.work.id);
  const open = (await gateway.getProjectData(seeded.projectId)).tasks;
  const acceptanceTitle = `🧑‍🔬 待验收：${seeded.work.title}`;
  const acceptance = open.find((t) => t.title === acceptanceTitle);
  outcome.acceptance = acceptance;
  if (work) {
    out(s.dim(`  ${t('cli.demo.step4.work')}`));
    for (const line of renderTask(work, s, { body: false })) out(line);
    for (const comment of await commentsOf(gateway, seeded.projectId, work.id)) for (const line of renderComment(comment, s, '      ')) out(line);
    if (work.status !== 2) problems.push(t('cli.demo.problem.notCompleted', { title: safeText(work.title) }));
    if ((work.items ?? []).some((i) => i.status === 0)) problems.push(t('cli.demo.problem.unticked', { title: safeText(work.title) }));
  } else {
    problems.push(t('cli.demo.problem.unreadable', { title: safeText(seeded.work.title) }));
  }
  if (acceptance) {
    out('');
    out(s.dim(`  ${t('cli.demo.step4.acceptance')}`));
    const filedAt = firstSeen(acceptance, sessionStart);
    for (const line of renderAcceptance(acceptance, await commentsOf(gateway, seeded.projectId, acceptance.id), filedAt, s)) out(line);
  } else {
    problems.push(t('cli.demo.problem.noAcceptance', { title: safeText(acceptanceTitle) }));
    out(s.warn(`  ${t('cli.demo.step4.noAcceptance', { title: safeText(acceptanceTitle) })}`));
  }
  const draft = await taskOf(gateway, seeded.projectId, seeded.draft.id);
  if (draft) {
    out('');
    const untouched = draft.etag === seeded.draft.etag && draft.modifiedTime === seeded.draft.modifiedTime;
    out(s.dim(`  ${t('cli.demo.step4.draft')}`));
    for (const line of renderTask(draft, s, { note: t(untouched ? 'cli.demo.untouched' : 'cli.demo.changed') })) out(line);
    if (!untouched && host.scripted) problems.push(t('cli.demo.problem.draftChanged', { title: safeText(draft.title) }));
  }

  // 5. Rework.
  out(heading(5, TOTAL_STEPS, t('cli.demo.step5'), s));
  if (!acceptance) {
    out(s.warn(`  ${t('cli.demo.step5.skipped')}`));
  } else {
    await backend.ownerComment(seeded.projectId, acceptance.id, REWORK_COMMENT);
    out(`  ${t('cli.demo.step5.youComment', { title: safeText(acceptance.title) })}`);
    for (const line of renderComment({ title: REWORK_COMMENT }, s, '    ')) out(line);
    for (const line of t('cli.demo.step5.next', { command: host.command, prompt: SECOND_PROMPT }).split('\n')) out(s.dim(`  ${line}`));
    const known = new Set(open.map((t) => t.id));
    const second = await host.runSession(SECOND_PROMPT, secondSessionScript(options.paceMs), env);
    reportSession(second, t('cli.demo.secondSession'), s, out, problems);
    const after = (await gateway.getProjectData(seeded.projectId)).tasks;
    const reworkTitle = `返工：${seeded.work.title}`;
    const rework = after.find((t) => t.title === reworkTitle && !known.has(t.id));
    outcome.rework = rework;
    out('');
    if (rework) {
      out(s.dim(`  ${t('cli.demo.step5.rework')}`));
      for (const line of renderTask(rework, s, { body: false })) out(line);
    } else {
      problems.push(t('cli.demo.problem.noRework', { title: safeText(reworkTitle) }));
      out(s.warn(`  ${t('cli.demo.step5.noRework', { title: safeText(reworkTitle) })}`));
    }
    const closedAcceptance = await taskOf(gateway, seeded.projectId, acceptance.id);
    if (closedAcceptance) {
      out(s.dim(`  ${t('cli.demo.step5.closed')}`));
      for (const line of renderTask(closedAcceptance, s, { body: false })) out(line);
      const comments = await commentsOf(gateway, seeded.projectId, acceptance.id);
      for (const comment of comments.slice(-2)) for (const line of renderComment(comment, s, '      ')) out(line);
    }
    out(s.dim(`  ${t('cli.demo.step5.nextTime', { prompt: FIRST_PROMPT })}`));
  }

  // 6. What next.
  out(heading(6, TOTAL_STEPS, t('cli.demo.step6'), s));
  for (const line of nextSteps(prepared.dsh, undefined, { text: s.text, ...(options.clone ? { clone: options.clone } : {}) })) out(`  ${line}`);

  outcome.ok = problems.length === 0;
  out('');
  if (outcome.ok) out(s.good(t('cli.demo.finished', { seconds: seconds(now() - started, s.text), clock: clock(now()) })));
  else {
    const note = host.scripted ? '' : t('cli.demo.realModelNote');
    out(s.warn(t('cli.demo.finishedWithProblems', { seconds: seconds(now() - started, s.text), note })));
    for (const problem of problems) out(s.warn(`  - ${problem}`));
  }
  return outcome;
}

/** When a task first appeared: its createdTime when Dida gives one, else the fallback. */
function firstSeen(task: Task, fallback: number): number {
  return parseDidaDate(task.createdTime)?.getTime() ?? fallback;
}

function reportSession(result: SessionResult, what: string, s: DemoStyle, out: (line?: string) => void, problems: string[]): void {
  const { t } = s.text;
  const answer = lastLines(result.stdout, 4);
  if (answer.length) {
    out(`  ${s.dim(t('cli.demo.dshAnswered'))}`);
    for (const line of answer) out(`    ${s.accent('»')} ${safeText(line)}`);
  }
  const status = result.timedOut ? t('cli.demo.timedOut') : t('cli.demo.exit', { code: String(result.code) });
  out(s.dim(`  ${t('cli.demo.sessionStatus', { what, status, seconds: seconds(result.durationMs, s.text) })}`));
  if (result.timedOut || result.code !== 0) {
    problems.push(t('cli.demo.problem.session', { what, status }));
    for (const line of lastLines(result.stderr, 8)) out(s.warn(`    ${safeText(line)}`));
  }
}

/**
 * The real setup, as the README's "Install and use" has it. Every command works outside the clone (install specs
 * come from package.json's repository) and none puts a token on the command line; from a clone, the bundle's
 * install from a packed copy of it is shown too. `dsh` is the working dsh this demo used, offered as the person's own.
 */
export function nextSteps(
  dsh?: DemoDshInstall,
  homeLayerExists = fs.existsSync(path.join(os.homedir(), '.dsh', 'cordis.patch.yml')),
  options: { text?: CliText; clone?: CloneInstall } = {},
): string[] {
  const { t } = options.text ?? cliText('en');
  const lines = [t('cli.demo.next.dsh')];
  if (dsh) {
    lines.push(
      `   ${t('cli.demo.next.useThis')}`,
      `     mkdir -p ~/.local/bin && printf '#!/bin/sh\\nPATH="%s:%s:$PATH" exec "%s" "$@"\\n' '${dsh.nodeBinDir}' '${dsh.pnpmBinDir}' '${dsh.dshBin}' > ~/.local/bin/dsh && chmod +x ~/.local/bin/dsh`,
      homeLayerExists
        ? `     ${t('cli.demo.next.hmrRows')}`
        : "     mkdir -p ~/.dsh && printf -- '- id: hmr\\n  disabled: false\\n  config: { root: [] }\\n' > ~/.dsh/cordis.patch.yml",
      `   ${t('cli.demo.next.orOwn', { url: `${repositoryUrl()}#install-and-use` })}`,
    );
  } else lines.push(`     ${repositoryUrl()}#install-and-use`);
  lines.push(t('cli.demo.next.bundle'), `     ${INSTALL.dshPluginAdd('web')}`);
  if (options.clone) lines.push(`   ${t('cli.demo.next.fromClone')}`, `     ${options.clone.dshPluginAdd('web')}`);
  lines.push(
    `     ${INSTALL.linkFromProfile()}`,
    `   ${options.clone ? t('cli.demo.next.commandAloneClone', { command: INSTALL.npmInstallGlobal, clone: options.clone.npmInstallGlobal }) : t('cli.demo.next.commandAlone', { command: INSTALL.npmInstallGlobal })}`,
    t('cli.demo.next.login'),
    `     dida-todo login --token -        ${t('cli.demo.next.loginComment')}`,
    t('cli.demo.next.bind'),
    `     cd ${t('cli.demo.next.project')} && dida-todo bind "${t('cli.demo.next.listName')}"`,
    '     dida-todo doctor',
    t('cli.demo.next.work', { prompt: FIRST_PROMPT }),
    t('cli.demo.next.real'),
  );
  return lines;
}
