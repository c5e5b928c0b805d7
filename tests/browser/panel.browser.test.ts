// The dsh web task panel mirrors the Dida checklist, seen in a real browser (Debian chromium + playwright-core):
// real `dsh --profile web` with this bundle, a scripted fake model, and the Dida simulator.
//
// Run with `npx vitest run -c vitest.browser.config.ts` (the default config also matches this file; it is skipped
// there). Screenshots of every stage go to test-output/browser/.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { ensureDsh, makeDshHome, removeDshHome, repoRoot, startWeb, type WebDsh } from '../e2e/harness/dsh-run';
import { prepareProfile } from '../e2e/harness/profile';
import { startFakeModel, text, toolCall, type Behaviour, type FakeModel } from '../e2e/harness/fake-model';
import { chromiumOrExplain, CHROMIUM_ARGS } from './chromium';

const ENABLED = process.env.DIDA_TODO_BROWSER_TEST === '1';
const OUT = path.join(repoRoot, 'test-output', 'browser');

type Status = 'pending' | 'in_progress' | 'completed';
interface PanelItem {
  content: string;
  status: Status;
}
/** One `session/projection` push for the `todos` key, as the browser received it. */
interface TodosFrame {
  at: number;
  value: PanelItem[] | null;
}

// Step titles are ASCII here; the Chinese hero screenshot (hero.browser.test.ts) needs the CJK font ensure-chromium.sh installs.
const STEP_1 = 'Collect the changes';
const STEP_2 = 'Write the draft';
const STEP_3 = 'Add a changelog entry';
const MODEL_PLAN = [
  { content: 'Model plan: read the code', status: 'completed' as const },
  { content: 'Model plan: run the tests', status: 'in_progress' as const },
];

// Records, from before the app loads, every time the panel appears or disappears (the DOM side of the turn reset).
const PANEL_OBSERVER = `
  window.__panelLog = [];
  (() => {
    let last = null;
    const check = () => {
      const present = !!document.querySelector('[data-testid="todo-panel"]');
      if (present !== last) { last = present; window.__panelLog.push({ at: Date.now(), present }); }
    };
    new MutationObserver(check).observe(document, { subtree: true, childList: true });
    check();
  })();
`;

/** Picks `todos` projection values out of a websocket frame, whatever the envelope looks like. */
function todosValues(payload: string): Array<PanelItem[] | null> {
  if (!payload.includes('todos')) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    return [];
  }
  const found: Array<PanelItem[] | null> = [];
  const walk = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    const record = node as Record<string, unknown>;
    if (record.key === 'todos' && 'value' in record) {
      const value = record.value;
      if (value === null) found.push(null);
      else if (Array.isArray(value)) found.push(value as PanelItem[]);
      return;
    }
    for (const child of Object.values(record)) walk(child);
  };
  walk(parsed);
  return found;
}

describe.skipIf(!ENABLED)('the dsh web task panel mirrors the Dida checklist (real browser)', () => {
  let sim: Simulator;
  let model: FakeModel;
  let home: string;
  let project: string;
  let web: WebDsh;
  let context: BrowserContext;
  let page: Page;
  let userData: string;
  let taskId: string;
  const frames: TodosFrame[] = [];
  const timings: Record<string, number> = {};
  let shot = 0;
  let noticeDismissed = false;

  const mark = (label: string, since: number) => (timings[label] = Date.now() - since);

  async function screenshot(stage: string): Promise<string> {
    const file = path.join(OUT, `${String(++shot).padStart(2, '0')}-${stage}.png`);
    await page.screenshot({ path: file });
    const panel = page.locator('[data-testid="todo-panel"]');
    if (await panel.count()) await panel.first().screenshot({ path: file.replace(/\.png$/, '-panel.png') });
    return file;
  }

  /** The panel's items (expanding it when collapsed); [] while there is no panel. */
  async function readPanel(): Promise<PanelItem[]> {
    const panel = page.locator('[data-testid="todo-panel"]');
    if ((await panel.count()) === 0) return [];
    const collapsed = panel.locator('button[aria-expanded="false"]');
    if (await collapsed.count()) await collapsed.first().click({ timeout: 2_000 }).catch(() => undefined);
    return panel.locator('li[data-status]').evaluateAll((elements) =>
      elements.map((el) => ({ content: (el.textContent ?? '').trim(), status: el.getAttribute('data-status') as Status })),
    );
  }

  async function expectPanel(expected: PanelItem[], timeout = 10_000): Promise<void> {
    await expect.poll(readPanel, { timeout, interval: 100 }).toEqual(expected);
  }

  /** Sends a prompt with the model scripted, waits for the scripted answer; returns the todos frames of the turn. */
  async function turn(prompt: string, script: Behaviour[], answer: string): Promise<TodosFrame[]> {
    const from = frames.length;
    model.setScript([...script, text(answer)]);
    const started = Date.now();
    const box = page.locator('textarea[placeholder="Message the agent"], textarea[placeholder="Describe what you want to build"]');
    await box.first().fill(prompt);
    await box.first().press('Enter');
    await page.getByText(answer, { exact: true }).first().waitFor({ timeout: 30_000 });
    mark(`turn "${prompt}"`, started);
    expect(model.pending()).toEqual([]);
    return frames.slice(from);
  }

  /** (a) The host cleared the panel at turn start and the bundle put the Work back in the same turn. */
  function expectResetThenMirror(turnFrames: TodosFrame[], mirror: PanelItem[]): void {
    const values = turnFrames.map((f) => f.value);
    const reset = values.indexOf(null);
    expect(reset, `todos frames of the turn: ${JSON.stringify(values)}`).toBeGreaterThanOrEqual(0);
    expect(values.slice(reset + 1), `todos frames of the turn: ${JSON.stringify(values)}`).toContainEqual(mirror);
  }

  beforeAll(async () => {
    const executablePath = chromiumOrExplain();
    const t0 = Date.now();
    fs.mkdirSync(OUT, { recursive: true });
    for (const old of fs.readdirSync(OUT)) if (old.endsWith('.png')) fs.rmSync(path.join(OUT, old));
    await ensureDsh();
    mark('ensureDsh', t0);

    sim = await startSimulator();
    model = await startFakeModel();
    home = makeDshHome();
    project = fs.realpathSync(fs.mkdtempSync(path.join(home, 'project-')));
    let t = Date.now();
    await prepareProfile(home, 'web');
    mark('installBundle', t);

    // Bind the project directory to a simulator list holding one human task with two checklist items.
    const list = sim.seedProject({ name: 'Agent work' });
    taskId = sim.seedTask({ projectId: list.id, title: 'Prepare the release notes', priority: 3, items: [{ title: STEP_1 }, { title: STEP_2 }] }).id;
    const configDir = path.join(home, '.test-xdg', 'config', 'dida-todo');
    fs.mkdirSync(configDir, { recursive: true });
    fs.writeFileSync(
      path.join(configDir, 'config.yaml'),
      [`baseUrl: ${sim.baseUrl}`, 'bindings:', `  - cwd: ${project}`, `    projectId: ${list.id}`, '    label: Agent work', ''].join('\n'),
    );
    const overlay = path.join(home, 'dida-row.yml');
    fs.writeFileSync(overlay, '- id: dida-todo\n  config:\n    maxAutoContinue: 2\n    backoff: [0.2]\n');

    t = Date.now();
    web = await startWeb({ home, cwd: project, baseUrl: model.baseUrl, env: { DIDA_TODO_TOKEN: sim.token }, patches: [overlay] });
    mark('startWeb', t);

    t = Date.now();
    userData = fs.mkdtempSync(path.join(os.tmpdir(), 'dida-todo-chromium-'));
    context = await chromium.launchPersistentContext(userData, {
      executablePath,
      args: CHROMIUM_ARGS,
      viewport: { width: 1000, height: 720 },
      timeout: 30_000,
    });
    mark('chromium launch', t);
    page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(15_000);
    await page.addInitScript({ content: PANEL_OBSERVER });
    // Registered before goto: the turn-start reset is only visible in the websocket traffic.
    page.on('websocket', (ws) => {
      ws.on('framereceived', ({ payload }) => {
        const text = typeof payload === 'string' ? payload : payload.toString('utf8');
        for (const value of todosValues(text)) frames.push({ at: Date.now(), value });
      });
    });

    t = Date.now();
    await page.goto(web.url, { waitUntil: 'domcontentloaded' });
    await page.getByRole('button', { name: 'Send message' }).waitFor({ timeout: 30_000 });
    mark('app ready', t);

    // First run of a fresh DSH_HOME only: the testing notice. It can show up a moment after the app is ready, so it
    // is dismissed whenever it is visible before an action (an unconditional click would time out when it never comes).
    const notice = page.getByRole('dialog').filter({ hasText: 'Internal Testing Notice' });
    await page.addLocatorHandler(notice, async (dialog) => {
      await dialog.getByRole('button', { name: 'Continue' }).click();
      noticeDismissed = true;
    });

    // The workspace is the bound project directory.
    t = Date.now();
    await page.getByRole('button', { name: 'Choose workspace' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'Select Workspace Directory' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Edit path' }).click();
    const pathInput = dialog.locator('input[aria-label="Edit path"]');
    await pathInput.fill(project);
    await pathInput.press('Enter');
    await dialog.getByRole('button', { name: 'Open', exact: true }).click();
    await dialog.waitFor({ state: 'hidden' });
    mark('workspace chosen', t);
    mark('setup total', t0);
  });

  afterAll(async () => {
    const t = Date.now();
    fs.mkdirSync(OUT, { recursive: true });
    const panelLog = page ? await page.evaluate('window.__panelLog').catch(() => null) : null;
    fs.writeFileSync(path.join(OUT, 'panel-dom-log.json'), `${JSON.stringify(panelLog, null, 2)}\n`);
    await context?.close().catch(() => undefined);
    await web?.stop().catch(() => undefined);
    await model?.close();
    await sim?.close();
    mark('teardown', t);
    if (home) removeDshHome(home);
    if (userData) fs.rmSync(userData, { recursive: true, force: true });
    fs.mkdirSync(OUT, { recursive: true });
    fs.writeFileSync(path.join(OUT, 'timings.json'), `${JSON.stringify({ ...timings, noticeDismissed }, null, 2)}\n`);

    fs.writeFileSync(path.join(OUT, 'todos-frames.json'), `${JSON.stringify(frames, null, 2)}\n`);
    if (web) fs.writeFileSync(path.join(OUT, 'dsh-web.stderr.log'), web.stderr());
  });

  it('shows the Work taken with "todo_work next": exactly its two Dida steps, pending', async () => {
    const turnFrames = await turn('检查todo', [toolCall('todo_work', { action: 'next' })], 'Took the release notes Work.');
    const mirror: PanelItem[] = [
      { content: STEP_1, status: 'pending' },
      { content: STEP_2, status: 'pending' },
    ];
    await expectPanel(mirror);
    await screenshot('work-taken');
    expect(turnFrames.map((f) => f.value)).toContainEqual(mirror);
  });

  it('marks a step completed when the model completes it in Dida, and comes back after the turn-start reset', async () => {
    const turnFrames = await turn(
      'Finish the first step',
      [toolCall('todo', { action: 'update', updates: [{ step: STEP_1, status: 'completed', resolution: 'Collected 12 changes since v0.3.0' }] })],
      'First step done.',
    );
    const mirror: PanelItem[] = [
      { content: STEP_1, status: 'completed' },
      { content: STEP_2, status: 'pending' },
    ];
    await expectPanel(mirror);
    await screenshot('step-completed');
    // Dida has it too.
    expect(sim.getTask(taskId)?.items?.map((i) => i.status)).toEqual([1, 0]);
    // (a) turn/start cleared the panel (the Work was shown before), and the bundle re-published it in the turn.
    expectResetThenMirror(turnFrames, [
      { content: STEP_1, status: 'pending' },
      { content: STEP_2, status: 'pending' },
    ]);
    expect(turnFrames.at(-1)?.value).toEqual(mirror);
  });

  it('picks up a checklist item the person added in Dida at the next turn', async () => {
    const task = sim.getTask(taskId)!;
    sim.editTask(taskId, { items: [...(task.items ?? []), { title: STEP_3, status: 0 }] });
    // A plain-text turn: the person's message itself makes the bundle read the list before the turn's first step.
    const turnFrames = await turn('Anything new in Dida?', [], 'Saw the new step.');
    const mirror: PanelItem[] = [
      { content: STEP_1, status: 'completed' },
      { content: STEP_2, status: 'pending' },
      { content: STEP_3, status: 'pending' },
    ];
    await expectPanel(mirror);
    await screenshot('person-added-step');
    expect(turnFrames.map((f) => f.value)).toContain(null);
    expect(turnFrames.at(-1)?.value).toEqual(mirror);
  });

  it("lets the model's own todo_write win for the rest of its turn, and puts the Dida mirror back at the next turn", async () => {
    const mirror: PanelItem[] = [
      { content: STEP_1, status: 'completed' },
      { content: STEP_2, status: 'pending' },
      { content: STEP_3, status: 'pending' },
    ];
    // (b) pre-step publishes the mirror, then the model replaces the list with its own plan.
    const modelTurn = await turn('Make your own plan', [toolCall('todo_write', { todos: MODEL_PLAN })], 'Planned my own way.');
    await expectPanel(MODEL_PLAN);
    await screenshot('model-todo-write');
    const values = modelTurn.map((f) => f.value);
    const mirrorAt = values.findIndex((v) => JSON.stringify(v) === JSON.stringify(mirror));
    const planAt = values.findIndex((v) => JSON.stringify(v) === JSON.stringify(MODEL_PLAN));
    expect(mirrorAt, JSON.stringify(values)).toBeGreaterThanOrEqual(0);
    expect(planAt, JSON.stringify(values)).toBeGreaterThan(mirrorAt);
    expect(values.at(-1)).toEqual(MODEL_PLAN);

    // Next turn (plain text answer): the host resets the panel and the bundle's mirror is back.
    const nextTurn = await turn('Thanks, carry on', [], 'Carrying on.');
    await expectPanel(mirror);
    await screenshot('mirror-back');
    expectResetThenMirror(nextTurn, mirror);
    expect(nextTurn.at(-1)?.value).toEqual(mirror);
  });

  it("re-publishes the Dida mirror in the same turn when the Work changes after the model's todo_write", async () => {
    // The model writes its own plan, then completes a Dida step: the Work changed after the model's list, so the
    // bundle's next publish (after the tool call) is the latest write and the panel shows the Work again.
    const turnFrames = await turn(
      'Plan, then finish the draft',
      [
        toolCall('todo_write', { todos: MODEL_PLAN }),
        toolCall('todo', { action: 'update', updates: [{ step: STEP_2, status: 'completed', resolution: 'Draft written in docs/release.md' }] }),
      ],
      'Draft finished.',
    );
    const mirror: PanelItem[] = [
      { content: STEP_1, status: 'completed' },
      { content: STEP_2, status: 'completed' },
      { content: STEP_3, status: 'pending' },
    ];
    await expectPanel(mirror);
    await screenshot('work-changed-after-model-plan');
    const values = turnFrames.map((f) => JSON.stringify(f.value));
    expect(values.indexOf(JSON.stringify(MODEL_PLAN)), values.join('\n')).toBeGreaterThanOrEqual(0);
    expect(values.at(-1)).toEqual(JSON.stringify(mirror));
  });
});
