// `dida-todo doctor` through the built CLI: a machine without dsh, the demo's dsh offered, a dsh that cannot start
// (old Node, broken HMR plugin, no overlay, no pnpm, no bundle), a ready setup, a broken config and a stopped simulator.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { INSTALL } from '../../src/cli/install-commands';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { makeCliHome, type CliHome } from '../helpers/cli-harness';
import { makeFakeDsh } from '../helpers/fake-dsh';

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
    expect(json.checks.map((c) => c.id)).toEqual(['node', 'dsh', 'dsh-node', 'overlay', 'bundle', 'config', 'token', 'binding']);
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
    expect(c.bundle).toMatchObject({ status: 'fail', fix: [INSTALL.dshPluginAdd('web')] });
    expect(out).toMatch(/fix: dsh plugin --profile web add github:dida-todo\/dida-todo/);

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
    expect(older.bundle).toMatchObject({ status: 'warn', fix: [INSTALL.dshPluginAdd('web')] });
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
    expect(c.token?.detail).toMatch(/Could not reach Dida/);
    expect(c.token?.fix).toEqual(['dida-todo sim --use', 'start the simulator again (above), or go back to your real Dida:', 'dida-todo login --token -']);
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
});
