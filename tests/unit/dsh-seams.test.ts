// Each probe of what the running dsh offers (src/dsh/host-seams.ts), the bundle's own message kind and every shape it is
// recognised in (src/dsh/ports.ts), the session log's file names, and how a turn's end is read (unknown kinds are
// neither a failure nor a finished turn).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { resetsCounter, turnEnding } from '../../src/core/continuation/continuation-policy';
import { HostSeams, parseSeamReport, runningDshVersion, SEAMS, SEAM_REPORT_FILE } from '../../src/dsh/host-seams';
import { goalOf, SESSION_LOG_FILE, type HostContext } from '../../src/dsh/ports';
import { canWake, isOwnSource, isPersonSource, onOwnKindRefused, ownSourceKind, pluginMessage, resetOwnSourceKind, sendOwnMessage } from '../../src/runtime/session/messages';
import { fakeAgent } from '../helpers/dsh-fakes';
import { rc8Services } from '../helpers/dsh-host-fake';
import { fakeDshInstall } from '../helpers/newer-dsh-host';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dida-seams-'));
  resetOwnSourceKind();
});
afterEach(() => {
  resetOwnSourceKind();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("the bundle's messages", () => {
  it('carry its own kind, and are recognised in every shape they have had; a person is only the user kind', () => {
    expect(pluginMessage('hi', 'm1').source).toEqual({ kind: 'dida-todo', plugin: 'dida-todo', form: 'notice' });
    for (const source of [{ kind: 'dida-todo' }, { kind: 'plugin', plugin: 'dida-todo' }, { kind: 'plugin:dida-todo' }]) expect(isOwnSource(source), JSON.stringify(source)).toBe(true);
    for (const source of [{ kind: 'plugin', plugin: 'time-context' }, { kind: 'plugin' }, { kind: 'user' }, { kind: 'goal' }, { kind: 'plugin:other' }, null, undefined]) expect(isOwnSource(source), JSON.stringify(source)).toBe(false);
    expect(isPersonSource({ kind: 'user' })).toBe(true);
    for (const source of [{ kind: 'dida-todo' }, { kind: 'goal' }, undefined]) expect(isPersonSource(source)).toBe(false);
  });

  it('a dsh that refuses the own kind gets the shared kind from then on, said once; any other error is thrown', () => {
    const refused = vi.fn();
    const off = onOwnKindRefused(refused);
    const sent: Array<{ source: { kind: string } }> = [];
    const strict = (message: { source: { kind: string } }) => {
      if (message.source.kind !== 'plugin') throw new Error(`message source kind "${message.source.kind}" is not declared`);
      sent.push(message);
    };
    expect(sendOwnMessage(strict, 'a', 'm1').source.kind).toBe('plugin');
    expect(ownSourceKind()).toBe('plugin');
    expect(sendOwnMessage(strict, 'b', 'm2').source.kind).toBe('plugin');
    expect(sent.map((m) => m.source.kind)).toEqual(['plugin', 'plugin']);
    expect(refused).toHaveBeenCalledTimes(1);
    off();
    resetOwnSourceKind();
    const broken = () => {
      throw new Error('agent disposed');
    };
    expect(() => sendOwnMessage(broken, 'c', 'm3')).toThrow('agent disposed');
    expect(ownSourceKind()).toBe('dida-todo');
    const ok: unknown[] = [];
    expect(sendOwnMessage((m) => ok.push(m), 'd', 'm4', 'instructions').source).toEqual({ kind: 'dida-todo', plugin: 'dida-todo', form: 'instructions' });
    expect(ok).toHaveLength(1);
  });

  it('a goal service that throws or answers oddly is no goal; an agent without followup cannot be woken', () => {
    const agent = fakeAgent('a');
    const ctx = (goals: unknown) => ({ get: (name: string) => (name === 'goals' ? goals : undefined) }) as unknown as HostContext;
    expect(goalOf(ctx({ get: () => ({ id: 'g', revision: 1, phase: 'active' }) }), agent)?.phase).toBe('active');
    expect(goalOf(ctx({ get: () => { throw new Error('GoalError: not the live agent'); } }), agent)).toBeUndefined();
    expect(goalOf(ctx({ get: () => 'active' }), agent)).toBeUndefined();
    expect(goalOf(ctx(undefined), agent)).toBeUndefined();
    expect(canWake(agent)).toBe(true);
    delete (agent as { followup?: unknown }).followup;
    expect(canWake(agent)).toBe(false);
  });
});

describe('what the bundle reads of dsh', () => {
  it("session log files by every name dsh gives them (rc.8's, the V4 one, plain JSONL), and nothing else", () => {
    for (const name of ['session.jsonl.zstd', 'session.v4.jsonl.zstd', 'session.jsonl', 'session.v12.jsonl']) expect(SESSION_LOG_FILE.test(name), name).toBe(true);
    for (const name of ['session.v4.json', 'xsession.jsonl', 'session.jsonl.zst', 'session.vx.jsonl', 'session.jsonl.zstd.tmp']) expect(SESSION_LOG_FILE.test(name), name).toBe(false);
  });

  it('a turn ends finished, failed, stopped, or in a way it does not know: that is neither, and keeps the count', () => {
    expect(turnEnding('completed')).toBe('finished');
    expect(turnEnding('error')).toBe('failed');
    for (const kind of ['aborted', 'blocked', 'max-tokens', 'interrupted']) expect(turnEnding(kind)).toBe('stopped');
    for (const kind of ['forked', '', 'COMPLETED']) expect(turnEnding(kind)).toBe('other');
    expect(resetsCounter({ kind: 'turn_end', reason: 'completed' })).toBe(true);
    expect(resetsCounter({ kind: 'turn_end', reason: 'forked' })).toBe(false);
    expect(resetsCounter({ kind: 'turn_end', reason: 'error' })).toBe(false);
  });

  it('the running dsh version comes from the dsh manifest above the started script', () => {
    expect(runningDshVersion(fakeDshInstall(dir, '0.2.0-rc.2'))).toBe('0.2.0-rc.2');
    const other = path.join(dir, 'other', 'bin');
    fs.mkdirSync(other, { recursive: true });
    fs.writeFileSync(path.join(dir, 'other', 'package.json'), JSON.stringify({ name: 'vitest', version: '4.1.12' }));
    fs.writeFileSync(path.join(other, 'run.js'), '');
    expect(runningDshVersion(path.join(other, 'run.js'))).toBeUndefined();
    expect(runningDshVersion(path.join(dir, 'missing.js'))).toBeUndefined();
    expect(runningDshVersion(undefined)).toBeUndefined();
  });
});

/** A HostSeams writing its report under `dir`, with its log lines. */
function seams(version: string | null = '0.2.0-rc.2') {
  const lines: string[] = [];
  const s = new HostSeams({ stateDir: path.join(dir, 'state'), log: (l) => lines.push(l), version: version ?? undefined, now: () => 1_796_000_000_000 });
  return { s, lines, said: () => lines.filter((l) => l.includes(' lacks ')) };
}
const rc8 = () => ({ ...rc8Services(), systemPrompt: { section: () => () => undefined } });
const fullCtx = (services: Record<string, unknown> = rc8(), resume: unknown = async () => ({})) => ({ get: (name: string) => services[name], agents: { get: () => undefined, resume: resume ?? undefined } }) as unknown as HostContext;
const readReport = () => parseSeamReport(fs.readFileSync(path.join(dir, 'state', SEAM_REPORT_FILE), 'utf8'));

describe('the probes', () => {
  it('at start: each service this dsh lacks, and nothing when it has them all', async () => {
    const full = seams();
    full.s.probeServices(fullCtx());
    full.s.probeAgent(Object.assign(fakeAgent('a'), { cancel: vi.fn() }));
    full.s.announce(fullCtx());
    await full.s.written();
    expect(full.said()).toEqual([]);
    expect(readReport().dsh['0.2.0-rc.2']).toEqual({ at: 1_796_000_000_000, missing: [], sourceKind: 'dida-todo' });
    for (const [name, id] of [['goals', 'goals'], ['systemPrompt', 'systemPrompt'], ['commands', 'commands'], ['sessionProjections', 'panel']] as const) {
      const one = seams(null);
      one.s.announce(fullCtx({ ...rc8(), [name]: undefined }));
      expect(one.s.lacks(id), name).toBe(true);
      expect(SEAMS.filter((s) => one.s.lacks(s.id)).map((s) => s.id)).toEqual([id]);
    }
    const noResume = seams(null);
    noResume.s.announce(fullCtx(rc8(), null));
    expect(noResume.s.lacks('resume')).toBe(true);
    const throwing = seams(null);
    throwing.s.announce({ get: () => { throw new Error('no such service'); }, agents: {} } as unknown as HostContext);
    expect(['goals', 'systemPrompt', 'commands', 'panel', 'resume'].every((id) => throwing.s.lacks(id as never))).toBe(true);
  });

  it('of the first top-level agent: each method it lacks; one without a session is passed over', () => {
    for (const [method, id] of [['followup', 'followup'], ['inject', 'inject'], ['cancel', 'cancel']] as const) {
      const one = seams(null);
      const agent = Object.assign(fakeAgent('a'), { cancel: vi.fn() });
      delete (agent as unknown as Record<string, unknown>)[method];
      one.s.probeAgent(agent);
      expect(one.s.lacks(id), method).toBe(true);
    }
    const bare = seams(null);
    const sessionless = fakeAgent('x');
    delete (sessionless as { session?: unknown }).session;
    bare.s.probeAgent(sessionless);
    expect(bare.s.lacks('append')).toBe(false);
    const noAppend = Object.assign(fakeAgent('y'), { cancel: vi.fn() });
    delete (noAppend.ctx as { tools?: unknown }).tools;
    (noAppend.session as { append?: unknown }).append = undefined;
    bare.s.probeAgent(noAppend);
    expect([bare.s.lacks('append'), bare.s.lacks('restrict'), bare.s.lacks('followup')]).toEqual([true, true, false]);
  });

  it('says what is missing once: the start report, then each later one when it shows; a surface seen working is never missing', async () => {
    const { s, lines, said } = seams();
    const told: string[] = [];
    s.onLack((id) => told.push(id));
    s.probeAgent(Object.assign(fakeAgent('a'), { cancel: undefined }));
    s.lack('requestError', 'a turn failed without it');
    expect(said()).toEqual([]);
    s.announce(fullCtx());
    expect(said()).toHaveLength(1);
    expect(said()[0]).toMatch(/^this dsh 0\.2\.0-rc\.2 lacks /);
    expect(said()[0]).toContain('agent/request-error (without it: automatic continuation after a failed model request)');
    expect(said()[0]).toContain('agent.cancel (without it: stopping a running turn');
    expect(told.sort()).toEqual(['cancel', 'requestError']);
    s.present('preStep');
    s.lack('preStep', 'a step started without it');
    s.lack('requestError');
    s.lack('inbox', 'admitted without it');
    s.announce(fullCtx());
    expect(said()).toHaveLength(2);
    expect(said()[1]).toContain('lacks agent/inbox/inserted');
    expect(told.sort()).toEqual(['cancel', 'inbox', 'requestError']);
    expect(s.gaps().sort()).toEqual(['continuation', 'phone']);
    expect(lines.filter((l) => l.includes('a step started without it'))).toEqual([]);
    await s.written();
    expect(readReport().dsh['0.2.0-rc.2']!.missing).toEqual(['requestError', 'inbox', 'cancel']);
  });

  it('the report keeps, per dsh version, what was seen missing until it is seen working; an unknown version keeps none', async () => {
    const first = seams();
    first.s.lack('requestError');
    first.s.lack('goals');
    first.s.announce(fullCtx());
    await first.s.written();
    fs.writeFileSync(path.join(dir, 'state', SEAM_REPORT_FILE), JSON.stringify({ ...readReport(), dsh: { ...readReport().dsh, '0.1.0-rc.8': { at: 1, missing: [], sourceKind: 'dida-todo' } } }));
    // The next process of that dsh has goals (probed anew) but has not had a failed request yet: the observation stays.
    const next = seams();
    next.s.announce(fullCtx());
    await next.s.written();
    expect(readReport().dsh['0.2.0-rc.2']!.missing).toEqual(['requestError']);
    expect(readReport().dsh['0.1.0-rc.8']).toEqual({ at: 1, missing: [], sourceKind: 'dida-todo' });
    next.s.present('requestError');
    await next.s.written();
    expect(readReport().dsh['0.2.0-rc.2']!.missing).toEqual([]);
    const before = fs.statSync(path.join(dir, 'state', SEAM_REPORT_FILE)).mtimeMs;
    const same = seams();
    same.s.announce(fullCtx());
    await same.s.written();
    expect(fs.statSync(path.join(dir, 'state', SEAM_REPORT_FILE)).mtimeMs).toBe(before);
    fs.rmSync(path.join(dir, 'state'), { recursive: true });
    const unknown = seams(null);
    unknown.s.lack('goals');
    unknown.s.announce(fullCtx());
    await unknown.s.written();
    expect(fs.existsSync(path.join(dir, 'state'))).toBe(false);
    expect(parseSeamReport('{"version":2}')).toEqual({ version: 1, dsh: {} });
    expect(parseSeamReport('nope')).toEqual({ version: 1, dsh: {} });
  });

  it('a report that cannot be written is logged, not thrown', async () => {
    fs.writeFileSync(path.join(dir, 'state'), 'a file where the folder should be');
    const { s, lines } = seams();
    s.lack('goals');
    expect(() => s.announce(fullCtx())).not.toThrow();
    await s.written();
    expect(lines.some((l) => l.startsWith('could not keep what this dsh lacks'))).toBe(true);
  });
});
