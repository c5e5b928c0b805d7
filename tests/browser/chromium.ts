// Finds Debian's chromium for the browser tests, or stops with what to run (never a raw launcher error).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

function onPath(): string {
  try {
    return execFileSync('which', ['chromium'], { encoding: 'utf8', timeout: 5_000 }).trim();
  } catch {
    return '';
  }
}

/** The chromium executable (the first of `candidates` that exists); throws one sentence naming the fix when none does. */
export function chromiumOrExplain(candidates: readonly string[] = [onPath(), '/usr/bin/chromium']): string {
  const candidate = candidates.find((c) => c !== '' && fs.existsSync(c));
  if (!candidate) {
    throw new Error('chromium is not installed: run `bash scripts/ensure-chromium.sh` (Debian chromium and a CJK font, via apt-get), or use `npm run test:browser`, which does it.');
  }
  return candidate;
}
