// Builds the fake `dida` executable into a temp dir and gives it a temp HOME holding the CLI token file.
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export interface FakeDidaInstall {
  /** Absolute path of the executable `dida` file. */
  command: string;
  /** Temp HOME; the token lives in `<home>/.config/dida-cli/config.json`. */
  home: string;
  /** `process.env` with HOME (and USERPROFILE) pointing at `home` and FAKE_DIDA_BASE_URL set; PATH unchanged. */
  env: NodeJS.ProcessEnv;
  cleanup(): Promise<void>;
}

export interface FakeDidaOptions {
  baseUrl: string;
  /** Written as `access_token`; omit (or pass undefined) for a logged-out CLI. */
  token?: string | undefined;
}

const SOURCE = join(dirname(fileURLToPath(import.meta.url)), 'fake-dida.ts');

export async function installFakeDida(options: FakeDidaOptions): Promise<FakeDidaInstall> {
  const root = await mkdtemp(join(tmpdir(), 'fake-dida-'));
  const bin = join(root, 'bin');
  const home = join(root, 'home');
  await mkdir(bin, { recursive: true });
  await mkdir(join(home, '.config', 'dida-cli'), { recursive: true });

  await build({
    entryPoints: [SOURCE],
    outfile: join(bin, 'fake-dida.mjs'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    banner: { js: '#!/usr/bin/env node' },
    logLevel: 'silent',
  });
  // An extension-less CommonJS launcher (the folder's package.json says so) that loads the ESM build in-process,
  // so killing the `dida` process kills the fake itself.
  await writeFile(join(bin, 'package.json'), '{"type":"commonjs"}\n');
  const command = join(bin, 'dida');
  await writeFile(command, "#!/usr/bin/env node\nimport(require('node:url').pathToFileURL(require('node:path').join(__dirname, 'fake-dida.mjs')).href);\n");
  await chmod(command, 0o755);

  if (options.token !== undefined) {
    await writeFile(join(home, '.config', 'dida-cli', 'config.json'), `${JSON.stringify({ access_token: options.token }, null, 2)}\n`, { mode: 0o600 });
  }

  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, USERPROFILE: home, FAKE_DIDA_BASE_URL: options.baseUrl };
  for (const key of ['FAKE_DIDA_SLEEP_MS', 'FAKE_DIDA_MODE', 'FAKE_DIDA_HUGE_BYTES', 'FAKE_DIDA_ARGV_LOG', 'FAKE_DIDA_PID_FILE', 'FAKE_DIDA_IGNORE_SIGTERM']) delete env[key];
  return {
    command,
    home,
    env,
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}
