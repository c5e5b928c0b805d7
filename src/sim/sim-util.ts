// Small helpers shared by the simulator modules: ids, etags, dates, the HTTP error type.
import { randomBytes, randomInt } from 'node:crypto';

const ID_PROCESS_PART = randomBytes(5).toString('hex');
let idCounter = randomInt(0, 2 ** 23);

/**
 * 24 lower-case hex characters shaped like a Mongo ObjectId, as Dida's ids are: the current second, a per-process
 * random part and a counter. Ids made later compare greater, so "ties by id" keep creation order within a second.
 */
export function newId(): string {
  idCounter = (idCounter + 1) % 2 ** 24;
  const seconds = Math.floor(Date.now() / 1000).toString(16).padStart(8, '0').slice(-8);
  return `${seconds}${ID_PROCESS_PART}${idCounter.toString(16).padStart(6, '0')}`;
}

/** A Dida-looking error id: 16 random lower-case hex characters (live error bodies carry an `errorId`). */
export function newErrorId(): string {
  return randomBytes(8).toString('hex');
}

/** A well-formed task, comment or list id (24 hex characters). */
export const ID_SHAPE = /^[0-9a-f]{24}$/i;

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

/** The body of a Dida-style error answer: `{"errorId":"…","errorCode":"…","errorMessage":"…"}`. */
export function errorBody(errorCode: string, errorMessage: string): JsonObject {
  return { errorId: newErrorId(), errorCode, errorMessage };
}

/** A Dida-style error answer (the body carries `errorId`, `errorCode` and `errorMessage`). */
export function didaError(status: number, errorCode: string, errorMessage: string): SimHttpError {
  return new SimHttpError(status, errorBody(errorCode, errorMessage));
}

/** Live Dida answers 500 for malformed ids, an empty project id and unknown routes. */
export function serverError(errorCode: string, errorMessage: string): SimHttpError {
  return didaError(500, errorCode, errorMessage);
}

/**
 * Thrown by the model when the answer is an empty 200 (a deleted task under `deletedTaskRead: 'empty200'`);
 * the route layer turns it into a 200 without a body.
 */
export class SimEmptyAnswer extends Error {
  constructor() {
    super('empty answer');
    this.name = 'SimEmptyAnswer';
  }
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
