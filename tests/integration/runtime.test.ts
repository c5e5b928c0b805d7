// The shared runtime: config.yaml's locale and host label reach the engine; the token never comes out of it.
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { engineProvider, openRuntime } from '../../src/wiring/runtime';

let dir: string;
let sim: Simulator;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'dida-runtime-'));
  sim = await startSimulator();
});
afterEach(async () => {
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});

describe('runtime', () => {
  it("takes the locale and host label from config.yaml, over the plugin row's defaults", async () => {
    await mkdir(path.join(dir, 'config', 'dida-todo'), { recursive: true });
    await writeFile(path.join(dir, 'config', 'dida-todo', 'config.yaml'), `baseUrl: ${sim.baseUrl}\nlocale: en\nhostLabel: build-box\n`);
    const runtime = openRuntime({ env: { HOME: dir, XDG_CONFIG_HOME: path.join(dir, 'config'), XDG_STATE_HOME: path.join(dir, 'state'), DIDA_TODO_TOKEN: sim.token }, locale: 'zh' });
    const engine = await engineProvider(runtime)();
    expect(engine.deps.locale.id).toBe('en');
    expect(engine.deps.hostLabel).toBe('build-box');
    expect(engine.deps.timeZone).toBe('Asia/Shanghai');
    expect(await runtime.tokenSource()).toEqual({ source: 'env' });
    await runtime.close();
  });

  it('explains how to log in when no token is configured', async () => {
    const runtime = openRuntime({ env: { HOME: dir, XDG_CONFIG_HOME: path.join(dir, 'config'), XDG_STATE_HOME: path.join(dir, 'state') } });
    await expect(runtime.gateway()).rejects.toThrow(/dida-todo login --token/);
    expect(await runtime.tokenSource()).toBeUndefined();
  });
});
