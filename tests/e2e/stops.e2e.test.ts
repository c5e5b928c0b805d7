// Never silently stuck, in a real dsh 0.1.0-rc.8 headless run against the Dida simulator and a scripted model: a
// model error no retry can fix (402, the balance used up) hands the Work to the person at once, and a one-shot that
// ends with a step open releases it so a second run with another machine name takes it right away.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { getLocale } from '../../src/core/text/locale';
import { parseClaim } from '../../src/core/queue/claims';
import type { Simulator } from '../../src/sim/simulator';
import { httpError, text, toolCall, type FakeModel } from './harness/fake-model';
import { eventsOf, runHeadless } from './harness/dsh-run';
import { useDshWorld } from './harness/world';

let model: FakeModel;
let sim: Simulator;
let home: string;
let project: string;
let listId: string;

useDshWorld((world) => ({ model, sim, home, project } = world));

const zh = getLocale('zh');
const configDir = () => path.join(home, '.test-xdg', 'config', 'dida-todo');

/** config.yaml binding the project as machine `host`; a long backoff (a wait would show in the run's length). */
function configure(host: string): string[] {
  fs.mkdirSync(configDir(), { recursive: true });
  fs.writeFileSync(path.join(configDir(), 'config.yaml'), `baseUrl: ${sim.baseUrl}\nhostLabel: ${host}\nbindings:\n  - cwd: ${project}\n    projectId: ${listId}\n    label: 智能体工作\n`);
  const overlay = path.join(home, 'dida-row.yml');
  fs.writeFileSync(overlay, `- id: dida-todo\n  config:\n    maxAutoContinue: 3\n    backoff: [120]\n    progressWindowSeconds: 0\n`);
  const llm = path.join(home, 'llm-retry.yml');
  fs.writeFileSync(llm, `- id: llm-deepseek\n  config:\n    retryPolicy:\n      mode: normal\n      maxRetries: 0\n      backoff: { initialDelayMs: 20, maxDelayMs: 50, jitterRatio: 0 }\n`);
  return [overlay, llm];
}

const env = () => ({ DIDA_TODO_TOKEN: sim.token });

describe('every way a run stops leaves a true mark in Dida', () => {
  it('a 402 (balance used up) after the first step: the Work waits with its 🙋 in the same run, and nothing waits a backoff', async () => {
    listId = sim.seedProject({ name: '智能体工作' }).id;
    const patches = configure('machine-a');
    const work = sim.seedTask({ projectId: listId, title: '升级依赖', priority: 3, items: [{ title: '列出过期的包' }, { title: '逐个升级' }] });
    model.setScript([
      toolCall('todo_work', { action: 'next' }),
      toolCall('todo', { action: 'update', updates: [{ step: '列出过期的包', status: 'completed', resolution: '列出了 3 个' }, { step: '逐个升级', status: 'in_progress' }] }),
      httpError(402, 'Insufficient Balance', 'unknown_error'),
    ]);
    const started = Date.now();
    const run = await runHeadless({ home, cwd: project, prompt: '检查todo', baseUrl: model.baseUrl, patches, env: env(), timeoutMs: 90_000 });
    const took = Date.now() - started;
    // The turn failed (exit 1) and no 120 s backoff was waited.
    expect(run.code, run.stderr).toBe(1);
    expect(took).toBeLessThan(60_000);
    expect(model.pending()).toEqual([]);
    expect(model.chatRequests()).toHaveLength(3);
    expect(eventsOf(run.sessionLogs[0]!, 'turn/end').map((e) => e.data.reason.kind)).toEqual(['error']);
    // Dida shows the truth: priority none, the 🙋 reminder in plain words, the reason on the Work.
    expect(sim.getTask(work.id)?.priority).toBe(0);
    const reminders = sim.listTasks(listId).filter((t) => t.title === '🙋 需要你处理：升级依赖');
    expect(reminders).toHaveLength(1);
    expect(reminders[0]!.content).toContain(zh.t('dida.waiting.cause.quota'));
    expect(sim.listComments(work.id).some((c) => c.title.includes(`需要你帮忙：${zh.t('dida.waiting.cause.quota')}`))).toBe(true);
  });

  it('a one-shot that ends with a step open releases the Work: a second run as another machine takes it right away', async () => {
    listId = sim.seedProject({ name: '智能体工作' }).id;
    let patches = configure('machine-a');
    const work = sim.seedTask({ projectId: listId, title: '写迁移脚本', priority: 3, items: [{ title: '草拟脚本' }, { title: '在测试库试跑' }] });
    model.setScript([
      toolCall('todo_work', { action: 'next' }),
      toolCall('todo', { action: 'update', updates: [{ step: '草拟脚本', status: 'completed', resolution: '脚本已写好' }] }),
      text('先做到这里'),
    ]);
    const first = await runHeadless({ home, cwd: project, prompt: '检查todo', baseUrl: model.baseUrl, patches, env: env(), timeoutMs: 90_000 });
    expect(first.code, first.stderr).toBe(0);
    const afterFirst = sim.listComments(work.id).map((c) => c.title);
    expect(afterFirst.filter((c) => c.startsWith('🤖 machine-a 停止处理'))).toEqual([expect.stringContaining('已完成 1/2 步，最后完成的是「草拟脚本」。现在没有人在处理')]);

    // Another machine, minutes later at most: the Work is executable for it at once.
    patches = configure('machine-b');
    model.setScript([toolCall('todo_work', { action: 'next' }), text('接手了')]);
    const second = await runHeadless({ home, cwd: project, prompt: '检查todo', baseUrl: model.baseUrl, patches, env: env(), timeoutMs: 90_000 });
    expect(second.code, second.stderr).toBe(0);
    const nextResult = JSON.stringify(model.chatRequests().at(-1)?.body?.messages ?? []);
    expect(nextResult).toContain(`Now working on Work ${work.id}`);
    const claims = sim.listComments(work.id).map((c) => parseClaim(c.title)?.host).filter(Boolean);
    expect(claims).toEqual(['machine-a', 'machine-b']);
  });
});
