// Finds Debian's chromium for the browser tests, or stops with what to run (never a raw launcher error).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** The chromium executable; throws one sentence naming the fix when there is none. */
export function chromiumOrExplain(): string {
  let found = '';
  try {
    found = execFileSync('which', ['chromium'], { encoding: 'utf8', timeout: 5_000 }).trim();
  } catch {
    found = '';
  }
  const candidate = found || '/usr/bin/chromium';
  if (!fs.existsSync(candidate)) {
    throw new Error('chromium is not installed: run `bash scripts/ensure-chromium.sh` (Debian chromium and a CJK font, via apt-get), or use `npm run test:browser`, which does it.');
  }
  return candidate;
}
