// What a Work cost, in a real dsh 0.1.0-rc.8 headless run: the scripted model reports fixed usage on every answer
// (12 prompt and 5 completion tokens), and the review todo of a 2-step Work shows the sum and the request count.
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

useDshWorld((world) => ({ model, sim, home, project } = world));

describe('usage in the review', () => {
  it('the review todo of a 2-step Work shows the tokens the model reported, summed, and the number of requests', async () => {
    const listId = sim.seedProject({ name: '智能体工作' }).id;
    const configDir = path.join(home, '.test-xdg', 'config', 'dida-todo');
    fs.mkdirSync(configDir, { recursive: true });
    fs.writeFileSync(path.join(configDir, 'config.yaml'), `baseUrl: ${sim.baseUrl}\npricing:\n  deepseek-v4-flash: { input: 2, output: 8 }\nbindings:\n  - cwd: ${project}\n    projectId: ${listId}\n`);
    const work = sim.seedTask({ projectId: listId, title: '补测试', priority: 3, items: [{ title: '写用例' }, { title: '跑一遍' }] });
    model.setScript([
      toolCall('todo_work', { action: 'next' }),
      toolCall('todo', { action: 'update', updates: [{ step: '写用例', status: 'completed', resolution: '写了 4 个' }] }),
      toolCall('todo', { action: 'update', updates: [{ step: '跑一遍', status: 'completed', resolution: '全部通过' }] }),
      text('都做完了'),
    ]);
    const run = await runHeadless({ home, cwd: project, prompt: '检查todo', baseUrl: model.baseUrl, env: { DIDA_TODO_TOKEN: sim.token }, timeoutMs: 90_000 });
    expect(run.code, run.stderr).toBe(0);
    const chats = model.chatRequests();
    expect(chats).toHaveLength(4);
    expect(sim.getTask(work.id)?.status).toBe(2);
    const review = sim.listTasks(listId).find((t) => t.title === '🧑‍🔬 待验收：补测试')!;
    // 4 answers × (12 + 5) tokens, as the model reported them; ¥ (4×12×2 + 4×5×8) / 1e6.
    expect(review.content).toMatch(/用量：68 token，4 次模型请求，用时 1 分钟，估算花费 ¥0\.0003。/);
  });
});
