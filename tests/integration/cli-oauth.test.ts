// `dida-todo login --oauth` end to end: fake OAuth server + loopback callback + simulator verification read.
import { readFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { startFakeOAuth, type FakeOAuth, type FakeOAuthOptions } from '../helpers/cli-fake-oauth';
import { exists, makeCliHome, modeOf, type CliHome, type LiveRun } from '../helpers/cli-harness';

let sim: Simulator;
let h: CliHome;
let oauth: FakeOAuth | undefined;

beforeEach(async () => {
  sim = await startSimulator();
  sim.seedProject({ name: 'Work' });
  h = await makeCliHome();
});

afterEach(async () => {
  await oauth?.close();
  oauth = undefined;
  await sim.close();
  await h.cleanup();
});

async function fake(options: Partial<FakeOAuthOptions> = {}): Promise<FakeOAuth> {
  oauth = await startFakeOAuth({ clientId: 'app-123', accessToken: sim.token, ...options });
  return oauth;
}

function startLogin(server: FakeOAuth, extra: string[] = []): LiveRun {
  return h.start(['login', '--oauth', '--client-id', 'app-123', '--port', '0', '--timeout', '10', '--base-url', sim.baseUrl, ...extra], {
    env: { DIDA_TODO_OAUTH_BASE: server.origin },
  });
}

/** Waits for the authorize URL on stderr, then plays the browser: follows the redirect to the callback. */
async function actAsBrowser(run: LiveRun): Promise<{ url: URL; callback: Response }> {
  for (let i = 0; i < 200; i++) {
    const match = /(http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\S+)/.exec(run.err());
    if (match) {
      const url = new URL(match[1] as string);
      const callback = await fetch(url);
      await callback.text();
      return { url, callback };
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no authorize URL printed; stderr: ${run.err()}`);
}

describe('login --oauth', () => {
  it('runs the PKCE flow as a public client and saves the verified token', async () => {
    const server = await fake();
    sim.resetCounters();
    const run = startLogin(server, ['--json']);
    const { url, callback } = await actAsBrowser(run);
    const result = await run.result;
    expect(result.err).not.toMatch(/^dida-todo:/m);
    expect(result.code).toBe(0);
    expect(callback.status).toBe(200);

    const q = Object.fromEntries(url.searchParams);
    expect(q).toMatchObject({ client_id: 'app-123', response_type: 'code', code_challenge_method: 'S256', scope: 'tasks:read tasks:write' });
    expect(q.redirect_uri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(q.state?.length).toBeGreaterThanOrEqual(22);
    expect(q.code_challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const tokenRequest = server.tokenRequests[0];
    expect(tokenRequest?.status).toBe(200);
    expect(tokenRequest?.contentType).toBe('application/x-www-form-urlencoded');
    expect(tokenRequest?.authorization).toBeUndefined();
    expect(tokenRequest?.form).toMatchObject({ grant_type: 'authorization_code', client_id: 'app-123', redirect_uri: q.redirect_uri, scope: 'tasks:read tasks:write' });
    expect(tokenRequest?.form.code_verifier?.length).toBeGreaterThanOrEqual(43);

    expect(sim.counters()).toEqual({ 'GET /project': 1 });
    expect(result.json()).toMatchObject({ ok: true, method: 'oauth', lists: 1 });
    expect(result.out + result.err).not.toContain(sim.token);
    expect(result.err).not.toContain(tokenRequest?.form.code as string);
    expect(JSON.parse(await readFile(h.credentialsFile, 'utf8')).token).toBe(sim.token);
    expect(await modeOf(h.credentialsFile)).toBe(0o600);
  });

  it('sends the client id and secret with HTTP Basic when a secret is given', async () => {
    const server = await fake({ clientSecret: 's3cret-value' });
    const run = startLogin(server, ['--client-secret', 's3cret-value']);
    await actAsBrowser(run);
    const result = await run.result;
    expect(result.code).toBe(0);
    expect(server.tokenRequests[0]?.authorization).toMatch(/^Basic /);
    expect(server.tokenRequests[0]?.form.client_id).toBeUndefined();
    expect(result.out + result.err).not.toContain('s3cret-value');
  });

  it('refuses a callback whose state does not match, without exchanging the code', async () => {
    const server = await fake({ stateOverride: 'forged-state-value' });
    const run = startLogin(server);
    const { callback } = await actAsBrowser(run);
    const result = await run.result;
    expect(callback.status).toBe(400);
    expect(result.code).toBe(1);
    const last = result.err.trim().split('\n').at(-1);
    expect(last).toMatch(/^dida-todo: The OAuth callback carried a state value that does not match/);
    expect(server.tokenRequests).toHaveLength(0);
    expect(await exists(h.credentialsFile)).toBe(false);
  });

  it('reports a refused authorization', async () => {
    const server = await fake({ deny: true });
    const run = startLogin(server);
    await actAsBrowser(run);
    const result = await run.result;
    expect(result.code).toBe(1);
    expect(result.err.trim().split('\n').at(-1)).toMatch(/Dida did not authorize dida-todo \(access_denied: The user said no\)/);
    expect(await exists(h.credentialsFile)).toBe(false);
  });

  it('reports a token endpoint error (wrong secret) and writes nothing', async () => {
    const server = await fake({ clientSecret: 'right' });
    const run = startLogin(server, ['--client-secret', 'wrong-secret']);
    await actAsBrowser(run);
    const result = await run.result;
    expect(result.code).toBe(1);
    expect(result.err.trim().split('\n').at(-1)).toMatch(/Dida did not issue a token \(401, invalid_client\)/);
    expect(await exists(h.credentialsFile)).toBe(false);
  });

  it('a token Dida then rejects exits 3 and writes nothing', async () => {
    const server = await fake({ accessToken: 'issued-but-not-accepted-token' });
    const run = startLogin(server);
    await actAsBrowser(run);
    const result = await run.result;
    expect(result.code).toBe(3);
    expect(result.err).not.toContain('issued-but-not-accepted-token');
    expect(await exists(h.credentialsFile)).toBe(false);
  });

  it('times out with a clear message when no browser comes back', async () => {
    const server = await fake();
    const started = Date.now();
    const result = await h.run(['login', '--oauth', '--client-id', 'app-123', '--port', '0', '--timeout', '1', '--base-url', sim.baseUrl], {
      env: { DIDA_TODO_OAUTH_BASE: server.origin },
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/oauth\/authorize/);
    expect(result.err.trim().split('\n').at(-1)).toMatch(/^dida-todo: No authorization arrived within 1 s/);
    expect(server.authorizeQueries).toHaveLength(0);
    expect(await exists(h.credentialsFile)).toBe(false);
  });

  it('uses the region to pick the authorize host', async () => {
    const result = h.start(['login', '--oauth', '--client-id', 'x', '--port', '0', '--timeout', '1', '--region', 'ticktick']);
    for (let i = 0; i < 200 && !/authorize/.test(result.err()); i++) await new Promise((r) => setTimeout(r, 10));
    expect(result.err()).toContain('https://ticktick.com/oauth/authorize?client_id=x');
    expect((await result.result).code).toBe(1);
  });
});
