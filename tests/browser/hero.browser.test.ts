// The README's hero screenshot (docs/panel.png): the dsh web UI in Chinese, a realistic Work taken with 检查todo,
// its Dida checklist mirrored in the task panel. Real `dsh --profile web`, a scripted fake model, the simulator.
//
// Runs with `npm run test:browser` (skipped under the default config). Writes docs/panel.png and a copy in
// test-output/browser/.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { ensureDsh, makeDshHome, removeDshHome, repoRoot, startWeb, type WebDsh } from '../e2e/harness/dsh-run';
import { prepareProfile } from '../e2e/harness/profile';
import { startFakeModel, text, toolCall, type FakeModel } from '../e2e/harness/fake-model';
import { chromiumOrExplain, CHROMIUM_ARGS } from './chromium';

const ENABLED = process.env.DIDA_TODO_BROWSER_TEST === '1';
const OUT = path.join(repoRoot, 'test-output', 'browser');
const HERO = path.join(repoRoot, 'docs', 'panel.png');

const WORK_TITLE = '修复登录页在 Safari 上白屏的问题';
const STEPS = ['复现：Safari 17 打开登录页后白屏', '定位：构建产物里没有转译的可选链', '修复：为 Safari 目标加上转译', '回归测试：登录、注册、找回密码'];
const ANSWER = `已领取「${WORK_TITLE}」：白屏已复现，正在定位原因。`;

describe.skipIf(!ENABLED)('README hero screenshot: the Chinese dsh web UI with a Work mirrored from Dida', () => {
  let sim: Simulator;
  let model: FakeModel;
  let home: string;
  let project: string;
  let web: WebDsh;
  let context: BrowserContext;
  let page: Page;
  let userData: string;

  beforeAll(async () => {
    const executablePath = chromiumOrExplain();
    await ensureDsh();
    sim = await startSimulator();
    model = await startFakeModel();
    home = makeDshHome();
    project = path.join(fs.realpathSync(home), 'web-shop');
    fs.mkdirSync(project);
    await prepareProfile(home, 'web');

    const list = sim.seedProject({ name: '产品迭代' });
    sim.seedTask({
      projectId: list.id,
      title: WORK_TITLE,
      priority: 5,
      content: '用户反馈：iPhone 和 Mac 上的 Safari 打开登录页是白屏，Chrome 正常。',
      items: STEPS.map((title) => ({ title })),
    });
    sim.seedTask({ projectId: list.id, title: '整理下个版本的发布说明', priority: 0 });
    const configDir = path.join(home, '.test-xdg', 'config', 'dida-todo');
    fs.mkdirSync(configDir, { recursive: true });
    fs.writeFileSync(path.join(configDir, 'config.yaml'), [`baseUrl: ${sim.baseUrl}`, 'bindings:', `  - cwd: ${project}`, `    projectId: ${list.id}`, '    label: 产品迭代', ''].join('\n'));
    // The Chinese UI, and the session titled by its first prompt (no model-made title).
    fs.writeFileSync(path.join(home, 'settings.yaml'), 'locale:\n  preference: zh\n');
    const overlay = path.join(home, 'hero.yml');
    fs.writeFileSync(overlay, '- id: session-title-llm\n  disabled: true\n');
    web = await startWeb({ home, cwd: project, baseUrl: model.baseUrl, env: { DIDA_TODO_TOKEN: sim.token }, patches: [overlay] });

    userData = fs.mkdtempSync(path.join(os.tmpdir(), 'dida-todo-chromium-'));
    context = await chromium.launchPersistentContext(userData, { executablePath, args: CHROMIUM_ARGS, locale: 'zh-CN', viewport: { width: 1200, height: 720 }, timeout: 30_000 });
    page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(15_000);
    await page.goto(web.url, { waitUntil: 'domcontentloaded' });
    await page.getByRole('button', { name: '发送消息' }).waitFor({ timeout: 30_000 });
    const notice = page.getByRole('dialog').filter({ hasText: '内测声明' });
    await page.addLocatorHandler(notice, async (dialog) => {
      await dialog.getByRole('button', { name: '继续' }).click();
    });
    await page.getByRole('button', { name: '选择工作区' }).first().click();
    const dialog = page.getByRole('dialog', { name: '选择工作区目录' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: '编辑路径' }).click();
    const pathInput = dialog.locator('input[aria-label="编辑路径"]');
    await pathInput.fill(project);
    await pathInput.press('Enter');
    await dialog.getByRole('button', { name: '打开', exact: true }).click();
    await dialog.waitFor({ state: 'hidden' });
  });

  afterAll(async () => {
    await context?.close().catch(() => undefined);
    await web?.stop().catch(() => undefined);
    await model?.close();
    await sim?.close();
    if (home) removeDshHome(home);
    if (userData) fs.rmSync(userData, { recursive: true, force: true });
  });

  it('takes the Work with 检查todo, shows its Dida steps in the panel, and saves docs/panel.png', async () => {
    model.setScript([
      toolCall('todo_work', { action: 'next' }),
      toolCall('todo', { action: 'update', updates: [{ step: STEPS[0], status: 'completed', resolution: '在 Safari 17.4 上稳定复现，控制台报 SyntaxError' }, { step: STEPS[1], status: 'in_progress' }] }),
      text(ANSWER),
      // dsh web 0.1.0-rc.8 now and then sends the composer's message a second time once the first turn has ended (seen
      // in about one run in four): that turn gets the same answer rather than the scripted model's placeholder.
      text(ANSWER),
    ]);
    const box = page.locator('textarea[placeholder="给智能体发消息"], textarea[placeholder="描述你想要构建的内容"]');
    await box.first().fill('检查todo');
    await box.first().press('Enter');
    await page.getByText(ANSWER, { exact: true }).first().waitFor({ timeout: 30_000 });
    // The Work was taken and its steps changed by the first turn's three requests.
    expect(model.chatRequests().length).toBeGreaterThanOrEqual(3);
    expect(model.pending().length).toBeLessThanOrEqual(1);

    const panel = page.locator('[data-testid="todo-panel"]');
    const read = async () => {
      if ((await panel.count()) === 0) return [];
      const collapsed = panel.locator('button[aria-expanded="false"]');
      if (await collapsed.count()) await collapsed.first().click({ timeout: 2_000 }).catch(() => undefined);
      return panel.locator('li[data-status]').evaluateAll((els) => els.map((el) => ({ content: (el.textContent ?? '').trim(), status: el.getAttribute('data-status') })));
    };
    await expect
      .poll(read, { timeout: 15_000, interval: 100 })
      .toEqual([
        { content: STEPS[0], status: 'completed' },
        { content: STEPS[1], status: 'in_progress' },
        { content: STEPS[2], status: 'pending' },
        { content: STEPS[3], status: 'pending' },
      ]);
    // The Work's title is on screen (the agent names it), the UI is Chinese, and no test placeholder shows.
    await expect.poll(async () => page.getByText(WORK_TITLE).count()).toBeGreaterThan(0);
    const body = (await page.locator('body').innerText()).replace(/\s+/g, ' ');
    expect(body).not.toMatch(/Fake session title|FAKE_|Message the agent/);
    expect(body).toContain('检查todo');

    fs.mkdirSync(OUT, { recursive: true });
    const shot = path.join(OUT, 'hero-zh.png');
    await page.screenshot({ path: shot });
    fs.copyFileSync(shot, HERO);
    expect(fs.statSync(HERO).size).toBeGreaterThan(20_000);
  });
});
