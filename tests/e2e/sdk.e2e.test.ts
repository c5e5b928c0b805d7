// The bundle in dsh's sdk profile (a long-lived stdio JSON-RPC process), assembled from the registry in a test
// DSH_HOME (harness/sdk-client.ts) and driven by a JSON-RPC client written in the tests, against the Dida simulator and
// a scripted model: (1) a 2-step Work to its review todo; (2) a model error (429 ×6, then success) continued inside the
// running process; (3) SIGKILL mid-turn, a new process sent `initialize` only, and the Work finished by the bundle's
// crash recovery under the old session id; (4) a pause from the phone cancelling the turn. Each asserts the
// simulator's Dida state and that every stdout line of every process was a JSON-RPC 2.0 frame.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/sim/simulator';
import { rateLimit, stall, text, toolCall, type FakeModel, type RecordedRequest } from './harness/fake-model';
import { eventsOf, readSessionLogs, type SessionEvent } from './harness/dsh-run';
import { installSdkProfile, startSdk, type SdkProcess } from './harness/sdk-client';
import { useDshWorld } from './harness/world';
import { readEngineStateFile } from '../helpers/engine-state-file';

let model: FakeModel;
let sim: Simulator;
let home: string;
let project: string;
let listId: string;

useDshWorld((world) => ({ model, sim, home, project } = world), { install: false });

/** Every process a test started: after it, each stdout line of each must have been a JSON-RPC frame. */
let started: SdkProcess[] = [];
afterEach(async () => {
  for (const p of started) await p.kill('SIGKILL');
  started = [];
});

/** Binds the project to a fresh list and writes the row overlay (plus dsh's own retries, when given). */
function configure(row: string, options: { llmRetries?: number } = {}): string[] {
  const configDir = path.join(home, '.test-xdg', 'config', 'dida-todo');
  fs.mkdirSync(configDir, { recursive: true });
  listId = sim.seedProject({ name: 'SDK 工作' }).id;
  fs.writeFileSync(path.join(configDir, 'config.yaml'), `baseUrl: ${sim.baseUrl}\nbindings:\n  - cwd: ${project}\n    projectId: ${listId}\n    label: SDK 工作\n`);
  const overlay = path.join(home, 'dida-row.yml');
  fs.writeFileSync(overlay, `- id: dida-todo\n  config:\n${row.split('\n').map((l) => `    ${l}`).join('\n')}\n`);
  const patches = [overlay];
  if (options.llmRetries !== undefined) {
    const llm = path.join(home, 'llm-retry.yml');
    fs.writeFileSync(
      llm,
      `- id: llm-deepseek\n  config:\n    retryPolicy:\n      mode: normal\n      maxRetries: ${options.llmRetries}\n      backoff: { initialDelayMs: 20, maxDelayMs: 1500, jitterRatio: 0 }\n`,
    );
    patches.push(llm);
  }
  return patches;
}

async function sdk(patches: string[]): Promise<SdkProcess> {
  const p = await startSdk({ home, cwd: project, baseUrl: model.baseUrl, patches, env: { DIDA_TODO_TOKEN: sim.token } });
  started.push(p);
  return p;
}

const state = () => readEngineStateFile(path.join(home, '.test-xdg', 'state', 'dida-todo', 'state.json'));
const behaviourKind = (r: RecordedRequest) => (typeof r.behaviour === 'object' ? r.behaviour.kind : r.behaviour);
const turnEnds = (events: SessionEvent[]) => events.filter((e) => e.type === 'turn/end').map((e) => e.data.reason);

/** Every stdout line of the process was a JSON-RPC 2.0 frame, and there were some. */
function expectOnlyFrames(p: SdkProcess): void {
  expect(p.badLines()).toEqual([]);
  expect(p.lines.length).toBeGreaterThan(0);
  expect(p.frames).toHaveLength(p.lines.length);
}

describe('dida-todo in the sdk profile', () => {
  it('(1) a JSON-RPC session takes a 2-step Work to its review todo; every stdout line is a frame', async () => {
    await installSdkProfile(home);
    const patches = configure('maxAutoContinue: 2\nbackoff: [0.2]');
    const work = sim.seedTask({ projectId: listId, title: '整理发布说明', priority: 3, items: [{ title: '收集变更' }, { title: '写草稿' }] });
    model.setScript([
      toolCall('todo_work', { action: 'next' }),
      toolCall('todo', { action: 'update', updates: [{ step: '收集变更', status: 'in_progress' }] }),
      toolCall('todo', {
        action: 'update',
        updates: [
          { step: '收集变更', status: 'completed', resolution: '整理出 12 条变更' },
          { step: '写草稿', status: 'completed', resolution: '草稿已写好' },
        ],
      }),
      text('全部完成'),
    ]);
    const p = await sdk(patches);
    const info = await p.initialize(project);
    expect(info.serverInfo.name).toBe('deepseek-harness-sdk-runtime');
    const sessionId = 'sdk-work-1';
    const answer = await p.prompt(sessionId, '检查todo');
    expect(answer.messageId).toEqual(expect.any(String));
    await p.until('the Work to be completed in Dida', () => sim.getTask(work.id)?.status === 2);
    await p.until('the review todo', () => sim.listTasks(listId).find((t) => t.title === '🧑‍🔬 待验收：整理发布说明'));
    const exit = await p.shutdown();
    expect(exit).toEqual({ code: 0, signal: null });
    expectOnlyFrames(p);
    console.log(p.stderr());

    const done = sim.getTask(work.id)!;
    expect(done.items?.map((i) => i.status)).toEqual([1, 1]);
    const review = sim.listTasks(listId).find((t) => t.title === '🧑‍🔬 待验收：整理发布说明');
    expect(review?.reminders).toEqual(['TRIGGER:PT0S', 'TRIGGER:PT3M']);
    expect(model.pending()).toEqual([]);

    // The client saw the session under its own id: running → idle, the panel writes, one completed turn.
    expect(p.sessionIds()).toEqual([sessionId]);
    const events = p.events(sessionId);
    expect(turnEnds(events)).toEqual([{ kind: 'completed' }]);
    expect(p.statuses(sessionId)).toEqual(['running', 'idle']);
    expect(events.filter((e) => e.type === 'todo/write').map((e) => e.data.todos)).toContainEqual([
      { content: '收集变更', status: 'completed' },
      { content: '写草稿', status: 'completed' },
    ]);
  });
});
