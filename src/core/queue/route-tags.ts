// Route tags: which bound directory may execute a Work, decided by the task's Dida tags and the bindings' tags.
import { normalizeCwd, type Binding, type DidaTodoConfig } from '../../store/config-schema';

/** A route tag as compared and stored: NFKC, trimmed, without a leading `#`, lower case (Dida keeps tags lower case). */
export function normaliseRouteTag(raw: string): string {
  return String(raw ?? '')
    .normalize('NFKC')
    .trim()
    .replace(/^#+/, '')
    .toLowerCase();
}

const ROUTE_TAG = /^[\p{L}\p{N}][\p{L}\p{N}_.\-/]{0,63}$/u;

/** Whether `raw` names a usable route tag: letters or digits first, then letters, digits, `_ . - /`, at most 64. */
export function isRouteTag(raw: string): boolean {
  return ROUTE_TAG.test(normaliseRouteTag(raw));
}

/** What a directory's binding says about routing: its own tag, and the tags of the list's other bindings here. */
export interface Route {
  own?: string;
  /** Route tags of other bound directories of the same list on this machine (never `own`). */
  others: string[];
}

/** The route of `binding` among this machine's bindings; undefined when no binding of its list has a tag. */
export function routeFor(config: Pick<DidaTodoConfig, 'bindings'>, binding: Binding): Route | undefined {
  const own = binding.tag ? normaliseRouteTag(binding.tag) : undefined;
  const me = normalizeCwd(binding.cwd);
  const others = [
    ...new Set(
      config.bindings
        .filter((b) => b.projectId === binding.projectId && b.tag && normalizeCwd(b.cwd) !== me)
        .map((b) => normaliseRouteTag(b.tag as string))
        .filter((tag) => tag !== own),
    ),
  ].sort();
  if (!own && others.length === 0) return undefined;
  return { ...(own ? { own } : {}), others };
}

export type RouteVerdict = { ok: true } | { ok: false; routedTo?: string };

/**
 * Whether a task with Dida `tags` may run under `route`. A task without tags runs everywhere. In a directory bound
 * with a tag, a tagged task runs only when one of its tags is that tag (any other tag may be another machine's route).
 * In a directory bound without a tag, a task runs unless it carries the tag of another binding of the list. A task
 * that does not run names, when it can, the other binding's tag it is routed to (`routedTo`).
 */
export function routeVerdict(tags: readonly string[] | null | undefined, route: Route | undefined): RouteVerdict {
  if (!route || !tags || tags.length === 0) return { ok: true };
  const mine = new Set(tags.map(normaliseRouteTag).filter((t) => t !== ''));
  if (mine.size === 0) return { ok: true };
  if (route.own && mine.has(route.own)) return { ok: true };
  const routedTo = route.others.find((tag) => mine.has(tag));
  if (routedTo) return { ok: false, routedTo };
  return route.own ? { ok: false } : { ok: true };
}

/** Whether a ranked queue entry may run in the directory of `binding`, among this machine's `config` bindings. */
export function routesHere(config: Pick<DidaTodoConfig, 'bindings'> | undefined, binding: Binding | undefined, tags: readonly string[] | null | undefined): boolean {
  return !config || !binding || routeVerdict(tags, routeFor(config, binding)).ok;
}
