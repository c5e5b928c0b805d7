// `dida-todo status`: token source, reachability, bindings, pending acceptances, finalize errors, state problems.
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { closedPort, makeCliHome, failureLine, oneErrorLine, type CliHome } from '../helpers/cli-harness';

let sim: Simulator;
let h: CliHome;
let base: string[];
let work: { id: string };

interface StatusJson {
  ok: boolean;
  exitCode: number;
  token: { source: string; file: string | null } | null;
  region: string | null;
  baseUrl: string | null;
  endpoint: { region: string; baseUrl: string; source: string; explicit: boolean } | null;
  configFile: { file: string; problem: string | null };
  reachability: { checked: boolean; ok?: boolean; ms?: number; lists?: number; code?: string };
  cwd: string;
  binding: { cwd: string; projectId: string; label: string | null; inherited: boolean; list: string; message?: string } | null;
  bindings: Array<{ cwd: string; projectId: string; label: string | null; list: string }>;
  pendingAcceptances: Array<Record<string, unknown>>;
  finalizeErrors: Array<Record<string, unknown>>;
  stateFile: { file: string; exists: boolean; works: number; problem: string | null };
  problems: Array<{ severity: string; code: string; message: string }>;
}

beforeEach(async () => {
  sim = await startSimulator();
  work = sim.seedProject({ name: 'Work' });
  h = await makeCliHome();
  base = ['--base-url', sim.baseUrl];
});

afterEach(async () => {
  await sim.close();
  await h.cleanup();
});

function workRecord(taskId: string, title: string, extra: Record<string, unknown>) {
  return {
    taskId,
    projectId: work.id,
    title,
    origin: 'human',
    mode: 'checklist',
    priority: 3,
    phase: 'open',
    steps: [],
    humanFingerprint: 'fp',
    createdAt: 1,
    updatedAt: 2,
    ...extra,
  };
}

async function writeState(value: unknown): Promise<string> {
  await mkdir(h.stateDir, { recursive: true });
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  await writeFile(h.stateFile, text);
  return text;
}

describe('status', () => {
  it('without a token prints everything local and exits 3', async () => {
    await writeState({ version: 1, works: { t1: workRecord('t1', 'Ship it', { phase: 'accepting', acceptance: { taskId: 'acc1' } }) } });
    const result = await h.run(['status', ...base]);
    expect(result.code).toBe(3);
    expect(oneErrorLine(result)).toMatch(/No Dida token is configured/);
    expect(result.out).toMatch(/Token\s+none/);
    expect(result.out).toMatch(/not checked \(no token\)/);
    expect(result.out).toMatch(/not bound/);
    expect(result.out).toMatch(/"Ship it".*acceptance todo acc1/);
    expect(sim.totalRequests()).toBe(0);

    const json = (await h.run(['status', ...base, '--json'])).json<StatusJson>();
    expect(json).toMatchObject({ ok: false, exitCode: 3, token: null, reachability: { checked: false }, binding: null });
    expect(json.pendingAcceptances).toEqual([{ work: 't1', title: 'Ship it', projectId: work.id, list: null, acceptanceTaskId: 'acc1' }]);
  });

  it('reports a ready directory with exit 0 (JSON shape)', async () => {
    await h.run(['login', '--token', sim.token, ...base]);
    await h.run(['bind', 'Work', ...base]);
    const result = await h.run(['status', ...base, '--json']);
    expect(result.code).toBe(0);
    expect(result.err).toBe('');
    const json = result.json<StatusJson>();
    expect(json).toMatchObject({
      ok: true,
      exitCode: 0,
      token: { source: 'credentials', file: h.credentialsFile },
      region: 'dida365',
      baseUrl: sim.baseUrl,
      reachability: { checked: true, ok: true, lists: 1 },
      cwd: h.project,
      binding: { cwd: h.project, projectId: work.id, label: 'Work', inherited: false, list: 'open' },
      bindings: [{ cwd: h.project, projectId: work.id, label: 'Work', list: 'open' }],
      pendingAcceptances: [],
      finalizeErrors: [],
      stateFile: { file: h.stateFile, exists: false, works: 0, problem: null },
      problems: [],
    });
    expect(typeof json.reachability.ms).toBe('number');
    expect(result.out).not.toContain(sim.token);
    const human = await h.run(['status', ...base]);
    expect(human.out).toMatch(/reachable, 1 list, \d+ ms/);
    expect(human.out).toMatch(/Ready\./);
    expect(human.out).not.toContain(sim.token);
  });

  it("shows the machine's request budget and what was used of it in the last minute and five minutes", async () => {
    await h.run(['login', '--token', sim.token, ...base]);
    const now = Date.now();
    await mkdir(path.join(h.stateDir, 'budget'), { recursive: true });
    const stamps = [now - 4 * 60_000, now - 3 * 60_000, now - 30_000, now - 20_000, now - 10_000];
    // Dida's 429 a minute ago halved the machine's share (another machine uses the account too).
    const cut = now - 60_000;
    await writeFile(path.join(h.stateDir, 'budget', '0123456789abcdef.json'), JSON.stringify({ stamps, baseUrl: sim.baseUrl, pausedUntil: now + 60_000, strikes: 1, share: 0.5, cutAt: cut, cutFrom: 1, raisedAt: cut }));
    const config = await readFile(h.configFile, 'utf8');
    await writeFile(h.configFile, `${config}budget:\n  perMinute: 30\n  perFiveMinutes: 100\n`);
    const json = (await h.run(['status', ...base, '--json'])).json<StatusJson & { budget: unknown }>();
    expect(json.budget).toEqual([
      { baseUrl: sim.baseUrl, perMinute: 30, perFiveMinutes: 100, usedLastMinute: 3, usedLastFiveMinutes: 5, pausedUntil: new Date(now + 60_000).toISOString(), sharePercent: 50, sharedSince: new Date(cut).toISOString() },
    ]);
    const human = await h.run(['status', ...base]);
    expect(human.out).toMatch(/Budget\s+30\/min and 100\/5 min for this machine; used 3 in the last minute, 5 in the last 5 minutes/);
    expect(human.out).toContain('this machine takes 50% of it now: Dida answered 429 at');
    expect(human.out).toContain('Dida answered 429: every process waits until');
  });

  it('a pause the budget file holds beyond the ceiling (a clock a day ahead wrote it) is shown as every process takes it', async () => {
    await h.run(['login', '--token', sim.token, ...base]);
    const now = Date.now();
    await mkdir(path.join(h.stateDir, 'budget'), { recursive: true });
    const ahead = now + 86_400_000;
    await writeFile(path.join(h.stateDir, 'budget', '0123456789abcdef.json'), JSON.stringify({ stamps: [now - 1000], baseUrl: sim.baseUrl, pausedAt: ahead, pausedUntil: ahead + 21_600_000, strikes: 1 }));
    const json = (await h.run(['status', ...base, '--json'])).json<StatusJson & { budget: Array<{ pausedUntil: string }> }>();
    const until = Date.parse(json.budget[0]!.pausedUntil);
    expect(until).toBeGreaterThan(now);
    expect(until).toBeLessThanOrEqual(Date.now() + 5 * 60_000);
  });

  it('shows an inherited binding for a subdirectory and exits 4 for an unbound directory', async () => {
    await h.run(['login', '--token', sim.token, ...base]);
    await h.run(['bind', 'Work', ...base]);
    const sub = path.join(h.project, 'deep', 'er');
    await mkdir(sub, { recursive: true });
    const inherited = (await h.run(['status', '--cwd', sub, ...base, '--json'])).json<StatusJson>();
    expect(inherited.binding).toMatchObject({ cwd: h.project, inherited: true, list: 'open' });

    const result = await h.run(['status', '--cwd', h.root, ...base]);
    expect(result.code).toBe(4);
    expect(oneErrorLine(result)).toMatch(/is not bound to a Dida list; run `dida-todo bind/);
    expect(result.out).toMatch(/Bindings\s+1/);
  });

  it('exits 4 when the bound list was archived or deleted', async () => {
    await h.run(['login', '--token', sim.token, ...base]);
    await h.run(['bind', 'Work', ...base]);
    sim.closeProject(work.id);
    const archived = await h.run(['status', ...base, '--json']);
    expect(archived.code).toBe(4);
    expect(archived.json<StatusJson>().binding).toMatchObject({ list: 'archived' });
    expect(oneErrorLine(archived)).toMatch(/is archived/);
    sim.deleteProject(work.id);
    const missing = await h.run(['status', ...base, '--json']);
    expect(missing.code).toBe(4);
    expect(missing.json<StatusJson>().binding).toMatchObject({ list: 'missing' });
    expect(missing.json<StatusJson>().bindings[0]?.list).toBe('missing');
  });

  it('lists pending acceptances and finalize errors from the state file', async () => {
    await h.run(['login', '--token', sim.token, ...base]);
    await h.run(['bind', 'Work', ...base]);
    await writeState({
      version: 1,
      works: {
        a: workRecord('a', 'Waiting one', { phase: 'accepting', acceptance: { taskId: 'acc-a' } }),
        b: workRecord('b', 'Broken one', { phase: 'finalizing', finalize: { lastError: 'Dida answered 500', attempts: 2 } }),
        c: workRecord('c', 'Plain', {}),
      },
    });
    const result = await h.run(['status', ...base, '--json']);
    expect(result.code).toBe(0);
    const json = result.json<StatusJson>();
    expect(json.pendingAcceptances).toEqual([{ work: 'a', title: 'Waiting one', projectId: work.id, list: 'Work', acceptanceTaskId: 'acc-a' }]);
    expect(json.finalizeErrors).toEqual([{ work: 'b', title: 'Broken one', projectId: work.id, list: 'Work', phase: 'finalizing', lastError: 'Dida answered 500', attempts: 2 }]);
    expect(json.stateFile).toMatchObject({ exists: true, works: 3, problem: null });
    expect(json.problems).toEqual([expect.objectContaining({ severity: 'warning', code: 'finalize_failed' })]);
    const human = await h.run(['status', ...base]);
    expect(human.out).toMatch(/Acceptance\s+1 waiting/);
    expect(human.out).toMatch(/"Broken one": Dida answered 500 \(2 attempts\)/);
  });

  it('shows each open Work of the list: who holds it (alive, stopped, another machine), why it waits, late comments', async () => {
    await h.run(['login', '--token', sim.token, ...base]);
    await h.run(['bind', 'Work', ...base]);
    const config = await readFile(path.join(h.configDir, 'config.yaml'), 'utf8');
    await writeFile(path.join(h.configDir, 'config.yaml'), `hostLabel: box\n${config}`);
    const now = Date.now();
    const step = (status: string) => ({ id: `s-${status}`, title: status, status, origin: 'agent', updatedAt: 1 });
    await writeState({
      version: 1,
      sessions: {
        'session-live1234': { touched: [], autoAttempts: 0, updatedAt: now, livePid: process.pid },
        'session-dead5678': { touched: [], autoAttempts: 0, updatedAt: now, livePid: 2 ** 22 + 17 },
      },
      outbox: [{ id: 'o1', projectId: work.id, taskId: 'a', workKey: 'a', text: '已完成：x', createdAt: now - 20 * 60_000, uncertain: false, attempts: 0, kind: 'note' }],
      usage: { a: { rounds: { '1': { requests: 3, inputTokens: 1000, outputTokens: 200, cacheReadTokens: 34, ms: 120_000, continuations: 1, continuedRequests: 1, continuedTokens: 50, models: {} } } } },
      works: {
        a: workRecord('a', 'Running here', { steps: [step('completed'), step('in_progress')], claim: { holder: 'box#live1234', at: now - 60_000 } }),
        b: workRecord('b', 'Crashed here', { claim: { holder: 'box#dead5678', at: now - 60_000 } }),
        c: workRecord('c', 'Elsewhere', { claim: { holder: 'laptop#abcd0000', at: now - 60_000 } }),
        d: workRecord('d', 'Out of balance', { priority: 0, waiting: { reason: 'r', previousPriority: 3, applied: true, since: now, cause: 'quota' } }),
        e: workRecord('e', 'Paused', { priority: 0, waiting: { reason: 'r', previousPriority: 3, applied: true, since: now, pausedBy: 'priority' } }),
        f: workRecord('f', 'Done', { phase: 'closed' }),
      },
    });
    const json = (await h.run(['status', ...base, '--json'])).json<{ works: Array<Record<string, any>> }>();
    const byTitle = Object.fromEntries(json.works.map((w) => [w.title, w]));
    expect(Object.keys(byTitle)).toEqual(['Running here', 'Crashed here', 'Elsewhere', 'Out of balance', 'Paused']);
    expect(byTitle['Running here']).toMatchObject({ steps: { done: 1, total: 2 }, holder: { host: 'box', session: 'live1234', alive: true }, waiting: null });
    expect(byTitle['Running here']!.commentsWaitingSince).toBe(new Date(now - 20 * 60_000).toISOString());
    expect(byTitle['Running here']!.usage).toEqual({ requests: 3, inputTokens: 1000, outputTokens: 200, cacheReadTokens: 34, tokens: 1234, ms: 120_000, continuations: 1, continuedRequests: 1, continuedTokens: 50 });
    expect(byTitle['Crashed here']!.usage).toBeNull();
    expect(byTitle['Crashed here']!.holder).toMatchObject({ host: 'box', alive: false });
    expect(byTitle['Elsewhere']!.holder).toMatchObject({ host: 'laptop', session: 'abcd0000', alive: null });
    expect(byTitle['Out of balance']!.waiting).toMatchObject({ reason: 'quota' });
    expect(byTitle['Paused']!.waiting).toMatchObject({ reason: 'paused' });
    const human = (await h.run(['status', ...base])).out;
    expect(human).toMatch(/"Running here": 1\/2 steps; held by session live1234 on box \(since .+, its process is running\); used 1.2k tokens, 3 requests, 2 min; progress comments waiting since/);
    expect(human).toMatch(/"Crashed here": 0\/0 steps; nobody is working on it; was held by session dead5678 on box/);
    expect(human).toMatch(/"Elsewhere": .*held by session abcd0000 on another machine, laptop/);
    expect(human).toMatch(/"Out of balance": .*waiting for you: the model service's balance or quota is used up/);
  });

  it('says which reviews were rebuilt from Dida after the state file was lost, read through the change log', async () => {
    await writeState({ version: 2, logGen: 1, works: {} });
    await writeFile(`${h.stateFile}.log`, `${JSON.stringify({ gen: 1 })}\n${JSON.stringify({ s: 'rebuilt', v: [{ at: Date.UTC(2026, 10, 30, 9, 5), what: 'review todo "加日志"' }] })}\n`);
    const human = await h.run(['status', ...base]);
    expect(human.out).toMatch(/Rebuilt\s+1 review rebuilt from Dida after the state file was lost/);
    expect(human.out).toContain('2026-11-30 09:05  review todo "加日志"');
    const json = (await h.run(['status', ...base, '--json'])).json<{ rebuilt: unknown }>();
    expect(json.rebuilt).toEqual([{ at: '2026-11-30T09:05:00.000Z', what: 'review todo "加日志"' }]);
  });

  it('reports a damaged state file without moving or changing it (exit 1)', async () => {
    await h.run(['login', '--token', sim.token, ...base]);
    await h.run(['bind', 'Work', ...base]);
    const text = await writeState('{"version": 1, "works": {"x": {"title": 5}}}');
    await writeFile(path.join(h.stateDir, 'state.json.corrupt-2026-01-01T00-00-00-000Z'), '{');
    const before = (await readdir(h.stateDir)).sort();
    const result = await h.run(['status', ...base, '--json']);
    expect(result.code).toBe(1);
    oneErrorLine(result);
    const json = result.json<StatusJson>();
    expect(json.stateFile.problem).toMatch(/does not match the state schema/);
    expect(json.problems.map((p) => p.code)).toEqual(['state_invalid', 'state_corrupt_copy']);
    expect(await readFile(h.stateFile, 'utf8')).toBe(text);
    expect((await readdir(h.stateDir)).sort()).toEqual(before);

    await writeState('{"version": 9}');
    const tooNew = await h.run(['status', ...base, '--json']);
    expect(tooNew.json<StatusJson>().stateFile.problem).toMatch(/newer dida-todo/);
  });

  it('names the token source: env, then credentials, then the dida CLI file', async () => {
    const cliFile = path.join(h.home, '.config', 'dida-cli', 'config.json');
    await mkdir(path.dirname(cliFile), { recursive: true });
    await writeFile(cliFile, JSON.stringify({ access_token: sim.token }));
    const fromCli = (await h.run(['status', ...base, '--json'])).json<StatusJson>();
    expect(fromCli.token).toEqual({ source: 'dida-cli', file: cliFile });
    expect(fromCli.reachability.ok).toBe(true);
    const human = await h.run(['status', ...base]);
    expect(human.out).toMatch(/Token\s+~\/\.config\/dida-cli\/config\.json \(the official dida CLI\)/);

    const fromEnv = await h.run(['status', ...base, '--json'], { env: { DIDA_TODO_TOKEN: sim.token } });
    expect(fromEnv.json<StatusJson>().token).toEqual({ source: 'env', file: null });
    expect(fromEnv.out + fromEnv.err).not.toContain(sim.token);
  });

  it('a rejected token exits 3 and an unreachable server exits 1, both still printing the local part', async () => {
    await h.run(['login', '--token', sim.token, ...base]);
    await h.run(['bind', 'Work', ...base]);
    sim.injectFault({ route: 'GET /project', kind: 'status', status: 401, times: 1 });
    const rejected = await h.run(['status', ...base]);
    expect(rejected.code).toBe(3);
    expect(oneErrorLine(rejected)).toMatch(/Dida rejected the token from .*credentials\.json.* \(401 from http:\/\/127\.0\.0\.1:\d+\/open\/v1\)/);
    expect(rejected.out).toMatch(new RegExp(`Directory\\s+${h.project} → "Work"`));

    const port = await closedPort();
    const down = await h.run(['status', '--base-url', `http://127.0.0.1:${port}/open/v1`, '--json']);
    expect(down.code).toBe(1);
    expect(failureLine(down)).toContain(`The simulator at http://127.0.0.1:${port}/open/v1 is not running (start it with`);
    expect(down.json<StatusJson>()).toMatchObject({ reachability: { checked: true, ok: false, code: 'network' }, binding: { list: 'unknown' } });
  });

  it('a malformed credentials file is a token problem (exit 3), reported not rewritten', async () => {
    await mkdir(h.configDir, { recursive: true });
    await writeFile(h.credentialsFile, '{"token": 1}', { mode: 0o600 });
    const result = await h.run(['status', ...base, '--json']);
    expect(result.code).toBe(3);
    expect(oneErrorLine(result)).toMatch(/not a valid credentials file.*`dida-todo login --token -`/);
    expect(result.err).not.toContain('<token>');
    expect(await readFile(h.credentialsFile, 'utf8')).toBe('{"token": 1}');
  });

  it('an invalid config.yaml is reported (exit 1)', async () => {
    await mkdir(h.configDir, { recursive: true });
    await writeFile(h.configFile, 'bindings: [oops');
    const result = await h.run(['status', ...base], { env: { DIDA_TODO_TOKEN: sim.token } });
    expect(result.code).toBe(1);
    expect(oneErrorLine(result)).toMatch(/config\.yaml has an error: line 1: YAML syntax error/);
    expect(result.out).toMatch(/Config\s+.*config\.yaml has an error/);
  });
});
