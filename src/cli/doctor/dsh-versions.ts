// The dsh versions this bundle knows and how well (docs/install.md, "dsh versions"): tested on rc.8, expected to work on
// 0.1.7 and 0.2.x. The bundle declares no dsh peer range (decision 0120), so this table and the seam report are where
// support is said; `dida-todo doctor` prints the running dsh against it.

/** The dsh release dida-todo is tested with (every test and the demo run on it). */
export const TESTED_DSH = '0.1.0-rc.8';

export type DshSupport = 'tested' | 'expected' | 'untested' | 'newer';

export interface DshVersionRow {
  /** As the version table of docs/install.md names it. */
  label: string;
  support: 'tested' | 'expected';
  matches(version: ParsedVersion): boolean;
}

export interface ParsedVersion {
  major: number;
  minor: number;
  patch: number;
  prerelease?: string;
}

/** `0.2.0-rc.2` → its parts; undefined for anything that is not a version. */
export function parseVersion(text: string): ParsedVersion | undefined {
  const match = /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/.exec(text.trim());
  if (!match) return undefined;
  return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]), ...(match[4] ? { prerelease: match[4] } : {}) };
}

/** The rows of the version table of docs/install.md, in its order. Prereleases count with their release line (0.2.1-alpha.3 is 0.2.x). */
export const DSH_VERSIONS: readonly DshVersionRow[] = [
  { label: TESTED_DSH, support: 'tested', matches: (v) => v.major === 0 && v.minor === 1 && v.patch === 0 && v.prerelease === 'rc.8' },
  { label: '0.1.7', support: 'expected', matches: (v) => v.major === 0 && v.minor === 1 && v.patch >= 7 },
  { label: '0.2.x', support: 'expected', matches: (v) => v.major === 0 && v.minor === 2 },
];

/** How the bundle stands with dsh `version`: tested, expected to work (with the row), untested (older), or newer than known. */
export function dshSupport(version: string): { support: DshSupport; row?: DshVersionRow } {
  const parsed = parseVersion(version);
  if (!parsed) return { support: 'untested' };
  const row = DSH_VERSIONS.find((r) => r.matches(parsed));
  if (row) return { support: row.support, row };
  const newer = parsed.major > 0 || parsed.minor > 2;
  return { support: newer ? 'newer' : 'untested' };
}

/** Whether this dsh needs rc.8's start-up workarounds (the cordis HMR pin and the `hmr` overlay): the 0.1.0 release candidates. */
export function needsHmrWorkarounds(version: string): boolean {
  const parsed = parseVersion(version);
  return !!parsed && parsed.major === 0 && parsed.minor === 1 && parsed.patch === 0 && parsed.prerelease !== undefined;
}
