// One behaviour suite every DidaGateway implementation must pass, run against the Dida simulator.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DidaGateway } from '../../src/dida/dida-gateway';
import { DidaError } from '../../src/dida/dida-error';
import { isItemCompleted } from '../../src/dida/types';
import { DEFAULT_QUIRKS, type SimQuirks } from '../../src/sim/sim-task-ops';
import type { Simulator } from '../../src/sim/simulator';

export interface ContractSubject {
  gateway: DidaGateway;
  sim: Simulator;
  /**
   * What the implementation can reach of the live-semantics contract: `commentPaging` (reads every page of
   * comments; the `dida` CLI has no paging options) and `refusesRedirects` (the CLI's own fetch follows them).
   */
  reaches: { commentPaging: boolean; refusesRedirects: boolean };
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
    afterEach(() => {
      sim.setQuirks(DEFAULT_QUIRKS);
      sim.clearFaults();
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

    describe('live semantics', () => {
      it('orders comments by createdTime then id, never by list position, whatever order Dida lists them in', async () => {
        sim.setQuirks({ commentOrder: 'newest-first' });
        const project = sim.seedProject({ name: 'order' });
        const task = sim.seedTask({ projectId: project.id, title: 'o' });
        for (let i = 0; i < 6; i++) sim.addComment(project.id, task.id, `c${i}`);
        const expected = ['c0', 'c1', 'c2', 'c3', 'c4', 'c5'];
        expect((await gateway.listComments(project.id, task.id)).map((c) => c.title)).toEqual(expected);
        sim.setQuirks({ commentOrder: 'oldest-first' });
        expect((await gateway.listComments(project.id, task.id)).map((c) => c.title)).toEqual(expected);
      });

      it('reads every page of comments (or, where it cannot page, the first page in order)', async () => {
        sim.setQuirks({ commentOrder: 'newest-first', commentPageSize: 50 });
        const project = sim.seedProject({ name: 'pages' });
        const task = sim.seedTask({ projectId: project.id, title: 'p' });
        const titles = Array.from({ length: 120 }, (_, i) => `c${String(i).padStart(3, '0')}`);
        for (const title of titles) sim.addComment(project.id, task.id, title);
        const comments = await gateway.listComments(project.id, task.id);
        if (subject.reaches.commentPaging) expect(comments.map((c) => c.title)).toEqual(titles);
        else expect(comments.map((c) => c.title)).toEqual(titles.slice(70));
      });

      const deletionCases: Array<[SimQuirks['deletedTaskRead'], DidaError['notFoundSignal']]> = [
        ['404', 'status'],
        ['readable', 'deleted_flag'],
        ['empty200', 'empty_answer'],
        ['500', 'error_body'],
      ];
      for (const [mode, signal] of deletionCases) {
        it(`recognises a deleted task answered as ${mode} as not_found (${signal}) on read, update and comment`, async () => {
          sim.setQuirks({ deletedTaskRead: mode });
          const project = sim.seedProject({ name: `deleted ${mode}` });
          const task = sim.seedTask({ projectId: project.id, title: 'gone', items: [{ title: 'a' }] });
          const read = await gateway.getTask(project.id, task.id);
          await gateway.deleteTask(project.id, task.id);
          const error = await expectDidaError(gateway.getTask(project.id, task.id), 'not_found');
          expect(error.notFoundSignal).toBe(signal);
          expect(error.retryable).toBe(false);
          await expectDidaError(gateway.updateTask({ id: read.id, projectId: read.projectId, title: 'renamed' }), 'not_found');
          if (mode !== 'readable') await expectDidaError(gateway.addComment(project.id, task.id, 'late'), 'not_found');
          expect((await gateway.getProjectData(project.id)).tasks).toEqual([]);
        });
      }

      it('leaves out of project data a task that Dida lists with deleted set', async () => {
        const project = sim.seedProject({ name: 'flagged' });
        const kept = sim.seedTask({ projectId: project.id, title: 'kept' });
        const flagged = sim.seedTask({ projectId: project.id, title: 'flagged' });
        sim.editTask(flagged.id, { deleted: 1 });
        expect((await gateway.getProjectData(project.id)).tasks.map((t) => t.id)).toEqual([kept.id]);
      });

      it('treats a 500 that names a bad id as not_found, not as a temporary server error', async () => {
        const project = sim.seedProject({ name: 'bad ids' });
        const error = await expectDidaError(gateway.getTask(project.id, 'not-a-task-id'), 'not_found');
        expect(error.status).toBe(500);
        expect(error.notFoundSignal).toBe('error_body');
        expect(error.retryable).toBe(false);
        // an ordinary 500 stays a temporary server error
        sim.injectFault({ route: 'GET /project/{pid}/data', kind: 'status', status: 500 });
        expect((await expectDidaError(gateway.getProjectData(project.id), 'server')).retryable).toBe(true);
      });

      it('deletes a list with its tasks', async () => {
        const project = sim.seedProject({ name: 'scratch' });
        sim.seedTask({ projectId: project.id, title: 'inside' });
        await gateway.deleteProject(project.id);
        expect(sim.listProjects().some((p) => p.id === project.id)).toBe(false);
        expect(sim.listTasks(project.id)).toEqual([]);
      });

      it('never follows a redirect: a redirected write is an error naming the status and the Location', async () => {
        const project = sim.seedProject({ name: 'redirect' });
        const task = sim.seedTask({ projectId: project.id, title: 'keep' });
        const location = `${sim.baseUrl}/project/${project.id}/task/${task.id}`;
        for (const status of [301, 302, 307, 308]) {
          sim.injectFault({ route: 'POST /task/{tid}', kind: 'redirect', status, location });
          const outcome = gateway.updateTask({ id: task.id, projectId: project.id, title: 'changed' });
          if (subject.reaches.refusesRedirects) {
            const error = await expectDidaError(outcome, 'invalid_response');
            expect(error.status).toBe(status);
            expect(error.location).toBe(location);
            expect(error.message).toContain(String(status));
            expect(error.message).toContain(location);
          } else {
            // The CLI follows the redirect itself; what it answers cannot be trusted as the write's result.
            await outcome.catch(() => undefined);
          }
          expect(sim.getTask(task.id)?.title).toBe('keep');
        }
        sim.injectFault({ route: 'GET /project', kind: 'redirect', status: 302, location: 'https://elsewhere.example/open/v1/project' });
        if (subject.reaches.refusesRedirects) expect((await expectDidaError(gateway.listProjects(), 'invalid_response')).location).toContain('elsewhere.example');
      });
    });
  });
}
