// `dida-todo demo`: the guided demo runs from a clone (`npm run demo`); this command says how to get there.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { helpText, parseArgs } from '../cli-args';
import type { CliIo } from '../cli-io';
import { EXIT } from '../cli-output';

const CLONE_HINT = 'git clone <this repository> dida-todo && cd dida-todo && npm ci && npm run demo';

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
  return !!root && fs.existsSync(path.join(root, 'scripts', 'demo.mjs')) && fs.existsSync(path.join(root, 'src', 'demo', 'main.ts'));
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
 */
export async function demoCommand(argv: readonly string[], io: CliIo, _ctx?: unknown, root: string | undefined = findPackageRoot(here())): Promise<number> {
  const args = parseArgs(argv, {}, 'demo');
  if (args.flags.help) {
    io.out(helpText('dida-todo demo', `Explains how to run the guided demo (a Dida simulator, the real dsh and a scripted model). It runs from a clone:\n  ${CLONE_HINT}`, {}));
    return EXIT.ok;
  }
  if (isClone(root)) {
    io.err(`dida-todo: the demo runs with npm in this clone: cd ${root} && npm ci && npm run demo\n`);
  } else {
    io.err(`dida-todo: the demo needs a clone of the repository (its sources and dev tools are not part of the installed bundle): ${CLONE_HINT}\n`);
  }
  return EXIT.usage;
}
