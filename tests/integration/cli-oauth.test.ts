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

  it('ignores a callback without this login\'s state and keeps waiting for the real one', async () => {
    const server = await fake({ stateOverride: 'forged-state-value' });
    const run = startLogin(server);
    const { url, callback } = await actAsBrowser(run);
    expect(callback.status).toBe(400);
    await run.waitFor(/does not belong to this login .* was ignored; still waiting/);
    expect(server.tokenRequests).toHaveLength(0);
    expect(await exists(h.credentialsFile)).toBe(false);

    // The browser's real redirect (this login's state) still completes the login.
    const forged = new URL(callback.url);
    const real = new URL(url.searchParams.get('redirect_uri') as string);
    real.searchParams.set('code', forged.searchParams.get('code') as string);
    real.searchParams.set('state', url.searchParams.get('state') as string);
    expect((await fetch(real)).status).toBe(200);
    const result = await run.result;
    expect(result.code).toBe(0);
    expect(server.tokenRequests).toHaveLength(1);
    expect(JSON.parse(await readFile(h.credentialsFile, 'utf8')).token).toBe(sim.token);
  });

  it('a web page hitting the callback with ?error=… cannot end the login or write to the terminal', async () => {
    const server = await fake();
    const run = startLogin(server);
    await run.waitFor(/oauth\/authorize/);
    const authorize = new URL(/(http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\S+)/.exec(run.err())?.[1] as string);
    const redirect = new URL(authorize.searchParams.get('redirect_uri') as string);
    // What an <img src="http://127.0.0.1:<port>/callback?error=…"> on any page sends: no state.
    const attack = new URL(redirect);
    attack.searchParams.set('error', '\u001b]0;pwned\u0007\u001b[2J');
    expect((await fetch(attack)).status).toBe(400);
    await run.waitFor(/ignored; still waiting/);
    // Then the real authorization, answered with an error whose text carries escape sequences.
    const denied = new URL(redirect);
    denied.searchParams.set('state', authorize.searchParams.get('state') as string);
    denied.searchParams.set('error', 'access_denied');
    denied.searchParams.set('error_description', 'no \u001b[31mred\u001b[0m here');
    await fetch(denied);
    const result = await run.result;
    expect(result.code).toBe(1);
    expect(result.out + result.err).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
    expect(result.err).not.toContain('pwned');
    expect(result.err.trim().split('\n').at(-1)).toContain('access_denied: no \\x1b[31mred\\x1b[0m here');
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
