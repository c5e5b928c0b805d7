// Suite `usage`: what metering a Work's cost costs — one model answer recorded (state only, no Dida request), and a
// `todo` step change over the real HTTP gateway and the simulator with and without answers recorded in between.
import { answerUsage } from '../../src/core/usage/usage';
import { recordUsage } from '../../src/core/work/usage-records';
import { startEngineHarness } from '../../tests/helpers/engine-harness';
import { int, ms, runSuite } from '../lib/harness';
import { summarize } from '../lib/stats';

const SESSION = 'bench-usage';

runSuite('usage', 'Usage per Work', async ({ quick }) => {
  // Two steps per round, within Dida's 200-item checklist cap.
  const rounds = quick ? 10 : 90;
  const h = await startEngineHarness();
  try {
    const list = h.sim.seedProject({ name: 'usage' });
    const titles = Array.from({ length: rounds * 2 + 2 }, (_, i) => `步骤 ${i + 1}`);
    const work = await h.engine.createWork(SESSION, list.id, { title: '计量', steps: titles });
    const key = work.taskId;
    const record: number[] = [];
    let recordRequests = 0;
    const plain: number[] = [];
    const metered: number[] = [];
    let step = 0;
    for (let i = 0; i < rounds; i++) {
      // A step change alone…
      let t = performance.now();
      await h.engine.changeSteps(SESSION, [{ op: 'update', step: titles[step++] as string, status: 'completed', resolution: '好了' }]);
      plain.push(performance.now() - t);
      // …and one after a model answer was recorded (what a tool call follows in a real turn).
      h.sim.resetCounters();
      t = performance.now();
      await recordUsage(h.deps, key, answerUsage({ model: 'deepseek-v4-flash', inputTokens: 1200, outputTokens: 300, cacheReadTokens: 800 }, false));
      record.push(performance.now() - t);
      recordRequests += h.sim.totalRequests();
      t = performance.now();
      await h.engine.changeSteps(SESSION, [{ op: 'update', step: titles[step++] as string, status: 'completed', resolution: '好了' }]);
      metered.push(performance.now() - t);
    }
    const r = summarize(record);
    const p = summarize(plain);
    const m = summarize(metered);
    return {
      tables: [
        {
          title: 'Recording one model answer, and a todo step change with and without it',
          columns: ['what', 'median', 'p95', 'Dida requests'],
          rows: [
            ['record one answer (state only)', ms(r.median), ms(r.p95), int(recordRequests)],
            ['todo step change', ms(p.median), ms(p.p95), '—'],
            ['todo step change after an answer was recorded', ms(m.median), ms(m.p95), '—'],
          ],
          notes: [`${rounds} rounds; the answer is recorded between tool calls (on dsh's assistant/message event), never inside one.`],
        },
      ],
      data: { rounds, record: r, plain: p, metered: m, recordRequests },
    };
  } finally {
    await h.close();
  }
});
