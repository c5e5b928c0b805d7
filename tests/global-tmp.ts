// Vitest global setup: one temporary folder per test run, removed when the run ends. Helpers that outlive a single
// test (the bundled child scripts) put their files under it, because a test worker is stopped without an `exit` event.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export default function setup(): () => void {
  const root = mkdtempSync(path.join(os.tmpdir(), 'dida-todo-run-'));
  process.env.DIDA_TODO_TEST_TMP = root;
  return () => rmSync(root, { recursive: true, force: true });
}
