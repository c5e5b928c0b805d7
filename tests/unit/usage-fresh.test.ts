// Values built when their modules load, read from a fresh import before each test so a change to them is seen: the
// default spend limits (src/core/usage/usage.ts, decision 0058) and the words an unbound directory gets from every
// tool (src/core/tools/tool-runner.ts).
import { beforeEach, describe, expect, it, vi } from 'vitest';

let usage: typeof import('../../src/core/usage/usage');
let runner: typeof import('../../src/core/tools/tool-runner');
beforeEach(async () => {
  vi.resetModules();
  usage = await import('../../src/core/usage/usage');
  runner = await import('../../src/core/tools/tool-runner');
});

describe('from a fresh import', () => {
  it('the default spend limits: five million tokens and four hours a Work, nothing per round', () => {
    expect(usage.DEFAULT_SPEND_LIMITS).toEqual({ maxTokensPerWork: 5_000_000, maxMinutesPerWork: 240, maxTokensPerRound: 0, maxMinutesPerRound: 0 });
  });

  it('an unbound directory is told how to bind, in the tool and in a terminal', async () => {
    expect(runner.UNBOUND_MESSAGE).toBe(
      'This directory is not bound to a Dida list, so there is no Dida work here. Ask the person which list to use, then call dida_todo_setup with action "bind" and the list name (or run `dida-todo bind <list name>` in a terminal).',
    );
    const ctx = { cwd: '/nowhere', config: { read: async () => ({ bindings: [] }) } } as never;
    expect(await runner.boundOrResult(ctx)).toEqual({ code: 'not_bound', message: runner.UNBOUND_MESSAGE });
  });
});
