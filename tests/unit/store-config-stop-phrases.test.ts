// config.yaml's `stopPhrases` (next to the poll settings): read, validated with a "did you mean", and written back.
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfigText } from '../../src/store/config-check';
import { serializeConfig } from '../../src/store/config-store';

describe('config.yaml stopPhrases', () => {
  it('is read and written back in place; absent means the plugin row decides', async () => {
    const config = await parseConfigText('poll:\n  enabled: true\nstopPhrases: ["停下", "hold"]\nbindings: []\n', 'config.yaml');
    expect(config.stopPhrases).toEqual(['停下', 'hold']);
    expect(await serializeConfig(config)).toContain('stopPhrases:\n  - 停下\n  - hold\n');
    expect((await parseConfigText('bindings: []\n', 'config.yaml')).stopPhrases).toBeUndefined();
    expect((await parseConfigText('stopPhrases: []\n', 'config.yaml')).stopPhrases).toEqual([]);
  });

  it('an empty phrase or a misspelt key is refused with the line and the closest key', async () => {
    await expect(parseConfigText('stopPhrases: [""]\n', 'config.yaml')).rejects.toThrow(/line 1, at stopPhrases\[0\]/);
    const error = await parseConfigText('stopPhrase: ["停"]\n', 'config.yaml').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues[0]).toMatchObject({ unknownKey: 'stopPhrase', suggestion: 'stopPhrases', line: 1 });
  });
});
