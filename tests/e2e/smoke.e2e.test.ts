// Smoke test of the whole chain: install dsh (cached), install this bundle into an isolated DSH_HOME, run one
// headless turn and one web boot against the fake model, then remove the bundle.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeModel, text, type FakeModel } from './harness/fake-model';
import {
  ensureDsh,
  eventsOf,
  makeDshHome,
  removeBundle,
  removeDshHome,
  repoRoot,
  runHeadless,
  startWeb,
  type DshInstall,
} from './harness/dsh-run';
import { prepareProfile } from './harness/profile';

// The repository root is the bundle (package.json `dsh.bundle.patch`); DIDA_TODO_E2E_BUNDLE may point at another copy.
const bundlePath = process.env.DIDA_TODO_E2E_BUNDLE ?? repoRoot;
const BUNDLE = 'dida-todo';

let install: DshInstall;
let model: FakeModel;
const homes: string[] = [];

beforeAll(async () => {
  if (!fs.existsSync(path.join(bundlePath, 'dsh-plugin', 'index.mjs'))) {
    throw new Error(`${bundlePath}/dsh-plugin/index.mjs is missing: run \`npm run build\` first`);
  }
  const started = Date.now();
  install = await ensureDsh();
  console.log(`[smoke] ensureDsh ${Date.now() - started} ms, dsh ${install.version}`);
  model = await startFakeModel();
});

afterAll(async () => {
  await model?.close();
  for (const home of homes) removeDshHome(home);
});

describe('real dsh smoke', () => {
  it('installs the bundle into the headless profile, runs one turn, and removes it', async () => {
    const home = makeDshHome();
    homes.push(home);

    const manifest = await prepareProfile(home, 'headless', bundlePath);
    expect(manifest.dsh?.profile?.bundles).toContain(BUNDLE);
    expect(manifest.dependencies?.[BUNDLE]).toBeDefined();

    model.push(text('SMOKE_HI from the fake model'));
    const started = Date.now();
    const run = await runHeadless({ home, cwd: home, prompt: 'say hi', baseUrl: model.baseUrl, timeoutMs: 60_000 });
    console.log(`[smoke] headless one-shot ${Date.now() - started} ms`);

    expect(run.timedOut, run.stderr).toBe(false);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('SMOKE_HI from the fake model');
    // An unbound session is passive: the bundle writes nothing to stderr and makes no Dida request.
    expect(run.stderr).toBe('');

    // The scripted answer went to the task, not to the concurrent title request.
    const chats = model.chatRequests();
    expect(chats.length).toBeGreaterThanOrEqual(1);
    expect(model.toolNames(chats[0]!)).toContain('todo_write');
    // Unbound: of this bundle's tools only dida_todo_setup is shown (decision 0011).
    expect(model.toolNames(chats[0]!)).toContain('dida_todo_setup');
    expect(model.toolNames(chats[0]!)).not.toContain('todo');
    expect(model.toolNames(chats[0]!)).not.toContain('todo_work');
    expect(model.pending()).toEqual([]);

    expect(run.sessionLogs).toHaveLength(1);
    const log = run.sessionLogs[0]!;
    expect(log.header.cwd).toBe(fs.realpathSync(home));
    const ends = eventsOf(log, 'turn/end');
    expect(ends.at(-1)?.data?.reason).toEqual({ kind: 'completed' });

    const after = await removeBundle(home, 'headless', BUNDLE);
    expect(after.dsh?.profile?.bundles ?? []).not.toContain(BUNDLE);
    expect(after.dependencies?.[BUNDLE]).toBeUndefined();
  });

  it('boots the web profile with the bundle, serves GET /, and stops on SIGTERM', async () => {
    const home = makeDshHome();
    homes.push(home);
    const manifest = await prepareProfile(home, 'web', bundlePath);
    expect(manifest.dsh?.profile?.bundles).toContain(BUNDLE);

    const started = Date.now();
    const web = await startWeb({ home, cwd: home, baseUrl: model.baseUrl });
    console.log(`[smoke] web boot ${Date.now() - started} ms at ${web.url}`);
    try {
      const response = await fetch(`${web.url}/`, { signal: AbortSignal.timeout(10_000) });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type') ?? '').toContain('text/html');
      await response.arrayBuffer();
      expect(web.stderr()).not.toMatch(/failed to load|dida-todo.*(Error|error)/);
    } finally {
      const stopped = Date.now();
      const exit = await web.stop('SIGTERM');
      console.log(`[smoke] web stop ${Date.now() - stopped} ms (${exit.code ?? exit.signal})`);
    }
  });
});
