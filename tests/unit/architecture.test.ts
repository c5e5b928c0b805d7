// The house as docs/architecture.md draws it, read from the imports: every file of src/core and src/runtime lives in one
// room, a room imports only rooms below it, and no import circle exists anywhere in src (type imports count too).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '../..');
/** The folders of src, highest first: each may import only the folders after it (as docs/architecture.md draws them). */
const LAYERS = ['cli', 'dsh', 'runtime', 'wiring', 'core', 'store', 'sim', 'dida', 'local-dsh', 'common'];
/** The core's rooms, lowest first (as docs/architecture.md lists them). */
const ROOMS = ['text', 'time', 'evidence', 'usage', 'work', 'steps', 'queue', 'continuation', 'review', 'phone', 'engine', 'tools'];
/** The runtime's rooms, lowest first. */
const RUNTIME_ROOMS = ['session', 'turns', 'phone', 'polling'];

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(ROOT, dir))) {
    const rel = path.join(dir, entry);
    if (statSync(path.join(ROOT, rel)).isDirectory()) out.push(...sources(rel));
    else if (entry.endsWith('.ts')) out.push(rel);
  }
  return out;
}

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm;

/** The files of src a file imports (static, type-only and dynamic), resolved to paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const out: string[] = [];
  for (const match of text.matchAll(IMPORT)) {
    const target = path.normalize(path.join(path.dirname(file), match[1] as string));
    for (const candidate of [`${target}.ts`, path.join(target, 'index.ts')]) {
      try {
        if (statSync(path.join(ROOT, candidate)).isFile()) {
          out.push(candidate);
          break;
        }
      } catch {
        // Not this form of the path (a JSON catalog, or the other candidate).
      }
    }
  }
  return out;
}

/** Files being split on a branch not merged yet (emptied when it lands). */
const roomOf = (file: string): string | undefined => (file.startsWith('src/core/') ? file.split('/')[2] : undefined);
const runtimeRoomOf = (file: string): string | undefined => (file.startsWith('src/runtime/') ? file.split('/')[2] : undefined);

describe('the house', () => {
  const files = sources('src');
  const graph = new Map(files.map((f) => [f, importsOf(f)]));

  it('every file of src/core lives in one of its rooms', () => {
    const loose = files.filter((f) => f.startsWith('src/core/') && !ROOMS.includes(roomOf(f) as string));
    expect(loose).toEqual([]);
    // The reader sees the imports (a control: the engine uses several rooms).
    expect(graph.get('src/core/engine/work-engine.ts')!.length).toBeGreaterThan(5);
  });

  it('a room of the core imports only the rooms below it', () => {
    const upward: string[] = [];
    for (const [file, targets] of graph) {
      const from = roomOf(file);
      if (!from) continue;
      for (const target of targets) {
        const to = roomOf(target);
        if (to && ROOMS.indexOf(to) > ROOMS.indexOf(from)) upward.push(`${file} → ${target}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('every file of src/runtime lives in one of its rooms, and a room imports only the rooms below it', () => {
    const runtime = files.filter((f) => f.startsWith('src/runtime/'));
    expect(runtime.filter((f) => !RUNTIME_ROOMS.includes(runtimeRoomOf(f) as string))).toEqual([]);
    const upward: string[] = [];
    for (const file of runtime) {
      const from = RUNTIME_ROOMS.indexOf(runtimeRoomOf(file) as string);
      for (const target of graph.get(file) ?? []) {
        const to = runtimeRoomOf(target);
        if (to && RUNTIME_ROOMS.indexOf(to) > from) upward.push(`${file} → ${target}`);
      }
    }
    expect(upward).toEqual([]);
    // A control: the machine's poller stands on the turns room (a dead holder's turn marker) and the session room.
    const poller = graph.get('src/runtime/polling/machine-poller.ts') ?? [];
    expect(poller.some((t) => t.startsWith('src/runtime/turns/')) && poller.some((t) => t.startsWith('src/runtime/session/'))).toBe(true);
  });

  it('no import circle anywhere in src', () => {
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const stack: string[] = [];
    const visit = (file: string): void => {
      state.set(file, 'open');
      stack.push(file);
      for (const next of graph.get(file) ?? []) {
        if (state.get(next) === 'open') circles.push([...stack.slice(stack.indexOf(next)), next].join(' → '));
        else if (!state.has(next)) visit(next);
      }
      stack.pop();
      state.set(file, 'done');
    };
    for (const file of files) if (!state.has(file)) visit(file);
    expect(circles).toEqual([]);
  });

  it('a folder of src imports only the folders below it (docs/architecture.md draws the same order)', () => {
    const upward: string[] = [];
    const folderOf = (file: string) => file.split('/')[1] as string;
    for (const [file, targets] of graph) {
      const from = LAYERS.indexOf(folderOf(file));
      expect(from, `${file} is in a folder the architecture names`).toBeGreaterThanOrEqual(0);
      for (const target of targets) {
        const to = LAYERS.indexOf(folderOf(target));
        if (to < from) upward.push(`${file} → ${target}`);
      }
    }
    expect(upward).toEqual([]);
    // Controls: the order is read from real arrows (the command reaches the doctor's seam report in the adapter; the
    // adapter's host hands dsh events to the runtime).
    expect(graph.get('src/cli/doctor/dsh-seams-check.ts')?.some((t) => t.startsWith('src/dsh/'))).toBe(true);
    expect(graph.get('src/dsh/dsh-host.ts')?.some((t) => t.startsWith('src/runtime/'))).toBe(true);
  });

  it('a name is re-exported only by a door: the plugin entry, the tools room and the simulator', () => {
    const doors = ['src/dsh/index.ts', 'src/core/tools/index.ts', 'src/sim/simulator.ts'];
    const passing = files.flatMap((f) => readFileSync(path.join(ROOT, f), 'utf8').split('\n').filter((line) => /^export\s+(?:type\s+)?(?:\*|\{[^}]*\})\s+from\s/.test(line)).map((line) => `${f}: ${line}`));
    expect(passing.filter((line) => !doors.some((d) => line.startsWith(`${d}:`)))).toEqual([]);
    // Nor by exporting an imported name again (`import { a } from './x'; export { a };`).
    const again = files.flatMap((f) => exportedAgain(readFileSync(path.join(ROOT, f), 'utf8')).map((n) => `${f}: ${n}`));
    // A control: the form is recognised.
    expect(exportedAgain("import { a, type B as C } from './x';\nconst d = 1;\nexport { a, C, d };\n")).toEqual(['a', 'C']);
    expect(again.filter((line) => !doors.some((d) => line.startsWith(`${d}:`)))).toEqual([]);
    // A control: the doors' own re-exports are seen.
    expect(passing.some((line) => line.startsWith('src/sim/simulator.ts:'))).toBe(true);
  });

  it('no source file passes 400 lines', () => {
    const long = [...files, ...sources('bench')].map((f) => [f, readFileSync(path.join(ROOT, f), 'utf8').split('\n').length] as const).filter(([, n]) => n > 400);
    expect(long).toEqual([]);
  });
});

/** Names a file imports and exports again with a bare `export { … }` (a re-export in two lines). */
function exportedAgain(text: string): string[] {
  const imported = new Set([...text.matchAll(/^import\s+(?:type\s+)?\{([^}]*)\}\s+from\s/gm)].flatMap((m) => m[1]!.split(',').map((n) => n.replace(/^\s*type\s+/, '').split(/\s+as\s+/).pop()!.trim())));
  return [...text.matchAll(/^export\s+(?:type\s+)?\{([^}]*)\};?\s*$/gm)].flatMap((m) => m[1]!.split(',').map((n) => n.trim().split(/\s+as\s+/)[0]!.replace(/^type\s+/, ''))).filter((n) => imported.has(n));
}
