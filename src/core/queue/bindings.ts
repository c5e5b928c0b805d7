// Binds working directories to Dida lists: resolve a session's cwd, bind by name or id, unbind, check a list.
import { isDidaError } from '../../dida/dida-error';
import type { DidaGateway } from '../../dida/dida-gateway';
import type { Project } from '../../dida/types';
import { normalizeCwd, type Binding, type DidaTodoConfig } from '../../store/config-schema';
import { findBinding, withBinding, withoutBinding } from '../../store/config-bindings';
import { WorkError } from '../work/engine-context';
import { isRouteTag, normaliseRouteTag } from './route-tags';
import { sanitizeForDida, MAX_TITLE_LENGTH } from '../text/text-guard';
import { nearListNames } from '../text/near-names';

export interface ConfigPort {
  read(): Promise<DidaTodoConfig>;
  update(fn: (config: DidaTodoConfig) => DidaTodoConfig): Promise<DidaTodoConfig>;
}

export type BindTarget = { name: string } | { id: string };

export interface BindResult {
  binding: Binding;
  /** True when no open list had that name and one was created. */
  created: boolean;
  project: Project;
}

/** The binding that covers `cwd` (exact, else the deepest bound ancestor), or undefined. */
export async function resolveBinding(config: ConfigPort, cwd: string): Promise<Binding | undefined> {
  return findBinding(await config.read(), cwd);
}

export interface BindOptions {
  /**
   * The directory's route tag (with or without `#`); null removes it. When absent, a directory bound again to the
   * same list keeps its tag.
   */
  tag?: string | null;
  /**
   * Create a new list even when the name is probably a typo of an open list's (the same after normalising case,
   * width, spaces and punctuation, or a small edit away). Without it such a name is refused with `list_near_miss`.
   */
  allowNearName?: boolean;
}

/** The route tag to store: normalised, or `invalid_argument` naming what a route tag may hold. */
export function checkedRouteTag(tag: string): string {
  if (!isRouteTag(tag)) {
    throw new WorkError('invalid_argument', 'The route tag must start with a letter or digit and hold only letters, digits, _ . - / (at most 64, no spaces); pass it like web or #web.');
  }
  return normaliseRouteTag(tag);
}

/**
 * Binds `cwd` to a list. By name: the one open list with exactly that name, else a new list with exactly
 * that name; several open lists with the name → `list_ambiguous` (bind by id). By id: the list must exist
 * and be open (`list_missing` / `list_closed`). An invalid route tag is refused before Dida is asked.
 */
export async function bindList(gateway: DidaGateway, config: ConfigPort, cwd: string, target: BindTarget, options: BindOptions = {}): Promise<BindResult> {
  const tag = typeof options.tag === 'string' ? checkedRouteTag(options.tag) : options.tag;
  let project: Project;
  let created = false;
  if ('id' in target) {
    const id = target.id.trim();
    if (id === '') throw new WorkError('invalid_argument', 'The list id is empty; pass the id of a Dida list (see `dida-todo lists`).');
    const projects = await gateway.listProjects();
    const found = projects.find((p) => p.id === id);
    if (!found) throw new WorkError('list_missing', `No Dida list has id ${id}; run \`dida-todo lists\` to see your lists.`);
    if (found.closed) {
      throw new WorkError('list_closed', `The Dida list ${found.id} is archived; reopen it in Dida or bind another list.`, `The Dida list "${found.name}" is archived; reopen it in Dida or bind another list.`);
    }
    project = found;
  } else {
    const name = sanitizeForDida(target.name, { maxLength: MAX_TITLE_LENGTH, singleLine: true });
    if (name === '') throw new WorkError('invalid_argument', 'The list name is empty; pass the name of the Dida list to bind.');
    const projects = await gateway.listProjects();
    const open = projects.filter((p) => p.name === name && !p.closed);
    if (open.length > 1) {
      const ids = open.map((p) => p.id).join(', ');
      throw new WorkError('list_ambiguous', `${open.length} open Dida lists have that name (${ids}); bind one by id instead.`, `${open.length} open Dida lists are named "${name}" (${ids}); bind one by id instead.`);
    }
    if (open[0]) project = open[0];
    else {
      if (!options.allowNearName) refuseNearName(name, projects);
      project = await gateway.createProject({ name, kind: 'TASK', viewMode: 'list' });
      created = true;
    }
  }
  const next = await config.update((current) => {
    const previous = current.bindings.find((b) => normalizeCwd(b.cwd) === normalizeCwd(cwd));
    const kept = tag === undefined && previous?.projectId === project.id ? previous.tag : (tag ?? undefined);
    return withBinding(current, { cwd, projectId: project.id, label: project.name, ...(kept ? { tag: kept } : {}) });
  });
  const binding: Binding = { cwd, projectId: project.id, label: project.name };
  return { binding: findBinding(next, cwd) ?? binding, created, project };
}

/** A bind by a name that is probably a typo of the open lists `near` (closest first). */
export class NearListNameError extends WorkError {
  constructor(
    readonly near: readonly string[],
    message: string,
    forPeople: string,
  ) {
    super('list_near_miss', message, forPeople);
  }
}

/**
 * A name no open list has, but probably a typo of one that does, is refused rather than made into a new list: the
 * model names the list by id (the open near lists'), and a person adds `--create` (or names it exactly).
 */
function refuseNearName(name: string, projects: readonly Project[]): void {
  const open = projects.filter((p) => !p.closed);
  const near = nearListNames(name, open.map((p) => p.name)).slice(0, 3);
  if (near.length === 0) return;
  const ids = near.map((n) => open.find((p) => p.name === n)?.id).join(', ');
  throw new NearListNameError(near,
    `No open Dida list has exactly that name, but ${near.length === 1 ? 'one is' : `${near.length} are`} close to it (${ids}): probably a typo. Ask the person which list they mean and bind it by list_id, or pass create: true only if they want a new list.`,
    `No open Dida list is named "${name}", but ${near.map((n) => `"${n}"`).join(', ')} ${near.length === 1 ? 'is' : 'are'} close: probably a typo. Bind that list, or add --create for a new list named "${name}".`,
  );
}

/** Removes the binding of exactly `cwd`; returns it, or undefined when there was none. */
export async function unbindList(config: ConfigPort, cwd: string): Promise<Binding | undefined> {
  let removed: Binding | undefined;
  await config.update((current) => {
    removed = current.bindings.find((b) => normalizeCwd(b.cwd) === normalizeCwd(cwd));
    return withoutBinding(current, cwd);
  });
  return removed;
}

export type ListHealth = { ok: true; project: Project } | { ok: false; code: 'list_missing' | 'list_closed'; message: string };

/** Whether a bound list still exists and is open; a deleted or archived list is reported, never polled. */
export async function checkList(gateway: DidaGateway, binding: Binding): Promise<ListHealth> {
  const label = binding.projectId;
  try {
    const project = await gateway.getProject(binding.projectId);
    if (project.closed) return { ok: false, code: 'list_closed', message: `The bound Dida list ${label} is archived; reopen it in Dida or bind another list.` };
    return { ok: true, project };
  } catch (error) {
    if (isDidaError(error) && error.code === 'not_found') {
      return { ok: false, code: 'list_missing', message: `The bound Dida list ${label} no longer exists; bind another list with \`dida-todo bind\`.` };
    }
    throw error;
  }
}
