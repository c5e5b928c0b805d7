// `dida-todo login --token` / `logout` against the simulator: verification, saving, modes, failures that write nothing.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { closedPort, exists, makeCliHome, modeOf, failureLine, oneErrorLine, type CliHome, type CliResult } from '../helpers/cli-harness';

let sim: Simulator;
let h: CliHome;
let base: string[];

beforeEach(async () => {
  sim = await startSimulator();
  sim.seedProject({ name: 'Work' });
  sim.seedProject({ name: 'Home' });
  sim.seedProject({ name: 'Old', closed: true });
  h = await makeCliHome();
  base = ['--base-url', sim.baseUrl];
});

afterEach(async () => {
  await sim.close();
  await h.cleanup();
});

function noToken(result: CliResult, token = sim.token): void {
  expect(result.out).not.toContain(token);
  expect(result.err).not.toContain(token);
}

describe('login --token', () => {
  it('verifies the token with one GET /project and saves it 0600 in a 0700 directory', async () => {
    sim.resetCounters();
    const result = await h.run(['login', '--token', sim.token, ...base]);
    expect(result.code).toBe(0);
    expect(result.err).toBe('');
    expect(result.out).toContain('3 lists');
    expect(result.out).toContain(h.credentialsFile);
    noToken(result);
    expect(sim.counters()).toEqual({ 'GET /project': 1 });
    const saved = JSON.parse(await readFile(h.credentialsFile, 'utf8'));
    expect(saved).toMatchObject({ version: 1, token: sim.token });
    expect(Date.parse(saved.savedAt)).not.toBeNaN();
    expect(await modeOf(h.credentialsFile)).toBe(0o600);
    expect(await modeOf(h.configDir)).toBe(0o700);
  });

  it('prints a JSON result without the token', async () => {
    const result = await h.run(['login', '--token', sim.token, ...base, '--json']);
    expect(result.code).toBe(0);
    expect(result.json()).toEqual({
      ok: true,
      method: 'token',
      lists: 3,
      credentialsFile: h.credentialsFile,
      configFile: h.configFile,
      region: 'dida365',
      baseUrl: sim.baseUrl,
      endpointSaved: true,
      previousBaseUrl: null,
      activeSource: 'credentials',
    });
    noToken(result);
  });

  it('reads the token from stdin with --token -', async () => {
    const result = await h.run(['login', '--token', '-', ...base], { stdin: `${sim.token}\n` });
    expect(result.code).toBe(0);
    noToken(result);
    expect(JSON.parse(await readFile(h.credentialsFile, 'utf8')).token).toBe(sim.token);
  });

  it('refuses an empty stdin and a missing stdin with exit 2', async () => {
    const empty = await h.run(['login', '--token', '-', ...base], { stdin: '\n' });
    expect(empty.code).toBe(2);
    expect(oneErrorLine(empty)).toMatch(/standard input/);
    const none = await h.run(['login', '--token', '-', ...base]);
    expect(none.code).toBe(2);
    expect(await exists(h.credentialsFile)).toBe(false);
  });

  it('a rejected token (401) exits 3, writes nothing and leaves an existing credentials file alone', async () => {
    const fresh = await h.run(['login', '--token', 'not-the-right-token', ...base]);
    expect(fresh.code).toBe(3);
    expect(oneErrorLine(fresh)).toMatch(/Dida rejected this token.*Nothing was saved/);
    expect(fresh.err).not.toContain('not-the-right-token');
    expect(await exists(h.credentialsFile)).toBe(false);
    expect(await exists(h.configDir)).toBe(false);

    expect((await h.run(['login', '--token', sim.token, ...base])).code).toBe(0);
    const before = await readFile(h.credentialsFile, 'utf8');
    const configBefore = await readFile(h.configFile, 'utf8');
    sim.injectFault({ route: 'GET /project', kind: 'status', status: 401, times: 1 });
    const again = await h.run(['login', '--token', sim.token, ...base, '--region', 'ticktick']);
    expect(again.code).toBe(3);
    oneErrorLine(again);
    noToken(again);
    expect(await readFile(h.credentialsFile, 'utf8')).toBe(before);
    expect(await readFile(h.configFile, 'utf8')).toBe(configBefore);
  });

  it('an unreachable server exits 1 and writes nothing', async () => {
    const port = await closedPort();
    const result = await h.run(['login', '--token', sim.token, '--base-url', `http://127.0.0.1:${port}/open/v1`]);
    expect(result.code).toBe(1);
    // A loopback address is a simulator: named as one that is not running.
    expect(failureLine(result)).toMatch(/Could not check the token: The simulator at http:\/\/127\.0\.0\.1:\d+\/open\/v1 is not running \(start it with .*Nothing was saved/);
    noToken(result);
    expect(await exists(h.credentialsFile)).toBe(false);
  });

  it('a server error exits 1 with a JSON error object under --json', async () => {
    sim.injectFault({ route: 'GET /project', kind: 'status', status: 503, times: 5 });
    const result = await h.run(['login', '--token', sim.token, ...base, '--json']);
    expect(result.code).toBe(1);
    oneErrorLine(result);
    expect(result.json()).toMatchObject({ ok: false, exitCode: 1, error: { code: 'server' } });
    expect(await exists(h.credentialsFile)).toBe(false);
  });

  it('rejects a malformed token before contacting Dida (exit 2)', async () => {
    sim.resetCounters();
    for (const bad of ['short', 'has space inside the token']) {
      const result = await h.run(['login', '--token', bad, ...base]);
      expect(result.code).toBe(2);
      expect(oneErrorLine(result)).toMatch(/token is unusable/);
    }
    expect(sim.totalRequests()).toBe(0);
    expect(await exists(h.credentialsFile)).toBe(false);
  });

  it.each([
    [['login'], /Pass --token/],
    [['login', 'extra'], /takes no arguments/],
    [['login', '--token'], /needs a value/],
    [['login', '--token', 'abcdefghijkl', '--oauth'], /either --token or --oauth/],
    [['login', '--token', 'abcdefghijkl', '--port', '9'], /only applies with --oauth/],
    [['login', '--oauth'], /needs --client-id/],
    [['login', '--token', 'abcdefghijkl', '--region', 'mars'], /--region must be dida365 or ticktick/],
    [['login', '--token', 'abcdefghijkl', '--base-url', 'ftp://x'], /--base-url must be an http\(s\) URL/],
    [['login', '--frobnicate'], /Unknown option "--frobnicate"/],
    [['frobnicate'], /Unknown command "frobnicate"/],
  ])('usage error %j exits 2 with one line', async (argv, pattern) => {
    const result = await h.run(argv);
    expect(result.code).toBe(2);
    expect(oneErrorLine(result)).toMatch(pattern);
    expect(await exists(h.configDir)).toBe(false);
  });

  it('saves --region in config.yaml and notes when DIDA_TODO_TOKEN wins', async () => {
    const result = await h.run(['login', '--token', sim.token, ...base, '--region', 'ticktick'], { env: { DIDA_TODO_TOKEN: 'some-other-token-xyz' } });
    expect(result.code).toBe(0);
    expect(result.out).toContain('DIDA_TODO_TOKEN is set');
    expect(result.out).not.toContain('some-other-token-xyz');
    expect(await readFile(h.configFile, 'utf8')).toMatch(/region: ticktick/);
    expect(await modeOf(h.configFile)).toBe(0o600);
  });

  it('honours --config: the credentials file sits beside it', async () => {
    const config = path.join(h.root, 'elsewhere', 'config.yaml');
    const result = await h.run(['login', '--token', sim.token, ...base, '--config', config, '--json']);
    expect(result.code).toBe(0);
    expect(result.json<{ credentialsFile: string }>().credentialsFile).toBe(path.join(h.root, 'elsewhere', 'credentials.json'));
    expect(await exists(path.join(h.root, 'elsewhere', 'credentials.json'))).toBe(true);
    expect(await exists(h.credentialsFile)).toBe(false);
  });

  it('prints help with exit 0', async () => {
    const result = await h.run(['login', '--help']);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/Usage: dida-todo login --token/);
    expect(result.out).toMatch(/--client-id/);
    expect(result.out).toMatch(/--base-url/);
  });
});

describe('logout', () => {
  it('removes our credentials file and says when nothing else is configured', async () => {
    await h.run(['login', '--token', sim.token, ...base]);
    const result = await h.run(['logout']);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/Logged out/);
    expect(result.out).toMatch(/No other Dida token/);
    expect(await exists(h.credentialsFile)).toBe(false);
  });

  it('never touches the dida CLI file and says it is still active', async () => {
    const cliFile = path.join(h.home, '.config', 'dida-cli', 'config.json');
    await mkdir(path.dirname(cliFile), { recursive: true });
    const cliText = JSON.stringify({ access_token: 'dida-cli-token-0123456789' });
    await writeFile(cliFile, cliText);
    await h.run(['login', '--token', sim.token, ...base]);
    const result = await h.run(['logout', '--json']);
    expect(result.code).toBe(0);
    expect(result.json()).toMatchObject({ ok: true, removed: true, activeSource: { source: 'dida-cli', file: cliFile } });
    expect(result.out).not.toContain('dida-cli-token-0123456789');
    expect(await readFile(cliFile, 'utf8')).toBe(cliText);
    const human = await h.run(['logout']);
    expect(human.out).toMatch(/No saved token/);
    expect(human.out).toMatch(/Still active: .*dida-cli.*dida auth logout/);
  });

  it('names DIDA_TODO_TOKEN when it is set', async () => {
    const result = await h.run(['logout'], { env: { DIDA_TODO_TOKEN: 'env-token-abcdefghij' } });
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/DIDA_TODO_TOKEN/);
    expect(result.out).not.toContain('env-token-abcdefghij');
  });
});
