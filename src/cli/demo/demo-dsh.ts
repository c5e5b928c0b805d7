// The demo's host: the real dsh (installed once into the e2e cache), an isolated DSH_HOME with this repository
// installed into the headless profile, and either the scripted fake model or the real DeepSeek model.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureDsh, repoRoot } from '../../local-dsh/dsh-install';
import { installBundle, makeDshHome, removeDshHome, runDsh } from '../../local-dsh/dsh-process';
import { startFakeModel, type Behaviour, type FakeModel } from '../../local-dsh/scripted-model';
import { cliText, type CliText } from '../cli-locale';
import { INSTALL } from '../install-commands';
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
  /** The language of the progress lines (default English). */
  text?: CliText;
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
    const { t } = this.options.text ?? cliText('en');
    const ms = (value: number) => seconds(value, this.options.text);
    if (!fs.existsSync(path.join(repoRoot, 'dsh-plugin', 'index.mjs'))) {
      throw new Error(t('cli.demo.dsh.missingBuild', { file: path.join(repoRoot, 'dsh-plugin', 'index.mjs') }));
    }
    const cache = dshCacheDir();
    keepPnpmCacheInside(cache);
    const cached = fs.existsSync(path.join(cache, 'ready.json'));
    log(t(cached ? 'cli.demo.dsh.cached' : 'cli.demo.dsh.installing', { cache }));
    let at = Date.now();
    const started = at;
    // A cold install is quiet for a while: say every 10 s that it is still going.
    const heartbeat = cached ? undefined : setInterval(() => log(t('cli.demo.dsh.stillInstalling', { seconds: Math.round((Date.now() - started) / 1000) })), 10_000);
    let install;
    try {
      install = await ensureDsh();
    } finally {
      if (heartbeat) clearInterval(heartbeat);
    }
    log(t('cli.demo.dsh.ready', { version: install.version, time: ms(Date.now() - at) }));

    this.home = makeDshHome();
    this.project = fs.realpathSync(fs.mkdtempSync(path.join(this.home, 'project-')));
    log(t(this.options.keep ? 'cli.demo.dsh.homeKept' : 'cli.demo.dsh.home', { home: this.home }));
    at = Date.now();
    // The clone goes into the demo's own dsh home only; the person's command is the one from package.json.
    log(t('cli.demo.dsh.installingClone', { command: INSTALL.dshPluginAdd('web') }));
    await installBundle(this.home, 'headless', repoRoot);
    log(t('cli.demo.dsh.installed', { time: ms(Date.now() - at) }));
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
