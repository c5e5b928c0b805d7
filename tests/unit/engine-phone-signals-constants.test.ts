// The module-level rules of src/core/phone/phone-signals.ts, read from a fresh import inside each test (so a changed
// constant shows): the default stop phrases, how often a step boundary looks at Dida, the edge punctuation stripped.
import { beforeEach, describe, expect, it, vi } from 'vitest';

type Signals = typeof import('../../src/core/phone/phone-signals');

async function fresh(): Promise<Signals> {
  vi.resetModules();
  return import('../../src/core/phone/phone-signals');
}

describe('phone-signals constants (fresh module)', () => {
  let signals: Signals;
  beforeEach(async () => {
    signals = await fresh();
  });

  it('the default stop phrases are 停, 暂停, stop and pause, used when none are configured', async () => {
    expect(signals.DEFAULT_STOP_PHRASES).toEqual(['停', '暂停', 'stop', 'pause']);
    expect(await signals.stopPhrasesOf({})).toEqual(['停', '暂停', 'stop', 'pause']);
    expect(await signals.stopPhrasesOf({ stopPhrases: async () => ['halt'] })).toEqual(['halt']);
  });

  it('a step boundary looks at Dida at most every 30 seconds', () => {
    expect(signals.PAUSE_CHECK_INTERVAL_MS).toBe(30_000);
  });

  it('punctuation, symbols and spaces are stripped at both edges only, every run of them', () => {
    expect(signals.normalisePhrase('  ¡¡stop!! ')).toBe('stop');
    expect(signals.normalisePhrase('…停…')).toBe('停');
    expect(signals.normalisePhrase('★pause★')).toBe('pause');
    expect(signals.normalisePhrase('st-op')).toBe('st-op');
    expect(signals.normalisePhrase('a b')).toBe('a b');
    expect(signals.isStopPhrase('!!暂停!!', signals.DEFAULT_STOP_PHRASES)).toBe(true);
    expect(signals.isStopPhrase('PAUSE', signals.DEFAULT_STOP_PHRASES)).toBe(true);
  });
});
