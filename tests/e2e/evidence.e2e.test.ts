// Review with evidence and routing in a real dsh headless run: the model commits with the bash tool while a step is in
// progress and the review todo lists that commit with its link; the trigger phrase offers only the Works routed here.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/sim/simulator';
import { text, toolCall, type FakeModel } from './harness/fake-model';
import { runHeadless } from './harness/dsh-run';
import { useDshWorld } from './harness/world';

let model: FakeModel;
let sim: Simulator;
let home: string;
let project: string;

const GIT_ENV = { GIT_AUTHOR_NAME: 'Agent', GIT_AUTHOR_EMAIL: 'agent@example.invalid', GIT_COMMITTER_NAME: 'Agent', GIT_COMMITTER_EMAIL: 'agent@example.invalid', GIT_CONFIG_NOSYSTEM: '1' };

useDshWorld((world) => ({ model, sim, home, project } = world));

function git(...args: string[]): string {
  return execFileSync('git', args, { cwd: project, env: { ...process.env, ...GIT_ENV }, encoding: 'utf8' }).trim();
}

/** config.yaml binding `project` (with `tag`) and a second directory with `otherTag` to the same list. */
function configure(tag?: string, otherTag?: string): { listId: string; patches: string[] } {
  const configDir = path.join(home, '.test-xdg', 'config', 'dida-todo');
  fs.mkdirSync(configDir, { recursive: true });
  const list = sim.seedProject({ name: '产品' });
  const lines = [`baseUrl: ${sim.baseUrl}`, 'bindings:', `  - cwd: ${project}`, `    projectId: ${list.id}`, ...(tag ? [`    tag: ${tag}`] : [])];
  if (otherTag) lines.push(`  - cwd: ${path.join(home, 'elsewhere')}`, `    projectId: ${list.id}`, `    tag: ${otherTag}`);
  fs.writeFileSync(path.join(configDir, 'config.yaml'), `${lines.join('\n')}\n`);
  const overlay = path.join(home, 'dida-row.yml');
  fs.writeFileSync(overlay, '- id: dida-todo\n  config:\n    maxAutoContinue: 0\n');
  return { listId: list.id, patches: [overlay] };
}

describe('review with evidence in a real dsh run', () => {
  it('a commit the model makes with bash while a step is in progress is listed in the review todo with its link', async () => {
    git('init', '-q', '-b', 'feature/login');
    git('remote', 'add', 'origin', 'git@github.com:acme/web.git');
    fs.writeFileSync(path.join(project, 'README.md'), 'hello\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'initial');
    const { listId, patches } = configure();
    const work = sim.seedTask({ projectId: listId, title: '修复登录', priority: 3, items: [{ title: '修好表单' }] });
    model.setScript([
      toolCall('todo_work', { action: 'next' }),
      toolCall('todo', { action: 'update', updates: [{ step: '修好表单', status: 'in_progress' }] }),
      toolCall('bash', { command: 'printf "fixed\\n" > login.ts && git add login.ts && git commit -q -m "Fix the login form"', description: 'commit the fix' }),
      toolCall('todo', { action: 'update', updates: [{ step: '修好表单', status: 'completed', resolution: '表单可以提交' }] }),
      text('DONE'),
    ]);
    const run = await runHeadless({ home, cwd: project, prompt: '检查todo', baseUrl: model.baseUrl, patches, env: { DIDA_TODO_TOKEN: sim.token, ...GIT_ENV }, timeoutMs: 90_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(model.pending()).toEqual([]);
    const sha = git('rev-parse', '--short', 'HEAD');
    expect(git('log', '-1', '--format=%s')).toBe('Fix the login form');

    const review = sim.listTasks(listId).find((t) => t.title === '🧑‍🔬 待验收：修复登录');
    const report = review?.content ?? '';
    expect(report).toContain(`· ${sha} Fix the login form`);
    expect(report).toContain('改了 1 个文件：login.ts');
    expect(report).toContain(`https://github.com/acme/web/commit/${sha}`);
    expect(report).toContain('代码：分支 feature/login');
    // The link back to the session: its id's first eight characters, never the whole id.
    const session = run.sessionLogs[0]!.header.id;
    const tag = session.replace(/^session-/, '').replace(/[^0-9a-z]/gi, '').slice(0, 8);
    expect(report).toContain(`上的会话 ${tag}（目录 `);
    expect(report).not.toContain(session.replace(/^session-/, ''));
    const notes = sim.listComments(work.id).flatMap((c) => c.title.split('\n\n'));
    expect(notes.find((n) => n.startsWith('已完成：修好表单'))).toContain(`· ${sha} Fix the login form`);
  });

  it('the trigger phrase offers only the Works routed to this directory', async () => {
    const { listId, patches } = configure('web', 'api');
    sim.seedTask({ projectId: listId, title: '接口限流', priority: 5, tags: ['api'] });
    sim.seedTask({ projectId: listId, title: '首页改版', priority: 1, tags: ['web'] });
    model.requests.length = 0;
    model.setScript([text('SEEN')]);
    const run = await runHeadless({ home, cwd: project, prompt: '检查todo', baseUrl: model.baseUrl, patches, env: { DIDA_TODO_TOKEN: sim.token }, timeoutMs: 90_000 });
    expect(run.code, run.stderr).toBe(0);
    const request = JSON.stringify(model.chatRequests()[0]?.body?.messages ?? []);
    expect(request).toContain('首页改版');
    expect(request).not.toContain('接口限流');
  });
});
