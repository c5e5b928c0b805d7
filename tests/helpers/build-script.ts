// Bundles a TypeScript entry into a runnable .mjs so tests can start it as a real Node child process.
import { build } from 'esbuild';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const cache = new Map<string, Promise<string>>();
let outRoot: string | undefined;

function outputRoot(): string {
  if (!outRoot) {
    const dir = mkdtempSync(path.join(process.env.DIDA_TODO_TEST_TMP ?? os.tmpdir(), 'dida-todo-scripts-'));
    outRoot = dir;
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return outRoot;
}

/**
 * Bundles `entryTsPath` (and everything it imports, node_modules included) into one ESM file for Node 20
 * and returns its absolute path. Built once per entry per test process; removed when the process exits.
 */
export function buildScript(entryTsPath: string): Promise<string> {
  const entry = path.resolve(entryTsPath);
  let built = cache.get(entry);
  if (!built) {
    built = bundle(entry);
    cache.set(entry, built);
    built.catch(() => cache.delete(entry));
  }
  return built;
}

async function bundle(entry: string): Promise<string> {
  const outfile = path.join(outputRoot(), `${path.basename(entry).replace(/\.[cm]?tsx?$/, '')}-${cache.size}.mjs`);
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'inline',
    logLevel: 'error',
    // CommonJS dependencies (yaml) call require() for Node built-ins; give ESM a real one.
    banner: { js: "import { createRequire as __dtCreateRequire } from 'node:module'; const require = __dtCreateRequire(import.meta.url);" },
  });
  return outfile;
}
