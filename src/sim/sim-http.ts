// Low-level HTTP helpers of the simulator: reading bodies, JSON answers, fault answers, truncated answers.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SimHttpError, unauthorized, type JsonObject } from './sim-util';

/** Request bodies above this size are refused with 413. */
export const MAX_BODY_BYTES = 5 * 1024 * 1024;

export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > MAX_BODY_BYTES) throw new SimHttpError(413, { errorCode: 'payload_too_large', errorMessage: 'request body too large' });
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Parses a JSON request body; an empty body is undefined; invalid JSON is a 400. */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new SimHttpError(400, { errorCode: 'invalid_json', errorMessage: 'the request body is not valid JSON' });
  }
}

/** Sends a JSON answer (or an empty one when `body` is undefined). Keep-alive stays on. */
export function sendJson(res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}): void {
  if (res.destroyed || res.writableEnded || res.headersSent) return;
  if (body === undefined) {
    res.writeHead(status, { ...headers, 'Content-Length': '0' });
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json;charset=UTF-8', 'Content-Length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

export function sendError(res: ServerResponse, error: SimHttpError): void {
  sendJson(res, error.status, error.body, error.headers);
}

/**
 * Sends the first half of the JSON body under a Content-Length of the whole body, then destroys the socket:
 * the client sees the headers and a body cut mid-way. An empty answer is cut before the headers.
 */
export function sendTruncated(res: ServerResponse, status: number, body: unknown): void {
  if (res.destroyed || res.headersSent) return;
  if (body === undefined) {
    res.socket?.destroy();
    return;
  }
  const full = Buffer.from(JSON.stringify(body), 'utf8');
  const cut = full.subarray(0, Math.max(1, Math.floor(full.length / 2)));
  res.writeHead(status, { 'Content-Type': 'application/json;charset=UTF-8', 'Content-Length': String(full.length) });
  res.write(cut, () => res.socket?.destroy());
}

/** The error a `status` fault answers with: OAuth style for 401, Dida style otherwise. */
export function faultError(status: number, retryAfter?: number): SimHttpError {
  const headers: Record<string, string> = retryAfter !== undefined ? { 'Retry-After': String(retryAfter) } : {};
  if (status === 401) {
    const err = unauthorized('Access token expired');
    return new SimHttpError(401, err.body, { ...err.headers, ...headers });
  }
  return new SimHttpError(status, faultBody(status), headers);
}

function faultBody(status: number): JsonObject {
  if (status === 403) return { errorCode: 'no_project_permission', errorMessage: 'No permission for this project' };
  if (status === 404) return { errorCode: 'not_found', errorMessage: 'Not found' };
  if (status === 429) return { errorCode: 'too_many_requests', errorMessage: 'Too many requests, slow down' };
  if (status === 503) return { errorCode: 'service_unavailable', errorMessage: 'Service temporarily unavailable' };
  if (status >= 500) return { errorCode: 'internal_server_error', errorMessage: 'Internal server error (injected)' };
  return { errorCode: `http_${status}`, errorMessage: `Injected status ${status}` };
}
