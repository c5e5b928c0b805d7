// The demo without dsh: its arguments, the Dida view printer on simulator state, the real-list rules, and the whole
// guided flow with an in-process agent standing in for dsh (same tools, same settle at idle, same config.yaml).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main as cliMain } from '../../src/cli/cli';
import { demoCommand, isClone } from '../../src/cli/commands/demo';
import { detectQueueGrant } from '../../src/core/queue/queue-trigger';
import { TOOLS, type ToolContext } from '../../src/core/tools';
import { formatDidaDate } from '../../src/dida/dida-date';
import { DemoListError, realBackend, simulatorBackend, type DemoBackend } from '../../src/cli/demo/demo-backend';
import { DemoUsageError, parseDemoArgs } from '../../src/cli/demo/demo-args';
import { colorEnabled, demoStyle, explainReminders, renderAcceptance, renderList, triggerOffsetMs } from '../../src/cli/demo/demo-print';
import { runDemo, writeBindingConfig, type DemoHost, type PreparedHost, type SessionResult } from '../../src/cli/demo/demo-runner';
import { DEMO_LIST_NAME, REWORK_COMMENT } from '../../src/cli/demo/demo-script';
import { demoMain } from '../../src/cli/demo/main';
import { cliText } from '../../src/cli/cli-locale';
import { cloneInstall, INSTALL, PACKAGE_VERSION } from '../../src/cli/install-commands';
import { nextSteps } from '../../src/cli/demo/demo-runner';
import { keepPnpmCacheInside } from '../../src/cli/demo/demo-dsh';
import { createHttpGateway } from '../../src/dida/http-gateway';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { findBinding } from '../../src/store/config-bindings';
import { engineProvider, openRuntime } from '../../src/wiring/runtime';
import type { Behaviour } from '../e2e/harness/fake-model';

function capture(isTTY = false) {
  const io = { stdout: '', stderr: '', out: (t: string) => void (io.stdout += t), err: (t: string) => void (io.stderr += t), stdoutIsTTY: isTTY };
  return io;
}

/** Plays a scripted session through the bundle's own tools, then settles like dsh does when the session goes idle. */
class InProcessHost implements DemoHost {
  readonly scripted = true;
  readonly command = 'in-process agent';
  dir = '';
  project = '';
  configFile = '';
  sessions = 0;
  toolCodes: string[] = [];

  async prepare(log: (line: string) => void): Promise<PreparedHost> {
    this.dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'dida-demo-test-')));
    this.project = path.join(this.dir, 'project');
    fs.mkdirSync(this.project);
    this.configFile = path.join(this.dir, 'config', 'config.yaml');
    log('in-process agent ready');
    return { projectDir: this.project, configFile: this.configFile };
  }

  async runSession(prompt: string, script: Behaviour[], env: Record<string, string>): Promise<SessionResult> {
    const started = Date.now();
    const sessionId = `demo-session-${++this.sessions}`;
    const runtime = openRuntime({ env: { HOME: this.dir, ...env }, configPath: this.configFile, stateDir: path.join(this.dir, 'state'), hostLabel: 'demo-test' });
    const engine = engineProvider(runtime);
    try {
      const binding = findBinding(await runtime.config.read(), this.project);
      if (!binding) throw new Error('the project directory is not bound');
      await (await engine()).sync(binding.projectId); // dsh syncs when a bound session is created
      const ctx: ToolContext = {
        sessionId,
        cwd: this.project,
        queueGranted: detectQueueGrant(prompt),
        config: runtime.config,
        engine,
        gateway: () => runtime.gateway(),
        tokenSource: () => runtime.tokenSource(),
      };
      let answer = '';
      for (const behaviour of script) {
        if (behaviour.kind === 'toolCalls') {
          for (const call of behaviour.calls) {
            const tool = TOOLS.find((t) => t.name === call.name);
            if (!tool) throw new Error(`no tool ${call.name}`);
            const result = await tool.execute(call.args as Record<string, unknown>, ctx);
            this.toolCodes.push(`${call.name}:${result.code}`);
          }
        } else if (behaviour.kind === 'text') answer = behaviour.text;
      }
      await (await engine()).settle(sessionId); // dsh settles when the session goes idle
      return { code: 0, stdout: `${answer}\n`, stderr: '', durationMs: Date.now() - started, timedOut: false };
    } finally {
      await runtime.close();
    }
  }

  async close(): Promise<void> {
    if (this.dir) fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

describe('demo arguments', () => {
  it('accepts no arguments, colours flags, --keep and --verbose; picks up a DeepSeek key', () => {
    expect(parseDemoArgs([], {})).toMatchObject({ real: false, keep: false, verbose: false, help: false });
    expect(parseDemoArgs(['--no-color', '--keep', '--verbose'], {})).toMatchObject({ color: false, keep: true, verbose: true });
    expect(parseDemoArgs(['--color'], {}).color).toBe(true);
    expect(parseDemoArgs([], { DEEPSEEK_API_KEY: ' sk-x ' }).apiKey).toBe('sk-x');
    expect(parseDemoArgs(['-h'], {}).help).toBe(true);
  });

  it('takes --real with --list and DIDA_TODO_TOKEN', () => {
    expect(parseDemoArgs(['--real', '--list', '我的演示'], { DIDA_TODO_TOKEN: 'tok' })).toMatchObject({ real: true, list: '我的演示', token: 'tok' });
    expect(parseDemoArgs(['--list=我的演示', '--real'], { DIDA_TODO_TOKEN: 'tok' }).list).toBe('我的演示');
  });

  it.each([
    [['--real'], { DIDA_TODO_TOKEN: 'tok' }, /--real needs --list <name>/],
    [['--real', '--list', 'x'], {}, /--real needs your Dida API token in DIDA_TODO_TOKEN/],
    [['--real', '--list', 'x'], { DIDA_TODO_TOKEN: '   ' }, /DIDA_TODO_TOKEN/],
    [['--real', '--list', '  '], { DIDA_TODO_TOKEN: 'tok' }, /non-empty/],
    [['--real', '--list'], { DIDA_TODO_TOKEN: 'tok' }, /--list needs a value/],
    [['--list', 'x'], { DIDA_TODO_TOKEN: 'tok' }, /only applies with --real/],
    [['--bogus'], {}, /Unknown option "--bogus"/],
    [['--keep=yes'], {}, /takes no value/],
  ] as Array<[string[], NodeJS.ProcessEnv, RegExp]>)('refuses %j', (argv, env, message) => {
    expect(() => parseDemoArgs(argv, env)).toThrow(DemoUsageError);
    expect(() => parseDemoArgs(argv, env)).toThrow(message);
  });

  it('prints one line and exits 2 before starting or writing anything', async () => {
    for (const [argv, env] of [
      [['--real'], { DIDA_TODO_TOKEN: 'tok' }],
      [['--real', '--list', 'x'], {}],
    ] as Array<[string[], NodeJS.ProcessEnv]>) {
      const io = capture();
      let started = 0;
      const code = await demoMain(argv, io, env, {
        host: () => {
          started++;
          throw new Error('must not start');
        },
        backend: async () => {
          started++;
          throw new Error('must not start');
        },
      });
      expect(code).toBe(2);
      expect(started).toBe(0);
      expect(io.stdout).toBe('');
      expect(io.stderr.trim().split('\n')).toHaveLength(1);
      expect(io.stderr).toMatch(/^demo: --real needs/);
    }
  });

  it('--help prints the usage and exits 0', async () => {
    const io = capture();
    expect(await demoMain(['--help'], io, {})).toBe(0);
    expect(io.stdout).toContain('--real');
    expect(io.stdout).toContain('--list <name>');
  });

  it('prints only next steps that work outside the clone and never put a token on the command line', () => {
    const dsh = { dshBin: '/c/dsh/node_modules/.bin/dsh', nodeBinDir: '/c/node/bin', pnpmBinDir: '/c/tools/.bin' };
    for (const steps of [nextSteps(dsh, false), nextSteps(dsh, true), nextSteps(undefined, false)]) {
      const text = steps.join('\n');
      expect(text).toContain(INSTALL.dshPluginAdd('web'));
      expect(text).toContain(INSTALL.linkFromProfile());
      expect(text).toContain('dida-todo login --token -');
      expect(text).toContain('dida-todo doctor');
      expect(text).not.toMatch(/npx dida-todo|<owner>|--token <|--token sim-|add \/|add \.|link:|git\+file|npm run (?!demo)/);
    }
    // The demo's own working dsh is offered, with the overlay it needs (written only when the home layer is new).
    const offered = nextSteps(dsh, false).join('\n');
    expect(offered).toContain(`PATH="%s:%s:$PATH" exec "%s" "$@"\\n' '/c/node/bin' '/c/tools/.bin' '/c/dsh/node_modules/.bin/dsh' > ~/.local/bin/dsh`);
    expect(offered).toContain("printf -- '- id: hmr\\n  disabled: false\\n  config: { root: [] }\\n' > ~/.dsh/cordis.patch.yml");
    expect(nextSteps(dsh, true).join('\n')).not.toContain('> ~/.dsh/cordis.patch.yml');
  });

  it('from a clone, also prints the install of a packed copy of it (the `github:` address fails from a clone)', () => {
    const clone = cloneInstall('/c/my clone');
    const text = nextSteps(undefined, false, { clone }).join('\n');
    expect(clone.dshPluginAdd('web')).toBe(`cd '/c/my clone' && npm pack && dsh plugin --profile web add '/c/my clone/dida-todo-${PACKAGE_VERSION}.tgz'`);
    expect(text).toContain(clone.dshPluginAdd('web'));
    expect(text).toContain(`cd '/c/my clone' && npm pack && npm install -g '/c/my clone/dida-todo-${PACKAGE_VERSION}.tgz'`);
    expect(text).toContain(INSTALL.dshPluginAdd('web'));
    expect(text).toContain(INSTALL.linkFromProfile());
    // The link line comes after both ways of installing, since it serves both.
    expect(text.indexOf(INSTALL.linkFromProfile())).toBeGreaterThan(text.indexOf(clone.dshPluginAdd('web')));
    expect(nextSteps(undefined, false).join('\n')).not.toContain('npm pack');
  });

  it('keeps pnpm\'s cache inside the demo\'s own cache folder, not ~/.cache/pnpm', () => {
    const env: NodeJS.ProcessEnv = {};
    expect(keepPnpmCacheInside('/c/dida-todo-e2e', env)).toBe('/c/dida-todo-e2e/xdg-cache');
    expect(env.XDG_CACHE_HOME).toBe('/c/dida-todo-e2e/xdg-cache');
    const mine: NodeJS.ProcessEnv = { XDG_CACHE_HOME: '/home/me/.cache' };
    keepPnpmCacheInside('/c/dida-todo-e2e', mine);
    expect(mine.XDG_CACHE_HOME).toBe('/c/dida-todo-e2e/xdg-cache');
  });

  it('colours only on a terminal, unless forced (flag or FORCE_COLOR) or NO_COLOR', () => {
    expect(colorEnabled(undefined, true, {})).toBe(true);
    expect(colorEnabled(undefined, false, {})).toBe(false);
    expect(colorEnabled(undefined, true, { NO_COLOR: '1' })).toBe(false);
    expect(colorEnabled(false, true, {})).toBe(false);
    expect(colorEnabled(true, false, {})).toBe(true);
    expect(colorEnabled(undefined, false, { FORCE_COLOR: '1' })).toBe(true);
    expect(colorEnabled(undefined, true, { FORCE_COLOR: '0' })).toBe(false);
  });
});

describe('the Dida view printer', () => {
  let sim: Simulator;
  beforeEach(async () => {
    sim = await startSimulator();
  });
  afterEach(async () => {
    await sim.close();
  });

  it('shows a seeded list as the person wrote it', async () => {
    const backend = await simulatorBackend(sim);
    try {
      const seeded = await backend.seed();
      const lines = renderList(seeded.name, (await backend.gateway.getProjectData(seeded.projectId)).tasks, demoStyle(false)).join('\n');
      expect(lines).toContain('📋 dida-todo 演示');
      expect(lines).toMatch(/☐ 整理发布说明 {2}\[priority medium\]\n {8}☐ 收集变更\n {8}☐ 写草稿\n {8}│ 给 0\.2 版本/);
      expect(lines).toContain('☐ 以后再说  [priority none → a draft, left alone]');
      expect(lines).not.toContain('\u001b[');
    } finally {
      await backend.close();
    }
  });

  it('explains the acceptance reminders as +3 and +6 minutes', () => {
    const filed = Date.UTC(2026, 0, 5, 6, 0, 0);
    const task = { id: 't', projectId: 'p', title: '🧑‍🔬 待验收：x', priority: 3, status: 0, dueDate: formatDidaDate(filed + 3 * 60_000), reminders: ['TRIGGER:PT0S', 'TRIGGER:PT3M'] };
    const text = explainReminders(task, filed).join('\n');
    expect(text).toContain('(+3 min after it was filed)');
    expect(text).toMatch(/reminds you at \d\d:\d\d \(\+3 min\) and \d\d:\d\d \(\+6 min\)/);
    expect(text).toContain('at the due time and again 3 minutes later');
    expect(text).not.toContain('TRIGGER');
    expect(triggerOffsetMs('TRIGGER:-PT5M')).toBe(-300_000);
    expect(triggerOffsetMs('TRIGGER:P0DT9H0M0S')).toBe(9 * 3_600_000);
    expect(triggerOffsetMs('nonsense')).toBeUndefined();
    const card = renderAcceptance({ ...task, desc: '报告\n✅ 收集变更' }, [{ id: 'c', title: '需要返工时…' }], filed, demoStyle(true)).join('\n');
    expect(card).toContain('\u001b[');
    expect(card).toContain('✅ 收集变更');
    expect(card).toContain('💬 需要返工时…');
  });
});

describe('--real list rules (the simulator stands in for the real Dida)', () => {
  let sim: Simulator;
  let backend: DemoBackend;
  beforeEach(async () => {
    sim = await startSimulator();
    backend = realBackend(sim.token, '我的演示', createHttpGateway({ token: sim.token, baseUrl: sim.baseUrl }));
  });
  afterEach(async () => {
    await backend.close();
    await sim.close();
  });

  it('creates the dedicated list when missing and seeds it', async () => {
    const seeded = await backend.seed();
    expect(sim.listProjects().find((p) => p.id === seeded.projectId)?.name).toBe('我的演示');
    expect(sim.listTasks(seeded.projectId).map((t) => t.title).sort()).toEqual(['以后再说', '整理发布说明']);
    expect(sim.getTask(seeded.work.id)?.items?.map((i) => i.title)).toEqual(['收集变更', '写草稿']);
  });

  it('refuses a list with open tasks, and a name shared by two open lists, without writing', async () => {
    const list = sim.seedProject({ name: '我的演示' });
    sim.seedTask({ projectId: list.id, title: '别动我', priority: 5 });
    await expect(backend.seed()).rejects.toThrow(DemoListError);
    await expect(backend.seed()).rejects.toThrow(/has 1 open task/);
    sim.seedProject({ name: '我的演示' });
    await expect(backend.seed()).rejects.toThrow(/2 open Dida lists are named "我的演示"/);
    expect(sim.listTasks(list.id).map((t) => t.title)).toEqual(['别动我']);
  });
});

describe('the guided flow with an in-process agent', () => {
  it('shows progress, the completed Work, the acceptance todo with reminders, the untouched draft and the rework', async () => {
    const sim = await startSimulator();
    const host = new InProcessHost();
    const io = capture();
    const backend = await simulatorBackend(sim);
    try {
      const outcome = await runDemo({ backend, host, io, style: demoStyle(false), paceMs: 0 });
      expect(outcome.problems).toEqual([]);
      expect(outcome.ok).toBe(true);
      expect(host.toolCodes).toEqual(['todo_work:ok', 'todo:ok', 'todo:ok', 'todo_work:ok', 'todo_work:ok']);
      const out = io.stdout;
      expect(out).not.toContain('\u001b[');
      expect(out).not.toMatch(/TRIGGER:|npx dida-todo|<owner>/);
      for (const expected of [
        'Step 1/6',
        '📋 dida-todo 演示',
        'bound ',
        '💬 已完成：收集变更',
        '结果：整理出 12 条变更',
        '☑ 整理发布说明  [priority medium] completed',
        '🧑‍🔬 待验收：整理发布说明',
        '✅ 收集变更：整理出 12 条变更',
        '(+3 min)',
        '(+6 min)',
        'untouched',
        `💬 ${REWORK_COMMENT}`,
        '☐ 返工：整理发布说明',
        '已收到你的反馈，已建立返工任务：返工：整理发布说明',
        INSTALL.dshPluginAdd('web'),
        'dida-todo login --token -',
        'dida-todo doctor',
        'Demo finished',
      ]) {
        expect(out, expected).toContain(expected);
      }
      // Step order as a person reads it.
      const order = ['Step 1/6', 'Step 2/6', 'Step 3/6', 'Step 4/6', 'Step 5/6', 'Step 6/6'].map((s) => out.indexOf(s));
      expect([...order].sort((a, b) => a - b)).toEqual(order);
      // Dida agrees with what was printed.
      const list = sim.listProjects().find((p) => p.name === DEMO_LIST_NAME)!;
      const all = sim.listTasks(list.id, { includeCompleted: true });
      expect(all.find((t) => t.title === '整理发布说明')?.status).toBe(2);
      expect(all.find((t) => t.title === '🧑‍🔬 待验收：整理发布说明')?.status).toBe(2);
      expect(all.find((t) => t.title === '返工：整理发布说明')?.items?.map((i) => i.title)).toEqual([REWORK_COMMENT]);
      expect(all.find((t) => t.title === '以后再说')?.etag).toBe(outcome.seeded?.draft.etag);
    } finally {
      await host.close();
      await backend.close();
      await sim.close();
    }
  });

  it('speaks Chinese under a Chinese locale: headings, notes, priorities, reminders and the next steps', async () => {
    const sim = await startSimulator();
    const host = new InProcessHost();
    const io = capture();
    const backend = await simulatorBackend(sim);
    try {
      const outcome = await runDemo({ backend, host, io, style: demoStyle(false, cliText('zh')), paceMs: 0, clone: cloneInstall('/c/clone') });
      expect(outcome.ok).toBe(true);
      const out = io.stdout;
      for (const expected of ['dida-todo 演示——完整的流程', '第 1/6 步', '第 6/6 步', '你的滴答列表', '[优先级 中]', '[优先级 无 → 草稿，不会被处理]', '已绑定 ', '(+3 分钟)', '滴答会在', '没有改动', '你要求返工', '接下来做什么', '用你的个人 API 口令登录', 'cd /c/clone && npm pack', '演示完成']) {
        expect(out, expected).toContain(expected);
      }
      for (const english of ['Step ', 'priority', 'Your Dida list', 'Watching Dida', 'What you see in Dida', 'Demo finished', 'reminds you', 'Log in with', ' min)']) {
        expect(out, english).not.toContain(english);
      }
    } finally {
      await host.close();
      await backend.close();
      await sim.close();
    }
  });

  it('demoMain picks the language as the CLI does: config.yaml’s locale, else LANG', async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'dida-demo-lang-'));
    try {
      const zh = capture();
      expect(await demoMain(['--no-color'], zh, { HOME: home, LANG: 'zh_CN.UTF-8' }, { host: () => new InProcessHost(), backend: () => simulatorBackend(), repoRoot: path.resolve(import.meta.dirname, '../..') })).toBe(0);
      expect(zh.stdout).toContain('第 1/6 步');
      expect(zh.stdout).toContain('已清理：模拟器已停止');
      // Run from this clone: the last step shows the install from it.
      expect(zh.stdout).toContain(cloneInstall(path.resolve(import.meta.dirname, '../..')).dshPluginAdd('web'));
      fs.mkdirSync(path.join(home, '.config', 'dida-todo'), { recursive: true });
      fs.writeFileSync(path.join(home, '.config', 'dida-todo', 'config.yaml'), 'version: 1\nlocale: en\nbindings: []\n');
      const en = capture();
      expect(await demoMain(['--no-color'], en, { HOME: home, LANG: 'zh_CN.UTF-8' }, { host: () => new InProcessHost(), backend: () => simulatorBackend() })).toBe(0);
      expect(en.stdout).toContain('Step 1/6');
      expect(en.stdout).not.toContain('npm pack');
      const usage = capture();
      expect(await demoMain(['--bogus'], usage, { HOME: home, LANG: 'zh_CN.UTF-8', XDG_CONFIG_HOME: path.join(home, 'none') })).toBe(2);
      expect(usage.stderr).toBe('demo: 没有选项 "--bogus"；运行 `npm run demo -- --help` 查看所有选项。\n');
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  });

  it('demoMain runs the flow end to end with injected host and backend and exits 0', async () => {
    const io = capture();
    const host = new InProcessHost();
    const code = await demoMain(['--no-color'], io, {}, { host: () => host, backend: () => simulatorBackend() });
    expect(io.stderr).toBe('');
    expect(code).toBe(0);
    expect(io.stdout).toContain('返工：整理发布说明');
    expect(io.stdout).toContain('Cleaned up: simulator stopped');
    expect(fs.existsSync(host.dir)).toBe(false);
  });

  it('writes a config.yaml the bundle accepts', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dida-demo-cfg-'));
    try {
      const file = path.join(dir, 'dida-todo', 'config.yaml');
      writeBindingConfig(file, '/tmp/some project', { projectId: 'p1', name: 'a "quoted" list' }, 'http://127.0.0.1:1/open/v1');
      const runtime = openRuntime({ env: { HOME: dir }, configPath: file, stateDir: path.join(dir, 'state') });
      const config = await runtime.config.read();
      expect(config.baseUrl).toBe('http://127.0.0.1:1/open/v1');
      expect(findBinding(config, '/tmp/some project')).toMatchObject({ projectId: 'p1', label: 'a "quoted" list' });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('dida-todo demo (CLI)', () => {
  it('from an installed bundle: says a clone is needed and exits 2', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dida-demo-installed-'));
    try {
      const io = capture();
      const failing = { ...io, fail: (m: string): never => { throw new Error(m); } };
      expect(isClone(dir)).toBe(false);
      const ctx = { env: {}, cwd: dir, io: { ...failing, hide: () => undefined }, text: cliText('en') };
      expect(await demoCommand([], failing, ctx, dir)).toBe(2);
      expect(io.stderr).toContain('needs a clone');
      expect(io.stderr).toContain('git clone https://github.com/dida-todo/dida-todo dida-todo && cd dida-todo && npm ci && npm run demo');
      expect(io.stderr.trim().split('\n')).toHaveLength(1);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('from this clone: names npm run demo and exits 2', async () => {
    const io = capture();
    const code = await cliMain(['demo'], { ...io, fail: (m: string): never => { throw new Error(m); } });
    expect(code).toBe(2);
    expect(io.stderr).toContain('npm run demo');
    const help = capture();
    expect(await cliMain(['--help'], { ...help, fail: (m: string): never => { throw new Error(m); } })).toBe(0);
    expect(help.stdout).toMatch(/demo\s+How to run the guided demo/);
  });
});
