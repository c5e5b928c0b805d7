// The machine poller's upkeep between polls, with real engines over the simulator and one shared state file: Works
// handed to sessions nobody will carry on are released (their process died before the turn, the session went on to
// another Work, the claim was never posted), offers nobody takes are withdrawn after their time, who counts as an idle
// session of another process, the order idle sessions are served in, a list no session is bound to any more, and what
// a process does while the Dida account is unknown or an answer waits for one of its sessions.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { keyOf } from '../../src/core/work/work-io';
import { OFFER_TTL_MS } from '../../src/runtime/polling/machine-poller';
import { startPollWorld, type PollProcess, type PollWorld, type SessionMarks } from '../helpers/poll-world';
import { makeStep, makeWork } from '../helpers/work-fixtures';

let w: PollWorld;
beforeEach(async () => {
  w = await startPollWorld({ bound: '/code/app' });
});
afterEach(async () => {
  await w.close();
});

const edit = (p: PollProcess, sessionId: string, fields: Partial<SessionMarks>) =>
  p.deps.state.update((s) => {
    Object.assign(s.sessions[sessionId]!, fields, { updatedAt: Date.now() });
  });

/** A (leading, its one session busy) hands a new task to B's idle session, and B takes it. */
async function handedToB(title: string) {
  const a = w.process(101);
  const b = w.process(102);
  const busy = await a.session('session-aaaa1111', '/code/app', 'running');
  await a.tick();
  const sb = await b.session('session-bbbb2222', '/code/app');
  await b.tick();
  const t = w.task(title);
  await a.advance(20_000);
  await a.tick();
  await b.tick();
  expect(sb.woken).toHaveLength(1);
  expect(w.claimsOf(t.id).map((c) => c.session)).toEqual(['bbbb2222']);
  return { a, b, busy, sb, t };
}

describe('Works nobody will carry on are released', () => {
  it('the session’s process died before its turn began: released at the next sweep (every 30 s), then offered again', async () => {
    const { a, b, busy, t } = await handedToB('没人接手');
    b.close();
    w.alive.delete(102);
    // The first sweep ran at the first lead; the next is due 30 s after it.
    await a.advance(5_000);
    await a.tick();
    expect(w.releasesOf(t.id)).toHaveLength(0);
    await a.advance(30_000);
    await a.tick();
    expect(w.releasesOf(t.id)).toHaveLength(1);
    expect(a.logs.join('\n')).toContain('the process of its session ended before the session started on it');
    expect((await w.marks('session-bbbb2222'))?.pollWoken ?? []).not.toContain(t.id);
    busy.status = 'idle';
    await a.advance(20_000);
    await a.tick();
    expect(busy.woken).toHaveLength(1);
    expect(w.claimsOf(t.id).map((c) => c.session)).toEqual(['bbbb2222', 'aaaa1111']);
    // Released once: later sweeps leave it with its new holder.
    await a.advance(31_000);
    await a.tick();
    expect(w.releasesOf(t.id)).toHaveLength(1);
  });

  it('a dead process’s session whose turn was open is left to crash recovery (not released)', async () => {
    const { a, b, t } = await handedToB('恢复来做');
    await edit(b, 'session-bbbb2222', { turnOpenSince: Date.now() });
    b.close();
    w.alive.delete(102);
    await a.advance(31_000);
    await a.tick();
    expect(w.releasesOf(t.id)).toHaveLength(0);
  });

  it('a live session that went on to another Work frees the unfinished one it was handed', async () => {
    const { a, b, t } = await handedToB('半途换了');
    const other = w.task('另一件');
    // The session switched to another Work (its current one now), leaving the first open and unfinished.
    await b.engine.sync(w.list.id);
    await b.engine.switchTo('session-bbbb2222', w.list.id, other.id);
    await a.advance(31_000);
    await a.tick();
    expect(w.releasesOf(t.id)).toHaveLength(1);
    expect(a.logs.join('\n')).toContain('its session went on to another Work');
    // Its current Work is its own: not released.
    expect(w.releasesOf(other.id)).toHaveLength(0);
  });

  it('a live session’s current Work, a Work that waits for the person, one of another list: not released', async () => {
    const { a, b, t } = await handedToB('留着');
    await a.advance(31_000);
    await a.tick();
    expect(w.releasesOf(t.id)).toHaveLength(0);
    // Waiting for the person, and not current any more: still not released (the person's answer brings it back).
    const other = w.task('另一件');
    await b.engine.waitForHuman('session-bbbb2222', '需要你确认');
    await b.engine.sync(w.list.id);
    await b.engine.switchTo('session-bbbb2222', w.list.id, other.id);
    await a.advance(31_000);
    await a.tick();
    expect(w.releasesOf(t.id)).toHaveLength(0);
    // A Work of another list in the record: this list's leader leaves it alone.
    await a.deps.state.update((s) => {
      s.works[t.id]!.waiting = undefined;
      s.works[t.id]!.projectId = 'another-list';
    });
    await a.advance(31_000);
    await a.tick();
    expect(w.releasesOf(t.id)).toHaveLength(0);
  });

  it('handed over but never claimed in Dida (the claim was refused): forgotten, so it may be offered again', async () => {
    const { a, b, busy, t } = await handedToB('没认领上');
    const other = w.task('另一件');
    await b.engine.sync(w.list.id);
    await b.engine.switchTo('session-bbbb2222', w.list.id, other.id);
    await a.deps.state.update((s) => {
      delete s.works[t.id]!.claim;
    });
    await a.advance(31_000);
    await a.tick();
    expect(w.releasesOf(t.id)).toHaveLength(0);
    expect((await w.marks('session-bbbb2222'))?.pollWoken ?? []).not.toContain(t.id);
    expect(busy.woken).toHaveLength(0);
  });
});

describe('offers nobody takes', () => {
  it('an offer to a live process that does not look is withdrawn after its time, not before', async () => {
    const a = w.process(101);
    const b = w.process(102);
    await a.session('session-aaaa1111', '/code/app', 'running');
    await a.tick();
    await b.session('session-bbbb2222', '/code/app');
    await b.tick();
    const t = w.task('没人看');
    await a.advance(20_000);
    await a.tick();
    expect((await w.marks('session-bbbb2222'))?.pollOffer?.key).toBe(t.id);
    // B stays alive but never looks again: the offer stands until its time is up (measured from when it was made).
    b.close();
    const at = (await w.marks('session-bbbb2222'))!.pollOffer!.at;
    await a.advance(at + OFFER_TTL_MS - 2_000 - a.clock.now());
    await a.tick();
    expect((await w.marks('session-bbbb2222'))?.pollOffer?.key).toBe(t.id);
    expect(w.releasesOf(t.id)).toHaveLength(0);
    await a.advance(2_000);
    await a.tick();
    expect((await w.marks('session-bbbb2222'))?.pollOffer).toBeUndefined();
    expect(w.releasesOf(t.id)).toHaveLength(1);
    expect(a.logs.join('\n')).toContain('its session did not take it in time');
  });

  it('an offer of another list is left to that list’s leader', async () => {
    const a = w.process(101);
    await a.session('session-aaaa1111', '/code/app', 'running');
    await a.deps.state.update((s) => {
      s.sessions['session-gone'] = { touched: [], autoAttempts: 0, updatedAt: Date.now(), livePid: 999, pollOffer: { key: 'x', projectId: 'another-list', at: 0, by: 1 } } as never;
    });
    await a.tick();
    await a.advance(OFFER_TTL_MS);
    await a.tick();
    expect((await w.marks('session-gone'))?.pollOffer?.key).toBe('x');
  });

  it('an offer that is not for the list the session is bound to (it moved meanwhile) is declined and released', async () => {
    const { a, b } = await handedToB('第一件');
    const sb = b.agents.get('session-bbbb2222')!;
    // Its first Work ended, so it is free again, and the leader offers it the next task.
    await b.deps.state.update((s) => {
      s.works[s.sessions['session-bbbb2222']!.currentWork!]!.phase = 'closed';
    });
    const t2 = w.task('第二件');
    await a.advance(20_000);
    await a.tick();
    expect((await w.marks('session-bbbb2222'))?.pollOffer?.key).toBe(t2.id);
    await b.deps.state.update((s) => {
      (s.sessions['session-bbbb2222'] as SessionMarks).pollOffer!.projectId = 'another-list';
    });
    await b.tick();
    expect(sb.woken).toHaveLength(1);
    expect(b.logs.join('\n')).toContain('its session was busy when the hand-over arrived');
    expect(w.releasesOf(t2.id)).toHaveLength(1);
    expect((await w.marks('session-bbbb2222'))?.pollWoken ?? []).not.toContain(t2.id);
  });
});

describe('who is an idle session of the machine', () => {
  it('subagents and sessions in unbound directories are not offered work', async () => {
    const a = w.process(101);
    const sub = await a.session('session-sub00001', '/code/app');
    a.tracker.get('session-sub00001')!.subagent = true;
    const loose = await a.session('session-loose001', '/code/elsewhere');
    w.task('给谁');
    await a.tick();
    await a.advance(20_000);
    await a.tick();
    expect(sub.woken).toHaveLength(0);
    expect(loose.woken).toHaveLength(0);
    // Nobody could take it: the list was not even read.
    expect(w.reads()).toBe(0);
  });

  it('another process’s session counts only while it takes part in polling from the process it lives in', async () => {
    const a = w.process(101);
    await a.session('session-aaaa1111', '/code/app', 'running');
    await a.tick();
    const b = w.process(102);
    await b.session('session-bbbb2222', '/code/app');
    await b.tick();
    b.close();
    // Its record says it lives in 102, but polling was taken part in from another process: not a candidate.
    await edit(a, 'session-bbbb2222', { pollReady: 103 });
    const t = w.task('谁来');
    await a.advance(20_000);
    await a.tick();
    expect(w.claimsOf(t.id)).toHaveLength(0);
    // Taking part from its own live process again: it is.
    await edit(a, 'session-bbbb2222', { pollReady: 102 });
    await a.advance(20_000);
    await a.tick();
    expect(w.claimsOf(t.id).map((c) => c.session)).toEqual(['bbbb2222']);
  });

  it('a session that moved to another directory is recorded there again (the leader follows its binding)', async () => {
    w.config.value = { ...w.config.value, bindings: [{ cwd: '/code/app', projectId: w.list.id }, { cwd: '/code/other', projectId: 'list-other' }] };
    const a = w.process(101);
    await a.session('session-aaaa1111', '/code/app', 'running');
    await a.tick();
    const b = w.process(102);
    await b.session('session-bbbb2222', '/code/app');
    await b.tick();
    // The record says another directory (bound to another list): the next look writes the session's own again.
    await edit(b, 'session-bbbb2222', { cwd: '/code/other' } as Partial<SessionMarks>);
    await b.tick();
    expect(((await w.marks('session-bbbb2222')) as { cwd?: string }).cwd).toBe('/code/app');
  });

  it('the session idle longest is served first', async () => {
    const a = w.process(101);
    const first = await a.session('session-first001', '/code/app');
    await a.tick();
    await a.advance(5_000);
    const second = await a.session('session-second01', '/code/app');
    await a.advance(20_000);
    await a.tick();
    w.task('只有一件');
    await a.advance(20_000);
    await a.tick();
    expect(first.woken).toHaveLength(1);
    expect(second.woken).toHaveLength(0);
  });

  it('a session holding an unfinished Work claimed by another session is free for new work', async () => {
    const a = w.process(101);
    const sa = await a.session('session-aaaa1111', '/code/app');
    const t1 = w.task('别人的');
    await a.tick();
    expect(sa.woken).toHaveLength(1);
    await a.deps.state.update((s) => {
      s.works[t1.id]!.claim = { holder: 'box#zzzz9999', at: Date.now() };
    });
    const t2 = w.task('新的');
    await a.advance(20_000);
    await a.tick();
    expect(sa.woken).toHaveLength(2);
    expect((await w.marks('session-aaaa1111'))?.currentWork).toBe(t2.id);
  });
});

describe('waking a session for what it was handed', () => {
  it('a hand-over taken starts a new stretch: the continuation count goes back to 0', async () => {
    const a = w.process(101);
    const b = w.process(102);
    await a.session('session-aaaa1111', '/code/app', 'running');
    await a.tick();
    await b.session('session-bbbb2222', '/code/app');
    await b.tick();
    await edit(b, 'session-bbbb2222', { autoAttempts: 2 } as Partial<SessionMarks>);
    w.task('新一轮');
    await a.advance(20_000);
    await a.tick();
    await b.tick();
    expect(b.agents.get('session-bbbb2222')!.woken).toHaveLength(1);
    expect(((await w.marks('session-bbbb2222')) as { autoAttempts?: number }).autoAttempts).toBe(0);
    expect((await w.marks('session-bbbb2222'))?.pollWokenBy).toBe(102);
  });

  it('after a restart a handed Work is not woken for again when it waits for the person, is paused, or was woken here', async () => {
    for (const variant of ['waiting', 'paused', 'same process'] as const) {
      const { b, t } = await handedToB(`重启 ${variant}`);
      if (variant === 'waiting') await b.engine.waitForHuman('session-bbbb2222', '需要你确认');
      if (variant === 'paused') {
        await b.deps.state.update((s) => {
          s.works[t.id]!.waiting = { reason: 'r', previousPriority: 3, applied: true, since: Date.now(), pausedBy: 'priority' };
        });
      }
      b.close();
      w.alive.delete(102);
      // The restarted process has the old pid for 'same process' (its record says it woke the session itself).
      const pid = variant === 'same process' ? 102 : 103;
      const c = w.process(pid);
      const again = await c.session('session-bbbb2222', '/code/app');
      await c.tick();
      expect(again.woken, variant).toHaveLength(0);
      await w.close();
      w = await startPollWorld();
      w.config.value = { ...w.config.value, bindings: [{ cwd: '/code/app', projectId: w.list.id }] };
    }
  });

  it('after a restart a session busy at first is woken for its handed Work once it is idle', async () => {
    const { b, t } = await handedToB('等它空下来');
    b.close();
    w.alive.delete(102);
    const c = w.process(103);
    const again = await c.session('session-bbbb2222', '/code/app', 'running');
    await c.tick();
    expect(again.woken).toHaveLength(0);
    again.status = 'idle';
    await c.advance(1_000);
    await c.tick();
    expect(again.woken).toHaveLength(1);
    expect(again.woken[0]!.content[0]!.text).toContain('等它空下来');
    expect((await w.marks('session-bbbb2222'))?.currentWork).toBe(t.id);
  });

  it('a session of another process bound to another list is not offered this list’s work', async () => {
    w.config.value = { ...w.config.value, bindings: [{ cwd: '/code/app', projectId: w.list.id }, { cwd: '/code/other', projectId: 'list-other' }] };
    const a = w.process(101);
    await a.session('session-aaaa1111', '/code/app', 'running');
    await a.tick();
    const b = w.process(102);
    await b.session('session-bbbb2222', '/code/other');
    await b.tick();
    const t = w.task('不归它');
    await a.advance(20_000);
    await a.tick();
    expect(w.claimsOf(t.id)).toHaveLength(0);
    expect((await w.marks('session-bbbb2222'))?.pollOffer).toBeUndefined();
  });
});

describe('lists, the account and answers', () => {
  it('a process resigns a list none of its sessions is bound to any more, and another process leads it', async () => {
    const a = w.process(101);
    const b = w.process(102);
    await a.session('session-aaaa1111', '/code/app');
    await a.tick();
    await b.session('session-bbbb2222', '/code/app');
    await b.tick();
    expect(a.machine.leads('acct', w.list.id)).toBe(true);
    a.tracker.get('session-aaaa1111')!.binding = undefined;
    await a.advance(1_000);
    await a.tick();
    expect(a.machine.leads('acct', w.list.id)).toBe(false);
    // (B tries again every 2 s.)
    await b.advance(3_000);
    await b.tick();
    expect(b.machine.leads('acct', w.list.id)).toBe(true);
  });

  it('while the account is unknown nothing is read; the reason is logged once per reason', async () => {
    let failure = 'no token';
    const a = w.process(101, {}, {
      account: async () => {
        if (failure) throw new Error(failure);
        return 'acct';
      },
    });
    await a.session('session-aaaa1111', '/code/app');
    w.task('等登录');
    for (let i = 0; i < 3; i++) {
      await a.advance(20_000);
      await a.tick();
    }
    expect(w.reads()).toBe(0);
    expect(a.logs.filter((l) => l.includes('polling waits for Dida access: no token'))).toHaveLength(1);
    failure = 'token rejected';
    await a.advance(1_000);
    await a.tick();
    expect(a.logs.filter((l) => l.startsWith('polling waits for Dida access'))).toHaveLength(2);
    failure = '';
    await a.advance(1_000);
    await a.tick();
    expect(w.reads()).toBe(1);
  });

  it('an answer waiting for a session of this process is delivered on its next look, even where it does not poll', async () => {
    const delivered: number[] = [];
    const a = w.process(101);
    await a.session('session-aaaa1111', '/code/app', 'running');
    await a.tick();
    const b = w.process(102, {}, { afterRead: async () => void delivered.push(Date.now()) });
    await b.session('session-bbbb2222', '/code/app', 'running');
    const t = w.task('问一下');
    await b.engine.sync(w.list.id);
    await b.engine.switchTo('session-bbbb2222', w.list.id, t.id);
    await b.tick();
    expect(delivered).toHaveLength(0);
    // An answer taken from Dida waits in the state for the session's current Work (no longer waiting).
    await b.deps.state.update((s) => {
      s.works[t.id]!.pendingAnswer = { commentId: 'c1', text: '用第二种', at: Date.now() } as never;
    });
    await b.tick();
    expect(delivered).toHaveLength(1);
    // While the Work still waits for the person, the answer is not handed on yet.
    await b.deps.state.update((s) => {
      s.works[t.id]!.waiting = { reason: 'r', previousPriority: 3, applied: true, since: Date.now() };
    });
    await b.tick();
    expect(delivered).toHaveLength(1);
  });
});

describe('the settle retry', () => {
  it('a settled Work left open is settled again at most every 30 s, at the look that is due', async () => {
    const a = w.process(101);
    await a.session('session-aaaa1111', '/code/app');
    // A Work of the list whose every step is settled, but which was not sent for review (that attempt failed).
    const t = w.task('留着没验收');
    const work = makeWork([makeStep({ id: '1', title: 'a', status: 'completed' })], { taskId: t.id, projectId: w.list.id, updatedAt: Date.now() });
    await a.deps.state.update((s) => {
      s.works[keyOf(work)] = work;
      s.sessions['session-aaaa1111']!.touched = [keyOf(work)];
    });
    const settle = vi.spyOn(a.engine, 'settle').mockResolvedValue([]);
    // The process's first look (at its start) was the last retry: the next is due 30 s after it, not before.
    await a.tick();
    await a.advance(29_000);
    await a.tick();
    expect(settle).not.toHaveBeenCalled();
    await a.advance(1_000);
    await a.tick();
    expect(settle.mock.calls.map((c) => c[0])).toEqual(['session-aaaa1111']);
    await a.advance(29_000);
    await a.tick();
    expect(settle).toHaveBeenCalledTimes(1);
    await a.advance(1_000);
    await a.tick();
    expect(settle).toHaveBeenCalledTimes(2);
  });
});
