// The bundle in a dsh newer than rc.8, as plugin authors report 0.1.7 and 0.2.x (tests/helpers/newer-dsh-host.ts names
// each difference and what is assumed): it installs past the version check, loads through the plugin entry, its tools
// reach the Dida simulator over HTTP, continuation and the phone loop work with the bundle's own message kind (the
// shared `plugin` kind is refused), and a host that lacks surfaces gets them reported as designed: the log at start,
// the seam report `dida-todo doctor` prints, one comment on the Work that loses continuation or the phone loop.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { getLocale } from '../../src/core/text/locale';
import * as plugin from '../../src/dsh/index';
import { SEAM_REPORT_FILE } from '../../src/dsh/host-seams';
import { isOwnSource, resetOwnSourceKind } from '../../src/runtime/session/messages';
import { GRANT_HEAD } from '../../src/runtime/turns/queue-grant';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { makeCliHome, type CliHome } from '../helpers/cli-harness';
import { readEngineStateFile } from '../helpers/engine-state-file';
import { makeFakeDsh } from '../helpers/fake-dsh';
import { fakeDshInstall, newerHost, startedFrom, type NewerAgent, type NewerHostOptions } from '../helpers/newer-dsh-host';

const zh = getLocale('zh');
const repoManifest = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../../package.json'), 'utf8')) as Record<string, any>;

let sim: Simulator;
let h: CliHome;
let dir: string;
let stderr: MockInstance;
const hosts: Array<ReturnType<typeof newerHost>> = [];

beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(async () => {
  await sim.close();
});
let savedToken: string | undefined;
beforeEach(async () => {
  h = await makeCliHome();
  dir = fs.realpathSync(h.project);
  savedToken = process.env.DIDA_TODO_TOKEN;
  process.env.DIDA_TODO_TOKEN = sim.token;
  resetOwnSourceKind();
  stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
});
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.dispose();
  stderr.mockRestore();
  if (savedToken === undefined) delete process.env.DIDA_TODO_TOKEN;
  else process.env.DIDA_TODO_TOKEN = savedToken;
  await h.cleanup();
});

const logged = () => stderr.mock.calls.map((c) => String(c[0]));
const state = () => readEngineStateFile(path.join(h.stateDir, 'state.json'));
const report = () => JSON.parse(fs.readFileSync(path.join(h.stateDir, SEAM_REPORT_FILE), 'utf8'));

async function until(what: string, probe: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A process of the newer dsh with the bundle applied through its entry, bound to `listId`. */
function boot(listId: string, options: NewerHostOptions = {}) {
  fs.mkdirSync(path.dirname(h.configFile), { recursive: true });
  fs.writeFileSync(h.configFile, `baseUrl: ${sim.baseUrl}\nhostLabel: newer-host\nbindings:\n  - cwd: ${dir}\n    projectId: ${listId}\n`);
  const nh = newerHost(options);
  hosts.push(nh);
  const row = plugin.Config['~standard'].validate({ configPath: h.configFile, stateDir: h.stateDir, maxAutoContinue: 3, backoff: [0], progressWindowSeconds: 0 }) as { value: plugin.Config };
  const bin = fakeDshInstall(path.join(h.root, `dsh-${nh.version}`), nh.version);
  expect(() => startedFrom(bin, () => plugin.apply(nh.ctx as never, row.value))).not.toThrow();
  return nh;
}

async function session(nh: ReturnType<typeof newerHost>, id: string): Promise<NewerAgent> {
  const agent = nh.agent(id, { cwd: dir });
  nh.create(agent);
  await until('the session to be bound', () => nh.sections.length > 0 && (nh.sections[0]!.text as (c: unknown) => string)({ agent }) !== '');
  return agent;
}

const tool = (nh: ReturnType<typeof newerHost>, name: string) => nh.tools.find((t: { name: string }) => t.name === name);
const texts = (messages: Array<{ content: Array<{ text: string }> }>) => messages.map((m) => m.content[0]!.text);

describe('installing into a newer dsh', () => {
  it('its version check admits the bundle on every dsh it is meant for, and would refuse a range we might have set', () => {
    for (const version of ['0.1.0-rc.8', '0.1.7', '0.2.0-rc.2', '0.2.1-alpha.1', '0.2.3']) {
      expect(newerHost({ version }).install(repoManifest), version).toEqual({ ok: true });
    }
    // Control: the range that reads as "0.1.0-rc.8 up to 0.2.x" refuses 0.2.0-rc.2 once prereleases count as semver counts them.
    const ranged = { ...repoManifest, peerDependencies: { '@deepseek-ai/dsh': '>=0.1.0-rc.8 <0.3.0-0' } };
    expect(newerHost({ version: '0.2.0-rc.2' }).install(ranged)).toMatchObject({ ok: false, code: 'incompatible-version' });
    expect(newerHost({ version: '0.1.7' }).install(ranged)).toEqual({ ok: true });
  });
});

describe('the bundle in a newer dsh with every surface it uses', () => {
  it('loads, its tools reach Dida, its messages carry its own kind, and nothing is reported missing', async () => {
    const list = sim.seedProject({ name: 'newer-full' });
    const nh = boot(list.id);
    expect(nh.tools.map((t: { name: string }) => t.name).sort()).toEqual(['dida_todo_setup', 'todo', 'todo_work']);
    const agent = await session(nh, 'session-newer-1');
    const created = await tool(nh, 'todo').execute({ action: 'create', work_title: '整理发布说明', steps: [{ title: '收集改动', status: 'in_progress' }, { title: '写说明' }] }, { agent });
    expect(created.code).toBe('ok');
    const task = sim.listTasks(list.id).find((t) => t.title === '整理发布说明')!;
    expect(task.items?.map((i) => i.title)).toEqual(['收集改动', '写说明']);
    // The trigger phrase: the turn is given the queue, under the bundle's own kind (the shared kind would be refused).
    const asked = nh.personWrites(agent, '检查todo');
    const entered = await nh.turn(agent, 1, { kind: 'completed' }, { messages: [asked] });
    const grant = entered.filter((m: any) => isOwnSource(m.source));
    expect(texts(grant).filter((t) => t.startsWith(GRANT_HEAD))).toHaveLength(1);
    expect(grant.every((m: any) => m.source.kind === 'dida-todo')).toBe(true);
    // A forked turn (a kind rc.8 does not have) is neither a failure nor a finished turn: nothing reported, no comment.
    await nh.turn(agent, 2, { kind: 'forked' });
    await until('the report', () => fs.existsSync(path.join(h.stateDir, SEAM_REPORT_FILE)));
    expect(report().dsh['0.2.0-rc.2']).toMatchObject({ missing: [], sourceKind: 'dida-todo' });
    expect(logged().filter((l) => l.includes('lacks'))).toEqual([]);
    expect(sim.listComments(task.id).filter((c) => c.title.includes('dsh'))).toEqual([]);
  });

  it('continues after a failed model request with its own note; a forked turn keeps the count, a completed one ends it', async () => {
    const list = sim.seedProject({ name: 'newer-continue' });
    const nh = boot(list.id);
    const agent = await session(nh, 'session-newer-2');
    expect((await tool(nh, 'todo').execute({ action: 'create', work_title: '修复登录', steps: [{ title: '复现', status: 'in_progress' }, { title: '修' }] }, { agent })).code).toBe('ok');
    agent.status = 'running';
    const answer = await nh.waterfall('agent/request-error', { agent, turn: 1, step: 1, failure: { code: 'RATE_LIMIT', message: 'Rate limit reached' }, signal: new AbortController().signal });
    expect(answer).toEqual({ kind: 'retry' });
    const notes = agent.admitted.filter((m) => isOwnSource(m.source));
    expect(notes.map((m) => m.source.kind)).toEqual(['dida-todo']);
    expect(notes[0]!.content[0]!.text).toContain('Automatic continuation 1/3');
    expect(state().sessions[agent.id].autoAttempts).toBe(1);
    nh.event(agent, 'turn/end', { turn: 1, reason: { kind: 'forked' } });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(state().sessions[agent.id].autoAttempts).toBe(1);
    nh.event(agent, 'turn/end', { turn: 1, reason: { kind: 'completed' } });
    await until('the stretch to end', () => (state().sessions[agent.id].autoAttempts ?? 0) === 0);
    expect(logged().filter((l) => l.includes('lacks'))).toEqual([]);
  });

  it('the phone loop: a one-shot run asks, the person answers in Dida, the next run is handed the answer under its own kind', async () => {
    const list = sim.seedProject({ name: 'newer-phone' });
    const first = boot(list.id, { services: { headlessStartup: { task: 'x' } } });
    const asker = await session(first, 'session-newer-ask');
    expect((await tool(first, 'todo').execute({ action: 'create', work_title: '接入支付', steps: [{ title: '申请密钥', status: 'in_progress' }, { title: '联调' }] }, { agent: asker })).code).toBe('ok');
    expect((await tool(first, 'todo_work').execute({ action: 'wait_for_human', reason: '需要商户号' }, { agent: asker })).code).toBe('ok');
    await first.turn(asker, 1, { kind: 'completed' });
    await until('the settle', () => asker.runMaintenance.mock.calls.length > 0);
    await Promise.allSettled(asker.runMaintenance.mock.results.map((r: { value: unknown }) => r.value));
    await first.dispose();
    const reminder = sim.listTasks(list.id).find((t) => t.title.startsWith('🙋'))!;
    sim.addComment(list.id, reminder.id, '商户号是 M-1024');
    const next = boot(list.id, { services: { headlessStartup: { task: 'x' } } });
    const taker = await session(next, 'session-newer-take');
    const entered = await next.turn(taker, 1, { kind: 'completed' }, { messages: [next.personWrites(taker, '继续')] });
    const answers = entered.filter((m: any) => isOwnSource(m.source) && m.content[0].text.includes('no longer waiting for the person'));
    expect(answers).toHaveLength(1);
    expect(answers[0].content[0].text).toContain('商户号是 M-1024');
    expect(answers[0].source.kind).toBe('dida-todo');
  });
});

describe('a newer dsh that lacks surfaces', () => {
  it('is reported once at start, in the seam report doctor prints, and with one comment on each Work that loses continuation or the phone loop', async () => {
    const list = sim.seedProject({ name: 'newer-lacking' });
    const nh = boot(list.id, { lacks: ['request-error', 'followup', 'commands'] });
    const agent = await session(nh, 'session-newer-3');
    // At start: the surfaces it can see are missing, said once.
    const start = logged().filter((l) => l.includes('lacks'));
    expect(start).toHaveLength(1);
    expect(start[0]).toContain('dsh 0.2.0-rc.2 lacks agent.followup');
    expect(start[0]).toContain('ctx.commands');
    // Its tools work; the Work it holds loses the phone loop: one comment says so.
    expect((await tool(nh, 'todo').execute({ action: 'create', work_title: '迁移数据库', steps: [{ title: '备份', status: 'in_progress' }, { title: '迁移' }] }, { agent })).code).toBe('ok');
    const task = sim.listTasks(list.id).find((t) => t.title === '迁移数据库')!;
    // The note may ride on a progress comment of the same moment (the outbox sends what is due together).
    const told = (key: 'dida.comment.hostGap.phone' | 'dida.comment.hostGap.continuation') => sim.listComments(task.id).filter((c) => c.title.includes(zh.t(key, { dsh: 'dsh 0.2.0-rc.2' })));
    await until('the phone-loop comment', () => told('dida.comment.hostGap.phone').length === 1);
    // A failed model request without the request-error hook: continuation is lost; said in the log and once on the Work.
    await nh.turn(agent, 1, { kind: 'error', error: { code: 'RATE_LIMIT', message: 'Rate limit reached' } }, { failure: { code: 'RATE_LIMIT' } });
    await until('the continuation comment', () => told('dida.comment.hostGap.continuation').length === 1);
    expect(logged().some((l) => l.includes('lacks agent/request-error'))).toBe(true);
    // More failures and tool calls tell nothing more.
    await nh.turn(agent, 2, { kind: 'error', error: { code: 'SERVER', message: 'Overloaded' } }, { failure: { code: 'SERVER' } });
    expect((await tool(nh, 'todo').execute({ action: 'update', updates: [{ step: '备份', status: 'completed', resolution: '已备份' }] }, { agent })).code).toBe('ok');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(told('dida.comment.hostGap.phone')).toHaveLength(1);
    expect(told('dida.comment.hostGap.continuation')).toHaveLength(1);
    await until('the report', () => fs.existsSync(path.join(h.stateDir, SEAM_REPORT_FILE)) && report().dsh['0.2.0-rc.2']?.missing.length === 3);
    expect(report().dsh['0.2.0-rc.2'].missing).toEqual(['requestError', 'followup', 'commands']);
    // What `dida-todo doctor` prints for it, with a stand-in dsh of that version on PATH.
    const fakeBin = await makeFakeDsh(path.join(h.root, 'fake-dsh'), { version: '0.2.0-rc.2', bundleRow: true, pnpm: '10.34.9' });
    const run = await h.run(['doctor', '--json'], { env: { PATH: [fakeBin, path.dirname(process.execPath), '/usr/bin', '/bin'].join(path.delimiter), DSH_HOME: path.join(h.root, 'dsh-home'), DIDA_TODO_E2E_CACHE: path.join(h.root, 'none') }, timeoutMs: 60_000 });
    const checks = Object.fromEntries(run.json<{ checks: Array<{ id: string; status: string; title: string; detail: string }> }>().checks.map((c) => [c.id, c]));
    expect(checks.dsh).toMatchObject({ status: 'warn', detail: expect.stringContaining('expected to work') });
    expect(checks['dsh-seams']).toMatchObject({ status: 'warn', detail: expect.stringContaining('lacked 3 surfaces') });
    expect(checks['dsh-seam-requestError']).toMatchObject({ status: 'warn', title: 'agent/request-error', detail: expect.stringContaining('automatic continuation') });
    expect(checks['dsh-seam-followup']).toMatchObject({ title: 'agent.followup' });
    expect(checks['dsh-seam-commands']).toMatchObject({ title: 'ctx.commands' });
    expect(checks.hmr).toMatchObject({ status: 'skip' });
    expect(checks.overlay).toMatchObject({ status: 'skip' });
  });

  it('without agent/inbox/inserted a person is noticed when dsh admits the message: the trigger phrase still grants the queue', async () => {
    const list = sim.seedProject({ name: 'newer-inbox' });
    const nh = boot(list.id, { lacks: ['inbox'] });
    const agent = await session(nh, 'session-newer-4');
    const entered = await nh.turn(agent, 1, { kind: 'completed' }, { steps: 2, messages: [nh.personWrites(agent, '检查todo')] });
    // Admitted in the first step, so the second step's pre-step carries the queue.
    expect(texts(entered.filter((m: any) => isOwnSource(m.source))).filter((t) => t.startsWith(GRANT_HEAD))).toHaveLength(1);
    expect(logged().some((l) => l.includes('lacks agent/inbox/inserted'))).toBe(true);
  });
});
