// `dida-todo demo`: the guided demo runs from a clone (`npm run demo`); this command says how to get there.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { helpText, parseArgs } from '../cli-args';
import type { CliIo } from '../cli-io';
import { EXIT, printJson } from '../cli-output';
import type { CliContext } from '../cli-runtime';
import { repositoryUrl } from '../install-commands';

/** The commands that get a clone with the demo, from package.json's repository. */
export function cloneHint(): string {
  return `git clone ${repositoryUrl()} dida-todo && cd dida-todo && npm ci && npm run demo`;
}

/** The dida-todo package root above `from` (the directory holding its package.json), if any. */
export function findPackageRoot(from: string): string | undefined {
  let dir = from;
  for (let i = 0; i < 6; i++) {
    try {
      const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string };
      if (manifest.name === 'dida-todo') return dir;
    } catch {
      /* not here */
    }
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return undefined;
}

/** True when `root` is a clone with the demo's sources (an installed bundle ships only dsh-plugin/ and locale/). */
export function isClone(root: string | undefined): boolean {
  return !!root && fs.existsSync(path.join(root, 'scripts', 'demo.mjs')) && fs.existsSync(path.join(root, 'src', 'cli', 'demo', 'main.ts'));
}

function here(): string {
  try {
    return path.dirname(fileURLToPath(import.meta.url));
  } catch {
    return process.cwd();
  }
}

/**
 * Always exits 2: the demo needs the repository's sources, the e2e harness and esbuild, which an installed bundle
 * does not carry. From a clone it names `npm run demo`; from an installed bundle it says how to clone first.
 * With --json the same advice is printed as `{ ok: false, … }` on stdout.
 */
export async function demoCommand(argv: readonly string[], io: CliIo, ctx: CliContext, root: string | undefined = findPackageRoot(here())): Promise<number> {
  const { t } = ctx.text;
  const args = parseArgs(argv, {}, 'demo', ctx.text);
  if (args.flags.help) {
    io.out(helpText('dida-todo demo', t('cli.demo.summary', { clone: cloneHint() }), {}, ctx.text));
    return EXIT.ok;
  }
  const clone = isClone(root);
  const command = clone ? `cd ${root} && npm ci && npm run demo` : cloneHint();
  const message = clone ? t('cli.demo.inClone', { command }) : t('cli.demo.needsClone', { command });
  io.err(`dida-todo: ${message}\n`);
  if (args.flags.json) printJson(io, { ok: false, exitCode: EXIT.usage, error: { code: 'demo_needs_clone', message }, clone, command });
  return EXIT.usage;
}
