// The set-up the first-load layer's suites share (tests/unit/dsh-lazy-*.test.ts): a fresh directory per test holding
// config.yaml and the state directory, the row config read from them, a LazyHost started over a fake dsh, and the
// prompt its section shows an agent.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LazyHost } from '../../src/dsh/lazy-host';
import { RowConfig } from '../../src/dsh/row-config';
import type { fakeHost } from './dsh-host-fake';

type FakeHost = ReturnType<typeof fakeHost>;

export interface LazyDirs {
  dir: string;
  configPath: string;
  stateDir: string;
}

/** A fresh directory (real path) with where config.yaml and the state go; nothing is written yet. */
export function makeLazyDirs(prefix: string): LazyDirs {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  return { dir, configPath: path.join(dir, 'config.yaml'), stateDir: path.join(dir, 'state') };
}

/** The row config dsh would hand the plugin for these directories (plus `extra`). */
export function lazyRow(dirs: LazyDirs, extra: Record<string, unknown> = {}): RowConfig {
  const parsed = RowConfig.safeParse({ configPath: dirs.configPath, stateDir: dirs.stateDir, ...extra });
  if (!parsed.success) throw new Error('row config did not validate');
  return parsed.data;
}

/** A first-load layer (or a subclass of it) over `host`, started. */
export function startLazy(host: FakeHost, dirs: LazyDirs, extra: Record<string, unknown> = {}, Layer: typeof LazyHost = LazyHost): LazyHost {
  const lazy = new Layer(host.ctx as never, lazyRow(dirs, extra));
  lazy.start();
  return lazy;
}

/** What the plugin's prompt section shows `agent` (the first section the host registered). */
export function promptOf(host: FakeHost, agent: { id: string } | undefined): string {
  const section = host.sections[0]!;
  return typeof section.text === 'function' ? section.text({ agent }) : section.text;
}
