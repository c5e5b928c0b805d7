// One behaviour suite every DidaGateway implementation must pass, run against the Dida simulator.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DidaGateway } from '../../src/dida/dida-gateway';
import { DidaError } from '../../src/dida/dida-error';
import { isItemCompleted } from '../../src/dida/types';
import type { Simulator } from '../../src/sim/simulator';

export interface ContractSubject {
  gateway: DidaGateway;
  sim: Simulator;
  cleanup(): Promise<void>;
}

async function expectDidaError(promise: Promise<unknown>, code: DidaError['code']): Promise<DidaError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `expected a DidaError ${code}`).toBeInstanceOf(DidaError);
  expect((error as DidaError).code).toBe(code);
  return error as DidaError;
}

export function runGatewayContract(label: string, setup: () => Promise<ContractSubject>): void {
  describe(`gateway contract: ${label}`, () => {
    let subject: ContractSubject;
    let gateway: DidaGateway;
    let sim: Simulator;

    beforeAll(async () => {
      subject = await setup();
      gateway = subject.gateway;
      sim = subject.sim;
    });
    afterAll(async () => {
      await subject?.cleanup();
    });

    it('lists, creates and reads projects', async () => {
      const seeded = sim.seedProject({ name: '工作清单' });
      const created = await gateway.createProject({ name: 'Agent list' });
      expect(created.id).toMatch(/^[0-9a-f]{24}$/);
      expect(created.name).toBe('Agent list');
      const names = (await gateway.listProjects()).map((p) => p.name);
      expect(names).toEqual(expect.arrayContaining(['工作清单', 'Agent list']));
      const read = await gateway.getProject(seeded.id);
      expect(read.id).toBe(seeded.id);
      expect(read.name).toBe('工作清单');
    });

    it('reports a missing project or task as not_found', async () => {
      const project = sim.seedProject({ name: 'nf' });
      await expectDidaError(gateway.getProject('0123456789abcdef01234567'), 'not_found');
      await expectDidaError(gateway.getProjectData('0123456789abcdef01234567'), 'not_found');
      await expectDidaError(gateway.getTask(project.id, '0123456789abcdef01234567'), 'not_found');
    });

    it('creates a checklist task and reads it back with server-assigned item ids', async () => {
      const project = sim.seedProject({ name: 'create' });
      const task = await gateway.createTask({
        projectId: project.id,
        title: '整理发布说明',
        content: '正文：保持原样',
        priority: 3,
        items: [{ title: '收集变更' }, { title: '写草稿' }],
      });
      expect(task.id).toMatch(/^[0-9a-f]{24}$/);
      expect(task.projectId).toBe(project.id);
      expect(task.priority).toBe(3);
      expect(task.items?.map((i) => i.title)).toEqual(['收集变更', '写草稿']);
      for (const item of task.items ?? []) expect(item.id).toMatch(/^[0-9a-f]{24}$/);
      const read = await gateway.getTask(project.id, task.id);
      expect(read.items?.map((i) => i.id)).toEqual(task.items?.map((i) => i.id));
      expect(sim.getTask(task.id)?.title).toBe('整理发布说明');
    });

    it('returns only open tasks in project data', async () => {
      const project = sim.seedProject({ name: 'data' });
      const open = sim.seedTask({ projectId: project.id, title: 'open one' });
      const done = sim.seedTask({ projectId: project.id, title: 'done one' });
      await gateway.completeTask(project.id, done.id);
      const data = await gateway.getProjectData(project.id);
      expect(data.tasks.map((t) => t.id)).toEqual([open.id]);
      expect(data.project?.id).toBe(project.id);
      const completed = await gateway.getTask(project.id, done.id);
      expect(completed.status).toBe(2);
      expect(completed.completedTime).toBeTruthy();
    });

    it('updates the whole task, preserving fields it does not own, and gets fresh item ids', async () => {
      const project = sim.seedProject({ name: 'update' });
      const seeded = sim.seedTask({
        projectId: project.id,
        title: 'Ship it',
        items: [{ title: 'a' }, { title: 'b' }],
        dueDate: '2026-12-01T09:00:00+0000',
        timeZone: 'Asia/Shanghai',
        reminders: ['TRIGGER:-PT15M'],
        tags: ['work'],
      });
      const current = await gateway.getTask(project.id, seeded.id);
      const items = (current.items ?? []).map((item, i) => (i === 0 ? { ...item, status: 1 } : item));
      const updated = await gateway.updateTask({ ...current, items: [...items, { title: 'c', status: 0 }] });
      expect(updated.items?.map((i) => i.title)).toEqual(['a', 'b', 'c']);
      expect(updated.items?.map((i) => isItemCompleted(i))).toEqual([true, false, false]);
      // The simulator, like live Dida, rewrites every item id on update.
      const oldIds = new Set((current.items ?? []).map((i) => i.id));
      for (const item of updated.items ?? []) expect(oldIds.has(item.id)).toBe(false);
      const stored = sim.getTask(seeded.id);
      expect(stored?.dueDate).toBe('2026-12-01T09:00:00+0000');
      expect(stored?.timeZone).toBe('Asia/Shanghai');
      expect(stored?.reminders).toEqual(['TRIGGER:-PT15M']);
      expect(stored?.tags).toEqual(['work']);
    });

    it('keeps text verbatim: Chinese, emoji, quotes, newlines and shell characters', async () => {
      const project = sim.seedProject({ name: 'text' });
      const title = `🧑‍🔬 待验收："quote" 'single' $(echo hi) \`tick\` & | ; <tag>`;
      const content = '第一行\n第二行\t制表\n$HOME %PATH%';
      const task = await gateway.createTask({ projectId: project.id, title, content });
      expect(sim.getTask(task.id)?.title).toBe(title);
      expect(sim.getTask(task.id)?.content).toBe(content);
      const comment = await gateway.addComment(project.id, task.id, '已完成：第一步\n结果 "ok" $(x)');
      expect(comment.title).toBe('已完成：第一步\n结果 "ok" $(x)');
    });

    it('adds and lists comments with the author id as a string', async () => {
      const project = sim.seedProject({ name: 'comments' });
      const task = sim.seedTask({ projectId: project.id, title: 'c' });
      const mine = await gateway.addComment(project.id, task.id, '开始处理：c');
      expect(mine.userId).toBe(sim.userId);
      sim.addComment(project.id, task.id, '请返工', { userId: 987654321 });
      const comments = await gateway.listComments(project.id, task.id);
      expect(comments.map((c) => c.title)).toEqual(['开始处理：c', '请返工']);
      expect(comments.map((c) => c.userId)).toEqual([sim.userId, '987654321']);
      expect(typeof comments[0]?.id).toBe('string');
    });

    it('deletes a task', async () => {
      const project = sim.seedProject({ name: 'delete' });
      const task = sim.seedTask({ projectId: project.id, title: 'gone' });
      await gateway.deleteTask(project.id, task.id);
      await expectDidaError(gateway.getTask(project.id, task.id), 'not_found');
    });

    it('reads the time zone preference', async () => {
      const pref = await gateway.getPreference();
      expect(pref.timeZone).toMatch(/\w+/);
    });

    it('classifies server faults by code', async () => {
      const project = sim.seedProject({ name: 'faults' });
      sim.injectFault({ route: 'GET /project/{pid}/data', kind: 'status', status: 403, times: 1 });
      await expectDidaError(gateway.getProjectData(project.id), 'forbidden');
      sim.injectFault({ route: 'POST /task', kind: 'status', status: 500, times: 1 });
      await expectDidaError(gateway.createTask({ projectId: project.id, title: 'x' }), 'server');
      expect(sim.listTasks(project.id).map((t) => t.title)).not.toContain('x');
      sim.injectFault({ route: 'GET /project', kind: 'status', status: 401, times: 1 });
      const auth = await expectDidaError(gateway.listProjects(), 'auth');
      expect(auth.message).not.toContain(sim.token);
    });
  });
}
