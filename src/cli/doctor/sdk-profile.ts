// The `sdk` profile on dsh 0.1.0-rc.8 (no template ships for it): what it is made of, the commands that make it, and
// the doctor's check of an existing one (its pnpm overrides, its packages, its rows).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { safeText } from '../terminal-text';
import type { CheckResult, DoctorCheck, DoctorContext } from './doctor-types';
import type { DshProbe } from './dsh-probe';

/** dsh-base is the profile's first bundle; sdk-app is its second, the protocol package a plain library beside it. */
export const SDK_PACKAGES = ['@deepseek-ai/dsh-sdk-app@0.1.2-alpha.2', '@deepseek-ai/dsh-sdk-protocol@0.0.1-rc.1'] as const;
/** sdk-app asks for ^0.1.2-alpha.2 of both, never published: pinned to the newest that were. */
export const SDK_OVERRIDES: Readonly<Record<string, string>> = { '@deepseek-ai/dsh-cmdline': '0.1.0-rc.8', '@deepseek-ai/dsh-sdk-jsonrpc-server': '0.0.1-rc.5' };

/** The profile's pnpm-workspace.yaml, written before `dsh plugin` first creates the profile (it never overwrites it). */
export const SDK_WORKSPACE_LINES: readonly string[] = [
  "packages: ['.']",
  'nodeLinker: hoisted',
  'autoInstallPeers: false',
  'overrides:',
  ...Object.entries(SDK_OVERRIDES).map(([name, version]) => `  '${name}': ${version}`),
];

/**
 * The profile's own cordis.patch.yml: the HMR row rc.8 cannot boot without; sdk-app's startup row off (it imports
 * `exitOnStdinEnd`, which no published dsh-cmdline exports); the JSON-RPC server without its need of that row.
 */
export const SDK_PATCH_LINES: readonly string[] = ['- id: hmr', '  disabled: false', '  config: { root: [] }', '- id: sdk-app-startup', '  disabled: true', '- id: sdk-jsonrpc-server', '  inject: [loader]'];

const printf = (lines: readonly string[]) => `printf '%s\\n' ${lines.map((l) => `"${l.replace(/(["\\$`])/g, '\\$1')}"`).join(' ')}`;

/** Shell commands that create the sdk profile in `dshHome` (as the person types it, e.g. `~/.dsh`) with its packages. */
export function sdkCreateCommands(dshHome: string): string[] {
  const dir = `${dshHome}/profiles/sdk`;
  return [
    `mkdir -p ${dir}`,
    `${printf(SDK_WORKSPACE_LINES)} > ${dir}/pnpm-workspace.yaml`,
    `${printf(SDK_PATCH_LINES)} > ${dir}/cordis.patch.yml`,
    `dsh plugin --profile sdk add ${SDK_PACKAGES.join(' ')}`,
  ];
}

function readJson(file: string): Record<string, any> | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, any>;
  } catch {
    return undefined;
  }
}

function installedVersion(profileDir: string, name: string): string | undefined {
  const version = readJson(path.join(profileDir, 'node_modules', ...name.split('/'), 'package.json'))?.version;
  return typeof version === 'string' ? version : undefined;
}

async function readOverrides(file: string): Promise<Record<string, unknown> | undefined> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const imported = (await import('yaml')) as typeof import('yaml') & { default?: typeof import('yaml') };
    const yaml = typeof imported.parse === 'function' ? imported : (imported.default as typeof import('yaml'));
    const parsed = yaml.parse(text) as { overrides?: unknown } | null;
    return parsed && typeof parsed.overrides === 'object' && parsed.overrides !== null ? (parsed.overrides as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const spec = (name: string) => SDK_PACKAGES.find((p) => p.startsWith(`${name}@`)) as string;
const versionOf = (packageSpec: string) => packageSpec.slice(packageSpec.lastIndexOf('@') + 1);

async function workspaceResult(ctx: DoctorContext, dir: string, shown: string): Promise<CheckResult> {
  const { t } = ctx.text;
  const title = t('cli.doctor.title.sdkWorkspace');
  const file = path.join(dir, 'pnpm-workspace.yaml');
  const overrides = await readOverrides(file);
  const wrong = Object.entries(SDK_OVERRIDES).filter(([name, version]) => String(overrides?.[name] ?? '') !== version);
  if (wrong.length === 0) return { id: 'sdk-workspace', status: 'ok', title, detail: t('cli.doctor.sdkWorkspace.ok', { file: `${shown}/pnpm-workspace.yaml` }) };
  const missing = wrong.map(([name, version]) => `${name}: ${version}${overrides?.[name] !== undefined ? ` (${t('cli.doctor.sdkWorkspace.now', { version: safeText(String(overrides[name])) })})` : ''}`).join(', ');
  return {
    id: 'sdk-workspace',
    status: 'fail',
    title,
    detail: t('cli.doctor.sdkWorkspace.missing', { file: `${shown}/pnpm-workspace.yaml`, missing }),
    fix: [
      t('cli.doctor.sdkWorkspace.fixAdd', { file: `${shown}/pnpm-workspace.yaml` }),
      ...(overrides && Object.keys(overrides).length > 0 ? [] : ['overrides:']),
      ...wrong.map(([name, version]) => `  '${name}': ${version}`),
      t('cli.doctor.sdkWorkspace.fixReinstall'),
      `dsh plugin --profile sdk add ${SDK_PACKAGES.join(' ')}`,
    ],
  };
}

function packagesResult(ctx: DoctorContext, dir: string): CheckResult {
  const { t } = ctx.text;
  const title = t('cli.doctor.title.sdkPackages');
  const bundles: unknown = readJson(path.join(dir, 'package.json'))?.dsh?.profile?.bundles;
  const app = '@deepseek-ai/dsh-sdk-app';
  const problems: string[] = [];
  for (const name of [app, '@deepseek-ai/dsh-sdk-protocol', ...Object.keys(SDK_OVERRIDES)]) {
    const wanted = SDK_OVERRIDES[name] ?? versionOf(spec(name));
    const found = installedVersion(dir, name);
    if (found !== wanted) problems.push(found ? t('cli.doctor.sdkPackages.other', { name, found: safeText(found), wanted }) : t('cli.doctor.sdkPackages.absent', { name, wanted }));
  }
  if (!(Array.isArray(bundles) && bundles.includes(app))) problems.push(t('cli.doctor.sdkPackages.notBundle', { name: app }));
  if (problems.length === 0) {
    return { id: 'sdk-packages', status: 'ok', title, detail: t('cli.doctor.sdkPackages.ok', { app: versionOf(spec(app)), protocol: versionOf(spec('@deepseek-ai/dsh-sdk-protocol')) }) };
  }
  return { id: 'sdk-packages', status: 'fail', title, detail: problems.join('; '), fix: [`dsh plugin --profile sdk add ${SDK_PACKAGES.join(' ')}`] };
}

function rowsResult(ctx: DoctorContext, probe: DshProbe, shown: string): CheckResult | undefined {
  const { t } = ctx.text;
  const title = t('cli.doctor.title.sdkRows');
  if (!probe.rows) return undefined;
  const startup = probe.rows.find((r) => r.id === 'sdk-app-startup');
  const server = probe.rows.find((r) => r.id === 'sdk-jsonrpc-server');
  const problems: string[] = [];
  if (!server) problems.push(t('cli.doctor.sdkRows.noServer'));
  else {
    if (server.disabled === true) problems.push(t('cli.doctor.sdkRows.serverDisabled'));
    if ((server.inject ?? []).includes('sdkAppStartup')) problems.push(t('cli.doctor.sdkRows.serverInjects'));
  }
  if (startup && startup.disabled !== true) problems.push(t('cli.doctor.sdkRows.startupOn'));
  if (problems.length === 0) return { id: 'sdk-rows', status: 'ok', title, detail: t('cli.doctor.sdkRows.ok') };
  return {
    id: 'sdk-rows',
    status: 'fail',
    title,
    detail: problems.join('; '),
    fix: server ? [t('cli.doctor.sdkRows.fixAdd', { file: `${shown}/cordis.patch.yml` }), ...SDK_PATCH_LINES.slice(3)] : [`dsh plugin --profile sdk add ${SDK_PACKAGES.join(' ')}`],
  };
}

/**
 * For `--profile sdk` only (nothing otherwise, and nothing when the profile does not exist: the profile check says
 * how to make it): the two overrides, the packages as installed, and the composed rows.
 */
export const sdkProfileCheck: DoctorCheck = async (ctx) => {
  if (ctx.profile !== 'sdk') return [];
  const probe = await ctx.dsh();
  if (!probe.bin || !probe.version || probe.missingProfile) return [];
  const dir = path.join(ctx.dshHomeDir, 'profiles', 'sdk');
  if (!existsSync(path.join(dir, 'package.json'))) return [];
  const shown = `${ctx.dshHome}/profiles/sdk`;
  const results: CheckResult[] = [await workspaceResult(ctx, dir, shown), packagesResult(ctx, dir)];
  const rows = rowsResult(ctx, probe, shown);
  if (rows) results.push(rows);
  return results;
};
