// The machine's poller in the real dsh: two dsh web processes on one machine, each with an idle session bound to the
// same list and polling on with the default pace. A task written in Dida after both went idle is claimed by exactly one
// of the sessions within the goal (30 s), that session is woken with it, and the other process's session is not.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseClaim } from '../../src/core/queue/claims';
import type { Simulator } from '../../src/sim/simulator';
import { text, type FakeModel, type RecordedRequest } from './harness/fake-model';
import { createSession } from './harness/web-api';
import { startWeb, type WebDsh } from './harness/dsh-run';
import { useDshWorld } from './harness/world';

let model: FakeModel;
let sim: Simulator;
let home: string;
let project: string;

useDshWorld((world) => ({ model, sim, home, project } = world), { install: 'web' });

const WAKE = '[dida-todo] New work from the bound Dida list';

function bodyText(r: RecordedRequest): string {
  return JSON.stringify(r.body ?? '');
}

async function until<T>(what: string, probe: () => T | undefined | false, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('the machine poller in the real dsh', () => {
  it('an idle session takes a task written after it went idle within 30 s; the other process does not also take it', async () => {
    const configDir = path.join(home, '.test-xdg', 'config', 'dida-todo');
    fs.mkdirSync(configDir, { recursive: true });
    const list = sim.seedProject({ name: '智能体工作' });
    fs.writeFileSync(path.join(configDir, 'config.yaml'), `baseUrl: ${sim.baseUrl}\nbindings:\n  - cwd: ${project}\n    projectId: ${list.id}\n`);
    const overlay = path.join(home, 'dida-row.yml');
    // Polling on, nothing else: the default pace.
    fs.writeFileSync(overlay, '- id: dida-todo\n  config:\n    poll: true\n');
    const env = { DIDA_TODO_TOKEN: sim.token };
    const webs: WebDsh[] = [];
    try {
      webs.push(await startWeb({ home, cwd: project, baseUrl: model.baseUrl, patches: [overlay], env }));
      webs.push(await startWeb({ home, cwd: project, baseUrl: model.baseUrl, patches: [overlay], env }));
      const sessions = [await createSession(webs[0]!.url, project), await createSession(webs[1]!.url, project)];
      // Both sessions idle, their hosts loaded and the poller elected (a first look, then a poll of the empty list).
      await until('a first poll of the list', () => (sim.counters()['GET /project/{pid}/data'] ?? 0) >= 1, 60_000);
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      model.setScript([text('收到，开始处理')]);
      const written = Date.now();
      const task = sim.seedTask({ projectId: list.id, title: '手机上写的任务', priority: 3 });
      const claim = await until('the claim comment', () => sim.listComments(task.id).find((c) => parseClaim(c.title)), 45_000);
      const pickedUp = Date.now() - written;
      console.log(`[poll e2e] task written → claim comment in ${pickedUp} ms`);
      const wake = await until('the woken session’s model request', () => model.chatRequests().find((r) => bodyText(r).includes(WAKE)), 20_000);
      // Let a few more polls pass: nobody else is woken for it, and it is claimed once.
      await new Promise((resolve) => setTimeout(resolve, 25_000));
      const wakes = model.chatRequests().filter((r) => bodyText(r).includes(WAKE));
      expect(wakes).toHaveLength(1);
      expect(bodyText(wake)).toContain('手机上写的任务');
      const claims = sim.listComments(task.id).filter((c) => parseClaim(c.title));
      expect(claims).toHaveLength(1);
      const holder = parseClaim(claim.title)!.session;
      expect(sessions.some((id) => id.replace(/[^0-9A-Za-z]/g, '').includes(holder))).toBe(true);
    } finally {
      for (const web of webs) await web.stop('SIGTERM');
    }
  }, 240_000);
});

describe('the poller as a new user gets it', () => {
  async function idleWeb(configText: (listId: string) => string): Promise<{ web: WebDsh; listId: string; configFile: string }> {
    const configDir = path.join(home, '.test-xdg', 'config', 'dida-todo');
    fs.mkdirSync(configDir, { recursive: true });
    const list = sim.seedProject({ name: '默认轮询' });
    const configFile = path.join(configDir, 'config.yaml');
    fs.writeFileSync(configFile, configText(list.id));
    const web = await startWeb({ home, cwd: project, baseUrl: model.baseUrl, env: { DIDA_TODO_TOKEN: sim.token } });
    await createSession(web.url, project);
    return { web, listId: list.id, configFile };
  }
  const bindingOf = (listId: string) => `baseUrl: ${sim.baseUrl}\nbindings:\n  - cwd: ${project}\n    projectId: ${listId}\n`;

  it('with the default config, a task written in Dida is claimed by an idle dsh web session within 60 s', async () => {
    const { web, listId } = await idleWeb(bindingOf);
    try {
      await until('a first read of the list', () => (sim.counters()['GET /project/{pid}/data'] ?? 0) >= 1, 60_000);
      model.setScript([text('收到')]);
      const written = Date.now();
      const task = sim.seedTask({ projectId: listId, title: '默认就会被领取', priority: 3 });
      await until('the claim comment', () => sim.listComments(task.id).find((c) => parseClaim(c.title)), 60_000);
      console.log(`[poll e2e] default config: task written → claim comment in ${Date.now() - written} ms`);
    } finally {
      await web.stop('SIGTERM');
    }
  }, 180_000);

  it('polling turned on in config.yaml while dsh web runs takes effect without a restart', async () => {
    const { web, listId, configFile } = await idleWeb((id) => `${bindingOf(id)}poll: false\n`);
    try {
      // Off: a task written now stays unclaimed while nothing else reads the list.
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      const early = sim.seedTask({ projectId: listId, title: '关着轮询时写的', priority: 3 });
      await new Promise((resolve) => setTimeout(resolve, 25_000));
      expect(sim.listComments(early.id).filter((c) => parseClaim(c.title))).toEqual([]);
      model.setScript([text('收到')]);
      const turnedOn = Date.now();
      fs.writeFileSync(configFile, `${bindingOf(listId)}poll: true\n`);
      await until('the claim comment', () => sim.listComments(early.id).find((c) => parseClaim(c.title)), 75_000);
      console.log(`[poll e2e] poll turned on in config.yaml → claim comment in ${Date.now() - turnedOn} ms`);
    } finally {
      await web.stop('SIGTERM');
    }
  }, 240_000);
});
