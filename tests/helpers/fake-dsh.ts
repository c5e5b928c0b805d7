// A stand-in `dsh` on PATH for `dida-todo doctor` tests: answers --version and --dump-config like dsh 0.1.0-rc.8,
// with a chosen cordis HMR plugin version next to it, optionally a chosen Node version, and an optional pnpm.
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

export interface FakeDshOptions {
  version?: string;
  /** Version of @deepseek-ai/cordis-plugin-hmr installed next to it. */
  hmrVersion?: string;
  /** The Node version the fake reports running on (default: the real one). */
  nodeVersion?: string;
  /** `hmr` row disabled in the composed config (no overlay). */
  hmrDisabled?: boolean;
  /** Include the dida-todo row (the bundle is installed in the profile). */
  bundleRow?: boolean;
  /** Put a `pnpm` next to it (printing this version). */
  pnpm?: string;
  /** More `--dump-config` lines after the rows above (e.g. the sdk profile's rows). */
  extraRows?: string[];
  /** Profiles `--dump-config` fails for as rc.8 does for a profile that does not exist (a stack trace on stderr, exit 1). */
  missingProfiles?: string[];
}

/** Creates the fake under `dir`; returns the folder to put first on PATH. */
export async function makeFakeDsh(dir: string, options: FakeDshOptions = {}): Promise<string> {
  const bin = path.join(dir, 'bin');
  const hmr = path.join(dir, 'node_modules', '@deepseek-ai', 'cordis-plugin-hmr');
  await mkdir(bin, { recursive: true });
  await mkdir(hmr, { recursive: true });
  await writeFile(path.join(hmr, 'package.json'), JSON.stringify({ name: '@deepseek-ai/cordis-plugin-hmr', version: options.hmrVersion ?? '1.0.17', main: 'index.js' }));
  await writeFile(path.join(hmr, 'index.js'), 'module.exports = {};\n');
  const rows = [
    '# == @deepseek-ai/dsh-base',
    '- id: timer',
    "  name: '@deepseek-ai/cordis-plugin-timer'",
    '# == @deepseek-ai/dsh-base, patched by @deepseek-ai/dsh-web-app',
    '- id: hmr',
    "  name: '@deepseek-ai/cordis-plugin-hmr'",
    '  config:',
    '    root: []',
    `  disabled: ${options.hmrDisabled ? 'true' : 'false'}`,
    ...(options.bundleRow ? ['# == dida-todo', '- id: dida-todo', '  name: dida-todo', '  config:', '    locale: zh', '    trustedHosts: !!js ctx.webStartup.trustedHosts'] : []),
    ...(options.extraRows ?? []),
    '',
  ];
  const stack = (profile: string) =>
    [
      'file:///x/node_modules/@deepseek-ai/dsh-app-boot/lib/index.js:543',
      `\t\tif (template === void 0) throw new Error(\`\${binName}: profile \${JSON.stringify(name)} does not exist; create it with 'dsh plugin --profile \${name} add <package>'\`);`,
      '\t\t                               ^',
      '',
      `Error: dsh: profile ${JSON.stringify(profile)} does not exist; create it with 'dsh plugin --profile ${profile} add <package>'`,
      '    at loadProfile (file:///x/node_modules/@deepseek-ai/dsh-app-boot/lib/index.js:543:34)',
      '    at process.processTicksAndRejections (node:internal/process/task_queues:104:5)',
      '',
      'Node.js v24.22.3',
      '',
    ].join('\n');
  const script = [
    ...(options.nodeVersion ? [`Object.defineProperty(process, 'version', { value: ${JSON.stringify(options.nodeVersion)} });`] : []),
    'const args = process.argv.slice(2);',
    `if (args.includes('--version')) { console.log(${JSON.stringify(options.version ?? '0.1.0-rc.8')}); process.exit(0); }`,
    `const missing = ${JSON.stringify(Object.fromEntries((options.missingProfiles ?? []).map((p) => [p, stack(p)])))};`,
    "const profile = args[args.indexOf('--profile') + 1];",
    "if (args.includes('--dump-config') && missing[profile] !== undefined) { process.stderr.write(missing[profile]); process.exit(1); }",
    `if (args.includes('--dump-config')) { process.stdout.write(${JSON.stringify(rows.join('\n'))}); process.exit(0); }`,
    "console.error('fake dsh: unsupported'); process.exit(2);",
  ].join('\n');
  await writeFile(path.join(dir, 'dsh.cjs'), `${script}\n`);
  await writeFile(path.join(bin, 'dsh'), `#!/bin/sh\nexec "${process.execPath}" "${path.join(dir, 'dsh.cjs')}" "$@"\n`);
  await chmod(path.join(bin, 'dsh'), 0o755);
  if (options.pnpm) {
    await writeFile(path.join(bin, 'pnpm'), `#!/bin/sh\necho ${options.pnpm}\n`);
    await chmod(path.join(bin, 'pnpm'), 0o755);
  }
  return bin;
}
