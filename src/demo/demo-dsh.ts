// The demo's host: the real dsh (installed once into the e2e cache), an isolated DSH_HOME with this repository
// installed into the headless profile, and either the scripted fake model or the real DeepSeek model.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureDsh, makeDshHome, removeDshHome, repoRoot, runDsh, installBundle } from '../../tests/e2e/harness/dsh-run';
import { startFakeModel, type Behaviour, type FakeModel } from '../../tests/e2e/harness/fake-model';
import { INSTALL } from '../cli/install-commands';
import type { DemoHost, PreparedHost, SessionResult } from './demo-runner';
import { seconds } from './demo-print';

export interface DshHostOptions {
  /** A real DeepSeek key: the real model answers (DEEPSEEK_BASE_URL is left unset). */
  apiKey?: string;
  /** Keep the temporary home (its path is printed). */
  keep?: boolean;
  /** Pass dsh's stderr through. */
  verbose?: boolean;
  /** Bound of one headless session (default 3 minutes scripted, 10 minutes with the real model). */
  sessionTimeoutMs?: number;
  log?: (line: string) => void;
}

/**
 * Keeps pnpm's metadata cache inside the demo's cache folder instead of ~/.cache/pnpm: the install step and every
 * dsh child inherit this process's environment. Returns the folder it set (unchanged when already set).
 */
export function keepPnpmCacheInside(cache: string, env: NodeJS.ProcessEnv = process.env): string {
  const current = env.XDG_CACHE_HOME;
  if (current && current.trim() !== '' && path.resolve(current).startsWith(cache + path.sep)) return current;
  env.XDG_CACHE_HOME = path.join(cache, 'xdg-cache');
  return env.XDG_CACHE_HOME;
}

/** Where scripts/install-dsh.mjs keeps dsh (same rule as the script). */
export function dshCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.DIDA_TODO_E2E_CACHE;
  return path.resolve(fromEnv && fromEnv.trim() !== '' ? fromEnv : path.join(os.homedir(), '.cache', 'dida-todo-e2e'));
}

export class DshDemoHost implements DemoHost {
  readonly scripted: boolean;
  readonly command = 'dsh --profile headless';
  private home: string | undefined;
  private project: string | undefined;
  private model: FakeModel | undefined;

  constructor(private readonly options: DshHostOptions = {}) {
    this.scripted = !options.apiKey;
  }

  async prepare(log: (line: string) => void): Promise<PreparedHost> {
    if (!fs.existsSync(path.join(repoRoot, 'dsh-plugin', 'index.mjs'))) {
      throw new Error(`${path.join(repoRoot, 'dsh-plugin', 'index.mjs')} is missing; run \`npm run build\` first.`);
    }
    const cache = dshCacheDir();
    keepPnpmCacheInside(cache);
    const cached = fs.existsSync(path.join(cache, 'ready.json'));
    log(cached ? `dsh: using the cached install in ${cache}` : `dsh: installing dsh into ${cache} (first run only; usually under a minute)…`);
    let t = Date.now();
    const started = t;
    // A cold install is quiet for a while: say every 10 s that it is still going.
    const heartbeat = cached ? undefined : setInterval(() => log(`  … still installing dsh (${Math.round((Date.now() - started) / 1000)} s)`), 10_000);
    let install;
    try {
      install = await ensureDsh();
    } finally {
      if (heartbeat) clearInterval(heartbeat);
    }
    log(`dsh ${install.version} ready (${seconds(Date.now() - t)})`);

    this.home = makeDshHome();
    this.project = fs.realpathSync(fs.mkdtempSync(path.join(this.home, 'project-')));
    log(`isolated DSH_HOME ${this.home}${this.options.keep ? ' (kept after the demo: --keep)' : ' (removed afterwards)'}`);
    t = Date.now();
    // The clone goes into the demo's own dsh home only; the person's command is the one from package.json.
    log(`installing this clone into the demo's dsh home (for your own dsh: \`${INSTALL.dshPluginAdd('web')}\`)…`);
    await installBundle(this.home, 'headless', repoRoot);
    log(`  installed (${seconds(Date.now() - t)})`);
    if (this.scripted) this.model = await startFakeModel();
    return {
      projectDir: this.project,
      // dshEnv points XDG_CONFIG_HOME inside the home, so the person's own config is never touched.
      configFile: path.join(this.home, '.test-xdg', 'config', 'dida-todo', 'config.yaml'),
      dsh: { dshBin: install.dshBin, nodeBinDir: install.nodeBinDir, pnpmBinDir: install.pnpmBinDir },
    };
  }

  async runSession(prompt: string, script: Behaviour[], env: Record<string, string>): Promise<SessionResult> {
    if (!this.home || !this.project) throw new Error('prepare() first');
    const install = await ensureDsh();
    const modelEnv: Record<string, string | undefined> = this.model
      ? {}
      : // The real model: the key from the environment, DeepSeek's own endpoint.
        { DEEPSEEK_API_KEY: this.options.apiKey, DEEPSEEK_BASE_URL: undefined };
    this.model?.setScript(script);
    const result = await runDsh(['--profile', 'headless', '--patch', install.hmrPatch, prompt], {
      home: this.home,
      cwd: this.project,
      ...(this.model ? { baseUrl: this.model.baseUrl } : {}),
      env: { ...env, ...modelEnv },
      timeoutMs: this.options.sessionTimeoutMs ?? (this.model ? 180_000 : 600_000),
      timeoutSignal: 'SIGTERM',
    });
    if (this.options.verbose && result.stderr.trim() !== '') process.stderr.write(result.stderr);
    return result;
  }

  async close(): Promise<void> {
    await this.model?.close();
    this.model = undefined;
    if (this.home && !this.options.keep) removeDshHome(this.home);
    this.home = undefined;
  }
}
