// Route tags: normalising and checking them, a binding's route among the machine's bindings, and which task runs where.
import { describe, expect, it } from 'vitest';
import { isExecutable, rankQueue, type QueueCandidate } from '../../src/core/queue/queue-policy';
import { isRouteTag, normaliseRouteTag, routeFor, routesHere, routeVerdict } from '../../src/core/queue/route-tags';
import type { Binding } from '../../src/store/config-schema';

const web: Binding = { cwd: '/code/web', projectId: 'L', tag: 'web' };
const api: Binding = { cwd: '/code/api', projectId: 'L', tag: '#API' };
const plain: Binding = { cwd: '/code/docs', projectId: 'L' };
const otherList: Binding = { cwd: '/code/ios', projectId: 'M', tag: 'ios' };
const config = { bindings: [web, api, plain, otherList] };

describe('route tags', () => {
  it('are compared without #, case or full-width forms', () => {
    expect(normaliseRouteTag(' #Web ')).toBe('web');
    expect(normaliseRouteTag('＃ＷＥＢ')).toBe('web');
    expect(normaliseRouteTag('前端')).toBe('前端');
    expect(isRouteTag('#web')).toBe(true);
    expect(isRouteTag('team/web-2.0')).toBe(true);
    expect(isRouteTag('前端')).toBe(true);
    for (const bad of ['', '#', 'two words', '-web', 'a,b', 'x'.repeat(65), 'web\u202E']) expect(isRouteTag(bad)).toBe(false);
  });

  it('give each binding its own tag and the other tags of the same list on this machine', () => {
    expect(routeFor(config, web)).toEqual({ own: 'web', others: ['api'] });
    expect(routeFor(config, api)).toEqual({ own: 'api', others: ['web'] });
    expect(routeFor(config, plain)).toEqual({ others: ['api', 'web'] });
    expect(routeFor(config, otherList)).toEqual({ own: 'ios', others: [] });
    expect(routeFor({ bindings: [plain] }, plain)).toBeUndefined();
  });

  it.each([
    // [binding, task tags, runs here, routed to]
    [web, [], true, undefined],
    [web, ['web'], true, undefined],
    [web, ['Web', 'urgent'], true, undefined],
    [web, ['api'], false, 'api'],
    [web, ['urgent'], false, undefined],
    [web, ['api', 'web'], true, undefined],
    [api, ['web'], false, 'web'],
    [plain, [], true, undefined],
    [plain, ['urgent'], true, undefined],
    [plain, ['api'], false, 'api'],
    [plain, ['web', 'urgent'], false, 'web'],
    [otherList, ['api'], false, undefined],
  ] as const)('%o with tags %j: runs here %s (routed to %s)', (binding, tags, ok, routedTo) => {
    const verdict = routeVerdict(tags, routeFor(config, binding));
    expect(verdict.ok).toBe(ok);
    expect(verdict.ok ? undefined : verdict.routedTo).toBe(routedTo);
    expect(routesHere(config, binding, tags)).toBe(ok);
  });

  it('let everything run where no binding of the list has a tag', () => {
    expect(routeVerdict(['api'], undefined)).toEqual({ ok: true });
    expect(routesHere({ bindings: [plain] }, plain, ['api'])).toBe(true);
    expect(routesHere(undefined, web, ['api'])).toBe(true);
  });
});

describe('the queue with a route', () => {
  const base = (fields: Partial<QueueCandidate> & { taskId: string }): QueueCandidate => ({
    title: fields.taskId,
    priority: 3,
    order: 0,
    task: {},
    status: 'open',
    hasPlan: false,
    unsettledSteps: 0,
    waitingForHuman: false,
    claimedByOtherHost: false,
    ...fields,
  });
  const now = new Date('2026-12-02T03:00:00Z');

  it('says a Work is routed before anything else that holds it, naming the other binding’s tag', () => {
    const route = routeFor(config, web);
    expect(isExecutable(base({ taskId: 'a', tags: ['api'], waitingForHuman: true, priority: 0 }), now, 'UTC', route)).toEqual({ ok: false, reason: 'routed', routedTo: 'api' });
    expect(isExecutable(base({ taskId: 'b', tags: ['urgent'] }), now, 'UTC', route)).toEqual({ ok: false, reason: 'routed' });
    expect(isExecutable(base({ taskId: 'c', tags: ['api'], status: 'completed' }), now, 'UTC', route)).toEqual({ ok: false, reason: 'closed' });
    expect(isExecutable(base({ taskId: 'd', tags: ['api'] }), now, 'UTC')).toEqual({ ok: true });
  });

  it('ranks only the Works routed here and lists the others with their reason', () => {
    const candidates = [base({ taskId: 'a', tags: ['api'], order: 0 }), base({ taskId: 'b', tags: ['web'], order: 1 }), base({ taskId: 'c', order: 2 })];
    const queue = rankQueue(candidates, now, 'UTC', routeFor(config, web));
    expect(queue.ranked.map((r) => r.candidate.taskId)).toEqual(['b', 'c']);
    expect(queue.skipped.map((s) => [s.candidate.taskId, s.reason, s.routedTo])).toEqual([['a', 'routed', 'api']]);
    const there = rankQueue(candidates, now, 'UTC', routeFor(config, api));
    expect(there.ranked.map((r) => r.candidate.taskId)).toEqual(['a', 'c']);
  });
});
