// On the real dsh 0.1.0-rc.8: every surface the bundle uses is there and the bundle's own message kind is taken. A
// headless run and a dsh web session in a bound directory (a model failure continued in web) leave a seam report that
// lists nothing missing for rc.8, say nothing about surfaces on stderr, and `dida-todo doctor` prints rc.8 as the
// tested version with what the report says.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { SEAM_REPORT_FILE } from '../../src/dsh/host-seams';
import { isOwnSource } from '../../src/runtime/session/messages';
import { GRANT_HEAD } from '../../src/runtime/turns/queue-grant';
import type { Simulator } from '../../src/sim/simulator';
import { contentFilter, text, toolCall, type FakeModel } from './harness/fake-model';
import { createSession, prompt } from './harness/web-api';
import { cliEnv, ensureDsh, eventsOf, readSessionLogs, repoRoot, runHeadless, startWeb } from './harness/dsh-run';
import { useDshWorld } from './harness/world';
import { prepareProfile } from './harness/profile';

let model: FakeModel;
let sim: Simulator;
let home: string;
let project: string;

useDshWorld((world) => ({ model, sim, home, project } = world), { install: 'headless' });

const stateDir = () => path.join(home, '.test-xdg', 'state', 'dida-todo');
const report = () => JSON.parse(fs.readFileSync(path.join(stateDir(), SEAM_REPORT_FILE), 'utf8'));

/** Binds the project to a fresh list with one executable Work; returns the list id and the Work's task id. */
function bind(): { listId: string; taskId: string } {
  const configDir = path.join(home, '.test-xdg', 'config', 'dida-todo');
  fs.mkdirSync(configDir, { recursive: true });
  const listId = sim.seedProject({ name: '智能体工作' }).id;
  fs.writeFileSync(path.join(configDir, 'config.yaml'), `baseUrl: ${sim.baseUrl}\nbindings:\n  - cwd: ${project}\n    projectId: ${listId}\n`);
  const task = sim.seedTask({ projectId: listId, title: '整理发布说明', priority: 3, items: [{ title: '收集变更' }, { title: '写草稿' }] });
  return { listId, taskId: task.id };
}

async function until<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('the surfaces of dsh 0.1.0-rc.8', () => {
  it('headless: nothing missing, the queue note under the bundle’s own kind, no word about surfaces on stderr', async () => {
    const { taskId } = bind();
    model.setScript([toolCall('todo_work', { action: 'next' }), text('TOOK_IT')]);
    const run = await runHeadless({ home, cwd: project, prompt: '检查todo', baseUrl: model.baseUrl, env: { DIDA_TODO_TOKEN: sim.token }, timeoutMs: 90_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toContain('lacks');
    // The world: the Work was taken in Dida, and the session log holds the bundle's queue note under its own kind.
    expect(sim.listComments(taskId).some((c) => c.title.includes('开始处理'))).toBe(true);
    const ours = run.sessionLogs.flatMap((log) => eventsOf(log, 'user/message')).filter((e) => isOwnSource(e.data?.source));
    expect(ours.map((e) => e.data.source.kind)).toEqual(['dida-todo']);
    expect(JSON.stringify(ours[0]!.data.content)).toContain(GRANT_HEAD);
    expect(report().dsh['0.1.0-rc.8']).toMatchObject({ missing: [], sourceKind: 'dida-todo' });
  });

  it('web: a content-filter failure continued through agent/request-error, nothing missing, and doctor prints rc.8 as tested', async () => {
    bind();
    await prepareProfile(home, 'web');
    const overlay = path.join(home, 'dida-row.yml');
    fs.writeFileSync(overlay, '- id: dida-todo\n  config:\n    maxAutoContinue: 2\n    backoff: [0.2]\n');
    model.setScript([toolCall('todo_work', { action: 'next' }), contentFilter(), text('AFTER_THE_FILTER')]);
    const web = await startWeb({ home, cwd: project, baseUrl: model.baseUrl, patches: [overlay], env: { DIDA_TODO_TOKEN: sim.token } });
    let sessionId = '';
    try {
      sessionId = await createSession(web.url, project);
      await prompt(web.url, sessionId, '检查todo');
      await until('the continued answer', () => model.chatRequests().length >= 3, 60_000);
      await until('the idle turn', async () => (await readSessionLogs(home)).some((l) => l.header.id === sessionId && eventsOf(l, 'turn/end').some((e) => e.data?.reason?.kind === 'completed')));
    } finally {
      await web.stop('SIGTERM');
    }
    expect(web.stderr()).toContain('continuing automatically');
    expect(web.stderr()).not.toContain('lacks');
    const log = (await readSessionLogs(home)).find((l) => l.header.id === sessionId)!;
    const notes = eventsOf(log, 'user/message').filter((e) => isOwnSource(e.data?.source));
    // The queue note and the continuation's note, both under the bundle's own kind.
    expect(notes.map((e) => e.data.source.kind)).toEqual(['dida-todo', 'dida-todo']);
    expect(JSON.stringify(notes[1]!.data.content)).toContain('Automatic continuation 1/2');
    expect(report().dsh['0.1.0-rc.8']).toMatchObject({ missing: [], sourceKind: 'dida-todo' });

    const install = await ensureDsh();
    const env = cliEnv(install, home);
    const run = await promisify(execFile)(process.execPath, [path.join(repoRoot, 'dsh-plugin', 'cli.mjs'), 'doctor', '--json', '--profile', 'headless'], { env, cwd: project, timeout: 90_000 }).catch((e: { stdout: string }) => e);
    const checks = Object.fromEntries((JSON.parse(run.stdout) as { checks: Array<{ id: string; status: string; detail: string }> }).checks.map((c) => [c.id, c]));
    expect(checks.dsh).toMatchObject({ status: 'ok', detail: expect.stringContaining('0.1.0-rc.8') });
    expect(checks['dsh-seams']).toMatchObject({ status: 'ok', detail: expect.stringContaining('offered every surface') });
  });
});
