// The CLI gateway through the fake `dida` against the simulator: API error codes, retries, verbatim argv, whole updates.
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createCliGateway, type CliGatewayOptions } from '../../src/dida/cli-gateway';
import { DidaError } from '../../src/dida/dida-error';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { installFakeDida, type FakeDidaInstall } from '../helpers/fake-dida-install';

let sim: Simulator;
let fake: FakeDidaInstall;
let scratch: string;
let argvLog: string;

beforeAll(async () => {
  sim = await startSimulator();
  fake = await installFakeDida({ baseUrl: sim.baseUrl, token: sim.token });
  scratch = await mkdtemp(join(tmpdir(), 'cli-gateway-api-'));
});
afterAll(async () => {
  await fake?.cleanup();
  await sim?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

let run = 0;
beforeEach(() => {
  argvLog = join(scratch, `argv-${++run}.log`);
});

function gateway(options: CliGatewayOptions = {}) {
  return createCliGateway({ command: fake.command, env: { ...fake.env, FAKE_DIDA_ARGV_LOG: argvLog }, readRetries: 0, ...options });
}

function loggedArgv(): string[][] {
  if (!existsSync(argvLog)) return [];
  return readFileSync(argvLog, 'utf8')
    .trim()
    .split('\n')
    .map((line) => (JSON.parse(line) as { argv: string[] }).argv);
}

async function didaFailure(promise: Promise<unknown>, code: DidaError['code']): Promise<DidaError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DidaError);
  expect((error as DidaError).code).toBe(code);
  return error as DidaError;
}

describe('CLI gateway API errors', () => {
  it.each([
    [404, 'not_found'],
    [403, 'forbidden'],
    [500, 'server'],
    [401, 'auth'],
    [429, 'rate_limited'],
  ] as const)('maps DIDA API 错误 %i to %s with the status and a body excerpt', async (status, code) => {
    const project = sim.seedProject({ name: `err ${status}` });
    const task = sim.seedTask({ projectId: project.id, title: 't' });
    sim.injectFault({ route: 'GET /project/{pid}/task/{tid}', kind: 'status', status, times: 1 });
    const error = await didaFailure(gateway().getTask(project.id, task.id), code);
    expect(error.status).toBe(status);
    expect(error.route).toBe('GET /project/{pid}/task/{tid}');
    expect(error.message).toContain(`${status}`);
    expect(error.message).not.toContain(sim.token);
    expect(error.bodyExcerpt === undefined || error.bodyExcerpt.length <= 301).toBe(true);
  });

  it('reports an unknown task as not_found from the real 404', async () => {
    const project = sim.seedProject({ name: 'nf' });
    const error = await didaFailure(gateway().getTask(project.id, '0123456789abcdef01234567'), 'not_found');
    expect(error.status).toBe(404);
  });

  it('retries a read once after a server error, but never a write', async () => {
    const project = sim.seedProject({ name: 'retry' });
    sim.injectFault({ route: 'GET /project/{pid}/data', kind: 'status', status: 500, times: 1 });
    const data = await gateway({ readRetries: 1, retryDelayMs: 10 }).getProjectData(project.id);
    expect(data.project?.id).toBe(project.id);
    expect(loggedArgv()).toHaveLength(2);

    argvLog = join(scratch, 'write-retry.log');
    sim.injectFault({ route: 'POST /task', kind: 'status', status: 500, times: 1 });
    await didaFailure(gateway({ readRetries: 1, retryDelayMs: 10 }).createTask({ projectId: project.id, title: 'once' }), 'server');
    expect(loggedArgv()).toHaveLength(1);
    expect(sim.listTasks(project.id).map((t) => t.title)).not.toContain('once');
  });

  it('never retries a 500 that names a missing task or a bad id: it is not_found', async () => {
    const project = sim.seedProject({ name: 'named 500' });
    const task = sim.seedTask({ projectId: project.id, title: 'soon gone' });
    sim.setQuirks({ deletedTaskRead: '500' });
    try {
      const cli = gateway({ readRetries: 1, retryDelayMs: 10 });
      await cli.deleteTask(project.id, task.id);
      const error = await didaFailure(cli.getTask(project.id, task.id), 'not_found');
      expect(error).toMatchObject({ status: 500, notFoundSignal: 'error_body' });
      await didaFailure(cli.getTask(project.id, 'not-an-id'), 'not_found');
      expect(loggedArgv().map((argv) => argv.slice(0, 2).join(' '))).toEqual(['task delete', 'task get', 'task get']);
    } finally {
      sim.setQuirks({ deletedTaskRead: '404' });
    }
  });

  it('recovers the created task when Dida answers a create with an empty body', async () => {
    const project = sim.seedProject({ name: 'empty' });
    sim.injectFault({ route: 'POST /task', kind: 'empty', times: 1 });
    const task = await gateway().createTask({ projectId: project.id, title: '空回答' });
    expect(task.title).toBe('空回答');
    expect(task.projectId).toBe(project.id);
  });
});

describe('CLI gateway arguments', () => {
  it('passes shell metacharacters, quotes, newlines and Chinese to Dida verbatim (no shell)', async () => {
    const marker = join(scratch, 'pwned');
    const project = sim.seedProject({ name: 'argv' });
    const title = `$(touch ${marker}) \`touch ${marker}\`; touch ${marker} && echo "双引号" 'single' \\ | > < * ~ $HOME %PATH%`;
    const content = '第一行\n第二行\r\n\t"引号" \'单引号\' $((1+1)) !!';
    const task = await gateway().createTask({ projectId: project.id, title, content, desc: '--json', tags: ['中文'] });
    expect(existsSync(marker)).toBe(false);
    const stored = sim.getTask(task.id);
    expect(stored?.title).toBe(title);
    expect(stored?.content).toBe(content);
    expect(stored?.desc).toBe('--json');
    expect(stored?.tags).toEqual(['中文']);
    const comment = await gateway().addComment(project.id, task.id, `-n $(touch ${marker})\n"完成"`);
    expect(comment.title).toBe(`-n $(touch ${marker})\n"完成"`);
    expect(existsSync(marker)).toBe(false);
    const [createArgv] = loggedArgv();
    expect(createArgv?.slice(0, 6)).toEqual(['task', 'create', '--title', title, '--project', project.id]);
  });

  it('sends checklist items as JSON so commas and ids survive', async () => {
    const project = sim.seedProject({ name: 'items' });
    const task = await gateway().createTask({ projectId: project.id, title: 'c', items: [{ title: 'a, b' }, { title: 'c' }] });
    expect(task.items?.map((i) => i.title)).toEqual(['a, b', 'c']);
  });

  it('update sends everything needed to keep the task: task update <tid> --id <tid> --project <pid> …', async () => {
    const project = sim.seedProject({ name: 'update' });
    const seeded = sim.seedTask({ projectId: project.id, title: 'Keep', items: [{ title: 'a' }] });
    const gw = gateway();
    const created = await gw.createTask({
      projectId: project.id,
      title: 'Whole',
      content: '正文',
      desc: '备注',
      priority: 5,
      startDate: '2026-12-01T09:00:00+0000',
      dueDate: '2026-12-01T10:00:00+0000',
      timeZone: 'Asia/Shanghai',
      reminders: ['TRIGGER:-PT15M'],
      repeatFlag: 'RRULE:FREQ=DAILY;INTERVAL=1',
      tags: ['work', 'x'],
      isAllDay: false,
      items: [{ title: 'one' }],
    });
    const updated = await gw.updateTask({ ...created, title: 'Whole 2', items: [...(created.items ?? []), { title: 'two' }] });
    const argv = loggedArgv().at(-1);
    expect(argv?.slice(0, 7)).toEqual(['task', 'update', created.id, '--id', created.id, '--project', project.id]);
    for (const flag of ['--title', '--content', '--desc', '--items', '--priority', '--start-date', '--due-date', '--time-zone', '--reminders', '--repeat', '--tags', '--json']) {
      expect(argv).toContain(flag);
    }
    expect(updated.title).toBe('Whole 2');
    expect(updated.items?.map((i) => i.title)).toEqual(['one', 'two']);
    const stored = sim.getTask(created.id);
    expect(stored).toMatchObject({
      content: '正文',
      desc: '备注',
      priority: 5,
      dueDate: '2026-12-01T10:00:00+0000',
      timeZone: 'Asia/Shanghai',
      reminders: ['TRIGGER:-PT15M'],
      repeatFlag: 'RRULE:FREQ=DAILY;INTERVAL=1',
      tags: ['work', 'x'],
    });
    expect(sim.getTask(seeded.id)?.title).toBe('Keep');
  });

  it('completes and deletes with the text commands', async () => {
    const project = sim.seedProject({ name: 'text' });
    const task = sim.seedTask({ projectId: project.id, title: 'done' });
    const gw = gateway();
    await gw.completeTask(project.id, task.id);
    expect(sim.getTask(task.id)?.status).toBe(2);
    await gw.deleteTask(project.id, task.id);
    await didaFailure(gw.getTask(project.id, task.id), 'not_found');
    const argv = loggedArgv();
    expect(argv[0]).toEqual(['task', 'complete', project.id, task.id]);
    expect(argv[1]).toEqual(['task', 'delete', project.id, task.id]);
  });

  it('rejects ids that the CLI would read as options before running it', async () => {
    await didaFailure(gateway().getTask('--json', 'x'), 'not_found');
    await didaFailure(gateway().getProjectData(''), 'not_found');
    expect(loggedArgv()).toEqual([]);
  });
});
