// The engine operations the person-edit interleaving matrix runs, each from a fresh list to just before it.
import type { EngineHarness } from './engine-harness';
import { A, EDITS, humanWork, ignoreExpected, P1, P2, Q, S, type EditKind, type MatrixOp, type World } from './interleaving-world';

const NEW_TITLE = '新需求';
const NOT_ITEMS: readonly EditKind[] = ['rename', 'body', 'desc', 'complete', 'delete', 'comment'];

async function syncTwice(h: EngineHarness, world: World): Promise<void> {
  await ignoreExpected(h.engine.sync(world.listId));
  await ignoreExpected(h.engine.sync(world.listId));
}

async function settledWork(h: EngineHarness): Promise<World> {
  const world = await humanWork(h);
  await h.engine.changeSteps(S, [
    { op: 'update', step: A, status: 'completed', resolution: '代码写好了' },
    { op: 'update', step: P1, status: 'skipped', resolution: '这次不需要' },
    { op: 'update', step: P2, status: 'completed', resolution: '做完了' },
  ]);
  return world;
}

/** The person's steps settled; the agent's step A is the last one open. */
async function lastStepOpen(h: EngineHarness): Promise<World> {
  const world = await humanWork(h);
  await h.engine.changeSteps(S, [
    { op: 'update', step: P1, status: 'skipped', resolution: '这次不需要' },
    { op: 'update', step: P2, status: 'completed', resolution: '做完了' },
  ]);
  return world;
}

async function startedWork(h: EngineHarness): Promise<World> {
  const world = await humanWork(h);
  await h.engine.changeSteps(S, [{ op: 'update', step: A, status: 'in_progress' }]);
  return world;
}

export const MATRIX_OPS: MatrixOp[] = [
  {
    name: 'complete a step in progress',
    concern: 'steps',
    setup: startedWork,
    run: (h) => ignoreExpected(h.engine.changeSteps(S, [{ op: 'update', step: A, status: 'completed', resolution: '代码写好了' }])),
    converge: syncTwice,
  },
  {
    name: 'complete a person’s step and add one in one call',
    concern: 'steps',
    setup: humanWork,
    run: (h) =>
      ignoreExpected(
        h.engine.changeSteps(S, [
          { op: 'update', step: P2, status: 'completed', resolution: '人写的这项做完了' },
          { op: 'add', title: '补文档', status: 'in_progress' },
        ]),
      ),
    converge: syncTwice,
  },
  {
    name: 'rename a step',
    concern: 'steps',
    setup: humanWork,
    run: (h) => ignoreExpected(h.engine.changeSteps(S, [{ op: 'update', step: A, title: '写核心代码' }])),
    converge: syncTwice,
  },
  {
    name: 'clear unfinished steps',
    concern: 'steps',
    setup: startedWork,
    run: (h) => ignoreExpected(h.engine.changeSteps(S, [{ op: 'clear' }])),
    converge: syncTwice,
  },
  {
    name: 'sync resumes a Work whose priority the person restored',
    concern: 'lifecycle',
    setup: async (h) => {
      const world = await humanWork(h);
      await h.engine.waitForHuman(S, '需要你确认发布时间');
      h.sim.editTask(world.taskId, { priority: 5 });
      return world;
    },
    run: (h, world) => ignoreExpected(h.engine.sync(world.listId)),
    converge: syncTwice,
  },
  {
    name: 'settle again after a failed stage',
    concern: 'lifecycle',
    setup: async (h) => {
      const world = await settledWork(h);
      // The progress comments' post and the anchor both fail: the review todo is filed, the rest is left for later.
      h.sim.injectFault({ route: 'POST /project/{pid}/task/{tid}/comment', kind: 'status', status: 503, times: 2 });
      await h.engine.settle(S);
      h.sim.clearFaults();
      return world;
    },
    run: (h) => ignoreExpected(h.engine.settle(S)),
    converge: async (h, world) => {
      await syncTwice(h, world);
      await ignoreExpected(h.engine.settle(S));
      await syncTwice(h, world);
    },
  },
  {
    name: 'skip a person’s step',
    concern: 'steps',
    setup: humanWork,
    run: async (h) => {
      await ignoreExpected(h.engine.changeSteps(S, [{ op: 'update', step: P2, status: 'skipped', resolution: '这次不做' }]));
      await h.engine.flushComments();
    },
    converge: syncTwice,
  },
  {
    name: 'switch to a Work (claim it)',
    concern: 'lifecycle',
    setup: async (h) => {
      const list = h.sim.seedProject({ name: `矩阵-${Math.random().toString(36).slice(2, 8)}` });
      const task = h.sim.seedTask({ projectId: list.id, title: '整理发布说明', desc: '请按模块分组', priority: 3, items: [{ title: P1 }, { title: P2 }, { title: Q, status: 1 }] });
      await h.engine.sync(list.id);
      return { listId: list.id, taskId: task.id, workTaskId: task.id };
    },
    run: (h, world) => ignoreExpected(h.engine.switchTo(S, world.listId, world.taskId)),
    converge: syncTwice,
  },
  {
    name: 'complete the last open step',
    concern: 'steps',
    setup: lastStepOpen,
    run: (h) => ignoreExpected(h.engine.changeSteps(S, [{ op: 'update', step: A, status: 'completed', resolution: '代码写好了' }])),
    converge: async (h, world) => {
      await ignoreExpected(h.engine.settle(S));
      await syncTwice(h, world);
    },
  },
  {
    name: 'accept (the review todo was completed)',
    concern: 'lifecycle',
    setup: async (h) => {
      const world = await settledWork(h);
      await h.engine.settle(S);
      const review = h.sim.listTasks(world.listId).find((t) => t.title.startsWith('🧑‍🔬'));
      if (!review) throw new Error('no review todo was filed');
      h.sim.editTask(review.id, { status: 2 });
      return world;
    },
    edits: ['rename', 'body', 'desc', 'reopen', 'delete', 'comment'],
    run: (h, world) => ignoreExpected(h.engine.sync(world.listId)),
    converge: syncTwice,
  },
  {
    name: 'complete a step',
    concern: 'steps',
    setup: humanWork,
    run: (h) => ignoreExpected(h.engine.changeSteps(S, [{ op: 'update', step: A, status: 'completed', resolution: '代码写好了' }])),
    converge: syncTwice,
  },
  {
    name: 'start a step',
    concern: 'steps',
    setup: humanWork,
    // Nothing is written to the task: the only request is the progress comment, posted when the outbox is flushed.
    run: async (h) => {
      await ignoreExpected(h.engine.changeSteps(S, [{ op: 'update', step: A, status: 'in_progress' }]));
      await h.engine.flushComments();
    },
    converge: syncTwice,
  },
  {
    name: 'skip a step',
    concern: 'steps',
    setup: humanWork,
    run: async (h) => {
      await ignoreExpected(h.engine.changeSteps(S, [{ op: 'update', step: A, status: 'skipped', resolution: '不需要了' }]));
      await h.engine.flushComments();
    },
    converge: syncTwice,
  },
  {
    name: 'add a step',
    concern: 'steps',
    setup: humanWork,
    run: (h) => ignoreExpected(h.engine.changeSteps(S, [{ op: 'add', title: '补测试' }])),
    converge: syncTwice,
  },
  {
    name: 'delete a step',
    concern: 'steps',
    setup: humanWork,
    run: (h) => ignoreExpected(h.engine.changeSteps(S, [{ op: 'delete', step: A }])),
    converge: syncTwice,
  },
  {
    name: 'wait for the person',
    concern: 'lifecycle',
    setup: humanWork,
    run: (h) => ignoreExpected(h.engine.waitForHuman(S, '需要你确认发布时间')),
    converge: syncTwice,
  },
  {
    name: 'resume',
    concern: 'lifecycle',
    setup: async (h) => {
      const world = await humanWork(h);
      await h.engine.waitForHuman(S, '需要你确认发布时间');
      return world;
    },
    run: (h) => ignoreExpected(h.engine.resume(S)),
    converge: syncTwice,
  },
  {
    name: 'settle (finalization)',
    concern: 'lifecycle',
    setup: settledWork,
    run: (h) => ignoreExpected(h.engine.settle(S)),
    converge: async (h, world) => {
      await syncTwice(h, world);
      await ignoreExpected(h.engine.settle(S));
      await syncTwice(h, world);
    },
  },
  {
    name: 'sync',
    concern: 'lifecycle',
    setup: humanWork,
    run: (h, world) => ignoreExpected(h.engine.sync(world.listId)),
    converge: syncTwice,
  },
  {
    name: 'claim',
    concern: 'lifecycle',
    setup: async (h) => {
      const list = h.sim.seedProject({ name: `矩阵-${Math.random().toString(36).slice(2, 8)}` });
      const task = h.sim.seedTask({ projectId: list.id, title: '整理发布说明', desc: '请按模块分组', priority: 3, items: [{ title: P1 }, { title: P2 }, { title: Q, status: 1 }] });
      await h.engine.sync(list.id);
      return { listId: list.id, taskId: task.id, workTaskId: task.id };
    },
    run: (h, world) => ignoreExpected(h.engine.claimNext(S, world.listId)),
    converge: syncTwice,
  },
  {
    name: 'create a Work',
    concern: 'lifecycle',
    setup: async (h) => {
      const list = h.sim.seedProject({ name: `矩阵-${Math.random().toString(36).slice(2, 8)}` });
      await h.engine.sync(list.id);
      return { listId: list.id, taskId: '', workTaskId: '' };
    },
    targetLater: true,
    edits: [...NOT_ITEMS, 'addItem'],
    run: (h, world) => ignoreExpected(h.engine.createWork(S, world.listId, { title: NEW_TITLE, steps: ['第一步', '第二步'] })),
    converge: syncTwice,
  },
  {
    name: 'rework from a review comment',
    concern: 'lifecycle',
    setup: async (h) => {
      const world = await settledWork(h);
      await h.engine.settle(S);
      const review = h.sim.listTasks(world.listId).find((t) => t.title.startsWith('🧑‍🔬'));
      if (!review) throw new Error('no review todo was filed');
      h.sim.addComment(world.listId, review.id, '第二节补充数据库迁移说明');
      return { ...world, taskId: review.id };
    },
    edits: ['rename', 'complete', 'delete', 'comment'],
    run: (h, world) => ignoreExpected(h.engine.sync(world.listId)),
    converge: syncTwice,
  },
];

/**
 * A tool call's step changes (the `todo` tool): recorded and answered with no request, then written by the background
 * writer (here its flush at once). Every request is the writer's, so an edit before the first one is an edit between
 * the tool result and the background write.
 */
async function inBackground(h: EngineHarness, changes: Parameters<EngineHarness['engine']['changeSteps']>[1]): Promise<void> {
  await ignoreExpected(h.engine.changeSteps(S, changes, undefined, { background: true }));
  await h.engine.flushComments();
}

/** The same operations as a tool call makes them: the person edits between the tool result and the background write. */
const BACKGROUND_OPS: MatrixOp[] = [
  {
    name: 'complete a step in progress, written in the background',
    concern: 'steps',
    setup: startedWork,
    run: (h) => inBackground(h, [{ op: 'update', step: A, status: 'completed', resolution: '代码写好了' }]),
    converge: syncTwice,
  },
  {
    name: 'complete a person’s step and add one, written in the background',
    concern: 'steps',
    setup: humanWork,
    run: (h) =>
      inBackground(h, [
        { op: 'update', step: P2, status: 'completed', resolution: '人写的这项做完了' },
        { op: 'add', title: '补文档', status: 'in_progress' },
      ]),
    converge: syncTwice,
  },
  {
    name: 'two calls, one background write',
    concern: 'steps',
    setup: humanWork,
    run: async (h) => {
      await ignoreExpected(h.engine.changeSteps(S, [{ op: 'update', step: A, status: 'completed', resolution: '代码写好了' }], undefined, { background: true }));
      await inBackground(h, [{ op: 'update', step: P1, status: 'skipped', resolution: '这次不需要' }]);
    },
    converge: syncTwice,
  },
  {
    name: 'rename and delete steps, written in the background',
    concern: 'steps',
    setup: async (h) => {
      const world = await humanWork(h);
      await h.engine.changeSteps(S, [{ op: 'add', title: '临时一步' }]);
      return world;
    },
    run: (h) => inBackground(h, [{ op: 'update', step: A, title: '写核心代码' }, { op: 'delete', step: '临时一步' }]),
    converge: syncTwice,
  },
  {
    name: 'complete the last open step in the background, then settle',
    concern: 'steps',
    setup: lastStepOpen,
    // No flush: the review's own write carries the tick (the session went idle within the progress window).
    run: async (h) => {
      await ignoreExpected(h.engine.changeSteps(S, [{ op: 'update', step: A, status: 'completed', resolution: '代码写好了' }], undefined, { background: true }));
      await ignoreExpected(h.engine.settle(S));
    },
    converge: async (h, world) => {
      await ignoreExpected(h.engine.settle(S));
      await syncTwice(h, world);
    },
  },
];
MATRIX_OPS.push(...BACKGROUND_OPS);

/** The task an operation that creates it made (found once it exists). */
export function createdTask(h: EngineHarness, world: World): string | undefined {
  return h.sim.listTasks(world.listId, { includeCompleted: true }).find((t) => t.title === NEW_TITLE)?.id;
}

export function editsOf(op: MatrixOp): readonly EditKind[] {
  return op.edits ?? EDITS;
}
