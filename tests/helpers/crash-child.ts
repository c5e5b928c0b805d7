// A worker process that drives one Work to acceptance step by step; the crash test kills it at random moments.
// argv: <stateDir> <baseUrl> <token> <projectId> <sessionId>. Exit 0 once the Work is sent for review.
import path from 'node:path';
import type { LockPort, StatePort } from '../../src/core/engine-context';
import { getLocale } from '../../src/core/locale';
import { WorkEngine } from '../../src/core/work-engine';
import { ENGINE_STATE_VERSION, EngineStateSchema, emptyEngineState, SETTLED, visibleSteps, type EngineState } from '../../src/core/work-state';
import { createHttpGateway } from '../../src/dida/http-gateway';
import { withLock } from '../../src/store/file-lock';
import { StateStore } from '../../src/store/state-store';

const [dir, baseUrl, token, projectId, sessionId] = process.argv.slice(2) as [string, string, string, string, string];
const store = new StateStore<EngineState>({
  file: path.join(dir, 'state.json'),
  lockDir: path.join(dir, 'locks'),
  schema: EngineStateSchema,
  version: ENGINE_STATE_VERSION,
  empty: emptyEngineState,
  lockOptions: { staleMs: 2000, timeoutMs: 20_000 },
});
const state: StatePort = { read: () => store.read(), update: (fn) => store.update(async (s) => (await fn(s)) ?? s) };
const locks: LockPort = { withLock: (key, fn) => withLock(path.join(dir, 'locks'), key, fn, { staleMs: 2000, timeoutMs: 20_000 }) };
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
    await engine.changeSteps(sessionId, [{ op: 'update', step: next.id, status: to, ...(to === 'completed' ? { resolution: `完成了${next.title}` } : {}) }]);
    continue;
  }
  await engine.settle(sessionId);
  if ((await engine.getWork(`${work.taskId}`)).phase === 'accepting') process.exit(0);
}
process.exit(3);
