// Many hosts, one list: separate state and lock directories (separate machines) racing over one simulated Dida
// list with random latency. No Work occurrence is executed by two hosts, and none is left behind.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DidaGateway } from '../../src/dida/dida-gateway';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';
import { seededRandom } from '../helpers/seeded-random';
import { parseClaim } from '../../src/core/queue/claims';
import { sessionTag } from '../../src/core/queue/claim-holders';

let sim: Simulator;
let root: string;

beforeAll(async () => {
  sim = await startSimulator();
  root = await mkdtemp(path.join(os.tmpdir(), 'dida-hosts-'));
});
afterAll(async () => {
  await sim.close();
  await rm(root, { recursive: true, force: true });
});


/** The real HTTP gateway with a random pause before each call (network latency differs per machine). */
function withLatency(gateway: DidaGateway, random: () => number, maxMs: number): DidaGateway {
  return new Proxy(gateway, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function' || prop === 'close') return value;
      return async (...args: unknown[]) => {
        await new Promise((r) => setTimeout(r, Math.floor(random() * maxMs)));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

describe('many hosts, one list', () => {
  it('never executes a Work on two hosts and leaves none behind, over 200 seeded races', async () => {
    const races = Number(process.env.DIDA_TODO_RACES ?? 200);
    let hostsRun = 0;
    for (let race = 0; race < races; race++) {
      const random = seededRandom(race + 1);
      const hostCount = 2 + (race % 7);
      const list = sim.seedProject({ name: `race-${race}` });
      const workCount = 1 + Math.floor(random() * 3);
      const works = Array.from({ length: workCount }, (_, i) =>
        sim.seedTask({ projectId: list.id, title: `任务 ${race}-${i}`, priority: [1, 3, 5][i % 3] as number, items: [{ title: '第一步' }, { title: '第二步' }] }),
      );
      const executions = new Map<string, string[]>();
      const hosts: EngineHarness[] = [];
      for (let h = 0; h < hostCount; h++) {
        const harness = await startEngineHarness({ sim, dir: path.join(root, `r${race}-h${h}`), retries: 2 });
        harness.deps.hostLabel = `host-${h}`;
        harness.deps.gateway = withLatency(harness.gateway, random, 4);
        hosts.push(harness);
      }
      // Several sessions of one host (one state file, one lock directory) race as well.
      const sessionsPerHost = 1 + (race % 3);
      const runners = hosts.flatMap((host, h) => Array.from({ length: sessionsPerHost }, (_, k) => ({ host, h, session: `session-${race}x${h}x${k}` })));
      await Promise.all(
        runners.map(async ({ host, h, session }) => {
          for (let round = 0; round < workCount + 2; round++) {
            const work = await host.engine.claimNext(session, list.id);
            if (!work) break;
            const list_ = executions.get(work.taskId) ?? [];
            list_.push(`host-${h}#${sessionTag(session)}`);
            executions.set(work.taskId, list_);
            await host.engine.changeSteps(session, [
              { op: 'update', step: '第一步', status: 'completed', resolution: '完成' },
              { op: 'update', step: '第二步', status: 'completed', resolution: '完成' },
            ]);
            const settled = await host.engine.settle(session);
            expect(settled.some((s) => s.outcome.status === 'finalized')).toBe(true);
          }
        }),
      );
      hostsRun += runners.length;
      for (const work of works) {
        const who = executions.get(work.id) ?? [];
        expect(who, `race ${race}: ${work.title} executed by ${who.join(', ') || 'nobody'}`).toHaveLength(1);
        expect(sim.getTask(work.id)?.status, `race ${race}: ${work.title} finished`).toBe(2);
        const acceptances = sim.listTasks(list.id, { includeCompleted: true }).filter((t) => t.title === `🧑‍🔬 待验收：${work.title}`);
        expect(acceptances).toHaveLength(1);
        // The winner's claim is the earliest claim comment on the task (by creation time, then id); losers took theirs back.
        const claims = sim
          .listComments(work.id)
          .filter((c) => parseClaim(c.title))
          .sort((a, b) => Date.parse(a.createdTime.replace(/(\d{2})(\d{2})$/, '$1:$2')) - Date.parse(b.createdTime.replace(/(\d{2})(\d{2})$/, '$1:$2')) || a.id.localeCompare(b.id))
          .map((c) => parseClaim(c.title));
        expect(`${claims[0]?.host}#${claims[0]?.session}`).toBe(who[0]);
        expect(claims).toHaveLength(1);
      }
      await Promise.all(hosts.map((host) => host.close()));
    }
    process.stderr.write(`[many-hosts] ${races} races, ${hostsRun} session runs (1–3 sessions per host)\n`);
  }, 240_000);

  it('lets another host take over a Work whose claim lease expired without progress', async () => {
    const list = sim.seedProject({ name: 'lease' });
    const task = sim.seedTask({ projectId: list.id, title: '接手的任务', priority: 3, items: [{ title: '唯一一步' }] });
    const a = await startEngineHarness({ sim, dir: path.join(root, 'lease-a') });
    const b = await startEngineHarness({ sim, dir: path.join(root, 'lease-b') });
    a.deps.hostLabel = 'host-a';
    b.deps.hostLabel = 'host-b';
    a.deps.claimLeaseMs = b.deps.claimLeaseMs = 60_000;
    b.deps.now = () => Date.now();
    try {
      expect((await a.engine.claimNext('sa', list.id))?.taskId).toBe(task.id);
      expect(await b.engine.claimNext('sb', list.id)).toBeUndefined();
      // Host A dies; after the lease passes with no progress host B may take the Work over.
      b.deps.now = () => Date.now() + 61_000;
      expect((await b.engine.claimNext('sb', list.id))?.taskId).toBe(task.id);
      const comments = sim.listComments(task.id).map((c) => c.title);
      expect(comments.map((c) => parseClaim(c)?.host)).toEqual(['host-a', undefined, 'host-b']);
      // Host B said once, before taking it, that host A's session stopped and where.
      expect(comments[1]).toMatch(/^🤖 host-a 上的会话 sa 已停止：\d+ 分钟没有进展，已完成 0\/1 步。这项工作已回到队列。$/);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
