// The comparison form of a queue phrase (src/core/queue/queue-trigger.ts) for values that are not text: a message
// dsh hands over as null or undefined is an empty message and never grants a queue scan.
import { describe, expect, it, vi } from 'vitest';
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

describe('detectQueueGrant', () => {
  it('an empty message never matches, not even an empty or blank trigger', () => {
    expect(detectQueueGrant('', [''])).toBe(false);
    expect(detectQueueGrant(' \u200B ', [' '])).toBe(false);
    expect(detectQueueGrant('go', ['', 'go'])).toBe(true);
    expect(detectQueueGrant('go', ['', 'stop'])).toBe(false);
  });

  it('the default phrase, read from a fresh import (it is built when the module loads)', async () => {
    vi.resetModules();
    const fresh = await import('../../src/core/queue/queue-trigger');
    expect(fresh.DEFAULT_QUEUE_TRIGGERS).toEqual(['检查todo']);
    expect(fresh.detectQueueGrant('检查TODO')).toBe(true);
    expect(fresh.detectQueueGrant('检查ｔｏｄｏ ')).toBe(true);
    expect(fresh.detectQueueGrant('检查')).toBe(false);
    expect(fresh.normaliseTrigger('a\u200Bb\u200Cc\u200Dd\u2060e\uFEFFf')).toBe('abcdef');
  });
});
