// The person's own controls and the spend guard over the simulator (src/core/phone/person-controls.ts, spend-stop.ts,
// src/core/work/usage-records.ts): pause and resume of a session's current Work and every outcome, the spend stop's
// reminder naming what was used and the setting to raise, and usage recorded per round of Works that are not closed.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pauseCurrentWork, resumeCurrentWork } from '../../src/core/phone/person-controls';
import { stopForSpend } from '../../src/core/phone/spend-stop';
import { getLocale } from '../../src/core/text/locale';
import { DEFAULT_SPEND_LIMITS, emptyUsage } from '../../src/core/usage/usage';
import { recordUsage, spendOverLimit, spendSettingsOf, usageTarget } from '../../src/core/work/usage-records';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';

let h: EngineHarness;
const S = 'session-1';

beforeEach(async () => {
  h = await startEngineHarness();
});
afterEach(async () => {
  await h.close();
});

async function currentWork(title = '修复登录') {
  const list = h.sim.seedProject({ name: 'l' });
  const task = h.sim.seedTask({ projectId: list.id, title, priority: 3 });
  await h.engine.sync(list.id);
  await h.engine.switchTo(S, list.id, task.id);
  return { list, task };
}

function reminders(projectId: string) {
  return h.sim.listTasks(projectId).filter((t) => t.title.startsWith('🙋'));
}

describe('pause and resume by the person', () => {
  it('without a current open Work there is nothing to pause or resume', async () => {
    expect(await pauseCurrentWork(h.deps, 'session-none')).toEqual({ status: 'no_current_work' });
    expect(await resumeCurrentWork(h.deps, 'session-none')).toEqual({ status: 'no_current_work' });
    const { task } = await currentWork();
    await h.deps.state.update((s) => {
      s.works[task.id]!.phase = 'closed';
    });
    expect(await pauseCurrentWork(h.deps, S)).toEqual({ status: 'no_current_work' });
    expect(await resumeCurrentWork(h.deps, S)).toEqual({ status: 'no_current_work' });
    // A session whose current Work is no longer recorded.
    await h.deps.state.update((s) => {
      delete s.works[task.id];
    });
    expect(await pauseCurrentWork(h.deps, S)).toEqual({ status: 'no_current_work' });
    expect(await resumeCurrentWork(h.deps, S)).toEqual({ status: 'no_current_work' });
  });

  it('pauses the current Work once, and resumes it once', async () => {
    const { list, task } = await currentWork();
    expect(await resumeCurrentWork(h.deps, S)).toMatchObject({ status: 'not_waiting', work: { taskId: task.id } });
    const before = h.sim.listComments(task.id).length;
    const paused = await pauseCurrentWork(h.deps, S);
    expect(paused).toMatchObject({ status: 'paused', work: { taskId: task.id, waiting: { applied: true } } });
    expect(h.sim.getTask(task.id)?.priority).toBe(0);
    // A pause by the person is said on the Work (where it stopped), with no reminder.
    const said = h.sim.listComments(task.id).length;
    expect(said).toBe(before + 1);
    expect(reminders(list.id)).toEqual([]);
    expect(await pauseCurrentWork(h.deps, S)).toMatchObject({ status: 'already_waiting', work: { taskId: task.id } });
    expect(h.sim.listComments(task.id)).toHaveLength(said);
    const resumed = await resumeCurrentWork(h.deps, S);
    expect(resumed).toMatchObject({ status: 'resumed', work: { taskId: task.id } });
    expect((resumed as { work: { waiting?: unknown } }).work.waiting).toBeUndefined();
    expect(h.sim.getTask(task.id)?.priority).toBe(3);
    expect(reminders(list.id)).toEqual([]);
  });
});

describe('two pauses at once', () => {
  it('one pauses, the other finds it waiting: one comment, one wait', async () => {
    const { task } = await currentWork();
    const before = h.sim.listComments(task.id).length;
    const outcomes = await Promise.all([pauseCurrentWork(h.deps, S), pauseCurrentWork(h.deps, S)]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(['already_waiting', 'paused']);
    for (const o of outcomes) expect(o).toMatchObject({ work: { taskId: task.id } });
    expect(h.sim.listComments(task.id)).toHaveLength(before + 1);
    expect(h.sim.getTask(task.id)?.priority).toBe(0);
  });
});

describe('the spend stop', () => {
  it.each([
    [{ what: 'tokens', scope: 'work', used: 1_050, limit: 1_000 }, '这项工作已经用了 1,050 token，达到了上限 1,000（maxTokensPerWork）'],
    [{ what: 'tokens', scope: 'round', used: 25_000, limit: 20_000 }, '这项工作已经用了 2.5万 token，达到了上限 2万（maxTokensPerRound）'],
    [{ what: 'minutes', scope: 'work', used: 241, limit: 240 }, '这项工作已经用了 241 分钟，达到了上限 240 分钟（maxMinutesPerWork）'],
    [{ what: 'minutes', scope: 'round', used: 31, limit: 30 }, '这项工作已经用了 31 分钟，达到了上限 30 分钟（maxMinutesPerRound）'],
  ] as const)('waits for the person, saying what was used and which setting to raise (%o)', async (over, words) => {
    const { list, task } = await currentWork();
    await stopForSpend(h.deps, task.id, over);
    const state = await h.state();
    expect(state.works[task.id]?.waiting).toMatchObject({ cause: 'spend', applied: true });
    expect(h.sim.getTask(task.id)?.priority).toBe(0);
    const [reminder] = reminders(list.id);
    expect(reminder?.content).toContain(words);
  });

  it('in English, tokens in k and minutes as they are', async () => {
    const { list, task } = await currentWork();
    await stopForSpend({ ...h.deps, locale: getLocale('en') }, task.id, { what: 'tokens', scope: 'work', used: 12_345, limit: 10_000 });
    expect(reminders(list.id)[0]?.content).toContain('This Work has used 12.3k tokens, reaching its limit of 10k (maxTokensPerWork)');
    const other = h.sim.seedTask({ projectId: list.id, title: '长任务', priority: 3 });
    await h.engine.sync(list.id);
    await stopForSpend({ ...h.deps, locale: getLocale('en') }, other.id, { what: 'minutes', scope: 'work', used: 1_500, limit: 1_200 });
    const reminder = reminders(list.id).find((t) => t.content?.includes('1500 minutes'));
    expect(reminder?.content).toContain('This Work has run for 1500 minutes, reaching its limit of 1200 minutes (maxMinutesPerWork)');
  });
});

describe('usage records', () => {
  it('adds to the current round of a Work that is not closed, and to nothing else', async () => {
    const { task } = await currentWork();
    expect(await recordUsage(h.deps, 'no-such-work', { requests: 1 })).toBe(false);
    expect(await recordUsage(h.deps, task.id, { requests: 1, inputTokens: 10 })).toBe(true);
    expect(await recordUsage(h.deps, task.id, { requests: 2, ms: 500 })).toBe(true);
    let state = await h.state();
    expect(state.usage[task.id]?.rounds).toEqual({ '1': { ...emptyUsage(), requests: 3, inputTokens: 10, ms: 500 } });
    await h.deps.state.update((s) => {
      s.works[task.id]!.round = 2;
    });
    expect(await recordUsage(h.deps, task.id, { requests: 1 })).toBe(true);
    state = await h.state();
    expect(Object.keys(state.usage[task.id]!.rounds)).toEqual(['1', '2']);
    expect(state.usage[task.id]?.rounds['2']?.requests).toBe(1);
    await h.deps.state.update((s) => {
      s.works[task.id]!.phase = 'closed';
    });
    expect(await recordUsage(h.deps, task.id, { requests: 1 })).toBe(false);
    expect((await h.state()).usage[task.id]?.rounds['2']?.requests).toBe(1);
  });

  it('counts a session’s answers toward its current Work while that is not closed', async () => {
    expect(await usageTarget(h.deps, S)).toBeUndefined();
    const { task } = await currentWork();
    expect(await usageTarget(h.deps, S)).toBe(task.id);
    await h.deps.state.update((s) => {
      s.works[task.id]!.phase = 'finalizing';
    });
    expect(await usageTarget(h.deps, S)).toBe(task.id);
    await h.deps.state.update((s) => {
      s.works[task.id]!.phase = 'closed';
    });
    expect(await usageTarget(h.deps, S)).toBeUndefined();
    await h.deps.state.update((s) => {
      delete s.works[task.id];
    });
    expect(await usageTarget(h.deps, S)).toBeUndefined();
  });

  it('the limit passed by an open Work not waiting, with the configured limits or the defaults', async () => {
    expect(await spendSettingsOf({})).toEqual({ limits: DEFAULT_SPEND_LIMITS });
    const settings = { limits: { ...DEFAULT_SPEND_LIMITS, maxTokensPerWork: 100 } };
    expect(await spendSettingsOf({ spendSettings: async () => settings })).toBe(settings);
    const { task } = await currentWork();
    const deps = { ...h.deps, spendSettings: async () => settings };
    expect(await spendOverLimit(deps, 'no-such-work')).toBeUndefined();
    await recordUsage(h.deps, task.id, { requests: 1, inputTokens: 99 });
    expect(await spendOverLimit(deps, task.id)).toBeUndefined();
    await recordUsage(h.deps, task.id, { requests: 1, outputTokens: 1 });
    expect(await spendOverLimit(deps, task.id)).toEqual({ what: 'tokens', scope: 'work', used: 100, limit: 100 });
    // The defaults allow far more.
    expect(await spendOverLimit(h.deps, task.id)).toBeUndefined();
    await h.engine.waitForHuman(S, '等一下');
    expect(await spendOverLimit(deps, task.id)).toBeUndefined();
    await h.engine.resume(S);
    expect(await spendOverLimit(deps, task.id)).toMatchObject({ what: 'tokens' });
    await h.deps.state.update((s) => {
      s.works[task.id]!.phase = 'finalizing';
    });
    expect(await spendOverLimit(deps, task.id)).toBeUndefined();
  });
});
