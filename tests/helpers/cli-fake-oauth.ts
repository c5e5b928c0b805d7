// A tiny OAuth authorization server on 127.0.0.1 for `login --oauth` tests: authorize redirects with code+state,
// the token endpoint checks the PKCE verifier against the challenge and the client authentication.
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeOAuthOptions {
  clientId: string;
  /** When set, the token endpoint requires HTTP Basic with this secret; else client_id in the body. */
  clientSecret?: string;
  /** The access token to issue. */
  accessToken: string;
  /** Replace the state sent back to the callback (to test a mismatch). */
  stateOverride?: string;
  /** Send the browser back with ?error=… instead of a code. */
  deny?: boolean;
}

export interface TokenRequestRecord {
  form: Record<string, string>;
  authorization: string | undefined;
  contentType: string | undefined;
  status: number;
}

export interface FakeOAuth {
  origin: string;
  authorizeQueries: Array<Record<string, string>>;
  tokenRequests: TokenRequestRecord[];
  close(): Promise<void>;
}

const b64url = (buf: Buffer) => buf.toString('base64').replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

export async function startFakeOAuth(options: FakeOAuthOptions): Promise<FakeOAuth> {
  const codes = new Map<string, { challenge: string; redirectUri: string; clientId: string }>();
  const authorizeQueries: Array<Record<string, string>> = [];
  const tokenRequests: TokenRequestRecord[] = [];

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'GET' && url.pathname === '/oauth/authorize') {
      const q = Object.fromEntries(url.searchParams);
      authorizeQueries.push(q);
      if (q.client_id !== options.clientId || q.response_type !== 'code' || q.code_challenge_method !== 'S256' || !q.code_challenge || !q.redirect_uri || !q.state) {
        return json(400, { error: 'invalid_request' });
      }
      const back = new URL(q.redirect_uri);
      if (options.deny) {
        back.searchParams.set('error', 'access_denied');
        back.searchParams.set('error_description', 'The user said no');
      } else {
        const code = b64url(randomBytes(12));
        codes.set(code, { challenge: q.code_challenge, redirectUri: q.redirect_uri, clientId: q.client_id });
        back.searchParams.set('code', code);
      }
      back.searchParams.set('state', options.stateOverride ?? q.state);
      res.writeHead(302, { location: back.toString() });
      res.end();
      return;
    }
    if (req.method === 'POST' && url.pathname === '/oauth/token') {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        const form = Object.fromEntries(new URLSearchParams(body));
        const record: TokenRequestRecord = { form, authorization: req.headers.authorization, contentType: req.headers['content-type'], status: 0 };
        tokenRequests.push(record);
        const answer = (status: number, value: unknown) => {
          record.status = status;
          json(status, value);
        };
        let clientId = form.client_id;
        if (options.clientSecret) {
          const expected = `Basic ${Buffer.from(`${options.clientId}:${options.clientSecret}`).toString('base64')}`;
          if (req.headers.authorization !== expected) return answer(401, { error: 'invalid_client' });
          clientId = options.clientId;
        }
        const issued = form.code ? codes.get(form.code) : undefined;
        if (!issued || clientId !== issued.clientId) return answer(400, { error: 'invalid_grant', error_description: 'Invalid authorization code' });
        if (form.grant_type !== 'authorization_code' || form.redirect_uri !== issued.redirectUri) return answer(400, { error: 'invalid_request' });
        const challenge = b64url(createHash('sha256').update(form.code_verifier ?? '').digest());
        if (challenge !== issued.challenge) return answer(400, { error: 'invalid_grant', error_description: 'PKCE verification failed' });
        codes.delete(form.code as string);
        answer(200, { access_token: options.accessToken, token_type: 'bearer', expires_in: 15_552_000, scope: form.scope });
      });
      return;
    }
    json(404, { error: 'not_found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    authorizeQueries,
    tokenRequests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
