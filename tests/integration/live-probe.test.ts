// The live self-test run against the simulator under every variant: it observes exactly the variant's behaviour,
// leaves nothing behind and never touches another list.
import { afterEach, describe, expect, it } from 'vitest';
import { createCliGateway } from '../../src/dida/cli-gateway';
import type { DidaGateway } from '../../src/dida/dida-gateway';
import { createHttpGateway } from '../../src/dida/http-gateway';
import type { ProbeCheckId } from '../../src/cli/doctor/live-probe-text';
import { runLiveProbe } from '../../src/cli/doctor/live-probe';
import type { LiveProbeReport } from '../../src/cli/doctor/live-probe-report';
import { liveCheck } from '../../src/cli/doctor/live-check';
import type { DoctorContext } from '../../src/cli/doctor/doctor-types';
import { cliText } from '../../src/cli/cli-locale';
import { SIM_VARIANTS, type SimVariantName } from '../../src/sim/sim-variants';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { installFakeDida } from '../helpers/fake-dida-install';

const COMMON: Record<string, string> = {
  'partial-update': 'all kept',
  'item-ids-on-update': 'rewritten',
  'completed-task-read': 'readable',
  'repeat-without-dates': 'dropped',
  'comment-author-id': 'number',
  'comment-paging': 'honoured',
  'unknown-task-answer': '404',
  'malformed-id-answer': '500',
  'error-id': 'present',
  'inbox-as-project': 'refused',
  'create-sort-order': 'kept',
};

const EXPECTED: Record<SimVariantName, Record<ProbeCheckId, string>> = {
  kind: { ...COMMON, 'status-on-update': 'ignore', 'update-without-title': 'apply', 'deleted-task-read': '404', 'comment-order': 'oldest-first' } as Record<ProbeCheckId, string>,
  'live-a': { ...COMMON, 'status-on-update': 'honour', 'update-without-title': 'ignore', 'deleted-task-read': 'readable', 'comment-order': 'newest-first' } as Record<ProbeCheckId, string>,
  'live-b': { ...COMMON, 'status-on-update': 'honour', 'update-without-title': 'apply', 'deleted-task-read': 'empty200', 'comment-order': 'newest-first' } as Record<ProbeCheckId, string>,
  'live-c': { ...COMMON, 'status-on-update': 'honour', 'update-without-title': 'ignore', 'deleted-task-read': '500', 'comment-order': 'oldest-first' } as Record<ProbeCheckId, string>,
  'live-d': { ...COMMON, 'status-on-update': 'honour', 'update-without-title': 'apply', 'deleted-task-read': '404', 'comment-order': 'oldest-first', 'create-sort-order': 'not kept' } as Record<ProbeCheckId, string>,
};

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function world(variant: SimVariantName): Promise<{ sim: Simulator; gateway: DidaGateway; otherList: string }> {
  const sim = await startSimulator({ quirks: SIM_VARIANTS[variant] });
  const gateway = createHttpGateway({ token: sim.token, baseUrl: sim.baseUrl, retry: { retries: 1, baseDelayMs: 1, maxDelayMs: 5 } });
  cleanups.push(() => sim.close());
  const other = sim.seedProject({ name: '我的清单' });
  const mine = sim.seedTask({ projectId: other.id, title: '买牛奶', items: [{ title: '全脂' }], tags: ['home'] });
  sim.seedTask({ projectId: other.id, title: '已完成的事', status: 2 });
  sim.addComment(other.id, mine.id, '记得带袋子');
  return { sim, gateway, otherList: other.id };
}

/** Everything the simulator holds about one list. */
function listWorld(sim: Simulator, listId: string) {
  const state = sim.state();
  const taskIds = new Set([...state.tasks, ...state.deletedTasks].filter((t) => t.projectId === listId).map((t) => t.id));
  return {
    project: state.projects.find((p) => p.id === listId),
    tasks: state.tasks.filter((t) => taskIds.has(t.id)),
    deletedTasks: state.deletedTasks.filter((t) => taskIds.has(t.id)),
    comments: [...state.comments, ...state.deletedComments].filter((c) => taskIds.has(c.taskId)),
  };
}

function expectNothingLeft(sim: Simulator, report: LiveProbeReport, projectsBefore: string[]): void {
  expect(report.cleanup).toEqual({ ok: true, leftBehind: [] });
  expect(sim.listProjects().map((p) => p.id)).toEqual(projectsBefore);
  expect(listWorld(sim, report.listId!)).toEqual({ project: undefined, tasks: [], deletedTasks: [], comments: [] });
}

describe('runLiveProbe under every simulator variant', () => {
  for (const variant of Object.keys(EXPECTED) as SimVariantName[]) {
    it(`observes exactly the ${variant} behaviour, cleans up and leaves other lists alone`, async () => {
      const { sim, gateway, otherList } = await world(variant);
      const before = listWorld(sim, otherList);
      const projectsBefore = sim.listProjects().map((p) => p.id);
      const written: string[] = [];
      sim.onRequest((info) => {
        if (info.method !== 'POST' || typeof info.body !== 'object' || info.body === null) return;
        for (const key of ['name', 'title', 'content', 'desc'] as const) {
          const value = (info.body as Record<string, unknown>)[key];
          if (typeof value === 'string') written.push(value);
        }
      });

      const report = await runLiveProbe(gateway, { now: () => Date.UTC(2026, 4, 1, 2, 30), mark: 'k3f9x2' });

      expect(report.failures).toEqual([]);
      expect(Object.fromEntries(report.observations.map((o) => [o.id, o.observed]))).toEqual(EXPECTED[variant]);
      for (const o of report.observations) {
        expect(o.simulatorDefault, o.id).toBe(EXPECTED.kind[o.id]);
        expect(o.matches, o.id).toBe(o.observed === EXPECTED.kind[o.id]);
        expect(o.what.length, o.id).toBeGreaterThan(10);
      }
      expect(report.allMatch).toBe(variant === 'kind');
      expect(report.matchingVariants).toEqual([variant]);
      expect(report.listName).toBe('dida-todo 自检 2026-05-01 02:30 k3f9x2（可删除）');
      expect(report.gateway).toBe('http');

      expectNothingLeft(sim, report, projectsBefore);
      expect(listWorld(sim, otherList)).toEqual(before);
      // What it wrote into Dida is plain language: no ids, no JSON.
      expect(written.length).toBeGreaterThan(5);
      for (const text of written) expect(text).not.toMatch(/[0-9a-f]{24}|[{}[\]]/);
    });
  }

  it('writes in English when asked, and marks each run’s list with a mark of its own', async () => {
    const { sim, gateway } = await world('kind');
    const titles: string[] = [];
    sim.onRequest((info) => {
      if (info.route === 'POST /task') titles.push(String((info.body as { title: unknown }).title));
    });
    const report = await runLiveProbe(gateway, { locale: 'en', now: () => Date.UTC(2026, 4, 1, 2, 30) });
    expect(report.listName).toMatch(/^dida-todo self-test 2026-05-01 02:30 [a-z0-9]{6} \(safe to delete\)$/);
    expect((await runLiveProbe(gateway, { locale: 'en', now: () => Date.UTC(2026, 4, 1, 2, 30) })).listName).not.toBe(report.listName);
    expect(titles.every((t) => t.startsWith('Self-test task'))).toBe(true);
    expect(report.allMatch).toBe(true);
  });

  // About 40 runs of the CLI: slow on a loaded machine.
  it('runs through the dida CLI, saying which checks the CLI cannot make', { timeout: 90_000 }, async () => {
    const sim = await startSimulator({ quirks: SIM_VARIANTS['live-a'] });
    cleanups.push(() => sim.close());
    const fake = await installFakeDida({ baseUrl: sim.baseUrl, token: sim.token });
    cleanups.push(() => fake.cleanup());
    const gateway = createCliGateway({ command: fake.command, env: fake.env, readRetries: 0 });
    const projectsBefore = sim.listProjects().map((p) => p.id);
    const report = await runLiveProbe(gateway);
    expect(report.failures).toEqual([]);
    const observed = Object.fromEntries(report.observations.map((o) => [o.id, o.observed]));
    expect(observed).toEqual({ ...EXPECTED['live-a'], 'status-on-update': 'not testable', 'comment-paging': 'not testable' });
    expect(report.matchingVariants).toEqual(['live-a']);
    expectNothingLeft(sim, report, projectsBefore);
  });
});

describe('runLiveProbe when steps fail', () => {
  it('reports a failed step, goes on with the others and still removes everything it created', async () => {
    const { sim, gateway, otherList } = await world('kind');
    const before = listWorld(sim, otherList);
    const projectsBefore = sim.listProjects().map((p) => p.id);
    sim.injectFault({ route: 'POST /project/{pid}/task/{tid}/comment', kind: 'status', status: 403, times: Infinity });
    const lines: string[] = [];
    const report = await runLiveProbe(gateway, { log: (line) => lines.push(line) });
    expect(report.failures.map((f) => f.step)).toEqual(['comments']);
    expect(report.failures[0]?.message).toContain('403');
    const ids = report.observations.map((o) => o.id);
    expect(ids).not.toContain('comment-order');
    expect(ids).toContain('deleted-task-read');
    expect(report.allMatch).toBe(false);
    expect(report.matchingVariants).toEqual([]);
    expect(lines.some((l) => l.includes('step "comments" failed'))).toBe(true);
    expectNothingLeft(sim, report, projectsBefore);
    expect(listWorld(sim, otherList)).toEqual(before);
  });

  it('says what it left behind when the scratch list cannot be removed', async () => {
    const { sim, gateway } = await world('kind');
    sim.injectFault({ route: 'DELETE /project/{pid}', kind: 'status', status: 403, times: Infinity });
    sim.injectFault({ route: 'DELETE /project/{pid}/task/{tid}', kind: 'status', status: 403, skip: 1, times: Infinity });
    const report = await runLiveProbe(gateway);
    expect(report.cleanup.ok).toBe(false);
    expect(report.cleanup.leftBehind[0]).toContain(report.listId);
    expect(report.cleanup.leftBehind.length).toBeGreaterThan(1);
    expect(sim.listProjects().some((p) => p.id === report.listId)).toBe(true);
  });

  it('creates nothing and reports the failure when the scratch list cannot be created', async () => {
    const { sim, gateway } = await world('kind');
    const projectsBefore = sim.listProjects().map((p) => p.id);
    sim.injectFault({ route: 'POST /project', kind: 'status', status: 403 });
    const report = await runLiveProbe(gateway);
    expect(report.listId).toBeUndefined();
    expect(report.failures.map((f) => f.step)).toEqual(['create the scratch list']);
    expect(report.observations).toEqual([]);
    expect(report.cleanup).toEqual({ ok: true, leftBehind: [] });
    expect(sim.listProjects().map((p) => p.id)).toEqual(projectsBefore);
    expect(sim.totalRequests()).toBe(1);
  });
});

/** The doctor's live lines for a gateway, as `dida-todo doctor --live` prints them. */
async function doctorLines(gateway: DidaGateway, locale: 'en' | 'zh' = 'en') {
  const ctx = { text: cliText(locale), connection: async () => ({ gateway }) } as unknown as DoctorContext;
  const lines = await liveCheck(ctx);
  return Object.fromEntries(lines.map((line) => [line.id, line]));
}

const ownLists = (sim: Simulator, report: LiveProbeReport) => sim.listProjects().filter((p) => p.name === report.listName);

describe('runLiveProbe when an answer is lost', () => {
  it('finds its scratch list by its name after the answer to its create is lost, runs in it and removes it', async () => {
    const { sim, gateway, otherList } = await world('kind');
    const before = listWorld(sim, otherList);
    const projectsBefore = sim.listProjects().map((p) => p.id);
    sim.injectFault({ route: 'POST /project', kind: 'truncate' });
    const report = await runLiveProbe(gateway);
    expect(sim.counters()['POST /project']).toBe(1);
    expect(report.failures).toEqual([]);
    expect(report.listId).toBeDefined();
    expect(report.allMatch).toBe(true);
    expectNothingLeft(sim, report, projectsBefore);
    expect(listWorld(sim, otherList)).toEqual(before);
  });

  it('says plainly that the list is left, and how to remove it, when it cannot be found after a lost create', async () => {
    const { sim, gateway } = await world('kind');
    sim.injectFault({ route: 'POST /project', kind: 'truncate' });
    sim.injectFault({ route: 'GET /project', kind: 'status', status: 500, times: Infinity });
    const lines = await doctorLines(gateway);
    const [left] = sim.listProjects().filter((p) => p.name.startsWith('dida-todo self-test'));
    expect(left).toBeDefined();
    expect(lines['live:step']?.status).toBe('fail');
    expect(lines['live:cleanup']).toMatchObject({ status: 'fail' });
    expect(lines['live:cleanup']?.detail).toContain(`Delete the list named "${left!.name}" in Dida`);
    expect(lines['live:cleanup']?.detail).toMatch(/may be left .*could not be read/);
    expect(lines['live:summary']?.detail).toMatch(/NOT removed/);
    expect(lines['live:summary']?.detail).not.toMatch(/ removed;/);
  });

  it('removes a scratch list whose delete answer was lost, confirming by reading the lists', async () => {
    const { sim, gateway } = await world('kind');
    const projectsBefore = sim.listProjects().map((p) => p.id);
    sim.injectFault({ route: 'DELETE /project/{pid}', kind: 'truncate' });
    const report = await runLiveProbe(gateway);
    expect(sim.counters()['DELETE /project/{pid}']).toBe(1);
    expect(sim.counters()['GET /project']).toBe(1);
    expectNothingLeft(sim, report, projectsBefore);
  });

  it('deletes every list carrying its mark that a retried or repeated create left, and only those', async () => {
    const { sim, gateway } = await world('kind');
    const report0 = await runLiveProbe(gateway, { mark: 'abc123', now: () => 0 });
    // A list the person named like an earlier self-test stays: the mark of this run differs.
    const person = sim.seedProject({ name: report0.listName });
    // The same create reached Dida twice (a proxy retried it) and its answer was lost.
    sim.onRequest((info) => {
      if (info.route === 'POST /project' && !sim.listProjects().some((p) => p.name.endsWith('zzz999（可删除）'))) sim.seedProject({ name: 'dida-todo 自检 1970-01-01 00:00 zzz999（可删除）' });
    });
    sim.injectFault({ route: 'POST /project', kind: 'truncate' });
    const report = await runLiveProbe(gateway, { mark: 'zzz999', now: () => 0 });
    expect(report.cleanup).toEqual({ ok: true, leftBehind: [] });
    expect(ownLists(sim, report)).toEqual([]);
    expect(sim.listProjects().map((p) => p.id)).toContain(person.id);
  });

  it('a create that never reached Dida leaves nothing and says no list was made', async () => {
    const { sim, gateway } = await world('kind');
    const projectsBefore = sim.listProjects().map((p) => p.id);
    sim.injectFault({ route: 'POST /project', kind: 'drop' });
    const lines = await doctorLines(gateway);
    expect(sim.counters()['GET /project']).toBe(2);
    expect(lines['live:step']?.detail).toContain('create the scratch list');
    expect(lines['live:cleanup']).toBeUndefined();
    expect(lines['live:summary']?.detail).toBe('no self-test list was made (see above).');
    expect(sim.listProjects().map((p) => p.id)).toEqual(projectsBefore);
  });
});

describe('doctor --live lines', () => {
  it('reports the list removed and the account like the simulator when all is well', async () => {
    const { gateway } = await world('kind');
    const lines = await doctorLines(gateway);
    expect(lines['live:create-sort-order']).toMatchObject({ status: 'ok' });
    expect(lines['live:create-sort-order']?.detail).toMatch(/keeps the sortOrder it sends.*: kept \(as the simulator\)/);
    expect(lines['live:summary']?.detail).toMatch(/^self-test list "dida-todo self-test .*" removed; your account behaves like: kind\.$/);
    expect(lines['live:cleanup']).toBeUndefined();
  });

  it('warns, naming the consequence, when Dida does not keep the sortOrder of a create (the live-d variant)', async () => {
    const { gateway } = await world('live-d');
    const lines = await doctorLines(gateway);
    expect(lines['live:create-sort-order']?.status).toBe('warn');
    expect(lines['live:create-sort-order']?.detail).toMatch(/does not keep the sortOrder a create sends \(sent -\d+, read back -?\d+, listed -?\d+\)/);
    expect(lines['live:create-sort-order']?.detail).toMatch(/makes the task again .*never takes one of your tasks/);
    expect(lines['live:summary']?.detail).toMatch(/behaves like: live-d\.$/);
    const zh = await doctorLines(gateway, 'zh');
    expect(zh['live:create-sort-order']?.detail).toMatch(/没有保留创建任务时给的 sortOrder.*再建一次.*从不会拿走你的任务/);
    expect(zh['live:summary']?.detail).toMatch(/^自检清单「dida-todo 自检 .*」已删除/);
  });
});
