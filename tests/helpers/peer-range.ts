// A model of the version check plugin authors report in dsh from 0.1.7 (dsh-plugin-guide §0.5, "Peer ranges enforced"):
// at install and at boot every `peerDependencies` range on `@deepseek-ai/dsh` or `@deepseek-ai/dsh-*` must admit the
// running version, with prereleases counted as semver counts them, else the plugin is refused with
// `incompatible-version`; `engines.dsh` is ignored. The range grammar is the subset plugins use (`||`, comparator sets,
// `>= > <= < =`, `^`, `~`, `*`, `x`); assumed: prereleases follow semver's default rule (a prerelease is admitted only by
// a comparator with a prerelease on the same major.minor.patch).

interface Version {
  parts: [number, number, number];
  pre: string[];
}

function parse(text: string): Version | undefined {
  const m = /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?$/.exec(text.trim());
  return m ? { parts: [Number(m[1]), Number(m[2]), Number(m[3])], pre: m[4] ? m[4].split('.') : [] } : undefined;
}

function comparePre(a: string[], b: string[]): number {
  if (a.length === 0 || b.length === 0) return b.length - a.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (x === undefined || y === undefined) return x === undefined ? -1 : 1;
    const nx = /^\d+$/.test(x);
    const ny = /^\d+$/.test(y);
    if (nx && ny && Number(x) !== Number(y)) return Number(x) - Number(y);
    if (nx !== ny) return nx ? -1 : 1;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

export function compare(a: Version, b: Version): number {
  for (let i = 0; i < 3; i++) if (a.parts[i] !== b.parts[i]) return (a.parts[i] as number) - (b.parts[i] as number);
  return comparePre(a.pre, b.pre);
}

type Comparator = { op: '>=' | '>' | '<=' | '<' | '='; v: Version };

/** One comparator set (space-separated) as plain comparators; `^`, `~`, `*` and partial versions expanded. */
function comparators(set: string): Comparator[] | undefined {
  const out: Comparator[] = [];
  for (const token of set.trim().split(/\s+/).filter(Boolean)) {
    if (token === '*' || token === 'x' || token === 'X') continue;
    const m = /^(\^|~|>=|<=|>|<|=)?(.+)$/.exec(token);
    const version = m ? parse(m[2] as string) : undefined;
    if (!m || !version) return undefined;
    const op = m[1] ?? '=';
    const [major, minor, patch] = version.parts;
    if (op === '^') {
      const upper: Version = major > 0 ? { parts: [major + 1, 0, 0], pre: ['0'] } : minor > 0 ? { parts: [0, minor + 1, 0], pre: ['0'] } : { parts: [0, 0, patch + 1], pre: ['0'] };
      out.push({ op: '>=', v: version }, { op: '<', v: upper });
    } else if (op === '~') out.push({ op: '>=', v: version }, { op: '<', v: { parts: [major, minor + 1, 0], pre: ['0'] } });
    else out.push({ op: op as Comparator['op'], v: version });
  }
  return out;
}

function holds(c: Comparator, v: Version): boolean {
  const d = compare(v, c.v);
  return c.op === '>=' ? d >= 0 : c.op === '>' ? d > 0 : c.op === '<=' ? d <= 0 : c.op === '<' ? d < 0 : d === 0;
}

/** Whether `version` satisfies `range` (unparsable ranges or versions satisfy nothing). */
export function satisfies(version: string, range: string): boolean {
  const v = parse(version);
  if (!v) return false;
  return range.split('||').some((set) => {
    const list = comparators(set);
    if (!list || !list.every((c) => holds(c, v))) return false;
    // A prerelease needs a comparator with a prerelease on its own major.minor.patch.
    return v.pre.length === 0 || list.some((c) => c.v.pre.length > 0 && c.v.parts.join() === v.parts.join());
  });
}

export type InstallCheck = { ok: true } | { ok: false; code: 'incompatible-version'; name: string; range: string };

/** The reported install/boot check of a plugin manifest against the running dsh `version`. */
export function peerCheck(manifest: { peerDependencies?: Record<string, string>; engines?: Record<string, string> }, version: string): InstallCheck {
  for (const [name, range] of Object.entries(manifest.peerDependencies ?? {})) {
    if (!/^@deepseek-ai\/dsh(-[a-z0-9-]+)?$/.test(name)) continue;
    if (!satisfies(version, range)) return { ok: false, code: 'incompatible-version', name, range };
  }
  return { ok: true };
}
