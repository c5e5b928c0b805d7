// The committed bundle's bytes: the first-load file, what it imports statically, and everything it can load.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { repoRoot } from '../../tests/e2e/harness/dsh-run';

const PLUGIN_DIR = path.join(repoRoot, 'dsh-plugin');
const ENTRY = path.join(PLUGIN_DIR, 'index.mjs');

export interface BundleSize {
  entryBytes: number;
  staticFiles: string[];
  staticBytes: number;
  staticGzipBytes: number;
  /** Everything reachable from the entry, lazy (dynamic import) chunks included. */
  reachableFiles: string[];
  reachableBytes: number;
  /** Every .mjs under dsh-plugin/ (the CLI entry and its chunks included). */
  allBytes: number;
}

function importsOf(file: string): { static: string[]; dynamic: string[] } {
  const text = readFileSync(file, 'utf8');
  const dir = path.dirname(file);
  const found = { static: [] as string[], dynamic: [] as string[] };
  for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*)(\(\s*)?["'](\.\.?\/[^"']+)["']/g)) {
    (m[1] ? found.dynamic : found.static).push(path.resolve(dir, m[2] as string));
  }
  return found;
}

function closure(start: string[], followDynamic: boolean): Set<string> {
  const seen = new Set<string>();
  const todo = [...start];
  while (todo.length) {
    const file = todo.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    const { static: s, dynamic: d } = importsOf(file);
    todo.push(...s, ...(followDynamic ? d : []));
  }
  return seen;
}

export function bundleSize(): BundleSize {
  const size = (f: string) => statSync(f).size;
  const staticSet = closure([ENTRY], false);
  const reachable = closure([ENTRY], true);
  const all: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) walk(full);
      else if (e.name.endsWith('.mjs')) all.push(full);
    }
  };
  walk(PLUGIN_DIR);
  const rel = (f: string) => path.relative(PLUGIN_DIR, f);
  return {
    entryBytes: size(ENTRY),
    staticFiles: [...staticSet].map(rel).sort(),
    staticBytes: [...staticSet].reduce((n, f) => n + size(f), 0),
    staticGzipBytes: [...staticSet].reduce((n, f) => n + gzipSync(readFileSync(f)).length, 0),
    reachableFiles: [...reachable].map(rel).sort(),
    reachableBytes: [...reachable].reduce((n, f) => n + size(f), 0),
    allBytes: all.reduce((n, f) => n + size(f), 0),
  };
}

// ---- import + apply in a fresh process ---------------------------------------------------------------------------

