#!/usr/bin/env node
// `npm run demo`: bundles src/cli/demo/main.ts (and the e2e harness it uses) with esbuild into a temporary .mjs
// outside the repository, runs it in this process, and removes it. The demo is not part of the plugin bundle.
//
//   node scripts/demo.mjs [--no-color] [--real --list <name>] [--keep] [--verbose] [--help]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const entry = path.join(repoRoot, 'src', 'cli', 'demo', 'main.ts');

let esbuild;
try {
  esbuild = await import('esbuild');
} catch {
  process.stderr.write('demo: esbuild is missing; run `npm ci` in the clone first (the demo is built from src/ at run time).\n');
  process.exit(1);
}

const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dida-todo-demo-build-'));
const removeOut = () => fs.rmSync(outDir, { recursive: true, force: true });
process.once('exit', removeOut);

/**
 * Bundled modules keep their own `import.meta.url` (the harness finds the repository and scripts/install-dsh.mjs
 * relative to its source file), so every repository .ts file gets its original file URL as a literal.
 */
const keepModuleUrls = {
  name: 'keep-module-urls',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (!args.path.startsWith(repoRoot + path.sep) || args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const source = await fs.promises.readFile(args.path, 'utf8');
      return { contents: source.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)), loader: 'ts' };
    });
  },
};

const outfile = path.join(outDir, 'demo.mjs');
try {
  await esbuild.build({
    absWorkingDir: repoRoot,
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'error',
    plugins: [keepModuleUrls],
    // CommonJS dependencies (yaml) call require() for Node built-ins; give ESM a real one.
    banner: { js: "import { createRequire as __dtCreateRequire } from 'node:module'; const require = __dtCreateRequire(import.meta.url);" },
  });
} catch (error) {
  process.stderr.write(`demo: building ${path.relative(repoRoot, entry)} failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}

const { demoMain } = await import(pathToFileURL(outfile).href);
const code = await demoMain(process.argv.slice(2), undefined, process.env, { repoRoot });
removeOut();
// Child processes and servers are closed by the demo; exit explicitly so a stray handle never keeps it alive.
process.exit(code);
