// The dsh adapter's remaining behaviours in a real dsh 0.1.0-rc.8 against the Dida simulator and a scripted model:
// (d) a user abort is never continued, (e) a turn cut by SIGKILL is resumed by the bundle itself when dsh starts again
// (or taken over by a headless run in the same directory), (f) a subagent is never bound or continued. Each test asserts the simulator's Dida state and the durable session log.
//
// How the person and the host are played:
// - the web profile's own HTTP API (harness/web-api.ts: session.create / session.prompt / session.cancel, what the
//   browser client calls; session.cancel is the stop button, agent.cancel({kind:'user'}, {keepInbox:true}));
// - a test-only plugin (fixtures/driver, inserted with --patch) where the API has no equivalent: a user cancel inside
//   a one-shot headless run. Crash recovery runs without it.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isOwnSource } from '../../src/runtime/session/messages';
import type { Simulator } from '../../src/sim/simulator';
import { contentFilter, stall, text, toolCall, type FakeModel, type RecordedRequest } from './harness/fake-model';
import { cancel, createSession, prompt, webCall } from './harness/web-api';
import { eventsOf, readSessionLogs, repoRoot, runHeadless, startWeb, type SessionLog } from './harness/dsh-run';
import { useDshWorld } from './harness/world';
import { readEngineStateFile } from '../helpers/engine-state-file';
import { prepareProfile } from './harness/profile';

const DRIVER = path.join(repoRoot, 'tests', 'e2e', 'fixtures', 'driver', 'index.mjs');
const CONTINUATION_NOTE = '[dida-todo] Automatic continuation';
const RECOVERY_NOTE = '[dida-todo] The previous turn was interrupted';

let model: FakeModel;
let sim: Simulator;
let home: string;
let project: string;
let listId: string;

useDshWorld((world) => ({ model, sim, home, project } = world), { install: false });

/** Binds the project to a fresh simulator list; writes the row overlay (and the driver row); returns the patches. */
function configure(row: string, options: { driver?: boolean; llmRetries?: number } = {}): string[] {
  const configDir = path.join(home, '.test-xdg', 'config', 'dida-todo');
  fs.mkdirSync(configDir, { recursive: true });
  listId = sim.seedProject({ name: '智能体工作' }).id;
  fs.writeFileSync(path.join(configDir, 'config.yaml'), `baseUrl: ${sim.baseUrl}\nbindings:\n  - cwd: ${project}\n    projectId: ${listId}\n    label: 智能体工作\n`);
  const overlay = path.join(home, 'dida-row.yml');
  fs.writeFileSync(overlay, `- id: dida-todo\n  config:\n${row.split('\n').map((l) => `    ${l}`).join('\n')}\n`);
  const patches = [overlay];
  if (options.llmRetries !== undefined) {
    const llm = path.join(home, 'llm-retry.yml');
    fs.writeFileSync(
      llm,
      `- id: llm-deepseek\n  config:\n    retryPolicy:\n      mode: normal\n      maxRetries: ${options.llmRetries}\n      backoff: { initialDelayMs: 20, maxDelayMs: 50, jitterRatio: 0 }\n`,
    );
    patches.push(llm);
  }
  if (options.driver) {
    const driver = path.join(home, 'driver.yml');
    fs.writeFileSync(driver, `- insert:\n    - id: dida-e2e-driver\n      name: ${JSON.stringify(DRIVER)}\n`);
    patches.push(driver);
  }
  return patches;
}

function stateFile(): string {
  return path.join(home, '.test-xdg', 'state', 'dida-todo', 'state.json');
}

function readState(): any {
  try {
    return readEngineStateFile(stateFile());
  } catch {
    return undefined;
  }
}

async function until<T>(what: string, probe: () => T | undefined | false, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const sessionIdOf = (r: RecordedRequest) => String(r.headers['x-deepseek-harness-session-id'] ?? '');
const behaviourKind = (r: RecordedRequest) => (typeof r.behaviour === 'object' ? r.behaviour.kind : r.behaviour);
const bodyText = (r: RecordedRequest) => JSON.stringify(r.body?.messages ?? []);
const env = (extra: Record<string, string> = {}) => ({ DIDA_TODO_TOKEN: sim.token, ...extra });

async function untilAsync<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function logFor(logs: SessionLog[], sessionId: string): SessionLog {
  const log = logs.find((l) => l.header.id === sessionId);
  if (!log) throw new Error(`no session log for ${sessionId} (have ${logs.map((l) => l.header.id).join(', ')})`);
  return log;
}

describe('(d) a user abort is never continued', () => {
  it('the web stop button during the plugin backoff after a content-filter stop ends the wait at once: no retry, no note, Work unchanged', async () => {
    await prepareProfile(home, 'web');
    const patches = configure('maxAutoContinue: 3\nbackoff: [30]');
    const work = sim.seedTask({ projectId: listId, title: '写周报', priority: 5, items: [{ title: '汇总进展' }, { title: '发出去' }] });
    model.setScript([
      toolCall('todo_work', { action: 'next' }),
      toolCall('todo', { action: 'update', updates: [{ step: '汇总进展', status: 'in_progress' }] }),
      contentFilter(),
    ]);
    const web = await startWeb({ home, cwd: project, baseUrl: model.baseUrl, patches, env: env() });
    let sessionId = '';
    try {
      sessionId = await createSession(web.url, project);
      await prompt(web.url, sessionId, '检查todo');
      await model.waitFor((rs) => rs.some((r) => r.kind === 'chat' && behaviourKind(r) === 'contentFilter'), 30_000);
      // The plugin records the attempt, then waits 30 s: that is when the person presses stop.
      await until('the plugin to start its backoff', () => readState()?.sessions?.[sessionId]?.autoAttempts === 1);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const stopped = Date.now();
      await cancel(web.url, sessionId);
      const log = await untilAsync('the aborted turn/end', async () => {
        const found = (await readSessionLogs(home)).find((l) => l.header.id === sessionId);
        return found && eventsOf(found, 'turn/end').length > 0 ? found : undefined;
      });
      console.log(`[adapter d1] stop → turn/end ${Date.now() - stopped} ms`);
      expect(eventsOf(log, 'turn/end').map((e) => e.data.reason)).toEqual([{ kind: 'aborted', reason: { kind: 'user' } }]);
      // dsh stays up: nothing continues the session on its own within a few seconds.
      const chatsAtStop = model.chatRequests().length;
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(model.chatRequests()).toHaveLength(chatsAtStop);
      expect(behaviourKind(model.chatRequests().at(-1)!)).toBe('contentFilter');

      // The person's next message gets an ordinary request, without any continuation note.
      model.setScript([text('AFTER_STOP')]);
      await prompt(web.url, sessionId, '好的，先停一下');
      await model.waitFor((rs) => rs.filter((r) => r.kind === 'chat').length > chatsAtStop, 20_000);
      await untilAsync('the second turn to end', async () => {
        const found = (await readSessionLogs(home)).find((l) => l.header.id === sessionId);
        return found && eventsOf(found, 'turn/end').length >= 2;
      });
    } finally {
      await web.stop('SIGTERM');
    }
    expect(web.stderr()).toContain('continuing automatically in 30 s');
    const chats = model.chatRequests();
    expect(chats.map(behaviourKind)).toEqual(['toolCalls', 'toolCalls', 'contentFilter', 'text']);
    for (const r of chats) expect(bodyText(r)).not.toContain(CONTINUATION_NOTE);
    expect(bodyText(chats.at(-1)!)).toContain('好的，先停一下');

    const log = logFor(await readSessionLogs(home), sessionId);
    expect(eventsOf(log, 'turn/end').map((e) => e.data.reason.kind)).toEqual(['aborted', 'completed']);
    // Our only messages in this session are the queue notes of the trigger phrase; no continuation or recovery note.
    const ours = eventsOf(log, 'user/message').filter((e) => isOwnSource(e.data?.source));
    expect(ours.map((e) => JSON.stringify(e.data.content))).toEqual([expect.stringContaining('asked to check the Dida queue')]);
    // rc.8 takes the bundle's own message kind (decision 0121).
    expect(ours.map((e) => e.data.source.kind)).toEqual(['dida-todo']);
    // The human message reset the counter the aborted wait had taken.
    expect(readState().sessions[sessionId].autoAttempts).toBe(0);

    // The Work is as the model left it: open, not waiting, no 🙋 reminder, no acceptance.
    const task = sim.getTask(work.id)!;
    expect(task.status).toBe(0);
    expect(task.priority).toBe(5);
    expect(task.items?.map((i) => i.status)).toEqual([0, 0]);
    const titles = sim.listTasks(listId).map((t) => t.title);
    expect(titles.some((t) => t.startsWith('🙋'))).toBe(false);
    expect(titles.some((t) => t.startsWith('🧑‍🔬'))).toBe(false);
  });

  it('cancelling a stalled model stream ends the turn aborted with no request-error continuation at all', async () => {
    await prepareProfile(home, 'headless');
    const patches = configure('maxAutoContinue: 3\nbackoff: [0.2]', { driver: true });
    const work = sim.seedTask({ projectId: listId, title: '修复登录', priority: 3, items: [{ title: '复现' }] });
    const cancelFile = path.join(home, 'cancel-now');
    model.setScript([toolCall('todo_work', { action: 'next' }), stall(), text('SHOULD_NOT_BE_ASKED')]);
    const running = runHeadless({ home, cwd: project, prompt: '检查todo', baseUrl: model.baseUrl, patches, env: env({ DIDA_E2E_CANCEL_FILE: cancelFile }), timeoutMs: 60_000 });
    await model.waitFor((rs) => rs.some((r) => r.kind === 'chat' && behaviourKind(r) === 'stall'), 30_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    fs.writeFileSync(cancelFile, 'now');
    const run = await running;
    expect(run.timedOut).toBe(false);
    expect(run.code).toBe(1);
    expect(run.stderr).not.toContain('continuing automatically');
    const sessionId = sessionIdOf(model.chatRequests()[0]!);
    expect(model.pending()).toEqual([text('SHOULD_NOT_BE_ASKED')]);
    for (const r of model.chatRequests()) expect(bodyText(r)).not.toContain(CONTINUATION_NOTE);
    const log = logFor(run.sessionLogs, sessionId);
    expect(eventsOf(log, 'turn/end').at(-1)?.data?.reason).toEqual({ kind: 'aborted', reason: { kind: 'user' } });
    expect(eventsOf(log, 'assistant/message').some((e) => e.data?.interrupted === true)).toBe(true);
    // Nothing counted, nothing left open: the next start must not treat this turn as a crash.
    const session = readState()?.sessions?.[sessionId];
    expect(session?.autoAttempts ?? 0).toBe(0);
    expect(session?.turnOpenSince).toBeUndefined();
    const task = sim.getTask(work.id)!;
    expect(task.status).toBe(0);
    expect(task.priority).toBe(3);
    expect(sim.listTasks(listId).some((t) => t.title.startsWith('🙋'))).toBe(false);
  });
});

/** A bound web session takes the Work, starts its first step, and dsh is SIGKILLed while the model stalls. */
async function crashMidTurn(patches: string[], title: string, steps: string[]): Promise<{ sessionId: string; taskId: string }> {
  const work = sim.seedTask({ projectId: listId, title, priority: 3, items: steps.map((t) => ({ title: t })) });
  model.setScript([toolCall('todo_work', { action: 'next' }), toolCall('todo', { action: 'update', updates: [{ step: steps[0], status: 'in_progress' }] }), stall()]);
  const first = await startWeb({ home, cwd: project, baseUrl: model.baseUrl, patches, env: env() });
  const sessionId = await createSession(first.url, project);
  await prompt(first.url, sessionId, '检查todo');
  await model.waitFor((rs) => rs.some((r) => r.kind === 'chat' && behaviourKind(r) === 'stall'), 30_000);
  await until('the open-turn marker', () => readState()?.sessions?.[sessionId]?.turnOpenSince);
  await new Promise((resolve) => setTimeout(resolve, 300));
  const killed = await first.stop('SIGKILL');
  expect(killed.signal).toBe('SIGKILL');
  const marker = readState().sessions[sessionId];
  expect(marker.turnOpenSince).toEqual(expect.any(Number));
  expect(marker.currentWork).toBeTruthy();
  expect(eventsOf(logFor(await readSessionLogs(home), sessionId), 'turn/end')).toEqual([]);
  return { sessionId, taskId: work.id };
}

describe('(e) SIGKILL mid-turn, then dsh starts again', () => {
  it('the bundle itself resumes the interrupted session (no driver plugin) and the Work gets done', async () => {
    await prepareProfile(home, 'web');
    const patches = configure('maxAutoContinue: 3\nbackoff: [0.2]');
    const { sessionId, taskId } = await crashMidTurn(patches, '整理发布说明', ['收集变更', '写草稿']);

    // dsh starts again on the same home (web profile, which stays up); nobody opens or writes in the session.
    const chatsBefore = model.chatRequests().length;
    model.setScript([
      toolCall('todo', {
        action: 'update',
        updates: [
          { step: '收集变更', status: 'completed', resolution: '整理出 12 条变更' },
          { step: '写草稿', status: 'completed', resolution: '草稿已写好' },
        ],
      }),
      text('RESUMED_DONE'),
    ]);
    const started = Date.now();
    const web = await startWeb({ home, cwd: project, baseUrl: model.baseUrl, patches, env: env() });
    try {
      await until('the Work to be completed in Dida', () => sim.getTask(taskId)?.status === 2, 30_000);
      await until('the acceptance todo', () => sim.listTasks(listId).some((t) => t.title === '🧑‍🔬 待验收：整理发布说明'), 30_000);
      await until('the turn marker to be cleared', () => readState()?.sessions?.[sessionId] && readState().sessions[sessionId].turnOpenSince === undefined, 30_000);
      console.log(`[adapter e] restart to Work done ${Date.now() - started} ms`);
    } catch (error) {
      const dump = (await readSessionLogs(home)).map((l) => `${l.header.id}\n${l.events.map((e) => `  ${e.seq} ${e.type} ${JSON.stringify(e.data).slice(0, 160)}`).join('\n')}`).join('\n');
      throw new Error(`${(error as Error).message}\n--- logs\n${dump}\n--- dsh web stderr\n${web.stderr().slice(-4000)}\n--- requests\n${model.requests.map((r) => `${r.kind} ${sessionIdOf(r)} ${behaviourKind(r)}`).join('\n')}`);
    } finally {
      const exit = await web.stop('SIGTERM');
      console.log(`[adapter e] web stopped (${exit.code ?? exit.signal})`);
    }
    expect(web.stderr()).toContain(`[dida-todo] resumed the interrupted turn of ${sessionId}`);
    expect(web.stderr()).not.toContain('[e2e-driver]');

    // The resumed requests belong to the same session, and the first one carries the recovery note.
    const resumed = model.chatRequests().slice(chatsBefore);
    expect(resumed.length).toBeGreaterThanOrEqual(2);
    for (const r of resumed) expect(sessionIdOf(r)).toBe(sessionId);
    expect(bodyText(resumed[0]!)).toContain(RECOVERY_NOTE);
    expect(model.pending()).toEqual([]);

    // Session log: the crash repair closes turn 1 as interrupted, then our follow-up opens the next turn.
    const log = logFor(await readSessionLogs(home), sessionId);
    const seqOf = (pred: (e: (typeof log.events)[number]) => boolean) => log.events.findIndex(pred);
    const interrupted = seqOf((e) => e.type === 'turn/end' && e.data?.reason?.kind === 'interrupted');
    const recovery = seqOf(
      (e) => e.type === 'user/message' && isOwnSource(e.data?.source) && JSON.stringify(e.data?.content).includes(RECOVERY_NOTE),
    );
    expect(interrupted).toBeGreaterThan(-1);
    // rc.8 restored a log holding the bundle's own kind (the queue note before the crash) and went on with it.
    expect(log.events.slice(0, interrupted).filter((e) => e.type === 'user/message' && e.data?.source?.kind === 'dida-todo')).toHaveLength(1);
    expect(recovery).toBeGreaterThan(interrupted);
    expect(log.events.slice(interrupted + 1, recovery).filter((e) => e.type === 'user/message' || e.type === 'turn/end')).toEqual([]);
    expect(eventsOf(log, 'turn/end').at(-1)?.data?.reason).toEqual({ kind: 'completed' });
    // Exactly one recovery follow-up, counted as one automatic attempt (then the completed turn ended the stretch).
    expect(log.events.filter((e) => e.type === 'user/message' && JSON.stringify(e.data?.content).includes(RECOVERY_NOTE))).toHaveLength(1);
    expect(readState().sessions[sessionId].autoAttempts).toBe(0);
    expect(readState().sessions[sessionId].lastAutoAt).toEqual(expect.any(Number));
    // The marker said where the session ran, so it was found before the session was live again.
    expect(readState().sessions[sessionId].cwd).toBe(project);

    const done = sim.getTask(taskId)!;
    expect(done.status).toBe(2);
    expect(done.items?.map((i) => i.status)).toEqual([1, 1]);
  });

  it('with maxAutoContinue 0 nothing is resumed, even when the session is opened again: no request, no note', async () => {
    await prepareProfile(home, 'web');
    const patches = configure('maxAutoContinue: 0\nbackoff: [0.2]');
    const { sessionId, taskId } = await crashMidTurn(patches, '整理发布说明', ['收集变更']);
    const chatsBefore = model.chatRequests().length;
    model.setScript([text('SHOULD_NOT_BE_ASKED')]);
    const web = await startWeb({ home, cwd: project, baseUrl: model.baseUrl, patches, env: env() });
    try {
      // The browser shows the session (loading its model picker makes the host resume it), nobody writes.
      await webCall(web.url, 'session.models', { sessionId });
      await new Promise((resolve) => setTimeout(resolve, 4_000));
    } finally {
      await web.stop('SIGTERM');
    }
    expect(model.chatRequests()).toHaveLength(chatsBefore);
    expect(model.pending()).toEqual([text('SHOULD_NOT_BE_ASKED')]);
    expect(web.stderr()).not.toContain('resumed the interrupted turn');
    expect(readState().sessions[sessionId].autoAttempts ?? 0).toBe(0);
    expect(sim.getTask(taskId)?.status).toBe(0);
  });

  it('a one-shot headless run in the same directory takes the interrupted Work over and finishes it', async () => {
    await prepareProfile(home, 'web');
    await prepareProfile(home, 'headless');
    const patches = configure('maxAutoContinue: 3\nbackoff: [0.2]');
    const { sessionId, taskId } = await crashMidTurn(patches, '整理发布说明', ['收集变更', '写草稿']);
    const chatsBefore = model.chatRequests().length;
    model.setScript([
      toolCall('todo', {
        action: 'update',
        updates: [
          { step: '收集变更', status: 'completed', resolution: '整理出 12 条变更' },
          { step: '写草稿', status: 'completed', resolution: '草稿已写好' },
        ],
      }),
      text('HEADLESS_DONE'),
    ]);
    const run = await runHeadless({ home, cwd: project, prompt: '继续刚才的工作', baseUrl: model.baseUrl, patches, env: env(), timeoutMs: 90_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`[dida-todo] took over the interrupted Work of ${sessionId}`);
    const asked = model.chatRequests().slice(chatsBefore);
    const headlessId = sessionIdOf(asked[0]!);
    expect(headlessId).not.toBe(sessionId);
    expect(bodyText(asked[0]!)).toContain('An interrupted session');
    expect(bodyText(asked[0]!)).toContain('整理发布说明');
    expect(sim.getTask(taskId)?.status).toBe(2);
    expect(sim.listTasks(listId).some((t) => t.title === '🧑‍🔬 待验收：整理发布说明')).toBe(true);
    // The interrupted session is not resumed later by anyone: its marker is gone.
    expect(readState().sessions[sessionId].turnOpenSince).toBeUndefined();
  });
});

describe('(e2) SIGKILL mid-turn, then the person writes in the crashed session', () => {
  it('the person\'s message wins over the bundle\'s own resume: their turn runs and no recovery follow-up is added', async () => {
    await prepareProfile(home, 'web');
    // A backoff long enough for the person to write first.
    const patches = configure('maxAutoContinue: 3\nbackoff: [6]');
    const { sessionId, taskId } = await crashMidTurn(patches, '整理发布说明', ['收集变更']);

    const chatsBefore = model.chatRequests().length;
    model.setScript([text('HUMAN_TURN_DONE'), text('SHOULD_NOT_BE_ASKED')]);
    const web = await startWeb({ home, cwd: project, baseUrl: model.baseUrl, patches, env: env() });
    try {
      // The web host resumes the cold session for this call, then queues the person's message.
      await prompt(web.url, sessionId, '我回来了，先别继续');
      await untilAsync('the person\'s turn to end', async () => {
        const found = (await readSessionLogs(home)).find((l) => l.header.id === sessionId);
        return found && eventsOf(found, 'turn/end').some((e) => e.data?.reason?.kind === 'completed');
      });
      // Past the backoff: the bundle's resume would have fired by now.
      await new Promise((resolve) => setTimeout(resolve, 7_000));
    } finally {
      await web.stop('SIGTERM');
    }
    const resumed = model.chatRequests().slice(chatsBefore);
    expect(resumed.map((r) => behaviourKind(r))).toEqual(['text']);
    expect(bodyText(resumed[0]!)).toContain('我回来了');
    expect(web.stderr()).not.toContain('resumed the interrupted turn');
    const log = logFor(await readSessionLogs(home), sessionId);
    expect(log.events.filter((e) => e.type === 'user/message' && JSON.stringify(e.data?.content).includes(RECOVERY_NOTE))).toEqual([]);
    expect(eventsOf(log, 'turn/end').map((e) => e.data.reason.kind)).toEqual(['interrupted', 'completed']);
    expect(sim.getTask(taskId)?.status).toBe(0);
  });
});

describe('(f) a subagent is never bound or continued', () => {
  it('the child stopped by the content filter is not retried, and makes no Dida request or state of its own', async () => {
    await prepareProfile(home, 'headless');
    const patches = configure('maxAutoContinue: 3\nbackoff: [0.2]', { llmRetries: 0 });
    const work = sim.seedTask({ projectId: listId, title: '审阅代码', priority: 5, items: [{ title: '读代码' }] });
    model.setScript([
      toolCall('todo_work', { action: 'next' }),
      toolCall('subagent', { description: 'read the code', prompt: 'Read src/ and summarise it.', run_in_background: false }),
      contentFilter('CHILD_PARTIAL '), // the child's only request
      toolCall('todo', { action: 'update', updates: [{ step: '读代码', status: 'completed', resolution: '子代理失败后自己读完了' }] }),
      text('PARENT_DONE'),
    ]);
    // Dida traffic while the child lives: from its first request until the parent's next request.
    let atChildStart = -1;
    let atParentNext = -1;
    const watch = (async () => {
      await model.waitFor((rs) => rs.some((r) => r.kind === 'chat' && behaviourKind(r) === 'contentFilter'), 45_000);
      atChildStart = sim.totalRequests();
      await model.waitFor((rs) => rs.filter((r) => r.kind === 'chat').length >= 4, 45_000);
      atParentNext = sim.totalRequests();
    })();
    const run = await runHeadless({ home, cwd: project, prompt: '检查todo', baseUrl: model.baseUrl, patches, env: env(), timeoutMs: 90_000 });
    await watch;
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('PARENT_DONE');
    expect(model.pending()).toEqual([]);

    const chats = model.chatRequests();
    expect(model.toolNames(chats[0]!)).toContain('subagent');
    const parentId = sessionIdOf(chats[0]!);
    const childRequests = chats.filter((r) => sessionIdOf(r) !== parentId);
    // Exactly one child request (the content-filter stop), never retried, never given our continuation note.
    expect(childRequests).toHaveLength(1);
    expect(behaviourKind(childRequests[0]!)).toBe('contentFilter');
    const childId = sessionIdOf(childRequests[0]!);
    for (const r of chats) expect(bodyText(r)).not.toContain(CONTINUATION_NOTE);
    expect(chats).toHaveLength(5);
    // The child is shown none of the Dida tools; the parent all three.
    expect(model.toolNames(childRequests[0]!).filter((n) => ['todo', 'todo_work', 'dida_todo_setup'].includes(n))).toEqual([]);
    expect(model.toolNames(chats[0]!)).toEqual(expect.arrayContaining(['todo', 'todo_work', 'dida_todo_setup']));
    // The child's prompt has no dida-todo section; the parent's does.
    expect(JSON.stringify(childRequests[0]!.body?.messages?.[0] ?? '')).not.toContain('Dida work list (dida-todo)');
    expect(JSON.stringify(chats[0]!.body?.messages?.[0] ?? '')).toContain('Dida work list (dida-todo)');

    // The child's log: a subagent header, one error turn, no plugin messages, no panel writes.
    const child = logFor(run.sessionLogs, childId);
    expect(child.header.delegationDepth).toBe(1);
    expect(child.header.parentSession).toBe(parentId);
    expect(eventsOf(child, 'turn/end').map((e) => e.data?.reason?.kind)).toEqual(['error']);
    expect(eventsOf(child, 'turn/end')[0]!.data.reason.error.code).toBe('CONTENT_FILTER');
    expect(eventsOf(child, 'user/message').filter((e) => isOwnSource(e.data?.source))).toEqual([]);
    expect(eventsOf(child, 'todo/write')).toEqual([]);
    expect(eventsOf(child, 'llm/retry')).toEqual([]);

    // Dida: nothing while the child ran; state knows only the parent.
    expect(atChildStart).toBeGreaterThan(0);
    expect(atParentNext).toBe(atChildStart);
    const state = readState();
    expect(Object.keys(state.sessions)).toEqual([parentId]);
    expect(JSON.stringify(state)).not.toContain(childId);
    expect(sim.getTask(work.id)?.status).toBe(2);
  });
});
