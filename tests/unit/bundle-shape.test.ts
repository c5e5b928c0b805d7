// The committed bundle: package manifest, patch layer, export shape, freshness and import boundaries.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DIDA_ACCESS_KEYS, ROW_CONFIG_KEYS, RowConfig } from '../../src/dsh/row-config';

const root = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await listFiles(full)).map((f) => path.join(entry.name, f)));
    else out.push(entry.name);
  }
  return out.sort();
}

describe('package.json', () => {
  it('is an installable dsh bundle that downloads nothing but the repository', async () => {
    const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8'));
    expect(pkg.type).toBe('module');
    expect(pkg.dsh).toEqual({ bundle: { patch: './dsh-plugin/cordis.patch.yml' } });
    expect(pkg.exports['.']).toBe('./dsh-plugin/index.mjs');
    expect(pkg.exports['./package.json']).toBe('./package.json');
    expect(pkg.exports['./cordis.patch.yml']).toBe('./dsh-plugin/cordis.patch.yml');
    expect(pkg.bin).toEqual({ 'dida-todo': './dsh-plugin/cli.mjs' });
    expect(pkg.engines.node).toBe('>=20');
    expect(pkg.files).toContain('dsh-plugin/');
    for (const script of ['prepare', 'install', 'preinstall', 'postinstall', 'prepack']) expect(pkg.scripts?.[script]).toBeUndefined();
    expect(pkg.dependencies ?? {}).toEqual({});
    for (const lib of ['zod', 'yaml', 'esbuild', 'typescript', 'vitest', 'vite']) expect(pkg.devDependencies[lib]).toBeTruthy();
  });
});

describe('cordis.patch.yml', () => {
  it('only inserts the dida-todo row, never overriding a dsh row', async () => {
    const text = await readFile(path.join(root, 'dsh-plugin/cordis.patch.yml'), 'utf8');
    expect(text.startsWith('#')).toBe(true);
    const patch = parse(text);
    expect(Array.isArray(patch)).toBe(true);
    expect(patch).toHaveLength(1);
    expect(Object.keys(patch[0])).toEqual(['insert']);
    expect(patch[0].insert).toHaveLength(1);
    const row = patch[0].insert[0];
    expect(row.id).toBe('dida-todo');
    expect(row.name).toBe('dida-todo');
    expect(Object.keys(row).sort()).toEqual(['config', 'id', 'name']);
    const parsed = RowConfig.safeParse(row.config);
    expect(parsed.success).toBe(true);
  });

  it('documents every config key with a comment', async () => {
    const lines = (await readFile(path.join(root, 'dsh-plugin/cordis.patch.yml'), 'utf8')).split('\n');
    const keys = [...ROW_CONFIG_KEYS, ...DIDA_ACCESS_KEYS];
    for (const key of keys) {
      const at = lines.findIndex((l) => new RegExp(`^\\s*(# )?${key}:`).test(l));
      expect(at, `key ${key} appears in the patch`).toBeGreaterThan(0);
      expect(lines[at - 1]?.trim().startsWith('#'), `key ${key} has a comment line above it`).toBe(true);
    }
  });
});

describe('plugin entry', () => {
  it('has the named exports dsh needs and no default export', async () => {
    const mod = await import(path.join(root, 'dsh-plugin/index.mjs'));
    expect('default' in mod).toBe(false);
    expect(mod.name).toBe('dida-todo');
    expect(Array.isArray(mod.inject)).toBe(true);
    expect(typeof mod.apply).toBe('function');
    expect(mod.Config['~standard']).toBeTruthy();
    const result = await mod.Config['~standard'].validate({});
    expect(result.issues).toBeUndefined();
    expect(result.value.locale).toBe('zh');
    expect(result.value.backoff).toEqual([30, 60, 120, 300, 600]);
    const bad = await mod.Config['~standard'].validate({ maxAutoContinue: -1, colour: 'x' });
    expect(bad.issues.length).toBeGreaterThan(0);
  });

  it('keeps what the first load imports statically within the 40 KB budget', async () => {
    // The entry plus every chunk it imports statically; lazily imported chunks (yaml, locks) do not count.
    const seen = new Set<string>();
    const visit = async (file: string): Promise<number> => {
      if (seen.has(file)) return 0;
      seen.add(file);
      const text = await readFile(file, 'utf8');
      let total = (await stat(file)).size;
      for (const match of text.matchAll(/(?:^|[;\n])\s*import\s*(?:[^'"();]*?from\s*)?["'](\.[^"']+)["']/g)) {
        total += await visit(path.resolve(path.dirname(file), match[1] as string));
      }
      return total;
    };
    const size = await visit(path.join(root, 'dsh-plugin/index.mjs'));
    // The first load registers the tools and hooks only; the engine, the Dida client, zod and yaml load when a
    // session may be bound (src/dsh/lazy-host.ts).
    expect(size).toBeLessThanOrEqual(40 * 1024);
  });

  it('imports zod/mini as a namespace so esbuild can drop what is unused', async () => {
    // `import { z } from 'zod/mini'` pulls in all of zod (hundreds of KB); `import * as z` tree-shakes.
    const offenders: string[] = [];
    for (const dir of ['src']) {
      for (const file of (await listFiles(path.join(root, dir))).filter((f) => f.endsWith('.ts'))) {
        const text = await readFile(path.join(root, dir, file), 'utf8');
        if (/import\s+(type\s+)?\{[^}]*\}\s+from\s+['"]zod(\/mini)?['"]/.test(text) || /from\s+['"]zod['"]/.test(text)) offenders.push(file);
      }
    }
    expect(offenders).toEqual([]);
  });
});

describe('committed build', () => {
  it('matches a fresh build of the sources', async () => {
    const out = await mkdtemp(path.join(os.tmpdir(), 'dida-build-'));
    try {
      await run(process.execPath, [path.join(root, 'build.mjs'), '--outdir', out], { cwd: root });
      const committed = (await listFiles(path.join(root, 'dsh-plugin'))).filter((f) => f.endsWith('.mjs'));
      const fresh = await listFiles(out);
      expect(committed).toEqual(fresh);
      for (const file of fresh) {
        const a = await readFile(path.join(root, 'dsh-plugin', file), 'utf8');
        const b = await readFile(path.join(out, file), 'utf8');
        expect(a === b, `dsh-plugin/${file} is stale: run npm run build and commit it`).toBe(true);
      }
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('layer boundaries', () => {
  async function sources(dir: string): Promise<string[]> {
    const files = await listFiles(path.join(root, dir)).catch(() => []);
    return files.filter((f) => f.endsWith('.ts')).map((f) => path.join(root, dir, f));
  }

  it('keeps src/core, src/runtime, src/dida, src/store and src/sim free of dsh and @deepseek-ai imports', async () => {
    const offenders: string[] = [];
    for (const dir of ['src/core', 'src/runtime', 'src/dida', 'src/store', 'src/sim', 'src/common']) {
      for (const file of await sources(dir)) {
        const text = await readFile(file, 'utf8');
        for (const match of text.matchAll(/(?:from\s+|import\s*\(\s*)['"]([^'"]+)['"]/g)) {
          const spec = match[1] as string;
          const resolved = spec.startsWith('.') ? path.resolve(path.dirname(file), spec) : spec;
          if (spec.startsWith('@deepseek-ai/') || resolved.startsWith(path.join(root, 'src/dsh')) || resolved.startsWith(path.join(root, 'src/cli'))) {
            offenders.push(`${path.relative(root, file)} imports ${spec}`);
          }
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it('keeps src/core free of the concrete gateways, the simulator and node I/O of its own', async () => {
    const offenders: string[] = [];
    for (const file of await sources('src/core')) {
      const text = await readFile(file, 'utf8');
      for (const match of text.matchAll(/from\s+['"]([^'"]+)['"]/g)) {
        const spec = match[1] as string;
        if (/\/(sim|dsh|cli|wiring)\//.test(spec) || /http-gateway|cli-gateway|child_process/.test(spec)) offenders.push(`${path.relative(root, file)} imports ${spec}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
