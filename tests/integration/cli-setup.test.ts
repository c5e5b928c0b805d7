// From the demo to a real setup, through the built `dida-todo`: saved endpoints, `sim` and `sim --use`, config.yaml
// errors, file-system errors, hidden token input, a closed stdout, terminal-safe output and display-width tables.
import { spawn } from 'node:child_process';
import { lstat, mkdir, readFile, readlink, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import stringWidth from 'string-width';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { BUILT_CLI, exists, makeCliHome, oneErrorLine, type CliHome } from '../helpers/cli-harness';
import { makeReadOnly } from '../helpers/read-only-dir';

let sim: Simulator;
let h: CliHome;

beforeEach(async () => {
  sim = await startSimulator();
  h = await makeCliHome();
});

afterEach(async () => {
  await sim.close();
  await h.cleanup();
});

interface StatusJson {
  exitCode: number;
  baseUrl: string | null;
  endpoint: { source: string; baseUrl: string } | null;
  reachability: { checked: boolean; ok?: boolean };
  configFile: { file: string; problem: string | null };
  token: { source: string } | null;
}

// Control characters other than newline: what must never reach a terminal from Dida.
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

describe('the Dida endpoint is saved and used everywhere', () => {
  it('login --base-url saves the address: status, bind and lists use it without flags, and status says where it comes from', async () => {
    sim.seedProject({ name: 'Work' });
    const login = await h.run(['login', '--token', '-', '--base-url', sim.baseUrl], { stdin: `${sim.token}\n` });
    expect(login.code).toBe(0);
    expect(login.out).toContain(`Dida address: ${sim.baseUrl}`);
    expect(await readFile(h.configFile, 'utf8')).toContain(`baseUrl: ${sim.baseUrl}`);

    sim.resetCounters();
    expect((await h.run(['bind', 'Work'])).code).toBe(0);
    expect((await h.run(['lists', '--json'])).json<{ baseUrl: string }>().baseUrl).toBe(sim.baseUrl);
    const status = await h.run(['status', '--json']);
    expect(status.code).toBe(0);
    expect(status.json<StatusJson>()).toMatchObject({ baseUrl: sim.baseUrl, endpoint: { source: 'config', baseUrl: sim.baseUrl }, reachability: { ok: true } });
    expect(sim.counters()['GET /project']).toBeGreaterThanOrEqual(3);
    expect((await h.run(['status'])).out).toMatch(/saved in config\.yaml \(`dida-todo login --base-url` or `dida-todo sim --use`\)/);
  });

  it('a second login --base-url switches the saved address and says from where', async () => {
    const other = await startSimulator({ token: sim.token });
    try {
      expect((await h.run(['login', '--token', '-', '--base-url', sim.baseUrl], { stdin: `${sim.token}\n` })).code).toBe(0);
      const again = await h.run(['login', '--token', '-', '--base-url', other.baseUrl, '--json'], { stdin: `${sim.token}\n` });
      expect(again.json()).toMatchObject({ ok: true, baseUrl: other.baseUrl, previousBaseUrl: sim.baseUrl, endpointSaved: true });
      expect((await h.run(['status', '--json'])).json<StatusJson>().baseUrl).toBe(other.baseUrl);
    } finally {
      await other.close();
    }
  });
});

describe('dida-todo sim', () => {
  it('prints how to point dida-todo and dsh at it, the token only piped to `login --token -`', async () => {
    const run = h.start(['sim', '--port', '0'], { keepStdin: true });
    await run.waitFor(/Press Ctrl\+C/);
    const out = run.out();
    const url = /listening at (\S+)/.exec(out)?.[1] as string;
    const token = /token: (\S+)/.exec(out)?.[1] as string;
    expect(out).toContain(`echo ${token} | dida-todo login --token - --base-url ${url}`);
    expect(out).toContain('dsh --profile web');
    expect(out).toContain('dida-todo sim --use');
    expect(out).toMatch(/Back to your real Dida[^\n]*\n\s+dida-todo login --token -\n/);
    expect(out).not.toMatch(/--token sim-/);
    expect(await exists(h.configFile)).toBe(false);
    run.signal('SIGINT');
    expect((await run.result).code).toBe(0);
  });

  it('--use points dida-todo at the simulator until Ctrl+C, and says how to go back', async () => {
    const run = h.start(['sim', '--use', '--port', '0'], { keepStdin: true });
    await run.waitFor(/Press Ctrl\+C/);
    const url = /listening at (\S+)/.exec(run.out())?.[1] as string;
    expect(run.out()).toMatch(/dida-todo now uses this simulator/);
    const status = await h.run(['status', '--json']);
    expect(status.json<StatusJson>()).toMatchObject({ baseUrl: url, token: { source: 'credentials' }, reachability: { ok: true } });
    run.signal('SIGINT');
    const result = await run.result;
    expect(result.code).toBe(0);
    expect(result.err).toMatch(/still points at it; .*dida-todo login --token -/);
  });

  it('--use refuses a broken config.yaml before starting anything', async () => {
    await mkdir(h.configDir, { recursive: true });
    await writeFile(h.configFile, 'bindngs: []\n');
    const result = await h.run(['sim', '--use']);
    expect(result.code).toBe(1);
    expect(oneErrorLine(result)).toMatch(/line 1: unknown key "bindngs" \(did you mean "bindings"\?\)/);
    expect(await exists(h.credentialsFile)).toBe(false);
  });
});

describe('config.yaml with an error', () => {
  const broken = (url: string) => `baseUrl: ${url}\npol:\n  enabled: true\n`;

  it('status shows the file, line, key and closest key in its table and contacts no Dida', async () => {
    await mkdir(h.configDir, { recursive: true });
    await writeFile(h.configFile, broken(sim.baseUrl));
    sim.resetCounters();
    const result = await h.run(['status'], { env: { DIDA_TODO_TOKEN: sim.token } });
    expect(result.code).toBe(1);
    expect(result.out).toMatch(/Config\s+~?.*config\.yaml has an error: line 2: unknown key "pol" \(did you mean "poll"\?\)/);
    expect(result.out).toMatch(/not checked \(config\.yaml has an error/);
    expect(result.out).not.toContain('api.dida365.com');
    const json = (await h.run(['status', '--json'], { env: { DIDA_TODO_TOKEN: sim.token } })).json<StatusJson>();
    expect(json).toMatchObject({ baseUrl: null, reachability: { checked: false } });
    expect(json.configFile.problem).toMatch(/line 2/);
    expect(sim.totalRequests()).toBe(0);
  });

  it('commands that need it refuse with the same message and leave it untouched', async () => {
    await mkdir(h.configDir, { recursive: true });
    await writeFile(h.configFile, broken(sim.baseUrl));
    for (const argv of [['bind', 'Work'], ['lists'], ['unbind'], ['login', '--token', '-']]) {
      const result = await h.run(argv, { env: { DIDA_TODO_TOKEN: sim.token }, stdin: `${sim.token}\n` });
      expect(result.code, argv.join(' ')).toBe(1);
      expect(oneErrorLine(result)).toMatch(/config\.yaml has an error: line 2: unknown key "pol" \(did you mean "poll"\?\)\. Fix the file\. Until it is fixed, dida-todo does not fall back to defaults\./);
    }
    expect(await readFile(h.configFile, 'utf8')).toBe(broken(sim.baseUrl));
    expect(sim.totalRequests()).toBe(0);
    const zh = await h.run(['bind', 'Work'], { env: { DIDA_TODO_TOKEN: sim.token, LANG: 'zh_CN.UTF-8' } });
    expect(oneErrorLine(zh)).toMatch(/config\.yaml 有错误：第 2 行：未知的键 "pol"（你是不是想写 "poll"？）。请修改这个文件。修好之前，dida-todo 不会改用默认设置。$/);
  });
});

describe('file-system errors say what was and was not saved', () => {
  it('a read-only config folder: login names the file, saves nothing and says what to do', async (t) => {
    await mkdir(h.configDir, { recursive: true, mode: 0o700 });
    await writeFile(h.credentialsFile, JSON.stringify({ version: 1, token: 'the-old-token-0123' }), { mode: 0o600 });
    const undo = await makeReadOnly(h.configDir);
    if (!undo) return t.skip();
    try {
      const result = await h.run(['login', '--token', '-', '--base-url', sim.baseUrl], { stdin: `${sim.token}\n` });
      expect(result.code).toBe(1);
      const line = oneErrorLine(result);
      expect(line).toMatch(/Could not save .*credentials\.json \((EACCES|EPERM)\); nothing was written, the file keeps what it had before\. Make .* writable for you \(e\.g\. `chmod u\+w /);
      expect(line).not.toMatch(/\.tmp|    at /);
      expect(JSON.parse(await readFile(h.credentialsFile, 'utf8')).token).toBe('the-old-token-0123');
    } finally {
      await undo();
    }
  });

  it('when config.yaml cannot be changed, the new token is taken back: both or neither', async (t) => {
    await mkdir(h.stateDir, { recursive: true });
    const undo = await makeReadOnly(h.stateDir);
    if (!undo) return t.skip();
    try {
      const result = await h.run(['login', '--token', '-', '--base-url', sim.baseUrl], { stdin: `${sim.token}\n` });
      expect(result.code).toBe(1);
      expect(oneErrorLine(result)).toMatch(/the Dida address could not be saved: .* Nothing was saved: .*credentials\.json is as it was before/);
      expect(await exists(h.credentialsFile)).toBe(false);
      expect(await exists(h.configFile)).toBe(false);
    } finally {
      await undo();
    }
  });

  it('a symbolic link to config.yaml stays a link; the file it points to is updated', async () => {
    sim.seedProject({ name: 'Work' });
    const real = path.join(h.root, 'dotfiles', 'dida-config.yaml');
    await mkdir(path.dirname(real), { recursive: true });
    await writeFile(real, `# mine\nbaseUrl: ${sim.baseUrl}\n`);
    await mkdir(h.configDir, { recursive: true });
    await symlink(real, h.configFile);
    expect((await h.run(['bind', 'Work'], { env: { DIDA_TODO_TOKEN: sim.token } })).code).toBe(0);
    expect((await lstat(h.configFile)).isSymbolicLink()).toBe(true);
    expect(await readlink(h.configFile)).toBe(real);
    const text = await readFile(real, 'utf8');
    expect(text).toMatch(/^# mine\n/);
    expect(text).toContain(`cwd: ${h.project}`);
  });
});

describe('terminal safety', () => {
  const evil = 'Ops\u001b]0;o\u0007\u009b2J\u202ez';

  it('lists and status show list names and Work titles with control and escape characters escaped', async () => {
    const list = sim.seedProject({ name: evil });
    await mkdir(h.stateDir, { recursive: true });
    await writeFile(
      h.stateFile,
      JSON.stringify({
        version: 1,
        works: {
          t1: { taskId: 't1', projectId: list.id, title: `Ship\u001b[31m it`, origin: 'human', mode: 'checklist', priority: 3, phase: 'accepting', steps: [], humanFingerprint: 'fp', createdAt: 1, updatedAt: 2, acceptance: { taskId: 'a\u0007' } },
        },
      }),
    );
    const env = { DIDA_TODO_TOKEN: sim.token };
    expect((await h.run(['bind', '--id', list.id, '--base-url', sim.baseUrl], { env })).code).toBe(0);
    for (const argv of [['lists', '--base-url', sim.baseUrl], ['status', '--base-url', sim.baseUrl]]) {
      const result = await h.run(argv, { env });
      expect(result.out + result.err, argv[0]).not.toMatch(RAW_CONTROL);
      expect(result.out).toContain('Ops\\x1b]0;o\\x07\\x9b2J\\u202ez');
    }
    const status = await h.run(['status', '--base-url', sim.baseUrl], { env });
    expect(status.out).toContain('"Ship\\x1b[31m it"');
  });

  it('a reader that goes away early (`status | head -1`) ends the command quietly', async () => {
    const child = spawn(process.execPath, [BUILT_CLI, 'status', '--cwd', h.project, '--json'], { env: { PATH: process.env.PATH ?? '', ...h.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    // Its own answer (no token: exit 3, one line on stderr), not a crash with a stack trace.
    expect(err).not.toMatch(/EPIPE|Error|\n\s+at /);
    expect(err.trim().split('\n')).toHaveLength(1);
    expect(code).toBe(3);
  });

  it('never shows the token typed at the `login --token -` prompt on a terminal', async () => {
    const run = h.start(['login', '--token', '-', '--base-url', sim.baseUrl], { tty: true });
    await run.waitFor(/Paste the Dida API token and press Enter \(it is not shown\)/);
    run.write(`${sim.token}\r`);
    const result = await run.result;
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/Logged in\./);
    expect(result.out, result.out).not.toContain(sim.token);
    expect(JSON.parse(await readFile(h.credentialsFile, 'utf8')).token).toBe(sim.token);
  });
});

describe('tables and help', () => {
  it('lists aligns CJK and emoji names by display width and shortens a long name, saying so', async () => {
    const names = ['工作清单', 'Work', '🚀 发布 Launch', `${'很长的名字'.repeat(12)}end`];
    for (const name of names) sim.seedProject({ name });
    const result = await h.run(['lists', '--base-url', sim.baseUrl], { env: { DIDA_TODO_TOKEN: sim.token } });
    expect(result.code).toBe(0);
    const rows = result.out.split('\n').filter((l) => /[0-9a-f]{24}/.test(l));
    expect(rows).toHaveLength(4);
    const idColumns = rows.map((row) => stringWidth(row.slice(0, row.search(/[0-9a-f]{24}/))));
    expect(new Set(idColumns).size).toBe(1);
    expect(idColumns[0]).toBeLessThanOrEqual(34);
    expect(result.out).toMatch(/很长的名字.*…/);
    expect(result.out).not.toContain('end ');
    expect(result.out).toMatch(/Names longer than 32 columns are shortened \(…\); `dida-todo lists --json` shows them whole\./);
  });

  it('help never glues an option to its description, in either language', async () => {
    for (const env of [{}, { LANG: 'zh_CN.UTF-8' }] as Array<Record<string, string>>) {
      for (const command of ['login', 'status', 'bind', 'sim', 'doctor']) {
        const help = await h.run([command, '--help'], { env });
        const options = help.out.split('\n').filter((l) => l.startsWith('  --'));
        expect(options.length, command).toBeGreaterThan(2);
        for (const line of options) expect(line, `${command}: ${line}`).toMatch(/^ {2}--\S+( <[^>]+>)?(\s{2,}\S|$)/);
      }
    }
  });

  it('--version prints the version from package.json', async () => {
    const pkg = JSON.parse(await readFile(path.join(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string };
    const result = await h.run(['--version']);
    expect(result).toMatchObject({ code: 0, out: `dida-todo ${pkg.version}\n` });
    expect((await h.run(['--version', '--json'])).json()).toMatchObject({ name: 'dida-todo', version: pkg.version });
  });

  it('status --cwd with a directory that does not exist is a usage error, not "not bound"', async () => {
    const result = await h.run(['status', '--cwd', path.join(h.root, 'nope')]);
    expect(result.code).toBe(2);
    expect(oneErrorLine(result)).toMatch(/nope is not an existing directory/);
  });

  it('FORCE_COLOR turns colours on without a terminal, FORCE_COLOR=0 off on one', async () => {
    sim.seedProject({ name: 'Work' });
    const env = { DIDA_TODO_TOKEN: sim.token };
    expect((await h.run(['lists', '--base-url', sim.baseUrl], { env })).out).not.toMatch(/\u001b\[/);
    expect((await h.run(['lists', '--base-url', sim.baseUrl], { env: { ...env, FORCE_COLOR: '1' } })).out).toMatch(/\u001b\[1m/);
    expect((await h.run(['lists', '--base-url', sim.baseUrl], { env: { ...env, FORCE_COLOR: '0' }, tty: true })).out).not.toMatch(/\u001b\[1m/);
  });

  it('demo --json prints the advice as JSON', async () => {
    const result = await h.run(['demo', '--json']);
    expect(result.code).toBe(2);
    expect(result.json()).toMatchObject({ ok: false, exitCode: 2, error: { code: 'demo_needs_clone' }, clone: true });
    expect(result.json<{ command: string }>().command).toMatch(/npm ci && npm run demo$/);
  });
});

describe('the person’s language', () => {
  it('follows LANG, and config.yaml’s locale wins over it', async () => {
    const zh = await h.run(['status'], { env: { LANG: 'zh_CN.UTF-8' } });
    expect(zh.out).toMatch(/API 口令\s+没有——请运行 `dida-todo login --token -`/);
    expect(oneErrorLine(zh)).toMatch(/还没有配置滴答 API 口令/);
    const usage = await h.run(['status', '--frobnicate'], { env: { LC_ALL: 'zh_CN.UTF-8', LANG: 'en_US.UTF-8' } });
    expect(oneErrorLine(usage)).toContain('`dida-todo status` 没有选项 "--frobnicate"');

    await mkdir(h.configDir, { recursive: true });
    await writeFile(h.configFile, 'locale: en\n');
    expect((await h.run(['status'], { env: { LANG: 'zh_CN.UTF-8' } })).out).toMatch(/^Token\s+none/m);
    await writeFile(h.configFile, 'locale: zh\n');
    expect((await h.run(['--help'], { env: { LANG: 'C' } })).out).toMatch(/^用法：/);
  });
});
