// The texts the queue grant hands the model (src/runtime/turns/queue-grant.ts), read from a fresh import of the module in each
// test: they are module-level constants, so a test that imported the module once would never see one of them change.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { queueOf } from '../helpers/dsh-fakes';

async function fresh() {
  vi.resetModules();
  return import('../../src/runtime/turns/queue-grant');
}

beforeEach(() => {
  vi.resetModules();
});

describe('the queue grant texts', () => {
  it('the heading, each priority level by name and the id label', async () => {
    const { boundedQueuePayload } = await fresh();
    const levels = ['high', 'medium', 'low', 'none'] as const;
    const view = queueOf(['w1', 'w2', 'w3', 'w4']);
    const ranked = view.ranked.map((entry, i) => ({ ...entry, level: levels[i]! }));
    const text = boundedQueuePayload(ranked, new Date(0));
    expect(text.startsWith('Executable Works in the bound Dida list, highest priority first')).toBe(true);
    expect(text).toContain('1. [high] · id w1');
    expect(text).toContain('2. [medium] · id w2');
    expect(text).toContain('3. [low] · id w3');
    expect(text).toContain('4. [none] · id w4');
  });

  it('an empty queue says so', async () => {
    const { boundedQueuePayload } = await fresh();
    expect(boundedQueuePayload([], new Date(0)).split('\n').slice(-1)).toEqual(['Nothing is executable right now.']);
  });

  it('the grant head names both tools', async () => {
    const { GRANT_HEAD } = await fresh();
    expect(GRANT_HEAD).toBe('[dida-todo] The person asked to check the Dida queue: take the top Work with todo_work next, or another with todo_work switch.');
  });
});
