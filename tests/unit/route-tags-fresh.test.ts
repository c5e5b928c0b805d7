// Route tags (src/core/queue/route-tags.ts) from a fresh import (the tag pattern is built at load), and the edges the
// main suite leaves: `#` only at the start, the pattern's ends and length, tags of other lists and the same tag twice,
// a task whose tags are missing or show nothing.
import { beforeEach, describe, expect, it, vi } from 'vitest';

type Tags = typeof import('../../src/core/queue/route-tags');
let r: Tags;
// Loaded afresh before each test (not once for the file), so what the load builds counts for that test.
beforeEach(async () => {
  vi.resetModules();
  r = await import('../../src/core/queue/route-tags');
});

describe('route tags from a fresh import', () => {
  it('drops every leading #, and no other', () => {
    expect(r.normaliseRouteTag(' ##Web ')).toBe('web');
    expect(r.normaliseRouteTag('a#b')).toBe('a#b');
    expect(r.normaliseRouteTag(undefined as never)).toBe('');
  });

  it('a usable tag: a letter or digit first, then letters, digits and _ . - /, at most 64', () => {
    for (const ok of ['web', '1abc', '中文', 'a/b.c-d_e', 'x'.repeat(64), '#api']) expect(r.isRouteTag(ok), ok).toBe(true);
    for (const bad of ['-web', '_x', 'web!', 'a b', 'x'.repeat(65), '', '#']) expect(r.isRouteTag(bad), bad).toBe(false);
  });

  it("the route leaves out other lists' tags, this directory's own, and a tag equal to its own", () => {
    const here = { cwd: '/code/web', projectId: 'p1', label: 'l', tag: 'Web' };
    const config = {
      bindings: [
        here,
        { cwd: '/code/api', projectId: 'p1', label: 'l', tag: 'api' },
        { cwd: '/code/web2', projectId: 'p1', label: 'l', tag: '#web' },
        { cwd: '/code/other', projectId: 'p2', label: 'l', tag: 'ops' },
        { cwd: '/code/plain', projectId: 'p1', label: 'l' },
      ],
    };
    expect(r.routeFor(config as never, here as never)).toEqual({ own: 'web', others: ['api'] });
    const untagged = config.bindings[4]!;
    expect(r.routeFor(config as never, untagged as never)).toEqual({ others: ['api', 'web'] });
    expect(r.routeFor({ bindings: [untagged] } as never, untagged as never)).toBeUndefined();
  });

  it('a task without tags, or with tags that show nothing, runs everywhere', () => {
    const route = { own: 'web', others: ['api'] };
    expect(r.routeVerdict(null, route)).toEqual({ ok: true });
    expect(r.routeVerdict(undefined, route)).toEqual({ ok: true });
    expect(r.routeVerdict([], route)).toEqual({ ok: true });
    expect(r.routeVerdict(['#', ' '], route)).toEqual({ ok: true });
    expect(r.routeVerdict(['API'], route)).toEqual({ ok: false, routedTo: 'api' });
    expect(r.routeVerdict(['misc'], route)).toEqual({ ok: false });
    expect(r.routeVerdict(['misc'], { others: ['api'] })).toEqual({ ok: true });
  });
});
