// A tiny client of dsh 0.1.0-rc.8's web host API (dsh-host-apiproxy): unary JSON-RPC over plain HTTP POST
// `/api/<method>` with the envelope `{type:'client-request', rpcId, method, payload}`; the answer is
// `{rpcId, result:{ok:true, value} | {ok:false, error:{code, message, details}}}`. What the browser client does.
import { randomBytes, randomUUID } from 'node:crypto';
import net from 'node:net';

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

/** One server-request frame of `/api/events.mux` (an answerable one has a stable rpcId). */
export interface MuxFrame {
  rpcId: string;
  method: string;
  payload: any;
}

/**
 * The browser's event stream, `/api/events.mux` (a WebSocket downlink on rc.8; Node 20 has no WebSocket client, so
 * this is a small one: the handshake, then unmasked server frames, text and continuations). Every frame is collected
 * into `frames` until `close()`. Pending questions and approvals are replayed to a new stream, as to a late browser.
 */
export function openMux(baseUrl: string): { frames: MuxFrame[]; close(): void } {
  const frames: MuxFrame[] = [];
  const url = new URL(baseUrl);
  const socket = net.connect(Number(url.port), url.hostname);
  const key = randomBytes(16).toString('base64');
  socket.on('connect', () => {
    socket.write(
      `GET /api/events.mux HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
  });
  let buffer = Buffer.alloc(0);
  let upgraded = false;
  let message: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    if (!upgraded) {
      const end = buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      if (!buffer.subarray(0, end).toString().startsWith('HTTP/1.1 101')) return void socket.destroy();
      upgraded = true;
      buffer = buffer.subarray(end + 4);
    }
    for (;;) {
      if (buffer.length < 2) return;
      const opcode = buffer[0]! & 0x0f;
      const fin = (buffer[0]! & 0x80) !== 0;
      let length = buffer[1]! & 0x7f;
      let at = 2;
      if (length === 126) {
        if (buffer.length < 4) return;
        length = buffer.readUInt16BE(2);
        at = 4;
      } else if (length === 127) {
        if (buffer.length < 10) return;
        length = Number(buffer.readBigUInt64BE(2));
        at = 10;
      }
      if (buffer.length < at + length) return;
      const payload = buffer.subarray(at, at + length);
      buffer = buffer.subarray(at + length);
      if (opcode === 8) return void socket.end();
      if (opcode !== 1 && opcode !== 0) continue;
      message.push(payload);
      if (!fin) continue;
      const text = Buffer.concat(message).toString('utf8');
      message = [];
      try {
        const frame = JSON.parse(text) as { rpcId: string; method?: string; payload: { type?: string } };
        frames.push({ rpcId: frame.rpcId, method: frame.method ?? frame.payload?.type ?? '', payload: frame.payload });
      } catch {
        // Not a frame this client knows: left out.
      }
    }
  });
  socket.on('error', () => undefined);
  return { frames, close: () => socket.destroy() };
}

/** `POST /api/respond`: the browser's answer to an answerable frame; resolves with dsh's receipt. */
export async function respond(baseUrl: string, rpcId: string, value: unknown): Promise<{ accepted: boolean; reason?: string }> {
  const response = await fetch(`${baseUrl}/api/respond`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'client-response', rpcId, result: { ok: true, value } }),
    signal: AbortSignal.timeout(10_000),
  });
  return (await response.json()) as { accepted: boolean; reason?: string };
}
