// The world every real-dsh scenario starts from: one scripted model for the file, and per test a fresh simulator, a
// fresh DSH_HOME with a project directory in it, and (unless told otherwise) the bundle installed in the headless
// profile. The file keeps its own variables; `set` hands it each test's world.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { PAUSE_CHECK_INTERVAL_MS } from '../../../src/core/phone/phone-signals';
import { startSimulator, type Simulator } from '../../../src/sim/simulator';
import { ensureDsh, makeDshHome, removeDshHome } from './dsh-run';
import { startFakeModel, type FakeModel } from './fake-model';
import { prepareProfile } from './profile';

/**
 * How long a scripted answer takes so that the step boundary after it reads Dida for a pause: the pause guard reads the
 * task at most every 30 s, and a claim's own read of the list counts as one.
 */
export const PAST_A_PAUSE_LOOK_MS = PAUSE_CHECK_INTERVAL_MS + 2_000;

export interface DshWorld {
  model: FakeModel;
  sim: Simulator;
  home: string;
  /** A directory inside `home`, its real path (what dsh reports as the session's cwd). */
  project: string;
}

export interface WorldOptions {
  /** The profile the bundle is installed in before each test, or false to leave it to the test. Default headless. */
  install?: 'headless' | 'web' | false;
}

export function useDshWorld(set: (world: DshWorld) => void, options: WorldOptions = {}): void {
  const install = options.install ?? 'headless';
  let model: FakeModel | undefined;
  let world: DshWorld | undefined;
  beforeAll(async () => {
    await ensureDsh();
    model = await startFakeModel();
  });
  afterAll(async () => {
    await model?.close();
  });
  beforeEach(async () => {
    const sim = await startSimulator();
    const home = makeDshHome();
    const project = fs.realpathSync(fs.mkdtempSync(path.join(home, 'project-')));
    model!.setScript([]);
    model!.requests.length = 0;
    world = { model: model!, sim, home, project };
    set(world);
    if (install) await prepareProfile(home, install);
  });
  afterEach(async () => {
    await world?.sim.close();
    if (world) removeDshHome(world.home);
    world = undefined;
  });
}

/** Polls `probe` every 100 ms until it returns a truthy value; throws after `timeoutMs` with the tail of what `of` printed. */
export async function until<T>(what: string, probe: () => T | undefined | false, timeoutMs: number, of?: { stderr(): string } | (() => string)): Promise<T> {
  const stderr = typeof of === 'function' ? of : () => of?.stderr() ?? '';
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${stderr().slice(-3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Binds `world.project` to a fresh simulator list named `name` in the test home's config.yaml (with `extra` YAML
 * lines after the binding); returns the list id.
 */
export function bindProject(world: Pick<DshWorld, 'home' | 'sim' | 'project'>, name: string, extra = ''): string {
  const configDir = path.join(world.home, '.test-xdg', 'config', 'dida-todo');
  fs.mkdirSync(configDir, { recursive: true });
  const listId = world.sim.seedProject({ name }).id;
  fs.writeFileSync(path.join(configDir, 'config.yaml'), `baseUrl: ${world.sim.baseUrl}\nbindings:\n  - cwd: ${world.project}\n    projectId: ${listId}\n    label: ${name}\n${extra}`);
  return listId;
}

/** The tool results a model request carried (what dsh sent back for each tool call), in order. */
export function toolResults(request: { body?: any }): string[] {
  return (request.body?.messages ?? []).filter((m: { role?: string }) => m.role === 'tool').map((m: { content?: unknown }) => String(m.content));
}
