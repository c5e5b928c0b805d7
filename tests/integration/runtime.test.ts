// The shared runtime: config.yaml's locale and host label reach the engine; the token never comes out of it.
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { readAccountFacts, writeAccountFacts } from '../../src/store/account-facts';
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

  it('a config.yaml broken by a pricing slip: no engine with another host label; fixed, the engine is made; limits and stop phrases keep their last readable values', async () => {
    const file = path.join(dir, 'config', 'dida-todo', 'config.yaml');
    await mkdir(path.dirname(file), { recursive: true });
    const good = `baseUrl: ${sim.baseUrl}\nhostLabel: build-box\nstopPhrases: [先停]\nlimits:\n  maxTokensPerWork: 5000\n`;
    const runtime = openRuntime({ env: { HOME: dir, XDG_CONFIG_HOME: path.join(dir, 'config'), XDG_STATE_HOME: path.join(dir, 'state'), DIDA_TODO_TOKEN: sim.token }, locale: 'zh' });
    // The gateway was made while the file was fine (as a poller's first look makes it); then the person edits it.
    await writeFile(file, good);
    await runtime.gateway();
    await writeFile(file, `${good}pricing:\n  deepseek-chat: { input: 1, outut: 2 }\n`);
    const logs: string[] = [];
    const provide = engineProvider(runtime, (line) => logs.push(line));
    await expect(provide()).rejects.toMatchObject({ name: 'ConfigError', message: expect.stringContaining('unknown key "outut"') });
    await writeFile(file, good);
    const engine = await provide();
    expect(engine.deps.hostLabel).toBe('build-box');
    // Broken again while the engine lives: the last readable limits and stop phrases stay, said once per read.
    await writeFile(file, `${good}pricing:\n  deepseek-chat: { input: .inf, output: 2 }\n`);
    expect((await engine.deps.spendSettings!()).limits.maxTokensPerWork).toBe(5000);
    expect(await engine.deps.stopPhrases!()).toEqual(['先停']);
    expect(logs.some((line) => line.includes('at pricing.deepseek-chat.input: expected number, got Infinity'))).toBe(true);
    await runtime.close();
  });

  it("keeps the account's time zone from Dida's preference in the state folder: a later run does not read it", async () => {
    await mkdir(path.join(dir, 'config', 'dida-todo'), { recursive: true });
    await writeFile(path.join(dir, 'config', 'dida-todo', 'config.yaml'), `baseUrl: ${sim.baseUrl}\n`);
    const env = { HOME: dir, XDG_CONFIG_HOME: path.join(dir, 'config'), XDG_STATE_HOME: path.join(dir, 'state'), DIDA_TODO_TOKEN: sim.token };
    const first = openRuntime({ env });
    expect((await engineProvider(first)()).deps.timeZone).toBe('Asia/Shanghai');
    expect(sim.counters()['POST /preference']).toBe(1);
    await first.close();
    const later = openRuntime({ env });
    expect((await engineProvider(later)()).deps.timeZone).toBe('Asia/Shanghai');
    expect(sim.counters()['POST /preference']).toBe(1);
    // A zone kept longer than a day is still used at once, and read again in the background.
    const key = await later.account();
    writeAccountFacts(later.paths.stateDir, key, { timeZone: 'Europe/Paris', timeZoneReadAt: Date.now() - 2 * 24 * 60 * 60_000 });
    await later.close();
    const stale = openRuntime({ env });
    expect((await engineProvider(stale)()).deps.timeZone).toBe('Europe/Paris');
    for (let i = 0; i < 100 && readAccountFacts(stale.paths.stateDir, key).timeZone !== 'Asia/Shanghai'; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(readAccountFacts(stale.paths.stateDir, key).timeZone).toBe('Asia/Shanghai');
    expect(sim.counters()['POST /preference']).toBe(2);
    await stale.close();
  });

  it('explains how to log in when no token is configured', async () => {
    const runtime = openRuntime({ env: { HOME: dir, XDG_CONFIG_HOME: path.join(dir, 'config'), XDG_STATE_HOME: path.join(dir, 'state') } });
    await expect(runtime.gateway()).rejects.toThrow(/dida-todo login --token/);
    expect(await runtime.tokenSource()).toBeUndefined();
  });
});
