// Finalization when Dida's answer to the Work's last write lost checklist items (src/core/review/finalize.ts, its tick
// check): a plain HTTP relay on 127.0.0.1 in front of the simulator drops the items from that one answer; the Work is
// not completed, the failure is recorded, and the next try finishes it with one review todo.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { finalizeWork } from '../../src/core/review/finalize';
import { createHttpGateway } from '../../src/dida/http-gateway';
import type { DidaGateway } from '../../src/dida/dida-gateway';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';

/** Relays every request to `origin`; while `keep` is set, the answer to a task update keeps only that many items. */
async function startRelay(origin: string): Promise<{ base: string; keep: { items?: number; hits: number }; close(): Promise<void> }> {
  const keep: { items?: number; hits: number } = { hits: 0 };
  const target = new URL(origin);
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const out = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } }, (answer) => {
        const parts: Buffer[] = [];
        answer.on('data', (c: Buffer) => parts.push(c));
        answer.on('end', () => {
          let payload = Buffer.concat(parts);
          const isUpdate = req.method === 'POST' && /^\/open\/v1\/task\/[^/]+$/.test(req.url ?? '');
          if (isUpdate && keep.items !== undefined && answer.statusCode === 200) {
            const task = JSON.parse(payload.toString('utf8')) as { items?: unknown[] };
            task.items = (task.items ?? []).slice(0, keep.items);
            payload = Buffer.from(JSON.stringify(task));
            keep.hits++;
            delete keep.items;
          }
          const headers = { ...answer.headers, 'content-length': String(payload.length) };
          delete headers['transfer-encoding'];
          res.writeHead(answer.statusCode ?? 502, headers);
          res.end(payload);
        });
      });
      out.on('error', () => res.destroy());
      out.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}/open/v1`,
    keep,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('finalizing when the answer lost checklist items', () => {
  let h: EngineHarness;
  let relay: Awaited<ReturnType<typeof startRelay>>;
  let relayed: DidaGateway;
  let projectId: string;
  let logs: string[];
  const S = 'session-1';

  beforeEach(async () => {
    h = await startEngineHarness();
    relay = await startRelay(h.sim.origin);
    expect(h.sim.baseUrl.startsWith(h.sim.origin)).toBe(true);
    relayed = createHttpGateway({ token: h.sim.token, baseUrl: relay.base, timeoutMs: 2000, retry: { retries: 0, baseDelayMs: 1, maxDelayMs: 5 } });
    h.deps.gateway = relayed;
    projectId = h.sim.seedProject({ name: '智能体工作' }).id;
    logs = [];
    h.deps.log = (line) => logs.push(line);
  });
  afterEach(async () => {
    await relayed.close();
    await relay.close();
    await h.close();
  });

  /** A settled three-step Work whose ticks are already in Dida, with the person's text still to append (a write without items). */
  async function settledWithPendingText() {
    const task = h.sim.seedTask({ projectId, title: '发布', priority: 3, items: [{ title: '一' }, { title: '二' }, { title: '三' }] });
    await h.engine.sync(projectId);
    await h.engine.switchTo(S, projectId, task.id);
    await h.engine.changeSteps(S, [
      { op: 'update', step: '一', status: 'completed', resolution: '好了' },
      { op: 'update', step: '二', status: 'completed', resolution: '好了' },
      { op: 'update', step: '三', status: 'skipped', resolution: '不需要' },
    ]);
    await h.deps.state.update((s) => {
      s.works[task.id]!.pendingDesc = '补充：也检查日志';
    });
    return task;
  }

  it('one item missing from the answer: not completed, the failure recorded; the next try completes it, one review todo', async () => {
    const task = await settledWithPendingText();
    relay.keep.items = 2;
    const first = await finalizeWork(h.deps, task.id);
    expect(relay.keep.hits).toBe(1);
    expect(first.status).toBe('failed');
    expect(first).toMatchObject({ message: `Dida shows 2 checklist items for Work ${task.id} but 3 were expected; finalization will retry.` });
    expect(h.sim.getTask(task.id)?.status).toBe(0);
    const work = (await h.state()).works[task.id]!;
    expect(work.phase).toBe('finalizing');
    expect(work.finalize).toMatchObject({ attempts: 1, lastError: expect.stringContaining('2 checklist items') });
    expect(work.finalize?.workCompleted).toBeUndefined();
    // The item missing from the answer is not taken for the person's deletion: the step keeps its status.
    expect(work.steps.map((s) => [s.title, s.status])).toEqual([
      ['一', 'completed'],
      ['二', 'completed'],
      ['三', 'skipped'],
    ]);
    expect(logs.some((l) => l.startsWith(`finalizing Work ${task.id} failed (will retry): Dida shows 2 checklist items`))).toBe(true);

    const second = await finalizeWork(h.deps, task.id);
    expect(second.status).toBe('finalized');
    expect(h.sim.getTask(task.id)?.status).toBe(2);
    expect(h.sim.listTasks(projectId, { includeCompleted: true }).filter((t) => t.title.startsWith('🧑‍🔬'))).toHaveLength(1);
    expect((await h.state()).works[task.id]?.finalize?.lastError).toBeUndefined();
  });

  it('an answer with every item passes the check and completes the Work at once', async () => {
    const task = await settledWithPendingText();
    relay.keep.items = 3;
    expect((await finalizeWork(h.deps, task.id)).status).toBe('finalized');
    expect(relay.keep.hits).toBe(1);
    expect(h.sim.getTask(task.id)?.status).toBe(2);
    expect(h.sim.getTask(task.id)?.desc).toContain('补充：也检查日志');
  });

  it('an item the person deleted is not expected in the answer', async () => {
    const task = await settledWithPendingText();
    const kept = h.sim.getTask(task.id)!.items!.filter((i) => i.title !== '三');
    h.sim.editTask(task.id, { items: kept });
    await h.engine.sync(projectId);
    expect((await h.state()).works[task.id]!.steps.find((s) => s.title === '三')?.status).toBe('deleted');
    await h.deps.state.update((s) => {
      s.works[task.id]!.pendingDesc = '再补充一句';
    });
    relay.keep.items = 2;
    expect((await finalizeWork(h.deps, task.id)).status).toBe('finalized');
    expect(relay.keep.hits).toBe(1);
    expect(h.sim.getTask(task.id)?.status).toBe(2);
  });

  it('an answer with no items at all is caught too', async () => {
    const task = await settledWithPendingText();
    relay.keep.items = 0;
    const outcome = await finalizeWork(h.deps, task.id);
    expect(outcome).toMatchObject({ status: 'failed', message: expect.stringContaining('Dida shows 0 checklist items') });
    expect(h.sim.getTask(task.id)?.status).toBe(0);
  });
});
