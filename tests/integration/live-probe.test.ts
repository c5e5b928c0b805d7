// The live self-test run against the simulator under every variant: it observes exactly the variant's behaviour,
// leaves nothing behind and never touches another list.
import { afterEach, describe, expect, it } from 'vitest';
import { createCliGateway } from '../../src/dida/cli-gateway';
import type { DidaGateway } from '../../src/dida/dida-gateway';
import { createHttpGateway } from '../../src/dida/http-gateway';
import type { ProbeCheckId } from '../../src/doctor/live-probe-text';
import { runLiveProbe, type LiveProbeReport } from '../../src/doctor/live-probe';
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
};

const EXPECTED: Record<SimVariantName, Record<ProbeCheckId, string>> = {
  kind: { ...COMMON, 'status-on-update': 'ignore', 'update-without-title': 'apply', 'deleted-task-read': '404', 'comment-order': 'oldest-first' } as Record<ProbeCheckId, string>,
  'live-a': { ...COMMON, 'status-on-update': 'honour', 'update-without-title': 'ignore', 'deleted-task-read': 'readable', 'comment-order': 'newest-first' } as Record<ProbeCheckId, string>,
  'live-b': { ...COMMON, 'status-on-update': 'honour', 'update-without-title': 'apply', 'deleted-task-read': 'empty200', 'comment-order': 'newest-first' } as Record<ProbeCheckId, string>,
  'live-c': { ...COMMON, 'status-on-update': 'honour', 'update-without-title': 'ignore', 'deleted-task-read': '500', 'comment-order': 'oldest-first' } as Record<ProbeCheckId, string>,
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

      const report = await runLiveProbe(gateway, { now: () => Date.UTC(2026, 4, 1, 2, 30) });

      expect(report.failures).toEqual([]);
      expect(Object.fromEntries(report.observations.map((o) => [o.id, o.observed]))).toEqual(EXPECTED[variant]);
      for (const o of report.observations) {
        expect(o.simulatorDefault, o.id).toBe(EXPECTED.kind[o.id]);
        expect(o.matches, o.id).toBe(o.observed === EXPECTED.kind[o.id]);
        expect(o.what.length, o.id).toBeGreaterThan(10);
      }
      expect(report.allMatch).toBe(variant === 'kind');
      expect(report.matchingVariants).toEqual([variant]);
      expect(report.listName).toBe('dida-todo 自检 2026-05-01 02:30（可删除）');
      expect(report.gateway).toBe('http');

      expectNothingLeft(sim, report, projectsBefore);
      expect(listWorld(sim, otherList)).toEqual(before);
      // What it wrote into Dida is plain language: no ids, no JSON.
      expect(written.length).toBeGreaterThan(5);
      for (const text of written) expect(text).not.toMatch(/[0-9a-f]{24}|[{}[\]]/);
    });
  }

  it('writes in English when asked and uses the list name it is given', async () => {
    const { sim, gateway } = await world('kind');
    const titles: string[] = [];
    sim.onRequest((info) => {
      if (info.route === 'POST /task') titles.push(String((info.body as { title: unknown }).title));
    });
    const report = await runLiveProbe(gateway, { locale: 'en', listName: 'probe scratch' });
    expect(report.listName).toBe('probe scratch');
    expect(titles.every((t) => t.startsWith('Self-test task'))).toBe(true);
    expect(report.allMatch).toBe(true);
  });

  it('runs through the dida CLI, saying which checks the CLI cannot make', async () => {
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
