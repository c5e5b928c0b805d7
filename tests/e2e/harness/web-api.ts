// A tiny client of dsh 0.1.0-rc.8's web host API (dsh-host-apiproxy): unary JSON-RPC over plain HTTP POST
// `/api/<method>` with the envelope `{type:'client-request', rpcId, method, payload}`; the answer is
// `{rpcId, result:{ok:true, value} | {ok:false, error:{code, message, details}}}`. What the browser client does.
import { randomUUID } from 'node:crypto';

export interface WebApiError {
  code: string;
  message: string;
  details?: unknown;
}

/** Calls one unary method; throws on a transport failure or an `ok:false` result. */
export async function webCall<T = any>(baseUrl: string, method: string, payload: unknown, timeoutMs = 10_000): Promise<T> {
  const rpcId = randomUUID();
  const response = await fetch(`${baseUrl}/api/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'client-request', rpcId, method, payload }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!response.ok) throw new Error(`dsh web ${method}: HTTP ${response.status} ${await response.text()}`);
  const body = (await response.json()) as { rpcId?: string; result?: { ok: boolean; value?: T; error?: WebApiError } };
  if (body.rpcId !== rpcId) throw new Error(`dsh web ${method}: rpcId mismatch`);
  if (!body.result?.ok) throw new Error(`dsh web ${method}: ${body.result?.error?.code}: ${body.result?.error?.message}`);
  return body.result.value as T;
}

/** session.create in a directory; returns the new session id. */
export async function createSession(baseUrl: string, cwd: string): Promise<string> {
  return (await webCall<{ sessionId: string }>(baseUrl, 'session.create', { cwd })).sessionId;
}

/** session.prompt: a person's message, queued as the browser's composer does. */
export async function prompt(baseUrl: string, sessionId: string, text: string): Promise<void> {
  await webCall(baseUrl, 'session.prompt', { sessionId, mode: 'queue', content: [{ type: 'text', text }] });
}

/** session.cancel: the stop button (`agent.cancel({kind:'user'}, {keepInbox:true})` on the live agent). */
export async function cancel(baseUrl: string, sessionId: string): Promise<void> {
  await webCall(baseUrl, 'session.cancel', { sessionId });
}
