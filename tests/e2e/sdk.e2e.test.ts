// The bundle in dsh's sdk profile (a long-lived stdio JSON-RPC process), assembled from the registry in a test
// DSH_HOME (harness/sdk-client.ts) and driven by a JSON-RPC client written in the tests, against the Dida simulator and
// a scripted model: (1) a 2-step Work to its review todo; (2) a model error (429 ×6, then success) continued inside the
// running process; (3) SIGKILL mid-turn, a new process sent `initialize` only, and the Work finished by the bundle's
// crash recovery under the old session id; (4) a pause from the phone cancelling the turn. Each asserts the
// simulator's Dida state and that every stdout line of every process was a JSON-RPC 2.0 frame.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { isOwnSource } from '../../src/runtime/session/messages';
import type { Simulator } from '../../src/sim/simulator';
import { rateLimit, stall, text, toolCall, type FakeModel, type RecordedRequest } from './harness/fake-model';
import { cliEnv, ensureDsh, eventsOf, readSessionLogs, repoRoot, type SessionEvent } from './harness/dsh-run';
import { startSdk, type SdkProcess } from './harness/sdk-client';
import { PAST_A_PAUSE_LOOK_MS, useDshWorld } from './harness/world';
import { readEngineStateFile } from '../helpers/engine-state-file';
import { installFakeDida } from '../helpers/fake-dida-install';
import { prepareProfile } from './harness/profile';

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

async function sdk(patches: string[], env: Record<string, string | undefined> = {}): Promise<SdkProcess> {
  const p = await startSdk({ home, cwd: project, baseUrl: model.baseUrl, patches, env: { DIDA_TODO_TOKEN: sim.token, ...env } });
  started.push(p);
  return p;
}

const state = () => readEngineStateFile(path.join(home, '.test-xdg', 'state', 'dida-todo', 'state.json'));
const CONTINUATION_NOTE = '[dida-todo] Automatic continuation';
const RECOVERY_NOTE = '[dida-todo] The previous turn was interrupted';
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
    await prepareProfile(home, 'sdk');
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
    // The YAML library inside the bundle prints its tokens and parse stream with console.log / console.dir when these
    // are set; the build sends them to stderr (a line here that is not a frame would show it).
    const p = await sdk(patches, { LOG_TOKENS: '1', LOG_STREAM: '1' });
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
    // The sdk profile on rc.8 offers every surface the bundle uses (its seam report: decision 0122).
    const seams = JSON.parse(fs.readFileSync(path.join(home, '.test-xdg', 'state', 'dida-todo', 'dsh-seams.json'), 'utf8'));
    expect(seams.dsh['0.1.0-rc.8']).toMatchObject({ missing: [], sourceKind: 'dida-todo' });
  });

  it('(2) a rate limit that outlasts dsh\'s own retries (429 ×6) is continued inside the running process and the Work gets done', async () => {
    await prepareProfile(home, 'sdk');
    // dsh retries 5 times at once (Retry-After: 0); the bundle then waits 0.2 s and retries with its note.
    const patches = configure('maxAutoContinue: 3\nbackoff: [0.2]', { llmRetries: 5 });
    const work = sim.seedTask({ projectId: listId, title: '升级依赖', priority: 5, items: [{ title: '升级 lodash' }] });
    model.setScript([
      toolCall('todo_work', { action: 'next' }),
      ...Array.from({ length: 6 }, () => rateLimit(0)),
      toolCall('todo', { action: 'update', updates: [{ step: '升级 lodash', status: 'completed', resolution: '已升级到 4.17.21' }] }),
      text('升级完成'),
    ]);
    const p = await sdk(patches);
    await p.initialize(project);
    const sessionId = 'sdk-429';
    await p.prompt(sessionId, '检查todo');
    await p.until('the Work to be completed in Dida', () => sim.getTask(work.id)?.status === 2, 40_000);
    await p.until('the review todo', () => sim.listTasks(listId).find((t) => t.title === '🧑‍🔬 待验收：升级依赖'));
    await p.until('the session to be idle', () => p.statuses(sessionId).at(-1) === 'idle');
    // stdin EOF does not end the process (the startup row that did cannot load on rc.8); SIGTERM does, with exit 0.
    p.closeStdin();
    expect(await Promise.race([p.exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 1_500))])).toBe('still running');
    expect(await p.kill('SIGTERM')).toEqual({ code: 0, signal: null });
    expectOnlyFrames(p);

    // Six 429s, then the bundle's retry: its note is in the first request after them, and in no earlier one.
    const chats = model.chatRequests();
    expect(chats.map(behaviourKind)).toEqual(['toolCalls', ...Array(6).fill('rateLimit'), 'toolCalls', 'text']);
    const bodies = chats.map((r) => JSON.stringify(r.body?.messages ?? []));
    expect(bodies.slice(0, 7).some((b) => b.includes(CONTINUATION_NOTE))).toBe(false);
    expect(bodies[7]).toContain(`${CONTINUATION_NOTE} 1/3`);
    expect(model.pending()).toEqual([]);
    expect(p.stderr()).toContain('continuing automatically');

    // The client saw dsh's five retries and one turn that completed; the process never left.
    const events = p.events(sessionId);
    expect(events.filter((e) => e.type === 'llm/retry')).toHaveLength(5);
    expect(turnEnds(events)).toEqual([{ kind: 'completed' }]);
    expect(p.sessionIds()).toEqual([sessionId]);
    // Dida: done, with its review todo, and no 🙋 reminder.
    expect(sim.getTask(work.id)?.items?.map((i) => i.status)).toEqual([1]);
    expect(sim.listTasks(listId).some((t) => t.title.startsWith('🙋'))).toBe(false);
    expect(state().sessions[sessionId].autoAttempts ?? 0).toBe(0);
  });

  it('(3) SIGKILL mid-turn: the next sdk process, sent only `initialize`, resumes the session itself and the client sees it under the old id', async () => {
    await prepareProfile(home, 'sdk');
    const patches = configure('maxAutoContinue: 3\nbackoff: [0.2]');
    const work = sim.seedTask({ projectId: listId, title: '整理发布说明', priority: 3, items: [{ title: '收集变更' }, { title: '写草稿' }] });
    model.setScript([toolCall('todo_work', { action: 'next' }), toolCall('todo', { action: 'update', updates: [{ step: '收集变更', status: 'in_progress' }] }), stall()]);
    const first = await sdk(patches);
    await first.initialize(project);
    const sessionId = 'sdk-crash';
    await first.prompt(sessionId, '检查todo');
    await model.waitFor((rs) => rs.some((r) => r.kind === 'chat' && behaviourKind(r) === 'stall'), 30_000);
    await first.until('the open-turn marker', () => state()?.sessions?.[sessionId]?.turnOpenSince);
    const killed = await first.kill('SIGKILL');
    expect(killed.signal).toBe('SIGKILL');
    expectOnlyFrames(first);
    expect(turnEnds(first.events(sessionId))).toEqual([]);
    expect(sim.getTask(work.id)?.items?.map((i) => i.status)).toEqual([0, 0]);

    // A new process in the same home; the client only initializes (the protocol has no way to resume a session).
    const chatsBefore = model.chatRequests().length;
    model.setScript([
      toolCall('todo', {
        action: 'update',
        updates: [
          { step: '收集变更', status: 'completed', resolution: '整理出 12 条变更' },
          { step: '写草稿', status: 'completed', resolution: '草稿已写好' },
        ],
      }),
      text('恢复后完成'),
    ]);
    const second = await sdk(patches);
    await second.initialize(project);
    await second.until('the Work to be completed in Dida', () => sim.getTask(work.id)?.status === 2, 40_000);
    await second.until('the review todo', () => sim.listTasks(listId).find((t) => t.title === '🧑‍🔬 待验收：整理发布说明'));
    await second.until('the resumed session to be idle', () => second.statuses(sessionId).at(-1) === 'idle');
    // The client can watch the resumed session but not prompt it (the README says so): it belongs to the bundle now.
    await expect(second.prompt(sessionId, '继续')).rejects.toThrow(/session "sdk-crash" already exists/);
    const exit = await second.shutdown();
    expect(exit).toEqual({ code: 0, signal: null });
    expectOnlyFrames(second);
    expect(second.stderr()).toContain(`[dida-todo] resumed the interrupted turn of ${sessionId}`);

    // The client saw the resumed session under its old id, and nothing under any other.
    expect(second.sessionIds()).toEqual([sessionId]);
    const events = second.events(sessionId);
    expect(turnEnds(events)).toEqual([{ kind: 'completed' }]);
    expect(second.statuses(sessionId)).toContain('running');
    const recovery = events.find((e) => e.type === 'user/message' && isOwnSource(e.data?.source));
    expect(JSON.stringify(recovery?.data?.content)).toContain(RECOVERY_NOTE);
    // The model was asked within the same session, and the log on disk closes the cut turn as interrupted.
    const resumed = model.chatRequests().slice(chatsBefore);
    expect(resumed.map(behaviourKind)).toEqual(['toolCalls', 'text']);
    for (const r of resumed) expect(String(r.headers['x-deepseek-harness-session-id'])).toBe(sessionId);
    const log = (await readSessionLogs(home)).find((l) => l.header.id === sessionId)!;
    expect(eventsOf(log, 'turn/end').map((e) => e.data.reason.kind)).toEqual(['interrupted', 'completed']);
    expect(state().sessions[sessionId].turnOpenSince).toBeUndefined();
    expect(sim.getTask(work.id)?.items?.map((i) => i.status)).toEqual([1, 1]);
  });

  it('(4) the person sets the Work\'s priority to none on the phone: the turn is cancelled at the next step boundary, the process stays up, and the priority back lets the next prompt go on', async () => {
    await prepareProfile(home, 'sdk');
    const patches = configure('maxAutoContinue: 3\nbackoff: [0.1]', { llmRetries: 0 });
    const work = sim.seedTask({ projectId: listId, title: '写周报', priority: 5, items: [{ title: '汇总进展' }, { title: '发出去' }] });
    model.setScript([
      toolCall('todo_work', { action: 'next' }),
      toolCall('todo', { action: 'update', updates: [{ step: '汇总进展', status: 'in_progress' }] }),
      // The person sets the priority to none while this answer is on its way (it comes after the next look is due).
      toolCall('todo', { action: 'update', updates: [{ step: '汇总进展', status: 'completed', resolution: '进展已汇总' }] }, { delayMs: PAST_A_PAUSE_LOOK_MS }),
      text('SHOULD_NOT_RUN'),
    ]);
    const p = await sdk(patches);
    await p.initialize(project);
    const sessionId = 'sdk-pause';
    await p.prompt(sessionId, '检查todo');
    await model.waitFor((rs) => rs.filter((r) => r.kind === 'chat').length >= 3, 30_000);
    sim.editTask(work.id, { priority: 0 });
    await p.until('the cancelled turn', () => turnEnds(p.events(sessionId)).length > 0, 90_000);
    await p.until('the session to be idle', () => p.statuses(sessionId).at(-1) === 'idle');

    expect(turnEnds(p.events(sessionId))).toEqual([{ kind: 'aborted', reason: { kind: 'hook', reason: expect.stringContaining('paused') } }]);
    expect(model.chatRequests()).toHaveLength(3);
    expect(p.stderr()).toContain(`Work ${work.id} is paused`);
    // Dida: the finished step is kept, the priority stays none, one comment says where it stopped, no reminder.
    await p.until('the pause comment', () => sim.listComments(work.id).some((c) => c.title.includes('已暂停：已完成 1/2 步，下一步是「发出去」。')));
    const task = sim.getTask(work.id)!;
    expect(task.priority).toBe(0);
    expect(task.items?.map((i) => i.status)).toEqual([1, 0]);
    expect(sim.listTasks(listId).filter((t) => t.title.startsWith('🙋'))).toEqual([]);

    // Still the same process, seconds after the session started: the person sets the priority back and the next
    // prompt is told it may go on (its turn reads the list again rather than reusing the session's first read).
    sim.editTask(work.id, { priority: 5 });
    model.setScript([text('继续写')]);
    const chatsBefore = model.chatRequests().length;
    await p.prompt(sessionId, '继续');
    await p.until('the second turn to end', () => turnEnds(p.events(sessionId)).length === 2);
    const next = model.chatRequests()[chatsBefore]!;
    expect(JSON.stringify(next.body?.messages ?? [])).toContain(`Work ${work.id} is no longer waiting for the person`);
    expect(sim.getTask(work.id)?.priority).toBe(5);
    const exit = await p.shutdown();
    expect(exit).toEqual({ code: 0, signal: null });
    expectOnlyFrames(p);
  });

  it('(5) through the official `dida` CLI (a fake one on the simulator), with a failing first list read: the Work gets done and the CLI\'s output never reaches stdout', async () => {
    await prepareProfile(home, 'sdk');
    const dida = await installFakeDida({ baseUrl: sim.baseUrl, token: sim.token });
    try {
      const argvLog = path.join(home, 'dida-argv.jsonl');
      const patches = configure(`maxAutoContinue: 2\nbackoff: [0.2]\ndida:\n  didaCommand: ${JSON.stringify(dida.command)}`);
      const work = sim.seedTask({ projectId: listId, title: '清理日志', priority: 3, items: [{ title: '删除旧日志' }] });
      // The session's first reads of the list fail (the CLI prints the API error and exits 1; the gateway retries reads
      // once, so four failures fail both the session's read and the queue read of the trigger phrase).
      sim.injectFault({ route: 'GET /project/{pid}/data', kind: 'status', status: 500, times: 4 });
      model.setScript([
        toolCall('todo_work', { action: 'next' }),
        toolCall('todo', { action: 'update', updates: [{ step: '删除旧日志', status: 'completed', resolution: '删掉了 30 天前的日志' }] }),
        text('清理完成'),
      ]);
      // No token of dida-todo's own: the CLI's login (its config file under HOME) is the only one.
      const p = await sdk(patches, { DIDA_TODO_TOKEN: undefined, HOME: dida.home, FAKE_DIDA_BASE_URL: sim.baseUrl, FAKE_DIDA_ARGV_LOG: argvLog });
      await p.initialize(project);
      await p.prompt('sdk-cli', '检查todo');
      await p.until('the Work to be completed in Dida', () => sim.getTask(work.id)?.status === 2, 40_000);
      await p.until('the review todo', () => sim.listTasks(listId).find((t) => t.title === '🧑‍🔬 待验收：清理日志'));
      const exit = await p.shutdown();
      expect(exit).toEqual({ code: 0, signal: null });
      expectOnlyFrames(p);
      expect(sim.pendingFaults()).toEqual([]);
      // The CLI ran, many times, and printed JSON of its own each time: none of it is on stdout.
      const runs = fs.readFileSync(argvLog, 'utf8').trim().split('\n');
      expect(runs.length).toBeGreaterThan(3);
      // The failed reads were reported, on stderr only.
      expect(p.stderr()).toContain('[dida-todo] syncing the bound Dida list (will retry later) failed: `dida project data` failed: Dida answered 500');
      expect(p.lines.some((l) => l.includes(work.id) && !l.startsWith('{"jsonrpc"'))).toBe(false);
    } finally {
      await dida.cleanup();
    }
  });

  it('(6) `dida-todo doctor --profile sdk` passes on the profile assembled this way, and names what breaks it', async () => {
    await prepareProfile(home, 'sdk');
    const install = await ensureDsh();
    const env = cliEnv(install, home);
    const doctor = async (...args: string[]) => {
      const run = await promisify(execFile)(process.execPath, [path.join(repoRoot, 'dsh-plugin', 'cli.mjs'), 'doctor', '--json', ...args], { env, cwd: project, timeout: 90_000 }).catch((e: { stdout: string }) => e);
      return Object.fromEntries((JSON.parse(run.stdout) as { checks: Array<{ id: string; status: string; detail: string; fix: string[] }> }).checks.map((c) => [c.id, c]));
    };
    const ready = await doctor('--profile', 'sdk');
    for (const id of ['dsh', 'dsh-node', 'pnpm', 'hmr', 'overlay', 'bundle', 'sdk-workspace', 'sdk-packages', 'sdk-rows']) expect(ready[id]?.status, `${id}: ${ready[id]?.detail}`).toBe('ok');

    // The startup row turned back on in the profile's own layer: the real dump shows it, and doctor names it.
    const patch = path.join(home, 'profiles', 'sdk', 'cordis.patch.yml');
    fs.writeFileSync(patch, fs.readFileSync(patch, 'utf8').replace(/(- id: sdk-app-startup\n {2}disabled: )true/, '$1false'));
    const broken = await doctor('--profile', 'sdk');
    expect(broken['sdk-rows']).toMatchObject({ status: 'fail' });
    expect(broken['sdk-rows']?.detail).toMatch(/the sdk-app-startup row is on/);
    // A profile that does not exist, told by the real dsh.
    const nope = await doctor('--profile', 'nope');
    expect(nope.profile?.detail).toBe(`profile "nope" does not exist in ${home} (profiles there: sdk).`);
  });
});
