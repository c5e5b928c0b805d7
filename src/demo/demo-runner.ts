// The guided demo: seed a Dida list, let an agent work it through a host (real dsh, or an in-process stand-in in
// tests), and print each step the way the person sees it in Dida.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Behaviour } from '../../tests/e2e/harness/fake-model';
import { INSTALL, repositoryUrl } from '../cli/install-commands';
import { safeText } from '../cli/terminal-text';
import { parseDidaDate } from '../dida/dida-date';
import type { Task } from '../dida/types';
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

/** Runs agent sessions: the real dsh headless (src/demo/demo-dsh.ts) or an in-process stand-in (tests). */
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
  const now = options.now ?? Date.now;
  const out = (line = '') => io.out(`${line}\n`);
  const problems: string[] = [];
  const outcome: DemoOutcome = { ok: false, problems };
  const started = now();
  const gateway = backend.gateway;

  out(s.bold('dida-todo demo — the whole loop, as you would see it in Dida'));
  out(`  Dida:  ${backend.where}`);
  out(`  Agent: ${host.command} with ${host.scripted ? 'a scripted model (no API key needed)' : s.warn('the REAL DeepSeek model (DEEPSEEK_API_KEY is set): results vary from run to run')}`);

  // 1. The list the person wrote.
  out(heading(1, TOTAL_STEPS, 'Your Dida list (written by you, e.g. on your phone)', s));
  const seeded = await backend.seed();
  outcome.seeded = seeded;
  const before = (await gateway.getProjectData(seeded.projectId)).tasks;
  for (const line of renderList(seeded.name, before, s)) out(line);
  out(s.dim(`  "${DEMO_WORK.title}" has a priority, so it is queued work; "${seeded.draft.title}" has none, so it is a draft the agent leaves alone.`));

  // 2. dsh, the bundle and the binding.
  out(heading(2, TOTAL_STEPS, 'Install dsh and this bundle, bind a project directory to the list', s));
  const prepared = await host.prepare((line) => out(`  ${line}`));
  writeBindingConfig(prepared.configFile, prepared.projectDir, seeded, backend.baseUrl);
  out(`  bound ${prepared.projectDir}`);
  out(`     → Dida list "${seeded.name}"  ${s.dim(`(${prepared.configFile}; the real command is \`dida-todo bind "${seeded.name}"\`)`)}`);
  const env = { DIDA_TODO_TOKEN: backend.token };

  // 3. The agent works the list.
  out(heading(3, TOTAL_STEPS, `You ask the agent: ${host.command} "${FIRST_PROMPT}"`, s));
  out(s.dim(`  "${FIRST_PROMPT}" is the trigger phrase: the agent may take the top Work of the queue. Watching Dida while it works:`));
  const sessionStart = now();
  const stamp = (ms: number) => s.dim(`+${((ms - sessionStart) / 1000).toFixed(1)}s`.padEnd(6));
  const titles = new Map<string, string>([[seeded.work.id, seeded.work.title]]);
  const onEvent = (event: WatchEvent) => {
    switch (event.kind) {
      case 'comment':
        for (const line of renderComment(event.comment, s, '  ', `${stamp(event.atMs)}  `)) out(line);
        break;
      case 'item':
        out(`  ${stamp(event.atMs)}  ${event.done ? s.good('☑') : '☐'} ${safeText(event.item)} ${s.dim(event.done ? 'ticked' : 'unticked')}`);
        break;
      case 'completed':
        out(`  ${stamp(event.atMs)}  ${s.good('☑')} ${s.good(`"${safeText(event.taskTitle)}" completed`)}`);
        break;
      case 'task':
        titles.set(event.task.id, event.task.title);
        out(`  ${stamp(event.atMs)}  ${s.accent('＋')} new todo in the list: ${s.bold(safeText(event.task.title))}`);
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
  reportSession(first, 'first session', s, out, problems);

  // 4. What the person sees now.
  out(heading(4, TOTAL_STEPS, 'What you see in Dida now', s));
  const work = await taskOf(gateway, seeded.projectId, seeded.work.id);
  const open = (await gateway.getProjectData(seeded.projectId)).tasks;
  const acceptanceTitle = `🧑‍🔬 待验收：${seeded.work.title}`;
  const acceptance = open.find((t) => t.title === acceptanceTitle);
  outcome.acceptance = acceptance;
  if (work) {
    out(s.dim('  The Work — completed, its items ticked, the progress kept as comments:'));
    for (const line of renderTask(work, s, { body: false })) out(line);
    for (const comment of await commentsOf(gateway, seeded.projectId, work.id)) for (const line of renderComment(comment, s, '      ')) out(line);
    if (work.status !== 2) problems.push(`"${work.title}" is not completed`);
    if ((work.items ?? []).some((i) => i.status === 0)) problems.push(`"${work.title}" has unticked items`);
  } else {
    problems.push(`"${seeded.work.title}" cannot be read back from Dida`);
  }
  if (acceptance) {
    out('');
    out(s.dim('  The acceptance todo the agent filed for you (review the result, then tick it or comment):'));
    const filedAt = firstSeen(acceptance, sessionStart);
    for (const line of renderAcceptance(acceptance, await commentsOf(gateway, seeded.projectId, acceptance.id), filedAt, s)) out(line);
  } else {
    problems.push(`no acceptance todo "${acceptanceTitle}" was filed`);
    out(s.warn(`  No acceptance todo "${acceptanceTitle}" yet.`));
  }
  const draft = await taskOf(gateway, seeded.projectId, seeded.draft.id);
  if (draft) {
    out('');
    const untouched = draft.etag === seeded.draft.etag && draft.modifiedTime === seeded.draft.modifiedTime;
    out(s.dim('  The draft:'));
    for (const line of renderTask(draft, s, { note: untouched ? 'untouched: no priority means "not yet"' : 'changed' })) out(line);
    if (!untouched && host.scripted) problems.push(`the draft "${draft.title}" was changed`);
  }

  // 5. Rework.
  out(heading(5, TOTAL_STEPS, 'You ask for rework: comment on the acceptance todo', s));
  if (!acceptance) {
    out(s.warn('  Skipped: there is no acceptance todo to comment on.'));
  } else {
    await backend.ownerComment(seeded.projectId, acceptance.id, REWORK_COMMENT);
    out(`  You comment on "${acceptance.title}":`);
    for (const line of renderComment({ title: REWORK_COMMENT }, s, '    ')) out(line);
    out(s.dim(`  The next session bound to the list notices it (sessions sync the list when they start; the agent's`));
    out(s.dim(`  \`todo_work refresh\` syncs too). Starting one: ${host.command} "${SECOND_PROMPT}"`));
    const known = new Set(open.map((t) => t.id));
    const second = await host.runSession(SECOND_PROMPT, secondSessionScript(options.paceMs), env);
    reportSession(second, 'second session', s, out, problems);
    const after = (await gateway.getProjectData(seeded.projectId)).tasks;
    const reworkTitle = `返工：${seeded.work.title}`;
    const rework = after.find((t) => t.title === reworkTitle && !known.has(t.id));
    outcome.rework = rework;
    out('');
    if (rework) {
      out(s.dim('  A new Work appeared, one step per comment of yours:'));
      for (const line of renderTask(rework, s, { body: false })) out(line);
    } else {
      problems.push(`no rework Work "${reworkTitle}" appeared`);
      out(s.warn(`  No "${reworkTitle}" appeared.`));
    }
    const closedAcceptance = await taskOf(gateway, seeded.projectId, acceptance.id);
    if (closedAcceptance) {
      out(s.dim('  The acceptance todo is answered and closed:'));
      for (const line of renderTask(closedAcceptance, s, { body: false })) out(line);
      const comments = await commentsOf(gateway, seeded.projectId, acceptance.id);
      for (const comment of comments.slice(-2)) for (const line of renderComment(comment, s, '      ')) out(line);
    }
    out(s.dim(`  Next time you say "${FIRST_PROMPT}", the agent takes the rework like any other Work.`));
  }

  // 6. What next.
  out(heading(6, TOTAL_STEPS, 'What to do next (the real thing)', s));
  for (const line of nextSteps(prepared.dsh)) out(`  ${line}`);

  outcome.ok = problems.length === 0;
  out('');
  if (outcome.ok) out(s.good(`Demo finished in ${seconds(now() - started)} (at ${clock(now())}).`));
  else {
    const note = host.scripted ? '' : ' (the real model decides for itself; a different result is not a bug)';
    out(s.warn(`Demo finished in ${seconds(now() - started)}, but not everything went as scripted${note}:`));
    for (const problem of problems) out(s.warn(`  - ${problem}`));
  }
  return outcome;
}

/** When a task first appeared: its createdTime when Dida gives one, else the fallback. */
function firstSeen(task: Task, fallback: number): number {
  return parseDidaDate(task.createdTime)?.getTime() ?? fallback;
}

function reportSession(result: SessionResult, what: string, s: DemoStyle, out: (line?: string) => void, problems: string[]): void {
  const answer = lastLines(result.stdout, 4);
  if (answer.length) {
    out(`  ${s.dim('dsh answered:')}`);
    for (const line of answer) out(`    ${s.accent('»')} ${safeText(line)}`);
  }
  const status = result.timedOut ? 'timed out' : `exit ${result.code}`;
  out(s.dim(`  (${what}: ${status}, ${seconds(result.durationMs)})`));
  if (result.timedOut || result.code !== 0) {
    problems.push(`the ${what} ended with ${status}`);
    for (const line of lastLines(result.stderr, 8)) out(s.warn(`    ${safeText(line)}`));
  }
}

/**
 * The real setup, as the README's "Install and use" has it. Every command works outside the clone (install specs
 * come from package.json's repository) and none puts a token on the command line. `dsh` is the working dsh this
 * demo used, offered as the person's own.
 */
export function nextSteps(dsh?: DemoDshInstall, homeLayerExists = fs.existsSync(path.join(os.homedir(), '.dsh', 'cordis.patch.yml'))): string[] {
  const lines = ['1. A dsh that starts (0.1.0-rc.8 needs Node ≥ 22.19, pnpm 10, a pinned HMR plugin and the `hmr` overlay):'];
  if (dsh) {
    lines.push(
      '   use the one this demo just ran, as your `dsh`:',
      `     mkdir -p ~/.local/bin && printf '#!/bin/sh\\nPATH="%s:%s:$PATH" exec "%s" "$@"\\n' '${dsh.nodeBinDir}' '${dsh.pnpmBinDir}' '${dsh.dshBin}' > ~/.local/bin/dsh && chmod +x ~/.local/bin/dsh`,
      homeLayerExists
        ? '     and add the `hmr` rows to ~/.dsh/cordis.patch.yml (after step 2, `dida-todo doctor` prints them)'
        : "     mkdir -p ~/.dsh && printf -- '- id: hmr\\n  disabled: false\\n  config: { root: [] }\\n' > ~/.dsh/cordis.patch.yml",
      `   or install your own: ${repositoryUrl()}#install-and-use`,
    );
  } else lines.push(`     ${repositoryUrl()}#install-and-use`);
  lines.push(
    '2. Install the bundle into dsh and put its `dida-todo` command on your PATH:',
    `     ${INSTALL.dshPluginAdd('web')}`,
    `     ${INSTALL.linkFromProfile()}`,
    '3. Log in with your personal API token (Dida: avatar → Settings → Account & Security → API Token):',
    '     dida-todo login --token -        # paste it at the prompt: not shown, not in your shell history',
    '4. Bind your project directory to a Dida list (created when missing) and check the whole setup:',
    '     cd <your project> && dida-todo bind "<list name>"',
    '     dida-todo doctor',
    `5. Write a task with a priority into that list, then say ${FIRST_PROMPT} in a dsh session in that directory.`,
    'Try it against your real Dida first: `npm run demo -- --real --list "<a new list name>"` (DIDA_TODO_TOKEN set).',
  );
  return lines;
}
