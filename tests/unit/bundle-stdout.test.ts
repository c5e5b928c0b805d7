// stdout belongs to dsh (the headless answer, the sdk and acp JSON-RPC frames): no file the plugin can load — the
// first-load layer, the host, every chunk either imports, statically or lazily — writes to stdout, hands its stdout to
// a child, or starts a worker or fork whose output would reach it.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const dir = path.resolve(import.meta.dirname, '../../dsh-plugin');

/** Every bundle file reachable from `entry` through relative `import … from`, `import "…"` and `import("…")`. */
function reachable(entry: string): Map<string, string> {
  const files = new Map<string, string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.shift() as string;
    if (files.has(file)) continue;
    const text = readFileSync(path.join(dir, file), 'utf8');
    files.set(file, text);
    for (const match of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s*)["'](\.{1,2}\/[^"']+)["']/g)) {
      queue.push(path.normalize(path.join(path.dirname(file), match[1] as string)));
    }
  }
  return files;
}

const WRITERS: Array<[string, RegExp]> = [
  ['console call that prints to stdout', /\bconsole\.(log|info|debug|dir|dirxml|table|count|countReset|group|groupCollapsed|groupEnd|time|timeEnd|timeLog)\b/],
  ['process.stdout', /\bprocess\s*\.\s*stdout\b/],
  ['write to file descriptor 1 or /dev/stdout', /writeSync\(\s*1\s*,|\/dev\/stdout|\/proc\/self\/fd\/1\b/],
  ['child given this process\'s stdio', /["']inherit["']|stdio:\s*\[\s*[^\]]*?\b1\b/],
  ['child_process.fork (inherits stdio by default)', /\bfork\b[^;]{0,80}["']node:child_process["']|["']node:child_process["'][^;]{0,40}\.fork\b/],
  ['worker thread (its stdout is this process\'s)', /["'](node:)?worker_threads["']/],
];

describe('the plugin never writes to stdout', () => {
  const files = reachable('index.mjs');

  it('reaches the host, the Dida CLI gateway, git evidence and the YAML reader from the first-load layer', () => {
    expect(files.has('host.mjs')).toBe(true);
    const all = [...files.values()].join('\n');
    // The gateway that runs the official `dida` CLI and the git evidence reader spawn children, with piped output.
    expect(all).toMatch(/stdio:\["ignore","pipe","pipe"\]/);
    expect(all).toMatch(/\bexecFile\b/);
    // yaml's token and stream debugging (LOG_TOKENS, LOG_STREAM) is reachable; the build sends it to stderr.
    const yaml = [...files.entries()].find(([, text]) => text.includes('LOG_TOKENS'));
    expect(yaml, 'the YAML chunk').toBeDefined();
    expect(yaml![1]).toMatch(/LOG_TOKENS&&console\.error\(/);
    expect(yaml![1]).toMatch(/LOG_STREAM&&console\.error\(/);
  });

  for (const [what, pattern] of WRITERS) {
    it(`has no ${what}`, () => {
      const found = [...files.entries()].flatMap(([file, text]) => {
        const match = pattern.exec(text);
        return match ? [`${file}: …${text.slice(Math.max(0, match.index - 60), match.index + 60)}…`] : [];
      });
      expect(found).toEqual([]);
    });
  }

  it('the patterns catch what they look for (a control)', () => {
    const samples = ['console.log("x")', 'process.stdout.write(x)', 'fs.writeSync(1, b)', 'spawn(c,a,{stdio:"inherit"})', 'import{fork as f}from"node:child_process"', 'import{Worker}from"node:worker_threads"'];
    WRITERS.forEach(([, pattern], i) => expect(pattern.test(samples[i] as string)).toBe(true));
    // The CLI is not part of the plugin and prints to stdout by design: the walk does not reach it.
    expect([...files.keys()].some((f) => f === 'cli.mjs')).toBe(false);
    expect(WRITERS[1]![1].test(readFileSync(path.join(dir, 'cli.mjs'), 'utf8'))).toBe(true);
  });
});
