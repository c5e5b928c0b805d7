// The simulator's page as the person's phone, in Debian's chromium: the person writes a task there (with a priority
// and a checklist), ticks and comments, and a real dsh headless run (`检查todo`, scripted fake model) takes it; the
// page shows the agent's claim by itself. Task text from the store is shown as text, never as HTML.
//
// Runs with `npm run test:browser` (skipped under the default config).
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { ensureDsh, makeDshHome, removeDshHome, repoRoot, runHeadless } from '../e2e/harness/dsh-run';
import { prepareProfile } from '../e2e/harness/profile';
import { startFakeModel, text, toolCall, type FakeModel } from '../e2e/harness/fake-model';
import { chromiumOrExplain, CHROMIUM_ARGS } from './chromium';

const ENABLED = process.env.DIDA_TODO_BROWSER_TEST === '1';
const OUT = path.join(repoRoot, 'test-output', 'browser');

describe.skipIf(!ENABLED)('the simulator page: a person writes a task, a real dsh session takes it', () => {
  let sim: Simulator;
  let model: FakeModel;
  let home: string;
  let project: string;
  let browser: Browser;
  let page: Page;
  let listId: string;

  beforeAll(async () => {
    const executablePath = chromiumOrExplain();
    await ensureDsh();
    sim = await startSimulator();
    model = await startFakeModel();
    home = makeDshHome();
    project = path.join(fs.realpathSync(home), 'shop');
    fs.mkdirSync(project);
    await prepareProfile(home, 'headless');
    listId = sim.seedProject({ name: '工作清单' }).id;
    const configDir = path.join(home, '.test-xdg', 'config', 'dida-todo');
    fs.mkdirSync(configDir, { recursive: true });
    fs.writeFileSync(path.join(configDir, 'config.yaml'), [`baseUrl: ${sim.baseUrl}`, 'bindings:', `  - cwd: ${project}`, `    projectId: ${listId}`, '    label: 工作清单', ''].join('\n'));
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS, timeout: 30_000 });
    page = await (await browser.newContext({ locale: 'zh-CN', viewport: { width: 720, height: 1100 } })).newPage();
    page.setDefaultTimeout(15_000);
  });

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    await model?.close();
    await sim?.close();
    if (home) removeDshHome(home);
  });

  const card = (title: string) => page.locator('[data-testid="task"]').filter({ has: page.getByTestId('task-title').getByText(title, { exact: true }) });

  it('opens only with the token, in Chinese', async () => {
    const refused = await page.goto(`${sim.origin}/`);
    expect(refused?.status()).toBe(403);
    expect(await page.locator('h1').innerText()).toBe('需要模拟器的口令');
    await page.goto(sim.pageUrl);
    // The token left the address (it is in an HttpOnly cookie now).
    expect(page.url()).toBe(`${sim.origin}/`);
    await page.getByRole('heading', { name: '滴答模拟器' }).waitFor();
    expect(await page.getByTestId('list').inputValue()).toBe(listId);
    expect(await page.evaluate('document.cookie')).toBe('');
  });

  it('adds a task with a priority, a checklist and a tag; ticks, unticks and comments, all seen through the Open API', async () => {
    await page.getByTestId('add-title').fill('修复登录页白屏');
    await page.getByTestId('add-description').fill('Safari 上打开登录页是白屏');
    await page.getByTestId('add-items').fill('复现\n修复\n回归测试');
    await page.getByTestId('add-tags').fill('web');
    await page.getByTestId('add-priority').selectOption('5');
    await page.getByTestId('add-submit').click();
    const task = card('修复登录页白屏');
    await task.waitFor();
    expect(await page.getByTestId('add-title').inputValue()).toBe('');
    expect(await task.getByTestId('priority').innerText()).toBe('高');
    expect(await task.getByTestId('tag').innerText()).toBe('#web');
    const [stored] = sim.listTasks(listId);
    expect(stored).toMatchObject({ title: '修复登录页白屏', priority: 5, desc: 'Safari 上打开登录页是白屏', tags: ['web'], kind: 'CHECKLIST' });
    expect(stored?.items?.map((i) => i.title)).toEqual(['复现', '修复', '回归测试']);

    const first = task.getByTestId('item').filter({ hasText: '回归测试' }).locator('input[type=checkbox]');
    await first.check();
    await expect.poll(() => sim.getTask(stored!.id)?.items?.[2]?.status).toBe(1);
    await first.uncheck();
    await expect.poll(() => sim.getTask(stored!.id)?.items?.[2]?.status).toBe(0);

    await task.getByTestId('comment-input').fill('先看 Safari 17');
    await task.getByTestId('comment-send').click();
    await expect.poll(() => sim.listComments(stored!.id).map((c) => [c.title, String(c.userId)])).toEqual([['先看 Safari 17', sim.userId]]);
    await task.getByTestId('comment').filter({ hasText: '先看 Safari 17' }).waitFor();
  });

  it('shows what others write by itself, and as text only', async () => {
    const hostile = '<img src=x onerror="window.__pwned=1"><b>粗体</b>';
    sim.seedTask({ projectId: listId, title: hostile, content: '<script>window.__pwned=2</script>', priority: 0 });
    // No reload: the page polls its own data endpoint.
    const shown = card(hostile);
    await shown.waitFor({ timeout: 10_000 });
    expect(await shown.getByTestId('task-description').innerText()).toBe('<script>window.__pwned=2</script>');
    expect(await shown.getByTestId('task-title').innerText()).toBe(hostile);
    expect(await page.locator('main img, main script').count()).toBe(0);
    expect(await shown.locator('b').filter({ hasText: '粗体' }).count()).toBe(0);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
  });

  it('a real dsh session takes the task on 检查todo; the page shows its claim and its tick by itself', async () => {
    const task = sim.listTasks(listId).find((t) => t.title === '修复登录页白屏')!;
    model.setScript([
      toolCall('todo_work', { action: 'next' }),
      toolCall('todo', { action: 'update', updates: [{ step: '复现', status: 'completed', resolution: '在 Safari 17 上复现了白屏' }, { step: '修复', status: 'in_progress' }] }),
      text('已领取修复登录页白屏'),
    ]);
    const run = await runHeadless({ home, cwd: project, prompt: '检查todo', baseUrl: model.baseUrl, env: { DIDA_TODO_TOKEN: sim.token }, timeoutMs: 90_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(model.pending()).toEqual([]);
    // The world: the claim comment and the ticked item on the task the person wrote (not on the draft).
    const comments = sim.listComments(task.id).map((c) => c.title);
    expect(comments[0]).toBe('先看 Safari 17');
    expect(comments.some((c) => /^🤖 .+ 开始处理（会话 [0-9a-z]+）$/.test(c))).toBe(true);
    // The one-shot ended with steps open: it gave the Work back, and said so (issue 22).
    expect(comments.filter((c) => /^🤖 .+ 停止处理（会话 [0-9a-z]+）：已完成 1\/3 步/.test(c))).toHaveLength(1);
    expect(sim.getTask(task.id)?.items?.map((i) => [i.title, i.status])).toEqual([['复现', 1], ['修复', 0], ['回归测试', 0]]);
    const draft = sim.listTasks(listId).find((t) => t.priority === 0)!;
    expect(sim.listComments(draft.id)).toEqual([]);

    const shown = card('修复登录页白屏');
    await shown.getByTestId('comment').filter({ hasText: /🤖 \S+ 开始处理/ }).waitFor({ timeout: 10_000 });
    await shown.getByTestId('comment').filter({ hasText: /🤖 \S+ 停止处理/ }).waitFor({ timeout: 10_000 });
    await expect.poll(async () => shown.getByTestId('item').evaluateAll((els) => els.map((el) => el.getAttribute('data-done')))).toEqual(['true', 'false', 'false']);
    fs.mkdirSync(OUT, { recursive: true });
    await page.screenshot({ path: path.join(OUT, 'sim-page-zh.png'), fullPage: true });
  });

  it('completes and reopens from the page', async () => {
    const shown = card('修复登录页白屏');
    await shown.getByTestId('complete').click();
    await page.locator('details.done-list summary').click();
    const done = page.locator('[data-testid="done-task"]').filter({ hasText: '修复登录页白屏' });
    await done.waitFor();
    const id = await done.getAttribute('data-task-id');
    expect(sim.getTask(id!)?.status).toBe(2);
    await done.getByTestId('reopen').click();
    await card('修复登录页白屏').waitFor();
    expect(sim.getTask(id!)?.status).toBe(0);
  });
});

