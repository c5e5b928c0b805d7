// The queue as a person sees it (src/core/engine/queue-view.ts), over the simulator: the executable Works in order
// with their place, the others with why not (draft, another day, waiting or paused, routed, held and by whom), the
// holder looked up in Dida at most MAX_HOLDER_READS times, a failed look-up logged, and nothing claimed.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatDidaDate } from '../../src/dida/dida-date';
import { MAX_HOLDER_READS, PERSON_VIEWER, personQueue } from '../../src/core/engine/queue-view';
import { pauseForPerson } from '../../src/core/phone/waiting';
import { openDeskAsk } from '../../src/core/phone/desk-asks';
import { whyText } from '../../src/cli/commands/queue';
import { cliText } from '../../src/cli/cli-locale';
import { safeText } from '../../src/cli/terminal-text';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';

const DAY = 24 * 3600_000;

describe('personQueue', () => {
  let h: EngineHarness;
  let projectId: string;
  let logs: string[];

  beforeEach(async () => {
    h = await startEngineHarness();
    projectId = h.sim.seedProject({ name: '队列' }).id;
    logs = [];
    h.deps.log = (line) => logs.push(line);
  });
  afterEach(async () => {
    await h.close();
  });

  const setClaim = (key: string, holder: string, at = h.clock.now) =>
    h.deps.state.update((s) => {
      s.works[key]!.claim = { holder, at };
    });

  it('executable Works first with their place, then the others with why not; nothing is claimed or written', async () => {
    const high = h.sim.seedTask({ projectId, title: '紧急', priority: 5, tags: ['web'], items: [{ title: '一', status: 1 }, { title: '二' }] });
    const low = h.sim.seedTask({ projectId, title: '不急', priority: 1 });
    const draft = h.sim.seedTask({ projectId, title: '草稿', priority: 0, items: [{ title: '想法' }] });
    const later = h.sim.seedTask({ projectId, title: '明天', priority: 3, startDate: formatDidaDate(h.clock.now + DAY), isAllDay: false, timeZone: 'Asia/Shanghai' });
    const routed = h.sim.seedTask({ projectId, title: '别的目录', priority: 3, tags: ['api'] });
    const queue = await personQueue(h.engine, projectId, { route: { others: ['api'] } });
    expect(queue.projectId).toBe(projectId);
    expect(queue.executable).toBe(2);
    expect(queue.entries.map((e) => [e.key, e.position, e.reason])).toEqual([
      [high.id, 1, undefined],
      [low.id, 2, undefined],
      ...queue.entries.slice(2).map((e) => [e.key, undefined, e.reason]),
    ]);
    const byKey = new Map(queue.entries.map((e) => [e.key, e]));
    expect(byKey.get(high.id)).toEqual({ key: high.id, taskId: high.id, title: '紧急', priority: 5, level: 'high', position: 1, steps: { settled: 1, total: 2 }, tags: ['web'] });
    expect(byKey.get(low.id)).toMatchObject({ level: 'low', steps: { settled: 0, total: 0 }, tags: [] });
    expect(byKey.get(draft.id)).toMatchObject({ reason: 'draft', level: 'none', steps: { settled: 0, total: 1 } });
    expect(byKey.get(draft.id)).not.toHaveProperty('position');
    expect(byKey.get(later.id)).toMatchObject({ reason: 'time_gate', gate: 'not_today', level: 'medium' });
    expect(byKey.get(later.id)?.day).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(byKey.get(routed.id)).toMatchObject({ reason: 'routed', routedTo: 'api' });
    expect(byKey.get(routed.id)).not.toHaveProperty('day');
    expect(byKey.get(high.id)).not.toHaveProperty('routedTo');
    // Read only: no claim comment, no claim recorded.
    expect(h.sim.listComments(high.id)).toEqual([]);
    expect((await h.state()).works[high.id]?.claim).toBeUndefined();
  });

  it('a Work the person paused says so, one the agent asked about does not; the usage of a Work is shown', async () => {
    const paused = h.sim.seedTask({ projectId, title: '暂停的', priority: 3 });
    const asked = h.sim.seedTask({ projectId, title: '问了的', priority: 3 });
    await h.engine.sync(projectId);
    await pauseForPerson(h.deps, paused.id, { by: 'command' }, () => '已暂停');
    await h.engine.waitForHuman('session-a', '用哪个颜色？', asked.id);
    await h.deps.state.update((s) => {
      const round = { requests: 4, inputTokens: 100, outputTokens: 10, cacheReadTokens: 0, ms: 5, continuations: 0, continuedRequests: 0, continuedTokens: 0, models: {} };
      s.usage[asked.id] = { rounds: { '1': round } };
    });
    const entries = new Map((await personQueue(h.engine, projectId)).entries.map((e) => [e.key, e]));
    expect(entries.get(paused.id)).toMatchObject({ reason: 'waiting_for_human', paused: true });
    expect(entries.get(paused.id)).not.toHaveProperty('usage');
    expect(entries.get(asked.id)).toMatchObject({ reason: 'waiting_for_human', usage: { requests: 4, inputTokens: 100 } });
    expect(entries.get(asked.id)).not.toHaveProperty('paused');
  });

  it('a Work whose session waits on dsh’s own question says what is asked, in the queue and in the words of the CLI and /dida', async () => {
    const task = h.sim.seedTask({ projectId, title: '换数据库', priority: 3, items: [{ title: '选型' }] });
    await h.engine.sync(projectId);
    await h.engine.switchTo('session-a', projectId, task.id);
    await openDeskAsk(h.deps, task.id, { kind: 'question', sessionId: 'session-a', questions: [{ id: 'q', question: '用哪个？', header: '数据库', options: [] }] });
    const entry = (await personQueue(h.engine, projectId)).entries.find((e) => e.key === task.id)!;
    expect(entry).toMatchObject({ reason: 'claimed', asking: { number: 1, kind: 'question', text: '数据库: 用哪个？' } });
    const zh = cliText('zh');
    expect(whyText(entry, zh)).toBe('在等你回答（#1，可以在滴答里回答）：数据库: 用哪个？');
    const hostile = whyText({ ...entry, asking: { ...entry.asking!, text: '\u001b[31mred' } }, cliText('en'));
    expect(hostile).toBe(`waiting for your answer (#1, answer in Dida too): ${safeText('\u001b[31mred')}`);
    expect(hostile).not.toContain('\u001b');
    // Without a waiting question the held Work reads as before.
    expect(whyText({ ...entry, asking: undefined }, zh)).not.toContain('在等你回答');
  });

  it('a Work held by a session of this machine names it; one held elsewhere is looked up in Dida only when asked', async () => {
    const mine = h.sim.seedTask({ projectId, title: '本机', priority: 3 });
    const far = h.sim.seedTask({ projectId, title: '远处', priority: 3 });
    const bare = h.sim.seedTask({ projectId, title: '只有主机', priority: 3 });
    await h.engine.sync(projectId);
    h.clock.now = Date.now();
    // The owner is learned from the bundle's own comment (here: another Work's claim made by this host).
    const own = h.sim.seedTask({ projectId, title: '自己的', priority: 3 });
    await h.engine.sync(projectId);
    await h.engine.switchTo('session-zz', projectId, own.id);
    expect((await h.state()).owners[projectId]).toBeDefined();
    await setClaim(mine.id, 'test-host#other1');
    await setClaim(far.id, 'elsewhere');
    await setClaim(bare.id, 'lonely-box');
    h.sim.addComment(projectId, far.id, '🤖 far-away 开始处理（会话 zz99）');

    const plain = new Map((await personQueue(h.engine, projectId)).entries.map((e) => [e.key, e]));
    expect(plain.get(mine.id)).toMatchObject({ reason: 'claimed', holder: { host: 'test-host', session: 'other1' } });
    expect(plain.get(far.id)?.reason).toBe('claimed');
    expect(plain.get(far.id)).not.toHaveProperty('holder');
    expect(plain.get(bare.id)?.holder).toEqual({ host: 'lonely-box' });
    // The session that holds its own Work sees it as its current Work (first, with no place in the queue), not held.
    const asHolder = await personQueue(h.engine, projectId, { sessionId: 'session-zz' });
    expect(asHolder.entries[0]).toMatchObject({ key: own.id, current: true });
    expect(asHolder.entries[0]).not.toHaveProperty('position');
    expect((await personQueue(h.engine, projectId)).entries.find((e) => e.key === own.id)?.reason).toBe('claimed');

    const looked = new Map((await personQueue(h.engine, projectId, { readHolders: true })).entries.map((e) => [e.key, e]));
    expect(looked.get(far.id)?.holder).toEqual({ host: 'far-away', session: 'zz99' });
    expect(looked.get(mine.id)?.holder).toEqual({ host: 'test-host', session: 'other1' });
  });

  it('fields of one reason only: a held draft reads as held (not as a draft), a paused Work routed elsewhere is not shown paused', async () => {
    const draft = h.sim.seedTask({ projectId, title: '草稿', priority: 0 });
    const routed = h.sim.seedTask({ projectId, title: '别处', priority: 3, tags: ['api'] });
    const hashed = h.sim.seedTask({ projectId, title: '无主机', priority: 3 });
    await h.engine.sync(projectId);
    await setClaim(draft.id, 'test-host#other1');
    await setClaim(hashed.id, '#s1');
    await pauseForPerson(h.deps, routed.id, { by: 'command' }, () => '已暂停');
    const entries = new Map((await personQueue(h.engine, projectId, { route: { others: ['api'] } })).entries.map((e) => [e.key, e]));
    expect(entries.get(draft.id)).toMatchObject({ reason: 'claimed', holder: { host: 'test-host', session: 'other1' } });
    expect(entries.get(routed.id)?.reason).toBe('routed');
    expect(entries.get(routed.id)).not.toHaveProperty('paused');
    expect(entries.get(hashed.id)).toMatchObject({ reason: 'claimed', holder: { host: '#s1' } });
    expect(entries.get(hashed.id)?.holder).not.toHaveProperty('session');
  });

  it('at most MAX_HOLDER_READS Works are looked up; a failed or empty look-up names no holder, and a failure is logged', async () => {
    const own = h.sim.seedTask({ projectId, title: '自己的', priority: 3 });
    const held = Array.from({ length: MAX_HOLDER_READS + 2 }, (_, i) => h.sim.seedTask({ projectId, title: `远处 ${i}`, priority: 3 }));
    await h.engine.sync(projectId);
    h.clock.now = Date.now();
    await h.engine.switchTo('session-zz', projectId, own.id);
    for (const task of held) {
      await setClaim(task.id, 'elsewhere');
      h.sim.addComment(projectId, task.id, '🤖 far-away 开始处理（会话 zz99）');
    }
    let reads = 0;
    const off = h.sim.onRequest((req) => {
      if (req.route === 'GET /project/{pid}/task/{tid}/comments') reads++;
    });
    const heldIds = new Set(held.map((t) => t.id));
    const claimed = async () => (await personQueue(h.engine, projectId, { readHolders: true })).entries.filter((e) => heldIds.has(e.key));
    const entries = await claimed();
    off();
    expect(entries.every((e) => e.reason === 'claimed')).toBe(true);
    expect(reads).toBe(MAX_HOLDER_READS);
    expect(entries.filter((e) => e.holder).length).toBe(MAX_HOLDER_READS);

    // A read Dida refuses is logged and names no one; a Work whose comments show no live claim names no one.
    h.sim.injectFault({ route: 'GET /project/{pid}/task/{tid}/comments', kind: 'status', status: 500 });
    const after = await claimed();
    expect(after.filter((e) => e.holder).length).toBe(MAX_HOLDER_READS - 1);
    expect(logs.some((l) => l.startsWith('could not read who holds a Work: '))).toBe(true);
    h.clock.now += 365 * DAY;
    await h.deps.state.update((s) => {
      for (const task of held) s.works[task.id]!.claim = { holder: 'elsewhere', at: h.clock.now };
    });
    const lapsed = await claimed();
    expect(lapsed.length).toBe(held.length);
    expect(lapsed.filter((e) => e.holder)).toEqual([]);
  });

  it('without an owner known for the list, nothing is looked up; the default viewer holds nothing', async () => {
    const far = h.sim.seedTask({ projectId, title: '远处', priority: 3 });
    await h.engine.sync(projectId);
    await setClaim(far.id, 'elsewhere');
    h.sim.addComment(projectId, far.id, '🤖 far-away 开始处理（会话 zz99）');
    let reads = 0;
    const off = h.sim.onRequest((req) => {
      if (req.route === 'GET /project/{pid}/task/{tid}/comments') reads++;
    });
    const [entry] = (await personQueue(h.engine, projectId, { readHolders: true })).entries;
    off();
    expect(reads).toBe(0);
    expect(entry).toMatchObject({ reason: 'claimed' });
    expect(entry).not.toHaveProperty('holder');
    expect((await h.state()).sessions[PERSON_VIEWER]).toBeUndefined();
  });
});
