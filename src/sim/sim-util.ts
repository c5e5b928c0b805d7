// Small helpers shared by the simulator modules: ids, etags, dates, the HTTP error type.
import { randomBytes, randomInt } from 'node:crypto';

/** 24 random lower-case hex characters, like a Dida (Mongo ObjectId) id. */
export function newId(): string {
  return randomBytes(12).toString('hex');
}

const ETAG_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** 8 random lower-case alphanumerics, like Dida's `etag` (`cic6e3cg`). */
export function newEtag(): string {
  let out = '';
  for (let i = 0; i < 8; i++) out += ETAG_ALPHABET[randomInt(ETAG_ALPHABET.length)];
  return out;
}

/** A fresh bearer token: `sim-` + 32 hex characters. */
export function newToken(): string {
  return `sim-${randomBytes(16).toString('hex')}`;
}

/** 2^40, the step Dida uses between `sortOrder` values. */
export const SORT_STEP = 2 ** 40;

/** Dida caps a checklist at 200 items. */
export const MAX_ITEMS = 200;

/** Caps on list answers: `GET /project` pages and comment lists. */
export const MAX_PAGE = 200;

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Deep copy of plain JSON data, so callers never hold references into the simulator state. */
export function clone<T>(value: T): T {
  return structuredClone(value);
}

/**
 * A failure the simulator answers with instead of a result. `body` undefined means no body.
 * Library calls surface it as a thrown Error whose message names the status.
 */
export class SimHttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: JsonObject | undefined,
    readonly headers: Record<string, string> = {},
  ) {
    super(`sim ${status}${body ? `: ${String(body.errorMessage ?? body.error_description ?? body.errorCode ?? '')}` : ''}`);
    this.name = 'SimHttpError';
  }
}

/** A Dida-style error answer: `{"errorCode":"…","errorMessage":"…"}`. */
export function didaError(status: number, errorCode: string, errorMessage: string): SimHttpError {
  return new SimHttpError(status, { errorCode, errorMessage });
}

export function badRequest(message: string, errorCode = 'bad_request'): SimHttpError {
  return didaError(400, errorCode, message);
}

export function notFound(message: string, errorCode = 'not_found'): SimHttpError {
  return didaError(404, errorCode, message);
}

/** The 401 answer of Spring OAuth, with the `WWW-Authenticate` header. */
export function unauthorized(description = 'Invalid access token'): SimHttpError {
  return new SimHttpError(
    401,
    { error: 'invalid_token', error_description: description },
    { 'WWW-Authenticate': 'Bearer realm="oauth"' },
  );
}
