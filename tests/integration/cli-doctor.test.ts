// `dida-todo doctor` through the built CLI: a machine without dsh, the demo's dsh offered, a dsh that cannot start
// (old Node, broken HMR plugin, no overlay, no pnpm, no bundle), a ready setup, a broken config and a stopped simulator;
// a profile that does not exist, dsh in ~/.local/bin but not on PATH, the home folder, the install command from a clone
// and from an installed copy, and the sdk profile (missing, broken, ready).
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { INSTALL, PACKAGE_VERSION } from '../../src/cli/install-commands';
import { SDK_OVERRIDES, SDK_PACKAGES, SDK_PATCH_LINES, SDK_WORKSPACE_LINES } from '../../src/cli/doctor/sdk-profile';
import { HostSeams } from '../../src/dsh/host-seams';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { ROOT, makeCliHome, type CliHome } from '../helpers/cli-harness';
import { makeFakeDsh } from '../helpers/fake-dsh';

/** What doctor prints to install the bundle when run from this repository (a git checkout) or from a copy that is not. */
const bundleFix = (profile: string, root: string | undefined = existsSync(path.join(ROOT, '.git')) ? ROOT : undefined) =>
  root ? [`cd ${root} && npm pack`, `dsh plugin --profile ${profile} add ${path.join(root, `dida-todo-${PACKAGE_VERSION}.tgz`)}`] : [INSTALL.dshPluginAdd(profile)];

interface Check {
  id: string;
  status: 'ok' | 'warn' | 'fail' | 'skip';
  title: string;
  detail: string;
  fix: string[];
}
interface DoctorJson {
  ok: boolean;
  exitCode: number;
  checks: Check[];
}

let sim: Simulator;
let h: CliHome;
let basePath: string;
let dshHome: string;

beforeEach(async () => {
  sim = await startSimulator();
  h = await makeCliHome();
  // No dsh and no pnpm anywhere on PATH: only the folder of the Node running the tests, and the system basics.
  basePath = [path.dirname(process.execPath), '/usr/bin', '/bin'].join(path.delimiter);
  dshHome = path.join(h.root, 'dsh-home');
});

afterEach(async () => {
  await sim.close();
  await h.cleanup();
});

const byId = (json: DoctorJson) => Object.fromEntries(json.checks.map((c) => [c.id, c]));

async function doctor(env: Record<string, string>, extra: string[] = []): Promise<{ code: number | null; json: DoctorJson; out: string }> {
  const fullEnv = { PATH: basePath, DSH_HOME: dshHome, DIDA_TODO_E2E_CACHE: path.join(h.root, 'no-demo-cache'), ...env };
  const json = await h.run(['doctor', '--json', ...extra], { env: fullEnv, timeoutMs: 60_000 });
  const human = await h.run(['doctor', ...extra], { env: fullEnv, timeoutMs: 60_000 });
  expect(human.code).toBe(json.code);
  return { code: json.code, json: json.json<DoctorJson>(), out: human.out };
}

async function readySetup(): Promise<void> {
  sim.seedProject({ name: 'Work' });
  expect((await h.run(['login', '--token', '-', '--base-url', sim.baseUrl], { stdin: `${sim.token}\n` })).code).toBe(0);
  expect((await h.run(['bind', 'Work'])).code).toBe(0);
}

async function installedBundle(version: string): Promise<void> {
  const dir = path.join(dshHome, 'profiles', 'web', 'node_modules', 'dida-todo');
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'dida-todo', version }));
}

describe('dida-todo doctor', () => {
  it('on a machine without dsh: says so with the README step, and the token and binding steps to take', async () => {
    const { code, json, out } = await doctor({});
    expect(code).toBe(1);
    expect(json.ok).toBe(false);
    expect(json.checks.map((c) => c.id)).toEqual(['node', 'dsh', 'dsh-node', 'overlay', 'bundle', 'dsh-seams', 'config', 'token', 'binding']);
    const c = byId(json);
    expect(c.node?.status).toBe('ok');
    expect(c.dsh).toMatchObject({ status: 'fail', fix: ['install dsh 0.1.0-rc.8 as the README shows: https://github.com/dida-todo/dida-todo#install-and-use'] });
    for (const id of ['dsh-node', 'overlay', 'bundle']) expect(c[id]?.status, id).toBe('skip');
    expect(c.config).toMatchObject({ status: 'ok' });
    expect(c.token).toMatchObject({ status: 'fail', fix: expect.arrayContaining(['dida-todo login --token -']) });
    expect(c.binding).toMatchObject({ status: 'fail', fix: [`cd ${h.project} && dida-todo bind "<list name>"`] });
    expect(out).toMatch(/✗ dsh\s+no `dsh` on PATH\.\n\s+fix: install dsh/);
    expect(out).toMatch(/3 problems|4 problems/);
  });

  it('offers the working dsh `npm run demo` installed', async () => {
    const cache = path.join(h.root, 'demo-cache');
    const dshBin = path.join(cache, 'dsh', 'node_modules', '.bin', 'dsh');
    await mkdir(path.dirname(dshBin), { recursive: true });
    await writeFile(dshBin, '#!/bin/sh\n');
    await writeFile(path.join(cache, 'ready.json'), JSON.stringify({ result: { dshBin, nodeBinDir: path.join(cache, 'node', 'bin'), pnpmBinDir: path.join(cache, 'tools', '.bin') } }));
    const { json } = await doctor({ DIDA_TODO_E2E_CACHE: cache });
    const fix = byId(json).dsh?.fix ?? [];
    expect(fix[0]).toMatch(/npm run demo` installed a working dsh/);
    expect(fix[1]).toBe(
      `mkdir -p ~/.local/bin && printf '#!/bin/sh\\nPATH="%s:%s:$PATH" exec "%s" "$@"\\n' '${path.join(cache, 'node', 'bin')}' '${path.join(cache, 'tools', '.bin')}' '${dshBin}' > ~/.local/bin/dsh && chmod +x ~/.local/bin/dsh`,
    );
  });

  it('a dsh that cannot start: old Node, the HMR plugin without registerConfig, no overlay, no pnpm, no bundle', async () => {
    const bin = await makeFakeDsh(path.join(h.root, 'fake'), { hmrVersion: '1.0.19', nodeVersion: 'v20.20.0', hmrDisabled: true });
    const { code, json, out } = await doctor({ PATH: `${bin}${path.delimiter}${basePath}` });
    expect(code).toBe(1);
    const c = byId(json);
    expect(c.dsh).toMatchObject({ status: 'ok', detail: `0.1.0-rc.8 at ${path.join(bin, 'dsh')}.` });
    expect(c['dsh-node']).toMatchObject({ status: 'fail' });
    expect(c['dsh-node']?.detail).toMatch(/dsh runs on v20\.20\.0 .*needs 22\.19 or newer/);
    expect(c.pnpm).toMatchObject({ status: 'fail', fix: ['npm install -g pnpm@10'] });
    expect(c.hmr).toMatchObject({ status: 'fail' });
    expect(c.hmr?.fix?.[0]).toContain('"@deepseek-ai/cordis-plugin-hmr": "1.0.17"');
    expect(c.overlay).toMatchObject({ status: 'fail', fix: [`mkdir -p ${dshHome} && printf -- '- id: hmr\\n  disabled: false\\n  config: { root: [] }\\n' > ${dshHome}/cordis.patch.yml`] });
    expect(c.bundle).toMatchObject({ status: 'fail', fix: bundleFix('web') });
    expect(out).toContain(`fix: ${bundleFix('web')[0]}`);

    // An existing home layer is never overwritten: the rows to add are shown instead.
    await mkdir(dshHome, { recursive: true });
    await writeFile(path.join(dshHome, 'cordis.patch.yml'), '[]\n');
    const again = byId((await doctor({ PATH: `${bin}${path.delimiter}${basePath}` })).json);
    expect(again.overlay?.fix).toEqual([`add these rows to ${dshHome}/cordis.patch.yml (dsh's home layer, used by every profile):`, '- id: hmr', '  disabled: false', '  config: { root: [] }']);
  });

  it('passes on a ready setup: dsh on Node 24 with the overlay and the bundle, a working token and a bound directory', async () => {
    await readySetup();
    await installedBundle('0.1.0');
    const bin = await makeFakeDsh(path.join(h.root, 'fake'), { nodeVersion: 'v24.11.0', bundleRow: true, pnpm: '10.34.9' });
    const { code, json, out } = await doctor({ PATH: `${bin}${path.delimiter}${basePath}` });
    expect(json.checks.filter((c) => c.status !== 'ok')).toEqual([]);
    expect(code).toBe(0);
    expect(json.ok).toBe(true);
    const c = byId(json);
    expect(c.token?.detail).toBe(`the token from ${h.credentialsFile} (dida-todo login) works with ${sim.baseUrl} (1 list).`);
    expect(c.binding?.detail).toMatch(/→ "Work" .*open in Dida/);
    expect(c.bundle?.detail).toBe('dida-todo 0.1.0 is installed in the web profile.');
    expect(out).toMatch(/Everything is ready/);
    expect(out).not.toContain(sim.token);

    // A bundle that differs from this command is a warning with the command that reinstalls it.
    await installedBundle('0.0.9');
    const older = byId((await doctor({ PATH: `${bin}${path.delimiter}${basePath}` })).json);
    expect(older.bundle).toMatchObject({ status: 'warn', fix: bundleFix('web') });
  });

  it('the running dsh against the versions table, and what it lacked when it last ran with the bundle, line by line', async () => {
    await readySetup();
    await installedBundle(PACKAGE_VERSION);
    const at = (version: string) => makeFakeDsh(path.join(h.root, `fake-${version}`), { version, nodeVersion: 'v24.11.0', bundleRow: true, pnpm: '10.34.9', hmrDisabled: true });
    // A newer dsh that has not run with the bundle here: expected to work, what it lacks not known yet; rc.8's checks skipped.
    const newer = await at('0.2.0-rc.2');
    const unknown = byId((await doctor({ PATH: `${newer}${path.delimiter}${basePath}` })).json);
    expect(unknown.dsh).toMatchObject({ status: 'warn', detail: expect.stringContaining('0.2.0-rc.2 at ') });
    expect(unknown.dsh?.detail).toContain('expected to work, not tested here (every test runs on 0.1.0-rc.8)');
    expect(unknown.hmr).toMatchObject({ status: 'skip', detail: 'not needed: only dsh 0.1.0-rc.8 needs this (0.2.0-rc.2 runs).' });
    expect(unknown.overlay).toMatchObject({ status: 'skip' });
    expect(unknown['dsh-seams']).toMatchObject({ status: 'warn', detail: '0.2.0-rc.2 has not run with the bundle on this machine yet, so what it lacks is not known.', fix: ['start it once with the bundle (`dsh --profile web`), then run `dida-todo doctor` again'] });
    // Once it has run: the report the bundle kept for that version, each missing surface with what does not work.
    const seams = new HostSeams({ stateDir: h.stateDir, log: () => undefined, version: '0.2.0-rc.2', now: () => new Date(2026, 11, 4, 10, 7).getTime() });
    seams.lack('requestError');
    seams.lack('followup');
    seams.announce({ get: () => ({ get: () => undefined, section: () => undefined, register: () => undefined, snapshot: () => ({}) }), agents: { resume: async () => ({}) } } as never);
    await seams.written();
    const { json, out } = await doctor({ PATH: `${newer}${path.delimiter}${basePath}` });
    const lacking = byId(json);
    expect(lacking['dsh-seams']).toMatchObject({ status: 'warn', detail: '0.2.0-rc.2 lacked 2 surfaces the bundle uses when it last ran with it (2026-12-04 10:07); everything else works:' });
    expect(lacking['dsh-seam-requestError']).toMatchObject({ status: 'warn', title: 'agent/request-error', detail: 'missing: automatic continuation after a failed model request does not work; each Work it stops says so in Dida once.' });
    expect(lacking['dsh-seam-followup']).toMatchObject({ status: 'warn', title: 'agent.followup' });
    expect(json.checks.map((c) => c.id).filter((id) => id.startsWith('dsh-seam'))).toEqual(['dsh-seams', 'dsh-seam-requestError', 'dsh-seam-followup']);
    expect(out).toMatch(/! agent\/request-error +missing: automatic continuation/);
    expect(json.exitCode).toBe(0);
    // rc.8 with no report yet is the tested dsh; a version older than any known one is not known.
    const rc8 = byId((await doctor({ PATH: `${await makeFakeDsh(path.join(h.root, 'fake-rc8'), { nodeVersion: 'v24.11.0', bundleRow: true, pnpm: '10.34.9' })}${path.delimiter}${basePath}` })).json);
    expect(rc8.dsh).toMatchObject({ status: 'ok' });
    expect(rc8['dsh-seams']).toMatchObject({ status: 'ok', detail: expect.stringContaining('0.1.0-rc.8 is the dsh every test runs on') });
    const old = byId((await doctor({ PATH: `${await at('0.1.5-rc.2')}${path.delimiter}${basePath}` })).json);
    expect(old.dsh?.detail).toContain('not a dsh this bundle knows');
    const future = byId((await doctor({ PATH: `${await at('0.3.0')}${path.delimiter}${basePath}` })).json);
    expect(future.dsh?.detail).toContain('newer than any dsh this bundle knows');
  });

  it('a broken config.yaml: its line and the closest key, and the token and binding are not guessed', async () => {
    await mkdir(h.configDir, { recursive: true });
    await writeFile(h.configFile, `baseUrl: ${sim.baseUrl}\nbinding: []\n`);
    sim.resetCounters();
    const { json } = await doctor({ DIDA_TODO_TOKEN: sim.token });
    const c = byId(json);
    expect(c.config?.status).toBe('fail');
    expect(c.config?.detail).toMatch(/line 2: unknown key "binding" \(did you mean "bindings"\?\)/);
    expect(c.config?.fix?.[0]).toMatch(/edit line 2 of .*config\.yaml/);
    expect(c.token?.status).toBe('skip');
    expect(c.binding?.status).toBe('skip');
    expect(sim.totalRequests()).toBe(0);
  });

  it('a stopped simulator: says how to start it again or go back to real Dida', async () => {
    await readySetup();
    await sim.close();
    const c = byId((await doctor({})).json);
    expect(c.token?.status).toBe('fail');
    // Said as status says it: the simulator is not running, and the README's command (its data kept) brings it back.
    expect(c.token?.detail).toMatch(/^The simulator at http:\/\/127\.0\.0\.1:\d+\S* is not running \(start it with `dida-todo sim --use --data ~\/\.local\/share\/dida-todo-sim\.json`/);
    expect(c.token?.fix).toEqual(['dida-todo sim --use --data ~/.local/share/dida-todo-sim.json', 'start the simulator again (above), or go back to your real Dida:', 'dida-todo login --token -']);
    expect(c.binding?.status).toBe('warn');
    sim = await startSimulator();
  });

  it('--live runs the self-test in a scratch list it removes, and reports how the account behaves', async () => {
    await readySetup();
    const before = sim.listProjects().map((p) => p.id);
    const { json } = await doctor({}, ['--live']);
    const live = json.checks.filter((c) => c.id.startsWith('live:'));
    expect(live.length).toBeGreaterThan(10);
    expect(live.filter((c) => c.status === 'fail')).toEqual([]);
    expect(live.find((c) => c.id === 'live:status-on-update')?.detail).toMatch(/ignore \(as the simulator\)/);
    expect(live.find((c) => c.id === 'live:summary')?.detail).toMatch(/removed; your account behaves like: kind/);
    // Only the scratch list was written, and it is gone again.
    expect(sim.listProjects().map((p) => p.id)).toEqual(before);
    // The same against a simulator that honours status on update: a warning that names the difference.
    sim.setQuirks({ statusOnUpdate: 'honour' });
    const again = (await doctor({}, ['--live'])).json.checks;
    expect(again.find((c) => c.id === 'live:status-on-update')).toMatchObject({ status: 'warn' });
    expect(again.find((c) => c.id === 'live:status-on-update')?.detail).toMatch(/honour \(the simulator does ignore/);
  });

  it('speaks Chinese when the person does', async () => {
    const { out } = await doctor({ LANG: 'zh_CN.UTF-8' });
    expect(out).toMatch(/✗ dsh\s+PATH 上没有 `dsh`。\n\s+修复：按 README 的说明安装 dsh 0\.1\.0-rc\.8/);
    expect(out).toMatch(/API 口令/);
    expect(out).toMatch(/个问题；请执行上面的修复命令/);
  });

  it('a profile that does not exist: says so in plain words with the profiles there are, not the last line of a stack trace', async () => {
    await mkdir(path.join(dshHome, 'profiles', 'web'), { recursive: true });
    await writeFile(path.join(dshHome, 'profiles', 'web', 'package.json'), '{}');
    await mkdir(path.join(dshHome, 'profiles', 'node_modules'), { recursive: true });
    const bin = await makeFakeDsh(path.join(h.root, 'fake'), { missingProfiles: ['nope'], pnpm: '10.34.9' });
    const { code, json, out } = await doctor({ PATH: `${bin}${path.delimiter}${basePath}` }, ['--profile', 'nope']);
    expect(code).toBe(1);
    const c = byId(json);
    expect(c.profile).toMatchObject({ status: 'fail', detail: `profile "nope" does not exist in ${dshHome} (profiles there: web).` });
    expect(c.profile?.fix).toEqual(['check one that exists instead:', 'dida-todo doctor --profile web', 'or create it with this bundle in it:', ...bundleFix('nope')]);
    for (const id of ['overlay', 'bundle']) expect(c[id], id).toMatchObject({ status: 'skip', detail: 'not checked: the nope profile does not exist (see above)' });
    expect(out).not.toMatch(/Node\.js v|processTicksAndRejections|at loadProfile/);
    // A profile that exists is not reported at all (no profile line).
    const web = byId((await doctor({ PATH: `${bin}${path.delimiter}${basePath}` })).json);
    expect(web.profile).toBeUndefined();
    expect(web.overlay?.status).toBe('ok');
  });

  it('dsh in ~/.local/bin but not on PATH: prints the PATH line, not "install dsh"', async () => {
    const local = path.join(h.home, '.local', 'bin');
    await mkdir(local, { recursive: true });
    await writeFile(path.join(local, 'dsh'), '#!/bin/sh\n');
    await chmod(path.join(local, 'dsh'), 0o755);
    const c = byId((await doctor({})).json);
    expect(c.dsh).toMatchObject({ status: 'fail', detail: '~/.local/bin/dsh is there, but ~/.local/bin is not on PATH.' });
    expect(c.dsh?.fix?.[0]).toBe('export PATH="$HOME/.local/bin:$PATH"');
    // A file there that cannot run is not a dsh.
    await chmod(path.join(local, 'dsh'), 0o644);
    expect(byId((await doctor({})).json).dsh?.fix?.[0]).toMatch(/^install dsh 0\.1\.0-rc\.8/);
  });

  it('run in the home folder or in /: says to cd into a project first instead of suggesting to bind it', async () => {
    for (const dir of [h.home, '/']) {
      const c = byId((await doctor({}, ['--cwd', dir])).json);
      expect(c.binding, dir).toMatchObject({ status: 'fail', detail: `${dir} is your home folder or the root, not a project folder.` });
      expect(c.binding?.fix).toEqual(['cd into your project folder first, then run dida-todo bind "<list name>" there (or dida-todo doctor --cwd <project folder>)']);
    }
    // A project folder still gets the bind command for itself.
    expect(byId((await doctor({})).json).binding?.fix).toEqual([`cd ${h.project} && dida-todo bind "<list name>"`]);
  });

  it('the install command for a missing bundle: the `github:` address from an installed copy, `npm pack` of the clone from a git checkout', async () => {
    const bin = await makeFakeDsh(path.join(h.root, 'fake'), { pnpm: '10.34.9' });
    const env = { ...h.env, PATH: `${bin}${path.delimiter}${basePath}`, DSH_HOME: dshHome, DIDA_TODO_E2E_CACHE: path.join(h.root, 'no-demo-cache') };
    const copies = await mkdtemp(path.join(os.tmpdir(), 'dida-todo-copies-'));
    try {
      const fixFrom = async (root: string) => {
        await cp(path.join(ROOT, 'dsh-plugin'), path.join(root, 'dsh-plugin'), { recursive: true });
        await cp(path.join(ROOT, 'package.json'), path.join(root, 'package.json'));
        const { stdout } = await promisify(execFile)(process.execPath, [path.join(root, 'dsh-plugin', 'cli.mjs'), 'doctor', '--json', '--profile', 'headless'], { env, cwd: h.project, timeout: 60_000 }).catch((e: { stdout: string }) => e);
        return (JSON.parse(stdout) as DoctorJson).checks.find((c) => c.id === 'bundle')?.fix;
      };
      // Installed the way dsh installs it (no .git in the package folder), even inside a home that is itself a repository.
      const installed = path.join(copies, 'home', '.git', '..', 'profiles', 'headless', 'node_modules', 'dida-todo');
      await mkdir(path.join(copies, 'home', '.git'), { recursive: true });
      expect(await fixFrom(path.resolve(installed))).toEqual(['dsh plugin --profile headless add github:dida-todo/dida-todo']);
      // A clone (a worktree has a .git file): pack it, then add the tarball by its absolute path.
      const clone = path.join(copies, 'my clone');
      await mkdir(clone, { recursive: true });
      await writeFile(path.join(clone, '.git'), 'gitdir: /elsewhere\n');
      expect(await fixFrom(clone)).toEqual([`cd '${clone}' && npm pack`, `dsh plugin --profile headless add '${path.join(clone, `dida-todo-${PACKAGE_VERSION}.tgz`)}'`]);
    } finally {
      await rm(copies, { recursive: true, force: true });
    }
  });
});

describe('dida-todo doctor --profile sdk', () => {
  const SDK_ROWS = ['# == @deepseek-ai/dsh-sdk-app, patched by profiles/sdk/cordis.patch.yml', '- id: sdk-app-startup', "  name: '@deepseek-ai/dsh-sdk-app'", '  config:', '    profile: sdk', '  disabled: true', '- id: sdk-jsonrpc-server', "  name: '@deepseek-ai/dsh-sdk-jsonrpc-server'", '  inject:', '    - loader', '  config:', '    maxTokensAsSuccess: true'];
  const profile = () => path.join(dshHome, 'profiles', 'sdk');

  async function sdkProfile(options: { overrides: boolean; packages: Record<string, string>; bundle: boolean }): Promise<void> {
    await mkdir(profile(), { recursive: true });
    const lines = options.overrides ? SDK_WORKSPACE_LINES : SDK_WORKSPACE_LINES.slice(0, 3);
    await writeFile(path.join(profile(), 'pnpm-workspace.yaml'), `${lines.join('\n')}\n`);
    const bundles = ['@deepseek-ai/dsh-base', ...(options.bundle ? ['@deepseek-ai/dsh-sdk-app'] : [])];
    await writeFile(path.join(profile(), 'package.json'), JSON.stringify({ name: 'dsh-profile-sdk', dsh: { profile: { bundles } } }));
    for (const [name, version] of Object.entries(options.packages)) {
      const dir = path.join(profile(), 'node_modules', ...name.split('/'));
      await mkdir(dir, { recursive: true });
      await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name, version }));
    }
  }
  const ALL_PACKAGES = { ...Object.fromEntries(SDK_PACKAGES.map((p) => [p.slice(0, p.lastIndexOf('@')), p.slice(p.lastIndexOf('@') + 1)])), ...SDK_OVERRIDES, 'dida-todo': PACKAGE_VERSION };

  it('no sdk profile yet: the commands that make it, which write the two files as the profile needs them', async () => {
    const bin = await makeFakeDsh(path.join(h.root, 'fake'), { missingProfiles: ['sdk'], pnpm: '10.34.9' });
    const { json } = await doctor({ PATH: `${bin}${path.delimiter}${basePath}` }, ['--profile', 'sdk']);
    const c = byId(json);
    expect(c.profile).toMatchObject({ status: 'fail', detail: `profile "sdk" does not exist in ${dshHome} (it has no profiles yet).` });
    const fix = c.profile!.fix;
    expect(fix[0]).toMatch(/ships no sdk template/);
    expect(fix.slice(4)).toEqual([`dsh plugin --profile sdk add ${SDK_PACKAGES.join(' ')}`, ...bundleFix('sdk')]);
    expect(json.checks.filter((x) => x.id.startsWith('sdk-'))).toEqual([]);
    // The first three commands, run in a shell, write exactly the profile's two files.
    await promisify(execFile)('sh', ['-c', fix.slice(1, 4).join('\n')], { timeout: 10_000 });
    const workspace = parse(readFileSync(path.join(profile(), 'pnpm-workspace.yaml'), 'utf8'));
    expect(workspace).toEqual({ packages: ['.'], nodeLinker: 'hoisted', autoInstallPeers: false, overrides: SDK_OVERRIDES });
    const rows = parse(readFileSync(path.join(profile(), 'cordis.patch.yml'), 'utf8'));
    expect(rows).toEqual([{ id: 'hmr', disabled: false, config: { root: [] } }, { id: 'sdk-app-startup', disabled: true }, { id: 'sdk-jsonrpc-server', inject: ['loader'] }]);
    expect(readFileSync(path.join(profile(), 'cordis.patch.yml'), 'utf8')).toBe(`${SDK_PATCH_LINES.join('\n')}\n`);
  });

  it('a profile made before its overrides: the missing overrides, the packages, the rows, each with its fix', async () => {
    await sdkProfile({ overrides: false, packages: { '@deepseek-ai/dsh-sdk-protocol': '0.0.1-rc.1', '@deepseek-ai/dsh-cmdline': '0.1.1-rc.2' }, bundle: false });
    const bin = await makeFakeDsh(path.join(h.root, 'fake'), { pnpm: '10.34.9', bundleRow: true });
    const { code, json } = await doctor({ PATH: `${bin}${path.delimiter}${basePath}` }, ['--profile', 'sdk']);
    expect(code).toBe(1);
    const c = byId(json);
    expect(c.profile).toBeUndefined();
    expect(c['sdk-workspace']).toMatchObject({ status: 'fail' });
    expect(c['sdk-workspace']?.detail).toContain("@deepseek-ai/dsh-cmdline: 0.1.0-rc.8, @deepseek-ai/dsh-sdk-jsonrpc-server: 0.0.1-rc.5");
    expect(c['sdk-workspace']?.fix).toEqual([
      `add these lines to ${dshHome}/profiles/sdk/pnpm-workspace.yaml:`,
      'overrides:',
      "  '@deepseek-ai/dsh-cmdline': 0.1.0-rc.8",
      "  '@deepseek-ai/dsh-sdk-jsonrpc-server': 0.0.1-rc.5",
      'then install the sdk packages again:',
      `dsh plugin --profile sdk add ${SDK_PACKAGES.join(' ')}`,
    ]);
    const packages = c['sdk-packages']!;
    expect(packages.status).toBe('fail');
    expect(packages.detail).toContain('@deepseek-ai/dsh-sdk-app 0.1.2-alpha.2 is not installed in the profile');
    expect(packages.detail).toContain('@deepseek-ai/dsh-cmdline is 0.1.1-rc.2 in the profile, wanted 0.1.0-rc.8');
    expect(packages.detail).toContain('@deepseek-ai/dsh-sdk-app is not among the profile\'s bundles');
    expect(packages.detail).not.toContain('dsh-sdk-protocol');
    expect(c['sdk-rows']).toMatchObject({ status: 'fail', fix: [`dsh plugin --profile sdk add ${SDK_PACKAGES.join(' ')}`] });
    expect(c['sdk-rows']?.detail).toMatch(/no sdk-jsonrpc-server row/);
    // The startup row still on, and the server still waiting for it: the rows to add to the profile's layer.
    const rowsOn = SDK_ROWS.map((l) => (l === '  disabled: true' ? '  disabled: false' : l === '    - loader' ? '    - sdkAppStartup' : l));
    const bin2 = await makeFakeDsh(path.join(h.root, 'fake2'), { pnpm: '10.34.9', bundleRow: true, extraRows: rowsOn });
    const rows = byId((await doctor({ PATH: `${bin2}${path.delimiter}${basePath}` }, ['--profile', 'sdk'])).json)['sdk-rows']!;
    expect(rows.status).toBe('fail');
    expect(rows.detail).toMatch(/still needs the sdk-app-startup row.*the sdk-app-startup row is on/);
    expect(rows.fix).toEqual([`add these rows to ${dshHome}/profiles/sdk/cordis.patch.yml (the profile's own layer):`, '- id: sdk-app-startup', '  disabled: true', '- id: sdk-jsonrpc-server', '  inject: [loader]']);
  });

  it('a ready sdk profile: its overrides, packages and rows pass, with the bundle in it', async () => {
    await readySetup();
    await sdkProfile({ overrides: true, packages: ALL_PACKAGES, bundle: true });
    const bin = await makeFakeDsh(path.join(h.root, 'fake'), { nodeVersion: 'v24.11.0', pnpm: '10.34.9', bundleRow: true, extraRows: SDK_ROWS });
    const { code, json } = await doctor({ PATH: `${bin}${path.delimiter}${basePath}` }, ['--profile', 'sdk']);
    expect(json.checks.filter((c) => c.status !== 'ok')).toEqual([]);
    expect(code).toBe(0);
    expect(json.checks.map((c) => c.id)).toEqual(['node', 'dsh', 'dsh-node', 'pnpm', 'hmr', 'overlay', 'bundle', 'dsh-seams', 'sdk-workspace', 'sdk-packages', 'sdk-rows', 'config', 'token', 'binding']);
    expect(byId(json).bundle?.detail).toBe(`dida-todo ${PACKAGE_VERSION} is installed in the sdk profile.`);
    // The web profile gets none of the sdk lines.
    const web = (await doctor({ PATH: `${bin}${path.delimiter}${basePath}` })).json;
    expect(web.checks.filter((c) => c.id.startsWith('sdk-'))).toEqual([]);
  });
});
