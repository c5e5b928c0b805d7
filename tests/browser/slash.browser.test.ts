// `/dida …` typed in the real dsh web composer (Debian chromium): the bundle answers in the conversation without a
// model request; `/dida run` starts the same turn the trigger phrase does, and the Work is taken in Dida.
//
// Runs with `npm run test:browser` (skipped under the default config). Screenshots go to test-output/browser/.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { ensureDsh, eventsOf, makeDshHome, readSessionLogs, removeDshHome, repoRoot, startWeb, type WebDsh } from '../e2e/harness/dsh-run';
import { prepareProfile } from '../e2e/harness/profile';
import { startFakeModel, text, toolCall, type FakeModel } from '../e2e/harness/fake-model';
import { chromiumOrExplain, CHROMIUM_ARGS } from './chromium';

const ENABLED = process.env.DIDA_TODO_BROWSER_TEST === '1';
const OUT = path.join(repoRoot, 'test-output', 'browser');

describe.skipIf(!ENABLED)('/dida slash commands in dsh web (real browser)', () => {
  let sim: Simulator;
  let model: FakeModel;
  let home: string;
  let project: string;
  let web: WebDsh;
  let context: BrowserContext;
  let page: Page;
  let userData: string;
  let workId: string;

  beforeAll(async () => {
    const executablePath = chromiumOrExplain();
    await ensureDsh();
    sim = await startSimulator();
    model = await startFakeModel();
    home = makeDshHome();
    project = fs.realpathSync(fs.mkdtempSync(path.join(home, 'project-')));
    await prepareProfile(home, 'web');
    const list = sim.seedProject({ name: '工作清单' });
    workId = sim.seedTask({ projectId: list.id, title: '修复登录', priority: 5, items: [{ title: '复现' }, { title: '修复' }] }).id;
    sim.seedTask({ projectId: list.id, title: '想法', priority: 0 });
    const configDir = path.join(home, '.test-xdg', 'config', 'dida-todo');
    fs.mkdirSync(configDir, { recursive: true });
    // The directory is not bound yet: /dida bind does it. Polling off: the commands, not the poller, take the work here.
    fs.writeFileSync(path.join(configDir, 'config.yaml'), `baseUrl: ${sim.baseUrl}\npoll: false\nbindings: []\n`);
    web = await startWeb({ home, cwd: project, baseUrl: model.baseUrl, env: { DIDA_TODO_TOKEN: sim.token } });

    userData = fs.mkdtempSync(path.join(os.tmpdir(), 'dida-todo-chromium-'));
    context = await chromium.launchPersistentContext(userData, { executablePath, args: CHROMIUM_ARGS, viewport: { width: 1100, height: 760 }, timeout: 30_000 });
    page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(15_000);
    await page.goto(web.url, { waitUntil: 'domcontentloaded' });
    await page.getByRole('button', { name: 'Send message' }).waitFor({ timeout: 30_000 });
    const notice = page.getByRole('dialog').filter({ hasText: 'Internal Testing Notice' });
    await page.addLocatorHandler(notice, async (dialog) => {
      await dialog.getByRole('button', { name: 'Continue' }).click();
    });
    await page.getByRole('button', { name: 'Choose workspace' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'Select Workspace Directory' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Edit path' }).click();
    const pathInput = dialog.locator('input[aria-label="Edit path"]');
    await pathInput.fill(project);
    await pathInput.press('Enter');
    await dialog.getByRole('button', { name: 'Open', exact: true }).click();
    await dialog.waitFor({ state: 'hidden' });
  });

  afterAll(async () => {
    await context?.close().catch(() => undefined);
    if (web) {
      fs.mkdirSync(OUT, { recursive: true });
      fs.writeFileSync(path.join(OUT, 'slash-dsh-web.stderr.log'), web.stderr());
    }
    await web?.stop().catch(() => undefined);
    await model?.close();
    await sim?.close();
    if (home) removeDshHome(home);
    if (userData) fs.rmSync(userData, { recursive: true, force: true });
  });

  const composer = () => page.locator('textarea[placeholder="Message the agent"], textarea[placeholder="Describe what you want to build"]').first();

  /** Types a command line into the composer and waits until its answer shows in the conversation. */
  async function command(line: string, answer: RegExp): Promise<void> {
    await composer().click();
    await composer().pressSequentially(line, { delay: 5 });
    await composer().press('Enter');
    try {
      await page.getByText(answer).first().waitFor({ timeout: 20_000 });
    } catch (error) {
      fs.mkdirSync(OUT, { recursive: true });
      await page.screenshot({ path: path.join(OUT, 'slash-failed.png') });
      throw error;
    }
  }

  it('in a brand-new session a command runs at once, though dsh rc.8 shows its answer only once the session has a message', async () => {
    await composer().click();
    await composer().pressSequentially('/dida bind 工作清单', { delay: 5 });
    await composer().press('Enter');
    const config = path.join(home, '.test-xdg', 'config', 'dida-todo', 'config.yaml');
    await expect.poll(() => fs.readFileSync(config, 'utf8'), { timeout: 15_000 }).toContain(project).catch((error: unknown) => {
      console.log(fs.readFileSync(config, 'utf8'));
      console.log(web.stderr().slice(-3000));
      throw error;
    });
    expect(model.requests).toEqual([]);
  });

  it('/dida status and queue are answered in the conversation by the bundle, and the model is never asked', async () => {
    model.setScript([text('你好，我在。')]);
    await composer().fill('你好');
    await composer().press('Enter');
    await page.getByText('你好，我在。', { exact: true }).first().waitFor({ timeout: 30_000 });
    await expect.poll(() => model.chatRequests().length).toBe(1);
    // Now the answer to the command typed in the empty session shows, at the top of the conversation.
    await page.getByText(`已把 ${project} 绑定到「工作清单」。`).first().waitFor();
    const before = model.requests.length;
    await command('/dida queue', /「工作清单」的队列：1 个可执行，共 2 个未完成/);
    // The reply is a command card in the conversation; its full text opens below it.
    await page.getByText(/「工作清单」的队列/).first().click();
    await page.locator('pre').filter({ hasText: '1. [高] 修复登录 0/2' }).first().waitFor();
    await command('/dida status', /已绑定「工作清单」：1 个可执行/);
    await command('/dida nope', /没有 \/dida nope 这个命令/);
    // Give a stray request time to arrive, then check none came: commands cost no model tokens.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(model.requests.slice(before)).toEqual([]);
    expect(sim.listComments(workId)).toEqual([]);
    fs.mkdirSync(OUT, { recursive: true });
    await page.screenshot({ path: path.join(OUT, 'slash-queue.png') });
    // The session log has each command's lifecycle; no command ever became a message.
    const logs = await readSessionLogs(home);
    expect(logs.flatMap((log) => eventsOf(log, 'command/run')).map((e) => (e.data as { args: string }).args)).toEqual(expect.arrayContaining([' queue', ' status', ' nope']));
    expect(logs.flatMap((log) => eventsOf(log, 'user/message')).filter((e) => /\/dida (bind|queue|status|nope)/.test(JSON.stringify(e.data)))).toEqual([]);
  });

  it('/dida run takes the top Work of the queue (the same grant as 检查todo); /dida pause and resume act on it', async () => {
    model.setScript([toolCall('todo_work', { action: 'next' }), text('已领取修复登录')]);
    const earlier = model.chatRequests().length;
    await command('/dida run', /从队列领取工作/);
    await page.getByText('已领取修复登录', { exact: true }).first().waitFor({ timeout: 30_000 });
    expect(model.pending()).toEqual([]);
    await expect.poll(() => sim.listComments(workId).map((c) => c.title).some((t) => /^🤖 .+ 开始处理（会话 /.test(t))).toBe(true);
    // The turn was given the note and the queue itself, as the trigger phrase gives it.
    const first = JSON.stringify(model.chatRequests()[earlier]?.body?.messages ?? []);
    expect(first).toContain('/dida run');
    expect(first).toContain('修复登录');

    const asked = model.requests.length;
    await command('/dida pause', /已暂停「修复登录」/);
    expect(sim.getTask(workId)?.priority).toBe(0);
    await command('/dida status', /已暂停/);
    model.setScript([text('接着做修复登录')]);
    await command('/dida resume', /已恢复「修复登录」/);
    expect(sim.getTask(workId)?.priority).toBe(5);
    // Resuming lets the session carry on: one new turn, the only model requests since the pause.
    await page.getByText('接着做修复登录', { exact: true }).first().waitFor({ timeout: 30_000 });
    expect(model.requests.slice(asked).filter((r) => r.behaviour !== 'title').length).toBe(1);
    await page.screenshot({ path: path.join(OUT, 'slash-run.png') });
  });
  it('a pause from the phone shows in the session: a card says where it stopped, the panel shows it paused and no step in progress', async () => {
    // The session works on the Work: its first step in progress, the panel mirrors it.
    model.setScript([toolCall('todo', { action: 'update', updates: [{ step: '复现', status: 'in_progress' }] }), text('在复现')]);
    await composer().fill('复现一下');
    await composer().press('Enter');
    await page.getByText('在复现', { exact: true }).first().waitFor({ timeout: 30_000 });
    const panel = page.locator('[data-testid="todo-panel"]');
    const items = async () => {
      if ((await panel.count()) === 0) return [] as Array<{ content: string; status: string | null }>;
      const collapsed = panel.locator('button[aria-expanded="false"]');
      if (await collapsed.count()) await collapsed.first().click({ timeout: 2_000 }).catch(() => undefined);
      return panel.locator('li[data-status]').evaluateAll((elements) => elements.map((el) => ({ content: (el.textContent ?? '').trim(), status: el.getAttribute('data-status') })));
    };
    await expect.poll(items, { timeout: 15_000 }).toContainEqual({ content: '复现', status: 'in_progress' });
    // On the phone: priority none while the session is idle; then the person types in the session.
    sim.editTask(workId, { priority: 0 });
    model.setScript([text('好的，先停下')]);
    await composer().fill('现在怎么样');
    await composer().press('Enter');
    await page.getByText(/已暂停（来自滴答）：「修复登录」停在「复现」/).first().waitFor({ timeout: 30_000 });
    await expect.poll(items, { timeout: 15_000 }).toEqual([
      { content: '⏸ 已暂停（来自滴答）：修复登录', status: 'pending' },
      { content: '复现', status: 'pending' },
      { content: '修复', status: 'pending' },
    ]);
    expect(await panel.locator('li[data-status="in_progress"]').count()).toBe(0);
    await panel.first().screenshot({ path: path.join(OUT, 'slash-paused-panel.png') });
    await page.screenshot({ path: path.join(OUT, 'slash-paused.png') });
    expect(sim.listComments(workId).some((c) => c.title.startsWith('已暂停：停在「复现」'))).toBe(true);
  });
});
