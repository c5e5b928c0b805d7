// The repository evidence of steps (src/core/steps/step-evidence.ts): git is asked only for calls that may start or
// complete a step, HEAD noted on steps going in progress, commits since each step's own base (read once per base),
// branch and web kept when known, nothing when the base is HEAD, and a failing git never failing the change.
import { describe, expect, it } from 'vitest';
import type { CommitEvidence, RepoEvidencePort } from '../../src/core/evidence/repo-evidence';
import { headBefore, recordEvidence } from '../../src/core/steps/step-evidence';
import type { EngineDeps } from '../../src/core/work/engine-context';
import type { StepRecord, StepStatus } from '../../src/core/work/work-state';
import { makeStep, makeWork } from '../helpers/work-fixtures';

const commit = (sha: string): CommitEvidence => ({ sha, subject: `commit ${sha}`, files: ['a.ts'], moreFiles: 0 });

interface FakeRepo extends RepoEvidencePort {
  calls: string[];
}

function repo(options: { head?: string; since?: Record<string, CommitEvidence[]>; more?: number; remote?: { branch?: string; web?: { kind: 'github'; base: string } }; fail?: string[] } = {}): FakeRepo {
  const calls: string[] = [];
  const failing = (what: string) => {
    if (options.fail?.includes(what)) throw new Error(`git ${what} broke`);
  };
  return {
    calls,
    async head(cwd) {
      calls.push(`head ${cwd}`);
      failing('head');
      return options.head;
    },
    async commitsSince(cwd, sha) {
      calls.push(`since ${cwd} ${sha}`);
      failing('since');
      const commits = options.since?.[sha];
      return commits ? { commits, more: options.more ?? 0 } : undefined;
    },
    async remote(cwd) {
      calls.push(`remote ${cwd}`);
      failing('remote');
      return options.remote;
    },
  };
}

function deps(evidence: RepoEvidencePort | undefined, log: string[] = []): EngineDeps {
  return { ...(evidence ? { evidence } : {}), log: (line: string) => log.push(line) } as unknown as EngineDeps;
}

const t = (step: StepRecord, to: StepStatus, from: StepStatus = 'pending') => ({ step, from, to });

describe('headBefore', () => {
  it('asks git only for calls that may start or complete a step, in a known directory', async () => {
    const r = repo({ head: 'h1' });
    expect(await headBefore(deps(r), '/repo', [{ op: 'add', title: 'x', status: 'in_progress' }])).toBe('h1');
    expect(await headBefore(deps(r), '/repo', [{ op: 'update', step: 's', status: 'in_progress' }])).toBe('h1');
    expect(await headBefore(deps(r), '/repo', [{ op: 'clear' }, { op: 'update', step: 's', status: 'completed', resolution: 'ok' }])).toBe('h1');
    expect(r.calls).toEqual(['head /repo', 'head /repo', 'head /repo']);
    for (const changes of [
      [{ op: 'add' as const, title: 'x' }],
      [{ op: 'add' as const, title: 'x', status: 'pending' as const }],
      [{ op: 'update' as const, step: 's', status: 'skipped' as const, resolution: 'no' }],
      [{ op: 'update' as const, step: 's', title: 'renamed' }],
      [{ op: 'delete' as const, step: 's' }],
      [{ op: 'clear' as const }],
    ]) {
      expect(await headBefore(deps(r), '/repo', changes)).toBeUndefined();
    }
    expect(await headBefore(deps(r), undefined, [{ op: 'update', step: 's', status: 'completed' }])).toBeUndefined();
    expect(await headBefore(deps(r), '', [{ op: 'update', step: 's', status: 'completed' }])).toBeUndefined();
    expect(r.calls).toHaveLength(3);
    expect(await headBefore(deps(undefined), '/repo', [{ op: 'update', step: 's', status: 'completed' }])).toBeUndefined();
  });

  it('a failing git read is logged and gives no HEAD', async () => {
    const log: string[] = [];
    expect(await headBefore(deps(repo({ fail: ['head'] }), log), '/repo', [{ op: 'update', step: 's', status: 'in_progress' }])).toBeUndefined();
    expect(log).toEqual(['could not read the repository (HEAD): git head broke']);
  });
});

describe('recordEvidence', () => {
  it('notes HEAD on steps going in progress and remembers it on the Work, without reading commits', async () => {
    const r = repo();
    const a = makeStep({ id: 'a', title: 'a' });
    const b = makeStep({ id: 'b', title: 'b' });
    const work = makeWork([a, b]);
    await recordEvidence(deps(r), work, [t(a, 'in_progress'), t(b, 'deleted')], '/repo', 'h2');
    expect(a.head).toBe('h2');
    expect(b.head).toBeUndefined();
    expect(work.repoHead).toBe('h2');
    expect(r.calls).toEqual([]);
  });

  it('gives a completed step the commits since its own start, with the branch and the web home', async () => {
    const web = { kind: 'github' as const, base: 'https://github.com/o/r' };
    const r = repo({ since: { h1: [commit('c1'), commit('c2')] }, more: 3, remote: { branch: 'main', web } });
    const a = makeStep({ id: 'a', title: 'a', status: 'in_progress', head: 'h1' });
    const work = makeWork([a], { repoHead: 'h0' });
    await recordEvidence(deps(r), work, [t(a, 'completed', 'in_progress')], '/repo', 'h9');
    expect(a.evidence).toEqual({ commits: [commit('c1'), commit('c2')], moreCommits: 3, branch: 'main', web });
    expect(work.repoHead).toBe('h9');
    expect(r.calls).toEqual(['remote /repo', 'since /repo h1']);
  });

  it('a step completed without starting counts from the Work’s last HEAD; each base is read once', async () => {
    const r = repo({ since: { h0: [commit('c1')] } });
    const a = makeStep({ id: 'a', title: 'a' });
    const b = makeStep({ id: 'b', title: 'b' });
    const work = makeWork([a, b], { repoHead: 'h0' });
    await recordEvidence(deps(r), work, [t(a, 'completed'), t(b, 'completed')], '/repo', 'h5');
    expect(a.evidence).toEqual({ commits: [commit('c1')], moreCommits: 0 });
    expect(b.evidence).toEqual({ commits: [commit('c1')], moreCommits: 0 });
    expect(r.calls).toEqual(['remote /repo', 'since /repo h0']);
  });

  it('no evidence when the base is HEAD, unknown, or nothing was committed since', async () => {
    const r = repo({ since: { h1: [], h2: [commit('c')] } });
    const same = makeStep({ id: 'a', title: 'a', head: 'h5' });
    const none = makeStep({ id: 'b', title: 'b', head: 'h1' });
    const work = makeWork([same, none]);
    await recordEvidence(deps(r), work, [t(same, 'completed'), t(none, 'completed')], '/repo', 'h5');
    expect(same.evidence).toBeUndefined();
    expect(none.evidence).toBeUndefined();
    expect(r.calls).toEqual(['remote /repo', 'since /repo h1']);
    // Without any base (no start, no HEAD known on the Work) git is not asked.
    const r2 = repo();
    const fresh = makeStep({ id: 'c', title: 'c' });
    await recordEvidence(deps(r2), makeWork([fresh]), [t(fresh, 'completed')], '/repo', 'h5');
    expect(r2.calls).toEqual([]);
    // Every base equal to HEAD: nothing read either.
    const r3 = repo();
    const at = makeStep({ id: 'd', title: 'd', head: 'h5' });
    await recordEvidence(deps(r3), makeWork([at]), [t(at, 'completed')], '/repo', 'h5');
    expect(r3.calls).toEqual([]);
  });

  it('the branch and web are left out when git does not know them or fails; failing commits give no evidence', async () => {
    const log: string[] = [];
    const r = repo({ since: { h1: [commit('c')] }, remote: {}, fail: [] });
    const a = makeStep({ id: 'a', title: 'a', head: 'h1' });
    await recordEvidence(deps(r, log), makeWork([a]), [t(a, 'completed')], '/repo', 'h2');
    expect(a.evidence).toEqual({ commits: [commit('c')], moreCommits: 0 });
    const failing = repo({ since: { h1: [commit('c')] }, fail: ['remote'] });
    const b = makeStep({ id: 'b', title: 'b', head: 'h1' });
    await recordEvidence(deps(failing, log), makeWork([b]), [t(b, 'completed')], '/repo', 'h2');
    expect(b.evidence).toEqual({ commits: [commit('c')], moreCommits: 0 });
    const noCommits = repo({ fail: ['since'] });
    const c = makeStep({ id: 'c', title: 'c', head: 'h1' });
    const work = makeWork([c]);
    await recordEvidence(deps(noCommits, log), work, [t(c, 'completed')], '/repo', 'h2');
    expect(c.evidence).toBeUndefined();
    expect(work.repoHead).toBe('h2');
    expect(log).toEqual(['could not read the repository (branch and remote): git remote broke', 'could not read the repository (commits): git since broke']);
  });

  it('a failing git without a log still gives no HEAD and never fails', async () => {
    const quiet = { evidence: repo({ fail: ['head'] }) } as unknown as EngineDeps;
    expect(await headBefore(quiet, '/repo', [{ op: 'update', step: 's', status: 'in_progress' }])).toBeUndefined();
  });

  it('only completed steps get commits: a skipped or deleted one beside it gets none', async () => {
    const r = repo({ since: { h0: [commit('c1')] } });
    const done = makeStep({ id: 'a', title: 'a' });
    const skipped = makeStep({ id: 'b', title: 'b' });
    const deleted = makeStep({ id: 'c', title: 'c' });
    await recordEvidence(deps(r), makeWork([done, skipped, deleted], { repoHead: 'h0' }), [t(skipped, 'skipped'), t(deleted, 'deleted'), t(done, 'completed')], '/repo', 'h5');
    expect(done.evidence).toEqual({ commits: [commit('c1')], moreCommits: 0 });
    expect(skipped.evidence).toBeUndefined();
    expect(deleted.evidence).toBeUndefined();
  });

  it('does nothing without a repository reader', async () => {
    const a = makeStep({ id: 'a', title: 'a' });
    const work = makeWork([a]);
    await recordEvidence(deps(undefined), work, [t(a, 'in_progress')], '/repo', 'h1');
    expect(a.head).toBeUndefined();
    expect(work.repoHead).toBeUndefined();
  });
});
