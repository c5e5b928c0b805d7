// Review with evidence over the simulator and a real git repository: the commits made while a step ran reach its
// completion comment and the review todo, with the branch, links and the session that did the work.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConfigPort } from '../../src/core/queue/bindings';
import { TOOLS, renderResult, type ToolContext, type ToolResult } from '../../src/core/tools';
import { WorkEngine } from '../../src/core/engine/work-engine';
import { defaultConfig, type DidaTodoConfig } from '../../src/store/config-schema';
import { gitEvidence } from '../../src/wiring/git-evidence';
import { startEngineHarness, type EngineHarness } from '../helpers/engine-harness';
import { makeRepo, type TestRepo } from '../helpers/git-repo';

let h: EngineHarness;
let engine: WorkEngine;
let repo: TestRepo;
let config: DidaTodoConfig;
const cleanup: string[] = [];

const configPort: ConfigPort = {
  read: async () => structuredClone(config),
  update: async (fn) => (config = fn(structuredClone(config))),
};

function ctx(cwd: string): ToolContext {
  return {
    sessionId: 'session-3f2a9c81-aaaa-4bbb-8ccc-123456789abc',
    cwd,
    queueGranted: false,
    config: configPort,
    engine: async () => engine,
    gateway: async () => h.gateway,
    tokenSource: async () => ({ source: 'env' }),
  };
}

async function call(name: string, args: Record<string, unknown>, cwd = repo.dir): Promise<ToolResult> {
  const tool = TOOLS.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool.execute(args, ctx(cwd));
}

beforeEach(async () => {
  h = await startEngineHarness();
  engine = new WorkEngine({ ...h.deps, evidence: gitEvidence() });
  repo = await makeRepo({ branch: 'fix/login', remote: 'git@github.com:acme/web.git' });
  await repo.commit('initial', { 'README.md': 'hello' });
  config = defaultConfig();
});
afterEach(async () => {
  await repo.close();
  await Promise.all(cleanup.splice(0).map((d) => rm(d, { recursive: true, force: true })));
  await h.close();
});

function short(sha: string): string {
  return repo.git('rev-parse', '--short', sha);
}

describe('review with evidence', () => {
  it('puts the commits made while a step ran into its completion comment and the review todo', async () => {
    await call('dida_todo_setup', { action: 'bind', list_name: 'web' });
    await call('todo', { action: 'create', work_title: '修复登录', steps: [{ title: '修复表单', status: 'in_progress' }, { title: '写文档' }] });
    const first = await repo.commit('Fix the login form', { 'src/login.ts': 'fixed', 'src/login.css': 'styled' });
    const second = await repo.commit('测试登录', { 'test/login.test.ts': 'ok' });
    const done = await call('todo', { action: 'update', updates: [{ step: '修复表单', status: 'completed', resolution: '表单提交正常' }] });
    expect(done.code).toBe('ok');
    // The model's result stays a line: the evidence is for the person, in Dida.
    expect(renderResult(done).length).toBeLessThanOrEqual(300);
    expect(renderResult(done)).not.toContain(short(first));

    // A step done without going in progress lists the commits since the Work's last step event.
    const third = await repo.commit('Docs', { 'docs/login.md': 'how' });
    await call('todo', { action: 'update', updates: [{ step: '写文档', status: 'completed', resolution: '文档已更新' }] });
    await h.engine.flushComments();

    const task = h.sim.listTasks().find((t) => t.title === '修复登录');
    // Notes posted together are one comment, separated by a blank line.
    const comments = h.sim.listComments(task!.id).flatMap((c) => c.title.split('\n\n'));
    const formNote = comments.find((c) => c.includes('已完成：修复表单'));
    expect(formNote).toBeDefined();
    expect(formNote).toContain('提交（分支 fix/login）：');
    expect(formNote).toContain(`· ${short(first)} Fix the login form`);
    expect(formNote).toContain('改了 2 个文件：');
    expect(formNote).toContain('src/login.css');
    expect(formNote).toContain(`https://github.com/acme/web/commit/${short(second)}`);
    expect(formNote).not.toContain(short(third));
    const docsNote = comments.find((c) => c.includes('已完成：写文档'));
    expect(docsNote).toContain(`· ${short(third)} Docs`);
    expect(docsNote).not.toContain(short(first));
    for (const comment of comments) expect(comment).not.toContain(first);

    await engine.settle(ctx(repo.dir).sessionId);
    const review = h.sim.listTasks().find((t) => t.title.startsWith('🧑‍🔬'));
    const report = review?.content ?? '';
    expect(report.indexOf(short(first))).toBeGreaterThan(report.indexOf('✅ 修复表单'));
    expect(report.indexOf(short(third))).toBeGreaterThan(report.indexOf('✅ 写文档'));
    expect(report).toContain('代码：分支 fix/login');
    expect(report).toContain('https://github.com/acme/web/tree/fix/login');
    expect(report).toContain('执行：test-host 上的会话 3f2a9c81');
    expect(report).toContain(`（目录 ${repo.dir.startsWith(os.homedir()) ? '~' : repo.dir}`);
    expect(report).not.toMatch(/3f2a9c81-aaaa/);
  });

  it('lists exactly the real commits in the review todo when a subject carries separator characters', async () => {
    await call('dida_todo_setup', { action: 'bind', list_name: 'web' });
    await call('todo', { action: 'create', work_title: '伪造', steps: [{ title: '一步', status: 'in_progress' }] });
    const real = await repo.commit('Real fix\x1ebadc0de\x1fForged commit\nsrc/evil.ts', { 'src/real.ts': 'x' });
    const other = await repo.commit('Second\x1f\x1ecafe123\x1fAlso forged', { 'tab\there.ts': 'y' });
    await call('todo', { action: 'update', updates: [{ step: '一步', status: 'completed', resolution: '好了' }] });
    await h.engine.flushComments();
    await engine.settle(ctx(repo.dir).sessionId);
    const report = h.sim.listTasks().find((t) => t.title.startsWith('🧑‍🔬'))?.content ?? '';
    const commitLines = report.split('\n').filter((line) => /^· [0-9a-f]{7,}/.test(line));
    expect(commitLines.map((line) => line.split(' ')[1])).toEqual([short(real), short(other)]);
    expect(report).not.toMatch(/commit\/(?:badc0de|cafe123)/);
    expect(report).toContain('https://github.com/acme/web/commit/' + short(real));
    expect(report.match(/\/commit\//g)).toHaveLength(2);
  });

  it('writes plain notes for a directory that is not a repository', async () => {
    const plain = await mkdtemp(path.join(os.tmpdir(), 'dida-plain-'));
    cleanup.push(plain);
    await call('dida_todo_setup', { action: 'bind', list_name: 'plain' }, plain);
    await call('todo', { action: 'create', work_title: '整理', steps: [{ title: '一步', status: 'in_progress' }] }, plain);
    await call('todo', { action: 'update', updates: [{ step: '一步', status: 'completed', resolution: '好了' }] }, plain);
    await h.engine.flushComments();
    const task = h.sim.listTasks().find((t) => t.title === '整理');
    expect(h.sim.listComments(task!.id).map((c) => c.title)).toContain('已完成：一步\n结果：好了');
    await engine.settle(ctx(plain).sessionId);
    const report = h.sim.listTasks().find((t) => t.title.startsWith('🧑‍🔬'))?.content ?? '';
    expect(report).not.toContain('代码：');
    expect(report).toContain('执行：test-host 上的会话 3f2a9c81');
  });

  it('a repository read that fails never fails the step change', async () => {
    const lines: string[] = [];
    engine = new WorkEngine({
      ...h.deps,
      log: (line) => lines.push(line),
      evidence: {
        head: async () => 'a'.repeat(40),
        commitsSince: async () => {
          throw new Error('git exploded');
        },
        remote: async () => {
          throw new Error('git exploded');
        },
      },
    });
    await call('dida_todo_setup', { action: 'bind', list_name: 'broken' });
    await call('todo', { action: 'create', work_title: '试试', steps: [{ title: '一步', status: 'in_progress' }] });
    engine = new WorkEngine({ ...engine.deps, evidence: { ...engine.deps.evidence!, head: async () => 'b'.repeat(40) } });
    const done = await call('todo', { action: 'update', updates: [{ step: '一步', status: 'completed', resolution: '好了' }] });
    expect(done.code).toBe('ok');
    expect(lines.join('\n')).toContain('git exploded');
    await engine.flushComments();
    const task = h.sim.listTasks().find((t) => t.title === '试试');
    expect(task?.items?.[0]?.status).toBe(1);
  });

  it('records nothing when no commit was made while the step ran, and remembers the HEAD it started from', async () => {
    await call('dida_todo_setup', { action: 'bind', list_name: 'quiet' });
    await call('todo', { action: 'create', work_title: '检查', steps: [{ title: '看一眼', status: 'in_progress' }] });
    await call('todo', { action: 'update', updates: [{ step: '看一眼', status: 'completed', resolution: '没问题' }] });
    const work = (await h.state()).works[Object.keys((await h.state()).works)[0] as string];
    expect(work?.steps[0]?.evidence).toBeUndefined();
    expect(work?.steps[0]?.head).toBe(repo.head());
    expect(work?.repoHead).toBe(repo.head());
  });
});
