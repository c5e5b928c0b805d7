// A pause from the phone between turns, in a real dsh web (0.1.0-rc.8) against the simulator and a scripted model:
// the session is idle holding a Work in progress; (1) the person sets its priority to none, then types in the session:
// Dida gets "已暂停：停在「…」" at that turn's first look, the model is told the Work is paused, and its attempt to
// complete a step is refused (nothing completed in Dida); (2) the same after a stop comment ("停"), the way `/dida
// pause` also pauses: typing 继续 does not carry on with the Work until it is resumed, and `todo_work resume` then
// resumes it visibly (priority back, "已恢复处理。").
import { describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/sim/simulator';
import { text, toolCall, type FakeModel, type RecordedRequest } from './harness/fake-model';
import { startWeb, type WebDsh } from './harness/dsh-run';
import { createSession, prompt } from './harness/web-api';
import { bindProject, toolResults, until, useDshWorld } from './harness/world';

let model: FakeModel;
let sim: Simulator;
let home: string;
let project: string;
let listId: string;

useDshWorld((world) => ({ model, sim, home, project } = world), { install: 'web' });

function configure(): void {
  listId = bindProject({ home, sim, project }, '暂停');
}


const bodyOf = (r: RecordedRequest) => JSON.stringify(r.body?.messages ?? []);
const comments = (id: string) => sim.listComments(id).map((c) => c.title);

/** Starts dsh web with a session idle on a Work whose first step is in progress. */
async function idleOnWork(): Promise<{ web: WebDsh; session: string; taskId: string }> {
  configure();
  const task = sim.seedTask({ projectId: listId, title: '整理发布说明', priority: 3, items: [{ title: '收集改动' }, { title: '写说明' }] });
  model.setScript([toolCall('todo_work', { action: 'next' }), toolCall('todo', { action: 'update', updates: [{ step: '收集改动', status: 'in_progress' }] }), text('开始了')]);
  const web = await startWeb({ home, cwd: project, baseUrl: model.baseUrl, env: { DIDA_TODO_TOKEN: sim.token } });
  const session = await createSession(web.url, project);
  await prompt(web.url, session, '检查todo');
  await until('the first turn to end', () => model.pending().length === 0 && model.chatRequests().some((r) => bodyOf(r).includes('开始处理') || toolResults(r).length >= 2), 40_000, web);
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  return { web, session, taskId: task.id };
}

describe('a pause from the phone between turns, in dsh web', () => {
  it('(1) priority none set while idle: the next turn’s first look pauses it in Dida, the model is told, a step change is refused', async () => {
    const { web, session, taskId } = await idleOnWork();
    try {
      sim.editTask(taskId, { priority: 0 });
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const before = model.chatRequests().length;
      model.setScript([toolCall('todo', { action: 'update', updates: [{ step: '收集改动', status: 'completed', resolution: '收集好了' }] }), text('好的')]);
      await prompt(web.url, session, '继续');
      await until('the pause in Dida', () => comments(taskId).find((c) => c.startsWith('已暂停：停在「收集改动」')), 30_000, web);
      const first = await until('the turn’s first request', () => model.chatRequests()[before], 30_000, web);
      expect(bodyOf(first)).toContain(`Work ${taskId} is paused`);
      const refused = await until('the refused step change', () => model.chatRequests().slice(before).find((r) => toolResults(r).some((c) => c.includes('waiting_for_human'))), 30_000, web);
      expect(toolResults(refused).at(-1)).toContain('paused');
      // Nothing went on in Dida: the step is not done, no "已完成", the priority stays none, and the pause was said once.
      expect(sim.getTask(taskId)?.items?.map((i) => i.status)).toEqual([0, 0]);
      expect(comments(taskId).some((c) => c.startsWith('已完成'))).toBe(false);
      expect(sim.getTask(taskId)?.priority).toBe(0);
      expect(comments(taskId).filter((c) => c.startsWith('已暂停'))).toHaveLength(1);
    } finally {
      await web.stop();
    }
  }, 180_000);

  it('(2) a stop comment: typing 继续 does not carry on; the model resumes it only when asked, and Dida shows it resumed', async () => {
    const { web, session, taskId } = await idleOnWork();
    try {
      sim.addComment(listId, taskId, '停');
      const before = model.chatRequests().length;
      // The model is told the Work is paused; the person's "继续" asks it to continue, so it resumes it first.
      model.setScript([
        toolCall('todo', { action: 'update', updates: [{ step: '收集改动', status: 'completed', resolution: '收集好了' }] }),
        toolCall('todo_work', { action: 'resume' }),
        toolCall('todo', { action: 'update', updates: [{ step: '收集改动', status: 'completed', resolution: '收集好了' }] }),
        text('继续做完了第一步'),
      ]);
      await prompt(web.url, session, '继续');
      await until('the pause in Dida', () => comments(taskId).find((c) => c.startsWith('已暂停')), 30_000, web);
      await until('the resume in Dida', () => comments(taskId).includes('已恢复处理。') && sim.getTask(taskId)?.priority === 3, 40_000, web);
      const requests = model.chatRequests().slice(before);
      expect(bodyOf(requests[0]!)).toContain(`Work ${taskId} is paused`);
      expect(toolResults(requests[1]!).at(-1)).toContain('waiting_for_human');
      await until('the step completed after the resume', () => sim.getTask(taskId)?.items?.[0]?.status === 1, 30_000, web);
      await until('its progress comment', () => comments(taskId).some((c) => c.startsWith('已完成')), 30_000, web);
      // The order in Dida: paused, resumed, then the step's progress.
      const order = comments(taskId).filter((c) => c.startsWith('已暂停') || c === '已恢复处理。' || c.startsWith('已完成'));
      expect(order.map((c) => c.slice(0, 3))).toEqual(['已暂停', '已恢复', '已完成']);
    } finally {
      await web.stop();
    }
  }, 180_000);
});
