// Low-level HTTP helpers of the simulator: reading bodies, JSON answers, fault answers, truncated answers.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorBody, SimHttpError, unauthorized, type JsonObject } from './sim-util';

/** Request bodies above this size are refused with 413. */
export const MAX_BODY_BYTES = 5 * 1024 * 1024;

export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > MAX_BODY_BYTES) throw new SimHttpError(413, errorBody('payload_too_large', 'request body too large'));
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
    throw new SimHttpError(400, errorBody('invalid_json', 'the request body is not valid JSON'));
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

/**
 * A redirect (`redirect` fault): the status with a Location header and a short HTML body, as a web server in
 * front of the API sends it.
 */
export function sendRedirect(res: ServerResponse, status: number, location: string): void {
  if (res.destroyed || res.headersSent) return;
  const text = '<html><body>Moved</body></html>';
  res.writeHead(status, { Location: location, 'Content-Type': 'text/html', 'Content-Length': String(Buffer.byteLength(text)) });
  res.end(text);
}

/** The error a `status` fault answers with: OAuth style for 401, Dida style otherwise. */
export function faultError(status: number, retryAfter?: number | string): SimHttpError {
  const headers: Record<string, string> = retryAfter !== undefined ? { 'Retry-After': String(retryAfter) } : {};
  if (status === 401) {
    const err = unauthorized('Access token expired');
    return new SimHttpError(401, err.body, { ...err.headers, ...headers });
  }
  return new SimHttpError(status, faultBody(status), headers);
}

function faultBody(status: number): JsonObject {
  if (status === 403) return errorBody('no_project_permission', 'No permission for this project');
  if (status === 404) return errorBody('not_found', 'Not found');
  if (status === 429) return errorBody('too_many_requests', 'Too many requests, slow down');
  if (status === 503) return errorBody('service_unavailable', 'Service temporarily unavailable');
  if (status >= 500) return errorBody('internal_server_error', 'Internal server error (injected)');
  return errorBody(`http_${status}`, `Injected status ${status}`);
}
