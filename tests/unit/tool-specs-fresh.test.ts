// What the model is told about the three tools (src/core/tools/tool-specs.ts) and the usage shapes
// (src/core/usage/usage-schema.ts), from a fresh import before each test: both are built when the module loads. The
// parameter schemas are the model's contract, so they are checked whole; each description names every action.
import { beforeEach, describe, expect, it, vi } from 'vitest';

let specs: typeof import('../../src/core/tools/tool-specs');
let usage: typeof import('../../src/core/usage/usage-schema');
beforeEach(async () => {
  vi.resetModules();
  specs = await import('../../src/core/tools/tool-specs');
  usage = await import('../../src/core/usage/usage-schema');
});

describe('the tool specs', () => {
  it('todo: its parameters, whole', () => {
    expect(specs.STEP_STATUS).toEqual(['pending', 'in_progress', 'completed', 'skipped']);
    expect(specs.TODO_PARAMETERS).toEqual({
      action: { type: 'string', required: true, enum: ['create', 'update', 'list', 'get', 'delete', 'clear'] },
      work_title: { type: 'string', description: 'create: new Work title' },
      priority: { type: 'string', enum: ['low', 'medium', 'high'] },
      steps: {
        type: 'array',
        items: { type: 'object', additionalProperties: false, properties: { title: { type: 'string', required: true }, status: { type: 'string', enum: ['pending', 'in_progress'] } } },
      },
      updates: {
        type: 'array',
        items: {
          type: 'object',
          additionalProperties: false,
          properties: {
            step: { type: 'string', required: true, description: 'id or exact title' },
            status: { type: 'string', enum: ['pending', 'in_progress', 'completed', 'skipped'] },
            resolution: { type: 'string' },
            title: { type: 'string', description: 'rename (your steps)' },
          },
        },
      },
      step: { type: 'string', description: 'get/delete: id or exact title' },
    });
  });

  it('todo_work and dida_todo_setup: their parameters, whole', () => {
    expect(specs.TODO_WORK_PARAMETERS).toEqual({
      action: { type: 'string', required: true, enum: ['list', 'switch', 'next', 'refresh', 'finish_current', 'wait_for_human', 'resume', 'keep_open'] },
      work: { type: 'string', description: 'switch/resume: Work id' },
      reason: { type: 'string', description: 'wait_for_human: what you need, for the person' },
      keep: { type: 'boolean' },
    });
    expect(specs.SETUP_PARAMETERS).toEqual({
      action: { type: 'string', required: true, enum: ['status', 'bind', 'unbind', 'login_check'] },
      list_name: { type: 'string', description: 'bind: list name' },
      list_id: { type: 'string', description: 'bind: list id' },
      create: { type: 'boolean' },
      tag: { type: 'string' },
    });
  });

  it('each description names every action of its tool', () => {
    const named = (text: string, actions: readonly string[]) => actions.filter((a) => !new RegExp(`(^|[\\s(])${a}[:;., ]`, 'm').test(text));
    expect(named(specs.TODO_DESCRIPTION, specs.TODO_PARAMETERS.action!.enum as string[])).toEqual([]);
    expect(named(specs.TODO_WORK_DESCRIPTION, specs.TODO_WORK_PARAMETERS.action!.enum as string[])).toEqual([]);
    expect(named(specs.SETUP_DESCRIPTION, specs.SETUP_PARAMETERS.action!.enum as string[])).toEqual([]);
    expect(specs.TODO_DESCRIPTION).toContain('use instead of todo_write');
    expect(specs.TODO_WORK_DESCRIPTION.split('\n')[0]).toBe('Works of the bound Dida list.');
    expect(specs.SETUP_DESCRIPTION.split('\n')[0]).toBe('Connect this directory to a Dida (滴答清单) list.');
  });
});

describe('the usage shapes', () => {
  it('a round read without fields is all zero; a model’s usage too', () => {
    expect(usage.UsageSchema.parse({})).toEqual({ requests: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, ms: 0, continuations: 0, continuedRequests: 0, continuedTokens: 0, models: {} });
    expect(usage.ModelUsageSchema.parse({})).toEqual({ requests: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0 });
    expect(usage.WorkUsageSchema.parse({})).toEqual({ rounds: {} });
  });

  it('prices are never negative and a currency is 1 to 8 characters', () => {
    expect(usage.ModelPriceSchema.safeParse({ input: 0, output: 0, cacheRead: 0, currency: '¥' }).success).toBe(true);
    for (const bad of [{ input: -1, output: 0 }, { input: 0, output: -1 }, { input: 0, output: 0, cacheRead: -0.5 }, { input: 0, output: 0, currency: '' }, { input: 0, output: 0, currency: '123456789' }]) {
      expect(usage.ModelPriceSchema.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
    expect(usage.ModelPriceSchema.safeParse({ input: 1, output: 2, currency: '12345678' }).success).toBe(true);
  });

  it('an allowance needs the Work’s and the round’s tokens and time, and its round', () => {
    const allowance = { work: { tokens: 10, ms: 20 }, round: 2, roundUsage: { tokens: 3, ms: 4 } };
    expect(usage.UsageAllowanceSchema.parse(allowance)).toEqual(allowance);
    expect(usage.WorkUsageSchema.parse({ allowance }).allowance).toEqual(allowance);
    for (const bad of [{ ...allowance, work: {} }, { ...allowance, work: { tokens: 1 } }, { ...allowance, roundUsage: { ms: 1 } }, { work: allowance.work, round: 2 }, {}]) {
      expect(usage.UsageAllowanceSchema.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
  });
});
