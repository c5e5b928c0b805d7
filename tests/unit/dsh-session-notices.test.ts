// What the phone did, shown in the dsh session (src/runtime/phone/session-notices.ts): a /dida command card for a pause from
// Dida, a wait for the person's answer and a resume from Dida; the panel of a waiting Work without "in progress".
import { describe, expect, it } from 'vitest';
import { getLocale } from '../../src/core/text/locale';
import { NOTICE_COMMAND, SessionNotices, waitingPanel } from '../../src/runtime/phone/session-notices';
import { createHarness, fakeAgent, flush, work } from '../helpers/dsh-fakes';

const zh = getLocale('zh');
const items = [
  { content: '收集改动', status: 'completed' as const },
  { content: '写说明', status: 'in_progress' as const },
  { content: '发布', status: 'pending' as const },
];

describe('the panel of a Work that waits', () => {
  it('a paused Work shows no step in progress and a first line saying it was paused from Dida; one waiting for an answer says that', () => {
    const paused = work('w1', ['completed', 'in_progress', 'pending'], { title: '整理发布说明', waiting: { reason: 'r', previousPriority: 3, applied: true, since: 0, pausedBy: 'priority' } });
    expect(waitingPanel(zh, paused, items)).toEqual([
      { content: '⏸ 已暂停（来自滴答）：整理发布说明', status: 'pending' },
      { content: '收集改动', status: 'completed' },
      { content: '写说明', status: 'pending' },
      { content: '发布', status: 'pending' },
    ]);
    const asked = work('w1', ['in_progress'], { title: '整理发布说明', waiting: { reason: '要哪个版本？', previousPriority: 3, applied: true, since: 0 } });
    expect(waitingPanel(getLocale('en'), asked, items)[0]).toEqual({ content: '🙋 Waiting for your answer in Dida: 整理发布说明', status: 'pending' });
    // A running Work, and an empty panel, are left as they are; a step titled like the line keeps the items unique.
    expect(waitingPanel(zh, work('w1', ['in_progress']), items)).toBe(items);
    expect(waitingPanel(zh, paused, [])).toEqual([]);
    const clash = waitingPanel(zh, paused, [{ content: '⏸ 已暂停（来自滴答）：整理发布说明', status: 'pending' }]);
    expect(new Set(clash.map((i) => i.content)).size).toBe(2);
  });
});

describe('the notices', () => {
  function setup(locale: 'zh' | 'en' = 'zh') {
    const h = createHarness();
    const agent = fakeAgent('s1', { cwd: '/p' });
    const track = h.deps.tracker.add(agent);
    // config.yaml's locale (the harness's row speaks English).
    const notices = new SessionNotices(h.deps, () => ({ locale }) as never);
    const cards = () => {
      const calls = agent.session.append.mock.calls as Array<[string, Record<string, unknown>]>;
      return calls.filter(([type]) => type === 'command/done').map(([, data]) => data.text);
    };
    return { h, agent, track, notices, cards };
  }

  it('each is one /dida command card, run then done with the same id, appended after the current tick, in the person’s locale', async () => {
    const t = setup();
    const paused = work('w1', ['completed', 'in_progress'], { title: '整理发布说明', waiting: { reason: 'r', previousPriority: 3, applied: true, since: 0, pausedBy: 'priority' } });
    t.notices.paused(t.track, paused);
    expect(t.agent.session.append).not.toHaveBeenCalled();
    await flush();
    const [run, done] = t.agent.session.append.mock.calls as Array<[string, Record<string, unknown>]>;
    expect(run?.[0]).toBe('command/run');
    expect(run?.[1]).toMatchObject({ name: NOTICE_COMMAND, args: '' });
    expect(done?.[0]).toBe('command/done');
    expect(done?.[1]).toMatchObject({ commandId: run?.[1].commandId, kind: 'success' });
    expect(t.cards()).toEqual(['已暂停（来自滴答）：「整理发布说明」停在「step 1」（已完成 1/2 步）。']);
    t.notices.resumed(t.track, '整理发布说明');
    await flush();
    expect(t.cards().at(-1)).toBe('已恢复（来自滴答）：「整理发布说明」');
    const en = setup('en');
    en.notices.resumed(en.track, 'Ship it');
    await flush();
    expect(en.cards()).toEqual(['Resumed from Dida: “Ship it”']);
  });

  it('after wait_for_human the session says the Work waits for the answer in Dida; other calls and failures say nothing', async () => {
    const t = setup();
    t.h.state.value.works.w1 = work('w1', ['in_progress'], { title: '部署', waiting: { reason: '要生产库的账号', previousPriority: 3, applied: true, since: 0 } });
    t.h.state.value.sessions.s1 = { currentWork: 'w1', touched: ['w1'], autoAttempts: 0, updatedAt: 0 };
    const call = (action: string, code = 'ok') => ({ tool: 'todo_work', args: { action }, exec: { agent: t.agent }, result: { code } });
    await t.notices.afterToolCall(call('next'));
    await t.notices.afterToolCall(call('wait_for_human', 'invalid_text'));
    await t.notices.afterToolCall({ ...call('wait_for_human'), tool: 'todo' });
    await flush();
    expect(t.cards()).toEqual([]);
    await t.notices.afterToolCall(call('wait_for_human'));
    await flush();
    expect(t.cards()).toEqual(['在滴答里等你回答：「部署」——要生产库的账号']);
  });

  it('a subagent gets none, an append that fails is logged, and nothing is shown once the plugin unloads', async () => {
    const t = setup();
    t.track.subagent = true;
    t.notices.resumed(t.track, 'x');
    await flush();
    expect(t.agent.session.append).not.toHaveBeenCalled();
    t.track.subagent = false;
    t.agent.session.append.mockImplementation(() => {
      throw new Error('session append cannot reenter');
    });
    t.notices.resumed(t.track, 'x');
    await flush();
    expect(t.h.logs).toEqual(['could not show in session s1 what happened in Dida: session append cannot reenter']);
    t.h.lifetime.abort();
    t.notices.resumed(t.track, 'x');
    await flush();
    expect(t.h.logs).toHaveLength(1);
  });
});
