// OAuth authorization-code flow with PKCE for `dida-todo login --oauth`: loopback callback, state check, token exchange.
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CliText } from './cli-locale';
import { CliFailure, EXIT } from './cli-output';
import { safeText } from './terminal-text';

export const DEFAULT_OAUTH_PORT = 8765;
export const DEFAULT_OAUTH_TIMEOUT_SECONDS = 300;
export const OAUTH_SCOPE = 'tasks:read tasks:write';
export const OAUTH_BASES = { dida365: 'https://dida365.com', ticktick: 'https://ticktick.com' } as const;

export interface OAuthFlowOptions {
  /** Origin of the authorize and token endpoints, e.g. https://dida365.com. */
  oauthBase: string;
  clientId: string;
  /** With a secret the client authenticates with HTTP Basic; without, it is a public PKCE client. */
  clientSecret?: string;
  /** Loopback port of the callback (0 = any free port; a registered redirect URI needs a fixed one). */
  port: number;
  timeoutMs: number;
  /** The person's language, for failures. */
  text: CliText;
  /** Shows the authorize URL to the person. */
  onAuthorizeUrl(url: string, redirectUri: string): void;
  /** Told (once) that a request without this login's state reached the callback and was ignored. */
  onIgnored?(): void;
  /** Registers a value that must never be printed (the authorization code). */
  hide(secret: string): void;
}

export function base64url(bytes: Buffer): string {
  return bytes.toString('base64').replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function pkceChallenge(verifier: string): string {
  return base64url(createHash('sha256').update(verifier).digest());
}

/** Runs the whole flow and returns the access token. Failures are CliFailure with one line of advice. */
export async function runOAuthFlow(options: OAuthFlowOptions): Promise<string> {
  const verifier = base64url(randomBytes(48));
  const state = base64url(randomBytes(24));
  const { redirectUri, code } = await waitForCallback(options, state, pkceChallenge(verifier));
  options.hide(code);
  return exchangeCode(options, { code, redirectUri, verifier });
}

async function waitForCallback(options: OAuthFlowOptions, state: string, challenge: string): Promise<{ redirectUri: string; code: string }> {
  let settle: { resolve: (code: string) => void; reject: (error: Error) => void } | undefined;
  const result = new Promise<string>((resolve, reject) => {
    settle = { resolve, reject };
  });
  let done = false;
  const finish = (outcome: { code: string } | { error: Error }) => {
    if (done) return;
    done = true;
    if ('code' in outcome) settle?.resolve(outcome.code);
    else settle?.reject(outcome.error);
  };

  const { t } = options.text;
  let toldIgnored = false;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback' || req.method !== 'GET') {
      page(res, 404, 'Not found', 'This address only receives the Dida authorization for dida-todo.');
      return;
    }
    if (done) {
      page(res, 409, 'Already handled', 'dida-todo has already received an answer; return to the terminal.');
      return;
    }
    // Only Dida's redirect for this login carries this state. Anything else (a stale tab, a page that loads this
    // address as an image) is answered and ignored: the login keeps waiting, and nothing of it reaches the terminal.
    if (url.searchParams.get('state') !== state) {
      page(res, 400, 'Not for this login', 'This answer does not belong to the running dida-todo login and was ignored.');
      if (!toldIgnored) {
        toldIgnored = true;
        options.onIgnored?.();
      }
      return;
    }
    const error = url.searchParams.get('error');
    if (error) {
      const description = url.searchParams.get('error_description');
      page(res, 400, 'Authorization refused', 'Dida did not authorize dida-todo. Return to the terminal.');
      finish({ error: new CliFailure(EXIT.failure, 'oauth_denied', t('cli.oauth.denied', { reason: `${clip(error)}${description ? `: ${clip(description)}` : ''}` })) });
      return;
    }
    const code = url.searchParams.get('code');
    if (!code) {
      page(res, 400, 'No code', 'Dida sent no authorization code. Return to the terminal.');
      finish({ error: new CliFailure(EXIT.failure, 'oauth_no_code', t('cli.oauth.noCode')) });
      return;
    }
    options.hide(code);
    page(res, 200, 'dida-todo is authorized', 'You can close this tab and return to the terminal.');
    finish({ code });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const message =
        error.code === 'EADDRINUSE' ? t('cli.oauth.portInUse', { port: options.port }) : t('cli.oauth.cannotListen', { port: options.port, reason: error.code ?? error.message });
      reject(new CliFailure(EXIT.failure, 'oauth_port', message));
    });
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const redirectUri = `http://127.0.0.1:${port}/callback`;
  const timer = setTimeout(() => {
    finish({ error: new CliFailure(EXIT.failure, 'oauth_timeout', t('cli.oauth.timeout', { seconds: Math.round(options.timeoutMs / 1000) })) });
  }, options.timeoutMs);
  try {
    options.onAuthorizeUrl(authorizeUrl(options, { state, redirectUri, challenge }), redirectUri);
    const code = await result;
    return { redirectUri, code };
  } finally {
    clearTimeout(timer);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

export function authorizeUrl(options: Pick<OAuthFlowOptions, 'oauthBase' | 'clientId'>, p: { state: string; redirectUri: string; challenge: string }): string {
  const url = new URL('/oauth/authorize', options.oauthBase);
  url.searchParams.set('client_id', options.clientId);
  url.searchParams.set('scope', OAUTH_SCOPE);
  url.searchParams.set('state', p.state);
  url.searchParams.set('redirect_uri', p.redirectUri);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('code_challenge', p.challenge);
  url.searchParams.set('code_challenge_method', 'S256');
  return url.toString();
}

async function exchangeCode(options: OAuthFlowOptions, p: { code: string; redirectUri: string; verifier: string }): Promise<string> {
  const tokenUrl = new URL('/oauth/token', options.oauthBase).toString();
  const form = new URLSearchParams({
    code: p.code,
    grant_type: 'authorization_code',
    scope: OAUTH_SCOPE,
    redirect_uri: p.redirectUri,
    code_verifier: p.verifier,
  });
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  if (options.clientSecret) {
    options.hide(options.clientSecret);
    headers.authorization = `Basic ${Buffer.from(`${options.clientId}:${options.clientSecret}`).toString('base64')}`;
  } else form.set('client_id', options.clientId);

  let response: Response;
  try {
    response = await fetch(tokenUrl, { method: 'POST', headers, body: form.toString(), signal: AbortSignal.timeout(30_000) });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
    throw new CliFailure(EXIT.failure, 'network', options.text.t('cli.oauth.network', { url: tokenUrl, reason: String(cause) }));
  }
  const text = await response.text();
  let json: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) json = parsed as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  if (!response.ok) {
    const reason = json && typeof json.error === 'string' ? `${clip(json.error)}${typeof json.error_description === 'string' ? `: ${clip(json.error_description)}` : ''}` : `HTTP ${response.status}`;
    throw new CliFailure(EXIT.failure, 'oauth_token', options.text.t('cli.oauth.noToken', { status: response.status, reason, redirect: p.redirectUri }));
  }
  const token = json && typeof json.access_token === 'string' ? json.access_token.trim() : '';
  if (!token) throw new CliFailure(EXIT.failure, 'oauth_token', options.text.t('cli.oauth.noAccessToken'));
  options.hide(token);
  return token;
}

/** Text from a request or an answer, shortened and made terminal-safe (escape sequences are shown, never run). */
function clip(text: string): string {
  const single = safeText(text.replace(/[ \t]+/g, ' ').trim());
  return single.length > 160 ? `${single.slice(0, 160)}…` : single;
}

function page(res: http.ServerResponse, status: number, title: string, body: string): void {
  const html = `<!doctype html><meta charset="utf-8"><title>${title}</title><body style="font-family:sans-serif;margin:3em"><h1>${title}</h1><p>${body}</p></body>\n`;
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', connection: 'close' });
  res.end(html);
}
