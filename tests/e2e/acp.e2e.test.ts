// The bundle in dsh's acp profile (Agent Client Protocol over stdio), assembled from the registry the same way as the
// sdk profile (harness/sdk-client.ts), driven by a JSON-RPC client written in the tests against the Dida simulator and a
// scripted model: (1) a 2-step Work to its review todo; (2) SIGKILL mid-turn, and the next acp process finishes the Work
// through the bundle's crash recovery — without the client hearing of it (the bridge forwards only the sessions it
// opened); (3) a pause from the phone cancelling the turn (which ACP reports as end_turn). Every stdout line is a JSON-RPC 2.0 frame.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/sim/simulator';
import { stall, text, toolCall, type FakeModel, type RecordedRequest } from './harness/fake-model';
import { eventsOf, readSessionLogs } from './harness/dsh-run';
import { startSdk, type SdkProcess } from './harness/sdk-client';
import { PAST_A_PAUSE_LOOK_MS, useDshWorld } from './harness/world';
import { readEngineStateFile } from '../helpers/engine-state-file';
import { prepareProfile } from './harness/profile';

let model: FakeModel;
let sim: Simulator;
let home: string;
let project: string;
let listId: string;

useDshWorld((world) => ({ model, sim, home, project } = world), { install: false });

let started: SdkProcess[] = [];
afterEach(async () => {
  for (const p of started) await p.kill('SIGKILL');
  started = [];
});

function configure(row: string): string[] {
  const configDir = path.join(home, '.test-xdg', 'config', 'dida-todo');
  fs.mkdirSync(configDir, { recursive: true });
  listId = sim.seedProject({ name: 'ACP 工作' }).id;
  fs.writeFileSync(path.join(configDir, 'config.yaml'), `baseUrl: ${sim.baseUrl}\nbindings:\n  - cwd: ${project}\n    projectId: ${listId}\n    label: ACP 工作\n`);
  const overlay = path.join(home, 'dida-row.yml');
  fs.writeFileSync(overlay, `- id: dida-todo\n  config:\n${row.split('\n').map((l) => `    ${l}`).join('\n')}\n`);
  const llm = path.join(home, 'llm-retry.yml');
  fs.writeFileSync(llm, '- id: llm-deepseek\n  config:\n    retryPolicy:\n      mode: normal\n      maxRetries: 0\n      backoff: { initialDelayMs: 20, maxDelayMs: 50, jitterRatio: 0 }\n');
  return [overlay, llm];
}

async function acp(patches: string[]): Promise<SdkProcess> {
  const p = await startSdk({ profile: 'acp', home, cwd: project, baseUrl: model.baseUrl, patches, env: { DIDA_TODO_TOKEN: sim.token, LOG_TOKENS: '1' } });
  started.push(p);
  return p;
}

const initialize = (p: SdkProcess) => p.request('initialize', { protocolVersion: 1, clientCapabilities: {} }, 60_000);
const newSession = async (p: SdkProcess): Promise<string> => (await p.request('session/new', { cwd: project, mcpServers: [] })).sessionId;
const prompt = (p: SdkProcess, sessionId: string, words: string) => p.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: words }] }, 60_000);
const state = () => readEngineStateFile(path.join(home, '.test-xdg', 'state', 'dida-todo', 'state.json'));
const behaviourKind = (r: RecordedRequest) => (typeof r.behaviour === 'object' ? r.behaviour.kind : r.behaviour);

function expectOnlyFrames(p: SdkProcess): void {
  expect(p.badLines()).toEqual([]);
  expect(p.lines.length).toBeGreaterThan(0);
  expect(p.frames).toHaveLength(p.lines.length);
}

describe('dida-todo in the acp profile', () => {
  it('(1) an ACP session takes a 2-step Work to its review todo; stdin EOF leaves the process up, SIGTERM ends it', async () => {
    await prepareProfile(home, 'acp');
    const patches = configure('maxAutoContinue: 2\nbackoff: [0.2]');
    const work = sim.seedTask({ projectId: listId, title: '整理发布说明', priority: 3, items: [{ title: '收集变更' }, { title: '写草稿' }] });
    model.setScript([
      toolCall('todo_work', { action: 'next' }),
      toolCall('todo', {
        action: 'update',
        updates: [
          { step: '收集变更', status: 'completed', resolution: '整理出 12 条变更' },
          { step: '写草稿', status: 'completed', resolution: '草稿已写好' },
        ],
      }),
      text('全部完成'),
    ]);
    const p = await acp(patches);
    const info = await initialize(p);
    expect(info.agentInfo.name).toBe('deepseek-harness-acp');
    const sessionId = await newSession(p);
    const answer = await prompt(p, sessionId, '检查todo');
    expect(answer).toEqual({ stopReason: 'end_turn' });
    await p.until('the Work to be completed in Dida', () => sim.getTask(work.id)?.status === 2);
    await p.until('the review todo', () => sim.listTasks(listId).find((t) => t.title === '🧑‍🔬 待验收：整理发布说明'));
    expect(p.updates(sessionId)).toContainEqual({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: '全部完成' } });
    expect(sim.getTask(work.id)?.items?.map((i) => i.status)).toEqual([1, 1]);
    // The session is the server's: the bundle's state knows it under the id ACP handed out.
    expect(state().sessions[sessionId]?.currentWork).toBe(work.id);

    // The startup row that ended the process at stdin EOF cannot load on rc.8: the process stays until a signal.
    const exit = await Promise.race([p.exited, closeStdinAndWait(p, 1_500)]);
    expect(exit).toBe('still running');
    expect(await p.kill('SIGTERM')).toEqual({ code: 0, signal: null });
    expectOnlyFrames(p);
  });

  it('(2) SIGKILL mid-turn: the next acp process finishes the Work by crash recovery, and its client is not told', async () => {
    await prepareProfile(home, 'acp');
    const patches = configure('maxAutoContinue: 3\nbackoff: [0.2]');
    const work = sim.seedTask({ projectId: listId, title: '写周报', priority: 5, items: [{ title: '汇总进展' }] });
    model.setScript([toolCall('todo_work', { action: 'next' }), toolCall('todo', { action: 'update', updates: [{ step: '汇总进展', status: 'in_progress' }] }), stall()]);
    const first = await acp(patches);
    await initialize(first);
    const sessionId = await newSession(first);
    void prompt(first, sessionId, '检查todo').catch(() => undefined);
    await model.waitFor((rs) => rs.some((r) => r.kind === 'chat' && behaviourKind(r) === 'stall'), 30_000);
    await first.until('the open-turn marker', () => state()?.sessions?.[sessionId]?.turnOpenSince);
    expect((await first.kill('SIGKILL')).signal).toBe('SIGKILL');
    expectOnlyFrames(first);

    model.setScript([toolCall('todo', { action: 'update', updates: [{ step: '汇总进展', status: 'completed', resolution: '周报已写好' }] }), text('恢复后完成')]);
    const second = await acp(patches);
    await initialize(second);
    await second.until('the Work to be completed in Dida', () => sim.getTask(work.id)?.status === 2, 40_000);
    await second.until('the review todo', () => sim.listTasks(listId).find((t) => t.title === '🧑‍🔬 待验收：写周报'));
    await second.until('the marker to be cleared', () => state().sessions[sessionId].turnOpenSince === undefined);
    expect(second.stderr()).toContain(`[dida-todo] resumed the interrupted turn of ${sessionId}`);
    const log = await second.until('the resumed turn/end on disk', async () => {
      const found = (await readSessionLogs(home)).find((l) => l.header.id === sessionId);
      return found && eventsOf(found, 'turn/end').length >= 2 ? found : undefined;
    });
    expect(eventsOf(log, 'turn/end').map((e) => e.data.reason.kind)).toEqual(['interrupted', 'completed']);
    // The ACP bridge forwards only the sessions it opened itself: nothing about the resumed one reached the client.
    expect(second.sessionIds()).toEqual([]);
    expect(await second.kill('SIGTERM')).toEqual({ code: 0, signal: null });
    expectOnlyFrames(second);
  });

  it('(3) the person sets the Work\'s priority to none on the phone: the turn is cancelled, the Work waits — and ACP calls it end_turn', async () => {
    await prepareProfile(home, 'acp');
    const patches = configure('maxAutoContinue: 3\nbackoff: [0.1]');
    const work = sim.seedTask({ projectId: listId, title: '写周报', priority: 5, items: [{ title: '汇总进展' }, { title: '发出去' }] });
    model.setScript([
      toolCall('todo_work', { action: 'next' }),
      toolCall('todo', { action: 'update', updates: [{ step: '汇总进展', status: 'in_progress' }] }),
      toolCall('todo', { action: 'update', updates: [{ step: '汇总进展', status: 'completed', resolution: '进展已汇总' }] }, { delayMs: PAST_A_PAUSE_LOOK_MS }),
      text('SHOULD_NOT_RUN'),
    ]);
    const p = await acp(patches);
    await initialize(p);
    const sessionId = await newSession(p);
    const answer = prompt(p, sessionId, '检查todo');
    await model.waitFor((rs) => rs.filter((r) => r.kind === 'chat').length >= 3, 30_000);
    sim.editTask(work.id, { priority: 0 });
    // dsh-acp 0.0.1-rc.1 maps every aborted turn to end_turn: the client cannot tell the pause from the answer.
    expect(await answer).toEqual({ stopReason: 'end_turn' });
    expect(model.chatRequests()).toHaveLength(3);
    const log = await p.until('the turn/end on disk', async () => {
      const found = (await readSessionLogs(home)).find((l) => l.header.id === sessionId);
      return found && eventsOf(found, 'turn/end').length > 0 ? found : undefined;
    });
    expect(eventsOf(log, 'turn/end').map((e) => e.data.reason)).toEqual([{ kind: 'aborted', reason: { kind: 'hook', reason: expect.stringContaining('paused') } }]);
    await p.until('the pause comment', () => sim.listComments(work.id).some((c) => c.title.includes('已暂停：已完成 1/2 步，下一步是「发出去」。')));
    expect(sim.getTask(work.id)?.priority).toBe(0);
    expect(sim.getTask(work.id)?.items?.map((i) => i.status)).toEqual([1, 0]);
    expect(await p.kill('SIGTERM')).toEqual({ code: 0, signal: null });
    expectOnlyFrames(p);
  });
});

/** Closes the process's stdin and resolves 'still running' when it has not exited within `ms`. */
async function closeStdinAndWait(p: SdkProcess, ms: number): Promise<'still running'> {
  p.closeStdin();
  await new Promise((resolve) => setTimeout(resolve, ms));
  return 'still running';
}
