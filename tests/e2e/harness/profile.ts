// The one way an e2e test makes a dsh profile in its DSH_HOME ready: the built-in profiles (headless, web) need only
// the bundle added; the registry profiles (sdk, acp) are first assembled as the README says — their
// pnpm-workspace.yaml (the two overrides) and cordis.patch.yml (the three rows), then `dsh plugin --profile <p> add`
// of their packages (from the cache's pnpm store) — and then get the bundle.
import fs from 'node:fs';
import path from 'node:path';
import { ensureDsh, installBundle, profileDir, readProfileManifest, repoRoot, runDsh, type ProfileManifest } from './dsh-run';

export type E2eProfile = 'headless' | 'web' | 'sdk' | 'acp';

/**
 * Prepares `profile` in `home` and adds the bundle at `bundlePath` (default the repository root; `false` leaves it
 * out). Returns the profile's package.json.
 */
export async function prepareProfile(home: string, profile: E2eProfile, bundlePath: string | false = repoRoot): Promise<ProfileManifest> {
  if (profile === 'sdk' || profile === 'acp') await assembleRegistryProfile(home, profile);
  if (bundlePath === false) return readProfileManifest(home, profile);
  return installBundle(home, profile, bundlePath);
}

async function assembleRegistryProfile(home: string, profile: 'sdk' | 'acp'): Promise<void> {
  const recipe = (await ensureDsh())[profile];
  const dir = profileDir(home, profile);
  fs.mkdirSync(dir, { recursive: true });
  fs.copyFileSync(recipe.workspaceYaml, path.join(dir, 'pnpm-workspace.yaml'));
  fs.copyFileSync(recipe.patchYml, path.join(dir, 'cordis.patch.yml'));
  const added = await runDsh(['plugin', '--profile', profile, 'add', '--prefer-offline', ...recipe.packages], { home, timeoutMs: 180_000 });
  if (added.code !== 0) throw new Error(`dsh plugin --profile ${profile} add failed (exit ${added.code ?? added.signal}):\n${added.stderr.slice(-3000)}`);
}
