// The comparison form of a queue phrase (src/core/queue/queue-trigger.ts) for values that are not text: a message
// dsh hands over as null or undefined is an empty message and never grants a queue scan.
import { describe, expect, it } from 'vitest';
import { detectQueueGrant, normaliseTrigger } from '../../src/core/queue/queue-trigger';

describe('normaliseTrigger', () => {
  it('reads a missing message as empty text', () => {
    expect(normaliseTrigger(undefined as unknown as string)).toBe('');
    expect(normaliseTrigger(null as unknown as string)).toBe('');
    expect(detectQueueGrant(undefined as unknown as string)).toBe(false);
  });

  it('folds width and case, removes zero-width characters and trims', () => {
    expect(normaliseTrigger('\uFEFF ＣＨＥＣＫ\u200D TODO\u2060 ')).toBe('check todo');
  });
});
