// A worker process that drives one Work to acceptance step by step (its step changes left to the background writer, as
// the todo tool leaves them); the crash test kills it at random moments.
// argv: <stateDir> <baseUrl> <token> <projectId> <sessionId>. Exit 0 once the Work is sent for review.
import path from 'node:path';
import { getLocale } from '../../src/core/text/locale';
import { WorkEngine } from '../../src/core/engine/work-engine';
import { SETTLED, visibleSteps } from '../../src/core/work/work-state';
import { createHttpGateway } from '../../src/dida/http-gateway';
import { openEngineStore } from '../../src/wiring/runtime';

const [dir, baseUrl, token, projectId, sessionId] = process.argv.slice(2) as [string, string, string, string, string];
const { state, locks } = openEngineStore({ stateFile: path.join(dir, 'state.json'), lockDir: path.join(dir, 'locks'), lockOptions: { staleMs: 2000, timeoutMs: 20_000 } });
const engine = new WorkEngine({
  gateway: createHttpGateway({ token, baseUrl, timeoutMs: 5000, retry: { retries: 2, baseDelayMs: 5, maxDelayMs: 20 } }),
  state,
  locks,
  now: () => Date.now(),
  locale: getLocale('zh'),
  timeZone: 'Asia/Shanghai',
  hostLabel: 'crash-host',
});

for (let round = 0; round < 40; round++) {
  let work = await engine.currentWork(sessionId);
  if (!work) {
    work = await engine.claimNext(sessionId, projectId);
    if (!work) {
      const all = await engine.works(projectId, { includeClosed: true });
      if (all.some((w) => w.phase === 'accepting' || w.phase === 'closed')) process.exit(0);
      continue;
    }
  }
  if (work.phase === 'accepting') process.exit(0);
  const next = visibleSteps(work).find((s) => !SETTLED.has(s.status));
  if (next) {
    const to = next.status === 'pending' ? 'in_progress' : 'completed';
    // As a tool call makes it: recorded, then written by the background writer (here every other round, or at settle),
    // so kills land between the result and the write too.
    await engine.changeSteps(sessionId, [{ op: 'update', step: next.id, status: to, ...(to === 'completed' ? { resolution: `完成了${next.title}` } : {}) }], undefined, { background: true });
    if (round % 2 === 0) await engine.flushComments();
    continue;
  }
  await engine.settle(sessionId);
  if ((await engine.getWork(`${work.taskId}`)).phase === 'accepting') process.exit(0);
}
process.exit(3);
