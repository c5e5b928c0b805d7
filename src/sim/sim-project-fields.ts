// The fields a project create or update may set, checked as the Open API would (400 for a wrong type or value).
import type { Project } from '../dida/types';
import { badRequest, type JsonObject } from './sim-util';

const VIEW_MODES = new Set(['list', 'kanban', 'timeline']);
const PROJECT_KINDS = new Set(['TASK', 'NOTE']);

/** The optional project fields of `body`, validated. */
export function projectFields(body: JsonObject): Partial<Project> {
  const out: Partial<Project> = {};
  if ('color' in body) {
    if (body.color !== null && typeof body.color !== 'string') throw badRequest('color must be a string');
    out.color = body.color as string | null;
  }
  if ('viewMode' in body && body.viewMode !== null) {
    if (typeof body.viewMode !== 'string' || !VIEW_MODES.has(body.viewMode)) throw badRequest('viewMode must be list, kanban or timeline');
    out.viewMode = body.viewMode;
  }
  if ('kind' in body && body.kind !== null) {
    const kind = typeof body.kind === 'string' ? body.kind.toUpperCase() : '';
    if (!PROJECT_KINDS.has(kind)) throw badRequest('kind must be TASK or NOTE');
    out.kind = kind;
  }
  if ('sortOrder' in body && body.sortOrder !== null) {
    if (typeof body.sortOrder !== 'number') throw badRequest('sortOrder must be a number');
    out.sortOrder = body.sortOrder;
  }
  return out;
}
