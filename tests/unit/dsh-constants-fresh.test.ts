// The adapter's names built when its modules load, from a fresh import before each test so a change is seen: which
// tools a session is shown (src/runtime/session/live-binding.ts), the /dida command and its hint (src/dsh/slash-command-spec.ts),
// and the system prompt section's name (src/dsh/prompt.ts).
import { beforeEach, describe, expect, it, vi } from 'vitest';

let live: typeof import('../../src/runtime/session/live-binding');
let spec: typeof import('../../src/dsh/slash-command-spec');
let prompt: typeof import('../../src/dsh/prompt');
beforeEach(async () => {
  vi.resetModules();
  live = await import('../../src/runtime/session/live-binding');
  spec = await import('../../src/dsh/slash-command-spec');
  prompt = await import('../../src/dsh/prompt');
});

describe('the adapter names, from a fresh import', () => {
  it('the tools: every tool of the bundle, and those only a bound directory sees', () => {
    expect(live.ALL_TOOLS).toEqual(['todo', 'todo_work', 'dida_todo_setup']);
    expect(live.BOUND_ONLY_TOOLS).toEqual(['todo', 'todo_work']);
  });

  it('/dida is registered under its name with its input hint and the description of the locale', () => {
    const registered: Array<{ name: string; description: string; input: { hint: string } }> = [];
    const ctx = { get: (name: string) => (name === 'commands' ? { register: (d: (typeof registered)[number]) => registered.push(d) } : undefined) } as never;
    spec.registerSlashCommand(ctx, 'en', async () => ({}) as never);
    spec.registerSlashCommand(ctx, 'zh', async () => ({}) as never);
    expect(spec.SLASH_COMMAND).toBe('dida');
    expect(registered.map((d) => [d.name, d.input.hint])).toEqual([
      ['dida', 'status | queue | bind <list> | unbind | pause | resume | run'],
      ['dida', 'status | queue | bind <list> | unbind | pause | resume | run'],
    ]);
    expect(registered[0]!.description).toBe('dida-todo: status, queue, bind, pause, resume, run the queue (no model tokens)');
    expect(registered[1]!.description).toBe('dida-todo：状态、队列、绑定、暂停、恢复、领取工作（不经过模型）');
  });

  it('the system prompt section is named after the bundle', () => {
    expect(prompt.PROMPT_SECTION_NAME).toBe('dida-todo');
  });
});
