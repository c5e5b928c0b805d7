// src/core/queue/bindings.ts over the simulator: route tags checked before Dida is asked, kept or dropped on a new
// bind, the words of each refusal (for the model by id, for people by name), near-miss names, unbinding, and the
// health check of a bound list.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bindList, checkedRouteTag, checkList, NearListNameError, resolveBinding, unbindList } from '../../src/core/queue/bindings';
import { WorkError } from '../../src/core/work/engine-context';
import { DidaError } from '../../src/dida/dida-error';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';
import { memoryConfig } from '../helpers/dsh-fakes';

let h: EngineHarness;

beforeEach(async () => {
  h = await startEngineHarness();
});
afterEach(async () => {
  await h.close();
});


async function refusal(promise: Promise<unknown>): Promise<WorkError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof WorkError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('route tags', () => {
  it('are normalised, and an invalid one is refused before Dida is asked', async () => {
    expect(checkedRouteTag('#Web')).toBe('web');
    expect(checkedRouteTag('ｂａｃｋｅｎｄ/api')).toBe('backend/api');
    const config = memoryConfig();
    h.sim.seedProject({ name: 'l' });
    h.sim.resetCounters();
    const error = await refusal(bindList(h.gateway, config, '/r', { name: 'l' }, { tag: 'two words' }));
    expect(error.code).toBe('invalid_argument');
    expect(error.message).toBe('The route tag must start with a letter or digit and hold only letters, digits, _ . - / (at most 64, no spaces); pass it like web or #web.');
    expect(h.sim.totalRequests()).toBe(0);
    expect(config.value.bindings).toEqual([]);
  });

  it('a directory bound again to the same list keeps its tag; null removes it; another list drops it', async () => {
    const config = memoryConfig();
    const a = h.sim.seedProject({ name: 'a' });
    const b = h.sim.seedProject({ name: 'b' });
    const first = await bindList(h.gateway, config, '/r', { id: a.id }, { tag: '#Web' });
    expect(first.binding).toEqual({ cwd: '/r', projectId: a.id, label: 'a', tag: 'web' });
    expect((await bindList(h.gateway, config, '/r', { name: 'a' })).binding.tag).toBe('web');
    expect((await bindList(h.gateway, config, '/r', { id: a.id }, { tag: 'api' })).binding.tag).toBe('api');
    const cleared = await bindList(h.gateway, config, '/r', { id: a.id }, { tag: null });
    expect(cleared.binding).toEqual({ cwd: '/r', projectId: a.id, label: 'a' });
    await bindList(h.gateway, config, '/r', { id: a.id }, { tag: 'web' });
    const moved = await bindList(h.gateway, config, '/r', { id: b.id });
    expect(moved.binding).toEqual({ cwd: '/r', projectId: b.id, label: 'b' });
    expect(config.value.bindings).toHaveLength(1);
  });
});

describe('binding by id', () => {
  it('refuses an empty id without asking Dida, names a missing id, and an archived list by name for people', async () => {
    const config = memoryConfig();
    h.sim.resetCounters();
    const empty = await refusal(bindList(h.gateway, config, '/r', { id: '   ' }));
    expect(empty.code).toBe('invalid_argument');
    expect(empty.message).toBe('The list id is empty; pass the id of a Dida list (see `dida-todo lists`).');
    expect(h.sim.totalRequests()).toBe(0);
    const missing = await refusal(bindList(h.gateway, config, '/r', { id: 'nope' }));
    expect(missing.message).toBe('No Dida list has id nope; run `dida-todo lists` to see your lists.');
    expect(missing.code).toBe('list_missing');
    const archived = h.sim.seedProject({ name: '旧清单', closed: true });
    const closed = await refusal(bindList(h.gateway, config, '/r', { id: ` ${archived.id} ` }));
    expect(closed.code).toBe('list_closed');
    expect(closed.message).toBe(`The Dida list ${archived.id} is archived; reopen it in Dida or bind another list.`);
    expect(closed.forPeople).toBe('The Dida list "旧清单" is archived; reopen it in Dida or bind another list.');
    const open = h.sim.seedProject({ name: 'open' });
    const bound = await bindList(h.gateway, config, '/r', { id: ` ${open.id} ` });
    expect(bound).toMatchObject({ created: false, project: { id: open.id }, binding: { projectId: open.id, label: 'open' } });
  });
});

describe('binding by name', () => {
  it('refuses an empty name, and an ambiguous one with the ids (and the name for people)', async () => {
    const config = memoryConfig();
    const empty = await refusal(bindList(h.gateway, config, '/r', { name: '\u200B ' }));
    expect(empty.code).toBe('invalid_argument');
    expect(empty.message).toBe('The list name is empty; pass the name of the Dida list to bind.');
    const one = h.sim.seedProject({ name: '重名' });
    const two = h.sim.seedProject({ name: '重名' });
    const ambiguous = await refusal(bindList(h.gateway, config, '/r', { name: '重名' }));
    expect(ambiguous.code).toBe('list_ambiguous');
    expect(ambiguous.message).toBe(`2 open Dida lists have that name (${one.id}, ${two.id}); bind one by id instead.`);
    expect(ambiguous.forPeople).toBe(`2 open Dida lists are named "重名" (${one.id}, ${two.id}); bind one by id instead.`);
  });

  it('a probable typo names the close lists (at most three, closest first) and is refused', async () => {
    const config = memoryConfig();
    const near = h.sim.seedProject({ name: '工作清单' });
    const one = await refusal(bindList(h.gateway, config, '/r', { name: '工作清丹' }));
    expect(one).toBeInstanceOf(NearListNameError);
    expect((one as NearListNameError).near).toEqual(['工作清单']);
    expect(one.message).toBe(
      `No open Dida list has exactly that name, but one is close to it (${near.id}): probably a typo. Ask the person which list they mean and bind it by list_id, or pass create: true only if they want a new list.`,
    );
    expect(one.forPeople).toBe('No open Dida list is named "工作清丹", but "工作清单" is close: probably a typo. Bind that list, or add --create for a new list named "工作清丹".');
    const lists = ['Release', 'Releases', 'Relase', 'Relea', 'release!', 'Releasx', 'Xeleas'].map((name) => h.sim.seedProject({ name }));
    h.sim.seedProject({ name: 'Releasd', closed: true });
    const many = (await refusal(bindList(h.gateway, config, '/r', { name: 'Releas' }))) as NearListNameError;
    expect(many.near).toHaveLength(3);
    expect(many.message).toContain('but 3 are close to it (');
    expect(many.forPeople).toContain(`${many.near.map((n) => `"${n}"`).join(', ')} are close`);
    const ids = many.message.slice(many.message.indexOf('(') + 1, many.message.indexOf(')')).split(', ');
    expect(ids).toEqual(many.near.map((n) => lists.find((p) => p.name === n)?.id));
    expect(config.value.bindings).toEqual([]);
  });
});

describe('what a bind keeps', () => {
  it('a name is kept on one line; a directory does not take the tag of another directory of the list', async () => {
    const config = memoryConfig();
    const made = await bindList(h.gateway, config, '/a', { name: '新\n清单' });
    expect(made.project.name).toBe('新 清单');
    const list = h.sim.seedProject({ name: 'l' });
    await bindList(h.gateway, config, '/b', { id: list.id }, { tag: 'web' });
    const other = await bindList(h.gateway, config, '/c', { id: list.id });
    expect(other.binding).toEqual({ cwd: '/c', projectId: list.id, label: 'l' });
    // Also when the tagged directory is the first binding of the config.
    const first = memoryConfig();
    await bindList(h.gateway, first, '/b', { id: list.id }, { tag: 'web' });
    expect((await bindList(h.gateway, first, '/c', { id: list.id })).binding).toEqual({ cwd: '/c', projectId: list.id, label: 'l' });
    expect(first.value.bindings.find((b) => b.cwd === '/b')?.tag).toBe('web');
  });

  it('an archived list with a close name is no reason to refuse a new list', async () => {
    const config = memoryConfig();
    h.sim.seedProject({ name: '工作清单', closed: true });
    const made = await bindList(h.gateway, config, '/r', { name: '工作清丹' });
    expect(made).toMatchObject({ created: true, project: { name: '工作清丹' } });
  });
});

describe('unbinding and the health of a bound list', () => {
  it('unbind removes exactly that directory and returns it', async () => {
    const config = memoryConfig();
    const list = h.sim.seedProject({ name: 'l' });
    await bindList(h.gateway, config, '/r', { id: list.id });
    await bindList(h.gateway, config, '/r/sub', { id: list.id });
    expect(await unbindList(config, '/nothing')).toBeUndefined();
    expect(await unbindList(config, '/r/')).toMatchObject({ cwd: '/r', projectId: list.id });
    expect(config.value.bindings.map((b) => b.cwd)).toEqual(['/r/sub']);
    expect((await resolveBinding(config, '/r/sub/deeper'))?.cwd).toBe('/r/sub');
    expect(await resolveBinding(config, '/r')).toBeUndefined();
  });

  it('checkList tells an open, an archived and a deleted list apart, and passes other failures on', async () => {
    const open = h.sim.seedProject({ name: 'open' });
    const archived = h.sim.seedProject({ name: 'archived' });
    const gone = h.sim.seedProject({ name: 'gone' });
    h.sim.closeProject(archived.id);
    h.sim.deleteProject(gone.id);
    const health = await checkList(h.gateway, { cwd: '/r', projectId: open.id, label: 'open' });
    expect(health).toMatchObject({ ok: true, project: { id: open.id } });
    expect(await checkList(h.gateway, { cwd: '/r', projectId: archived.id, label: 'archived' })).toEqual({
      ok: false,
      code: 'list_closed',
      message: `The bound Dida list ${archived.id} is archived; reopen it in Dida or bind another list.`,
    });
    expect(await checkList(h.gateway, { cwd: '/r', projectId: gone.id, label: 'gone' })).toEqual({
      ok: false,
      code: 'list_missing',
      message: `The bound Dida list ${gone.id} no longer exists; bind another list with \`dida-todo bind\`.`,
    });
    h.sim.injectFault({ route: 'GET /project/{pid}', kind: 'status', status: 500 });
    await expect(checkList(h.gateway, { cwd: '/r', projectId: open.id, label: 'open' })).rejects.toBeInstanceOf(DidaError);
  });
});
