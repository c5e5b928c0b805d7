// The plugin row's config schema (src/dsh/row-config.ts): every default, every field's bounds and message with its
// path, lists (empty or not, item paths, copies), the nested dida object, unknown keys, and safeParse.
import { describe, expect, it } from 'vitest';
import { DEFAULT_QUEUE_TRIGGERS } from '../../src/core/queue/queue-trigger';
import { DEFAULT_BACKOFF_SECONDS, DEFAULT_STOP_PHRASES, DIDA_ACCESS_KEYS, ROW_CONFIG_KEYS, RowConfig } from '../../src/dsh/row-config';

type Issue = { message: string; path?: PropertyKey[] };

const validate = (value: unknown) => RowConfig['~standard'].validate(value) as { value?: RowConfig; issues?: Issue[] };

/** The issues of a row, as `path: message`. */
function issuesOf(value: unknown): string[] {
  const result = validate(value);
  expect(result.value).toBeUndefined();
  return (result.issues ?? []).map((i) => `${(i.path ?? []).join('.')}: ${i.message}`);
}

function valueOf(value: unknown): RowConfig {
  const result = validate(value);
  expect(result.issues).toBeUndefined();
  return result.value!;
}

describe('row config defaults', () => {
  it('an empty or missing row takes every default', () => {
    const expected = {
      locale: 'zh',
      maxAutoContinue: 5,
      backoff: [30, 60, 120, 300, 600],
      maxWaitMinutes: 300,
      poll: true,
      pollSeconds: 20,
      pollIntervalMinutes: 10,
      queueTriggers: ['检查todo'],
      progressWindowSeconds: 60,
      stopPhrases: ['停', '暂停', 'stop', 'pause'],
      askInDida: true,
      maxAnswerWaitMinutes: 30,
      oneShotAnswerWaitMinutes: 10,
      dida: { region: 'dida365', timeoutMs: 15_000 },
    };
    expect(valueOf({})).toEqual(expected);
    expect(valueOf(undefined)).toEqual(expected);
    // Optional keys without a default stay absent.
    expect(Object.keys(valueOf({}))).not.toContain('configPath');
    expect(Object.keys(valueOf({}))).not.toContain('stateDir');
  });

  it('the default lists are fresh copies, never the shared constants', () => {
    const a = valueOf({});
    const b = valueOf({});
    expect(a.backoff).not.toBe(DEFAULT_BACKOFF_SECONDS);
    expect(a.queueTriggers).not.toBe(DEFAULT_QUEUE_TRIGGERS);
    expect(a.stopPhrases).not.toBe(DEFAULT_STOP_PHRASES);
    a.backoff.push(1);
    a.queueTriggers.push('x');
    a.stopPhrases.push('y');
    expect(b.backoff).toEqual([30, 60, 120, 300, 600]);
    expect(valueOf({}).queueTriggers).toEqual(['检查todo']);
    expect(valueOf({}).stopPhrases).toEqual(['停', '暂停', 'stop', 'pause']);
  });

  it('a dida object given only in part takes the defaults of its other keys', () => {
    expect(valueOf({ dida: {} }).dida).toEqual({ region: 'dida365', timeoutMs: 15_000 });
    expect(valueOf({ dida: { region: 'ticktick' } }).dida).toEqual({ region: 'ticktick', timeoutMs: 15_000 });
    expect(valueOf({ dida: { baseUrl: 'http://127.0.0.1:9', didaCommand: 'dida' } }).dida).toEqual({
      region: 'dida365',
      timeoutMs: 15_000,
      baseUrl: 'http://127.0.0.1:9',
      didaCommand: 'dida',
    });
  });

  it('lists every key of the row and of dida access', () => {
    expect([...ROW_CONFIG_KEYS].sort()).toEqual(
      ['askInDida', 'backoff', 'configPath', 'dida', 'locale', 'maxAnswerWaitMinutes', 'maxAutoContinue', 'maxWaitMinutes', 'oneShotAnswerWaitMinutes', 'poll', 'pollIntervalMinutes', 'pollSeconds', 'progressWindowSeconds', 'queueTriggers', 'stateDir', 'stopPhrases'].sort(),
    );
    expect([...DIDA_ACCESS_KEYS].sort()).toEqual(['baseUrl', 'didaCommand', 'region', 'timeoutMs']);
  });
});

describe('row config fields', () => {
  it('keeps valid values as given', () => {
    const row = valueOf({
      locale: 'en',
      maxAutoContinue: 0,
      backoff: [0, 86_400, 1.5],
      maxWaitMinutes: 1440,
      poll: true,
      pollSeconds: 3600,
      pollIntervalMinutes: 1,
      queueTriggers: ['go'],
      progressWindowSeconds: 0,
      stopPhrases: [],
      configPath: '/c.yaml',
      stateDir: '/s',
      dida: { region: 'ticktick', timeoutMs: 1000 },
    });
    expect(row).toMatchObject({ locale: 'en', maxAutoContinue: 0, backoff: [0, 86_400, 1.5], maxWaitMinutes: 1440, poll: true, pollSeconds: 3600, pollIntervalMinutes: 1 });
    expect(row).toMatchObject({ queueTriggers: ['go'], progressWindowSeconds: 0, stopPhrases: [], configPath: '/c.yaml', stateDir: '/s', dida: { region: 'ticktick', timeoutMs: 1000 } });
  });

  it('integers: both bounds are inclusive, one past either is refused with the range and the path', () => {
    expect(valueOf({ maxAutoContinue: 50 }).maxAutoContinue).toBe(50);
    expect(valueOf({ pollSeconds: 5 }).pollSeconds).toBe(5);
    expect(valueOf({ maxWaitMinutes: 0 }).maxWaitMinutes).toBe(0);
    expect(valueOf({ pollIntervalMinutes: 1440 }).pollIntervalMinutes).toBe(1440);
    expect(valueOf({ progressWindowSeconds: 3600 }).progressWindowSeconds).toBe(3600);
    expect(valueOf({ dida: { timeoutMs: 120_000 } }).dida.timeoutMs).toBe(120_000);
    expect(issuesOf({ maxAutoContinue: 51 })).toEqual(['maxAutoContinue: expected an integer from 0 to 50']);
    expect(issuesOf({ maxAutoContinue: -1 })).toEqual(['maxAutoContinue: expected an integer from 0 to 50']);
    expect(issuesOf({ pollSeconds: 4 })).toEqual(['pollSeconds: expected an integer from 5 to 3600']);
    expect(issuesOf({ pollSeconds: 3601 })).toEqual(['pollSeconds: expected an integer from 5 to 3600']);
    expect(issuesOf({ maxWaitMinutes: 1441 })).toEqual(['maxWaitMinutes: expected an integer from 0 to 1440']);
    expect(issuesOf({ pollIntervalMinutes: 0 })).toEqual(['pollIntervalMinutes: expected an integer from 1 to 1440']);
    expect(valueOf({ maxAnswerWaitMinutes: 1, oneShotAnswerWaitMinutes: 1440 })).toMatchObject({ maxAnswerWaitMinutes: 1, oneShotAnswerWaitMinutes: 1440 });
    expect(issuesOf({ maxAnswerWaitMinutes: 0, oneShotAnswerWaitMinutes: 1441, askInDida: 'yes' })).toEqual([
      'askInDida: expected true or false',
      'maxAnswerWaitMinutes: expected an integer from 1 to 1440',
      'oneShotAnswerWaitMinutes: expected an integer from 1 to 1440',
    ]);
    expect(issuesOf({ progressWindowSeconds: 3601 })).toEqual(['progressWindowSeconds: expected an integer from 0 to 3600']);
    expect(issuesOf({ dida: { timeoutMs: 999 } })).toEqual(['dida.timeoutMs: expected an integer from 1000 to 120000']);
    expect(issuesOf({ dida: { timeoutMs: 120_001 } })).toEqual(['dida.timeoutMs: expected an integer from 1000 to 120000']);
  });

  it('integers: a fraction or a non-number is refused', () => {
    expect(issuesOf({ maxAutoContinue: 2.5 })).toEqual(['maxAutoContinue: expected an integer from 0 to 50']);
    expect(issuesOf({ maxAutoContinue: '3' })).toEqual(['maxAutoContinue: expected an integer from 0 to 50']);
  });

  it('choices: names the allowed values', () => {
    expect(issuesOf({ locale: 'fr' })).toEqual(['locale: expected one of "zh", "en"']);
    expect(issuesOf({ locale: 1 })).toEqual(['locale: expected one of "zh", "en"']);
    expect(issuesOf({ dida: { region: 'cn' } })).toEqual(['dida.region: expected one of "dida365", "ticktick"']);
  });

  it('strings: an empty string or a non-string is refused', () => {
    expect(issuesOf({ configPath: '' })).toEqual(['configPath: expected a non-empty string']);
    expect(issuesOf({ stateDir: 7 })).toEqual(['stateDir: expected a non-empty string']);
    expect(issuesOf({ dida: { baseUrl: '' } })).toEqual(['dida.baseUrl: expected a non-empty string']);
    expect(issuesOf({ dida: { didaCommand: false } })).toEqual(['dida.didaCommand: expected a non-empty string']);
  });

  it('booleans: only true or false', () => {
    expect(issuesOf({ poll: 'yes' })).toEqual(['poll: expected true or false']);
    expect(issuesOf({ poll: 1 })).toEqual(['poll: expected true or false']);
    expect(valueOf({ poll: false }).poll).toBe(false);
  });

  it('seconds: 0 to 86400, finite numbers only, each item named by its index', () => {
    expect(issuesOf({ backoff: [1, -1, 86_401] })).toEqual(['backoff.1: expected seconds from 0 to 86400', 'backoff.2: expected seconds from 0 to 86400']);
    expect(issuesOf({ backoff: [Number.POSITIVE_INFINITY] })).toEqual(['backoff.0: expected seconds from 0 to 86400']);
    expect(issuesOf({ backoff: [Number.NaN] })).toEqual(['backoff.0: expected seconds from 0 to 86400']);
    expect(issuesOf({ backoff: ['30'] })).toEqual(['backoff.0: expected seconds from 0 to 86400']);
  });

  it('lists: a non-list is refused; an empty list only where allowed', () => {
    expect(issuesOf({ backoff: [] })).toEqual(['backoff: expected a non-empty list']);
    expect(issuesOf({ queueTriggers: [] })).toEqual(['queueTriggers: expected a non-empty list']);
    expect(issuesOf({ backoff: 30 })).toEqual(['backoff: expected a non-empty list']);
    expect(issuesOf({ stopPhrases: 'stop' })).toEqual(['stopPhrases: expected a list']);
    expect(issuesOf({ stopPhrases: { 0: 'stop' } })).toEqual(['stopPhrases: expected a list']);
    expect(valueOf({ stopPhrases: [] }).stopPhrases).toEqual([]);
    expect(issuesOf({ queueTriggers: ['ok', ''] })).toEqual(['queueTriggers.1: expected a non-empty string']);
    expect(issuesOf({ stopPhrases: [''] })).toEqual(['stopPhrases.0: expected a non-empty string']);
  });

  it('a list given is copied, so later edits of the input do not reach the config', () => {
    const backoff = [5, 10];
    const row = valueOf({ backoff });
    expect(row.backoff).toEqual([5, 10]);
    expect(row.backoff).not.toBe(backoff);
    backoff.push(99);
    expect(row.backoff).toEqual([5, 10]);
  });
});

describe('row config objects', () => {
  it('the row and dida must be objects (not null, not a list)', () => {
    expect(issuesOf(null)).toEqual([': expected an object']);
    expect(issuesOf([])).toEqual([': expected an object']);
    expect(issuesOf('x')).toEqual([': expected an object']);
    expect(issuesOf({ dida: null })).toEqual(['dida: expected an object']);
    expect(issuesOf({ dida: ['dida365'] })).toEqual(['dida: expected an object']);
  });

  it('unknown keys are named with their path, one issue for all of them, beside the other issues', () => {
    expect(issuesOf({ nope: 1 })).toEqual([': unknown key "nope"']);
    expect(issuesOf({ a: 1, b: 2, locale: 'fr' })).toEqual([': unknown keys "a", "b"', 'locale: expected one of "zh", "en"']);
    expect(issuesOf({ dida: { regoin: 'x' } })).toEqual(['dida: unknown key "regoin"']);
  });

  it('an issue carries its path as a list of keys', () => {
    const result = validate({ dida: { timeoutMs: 1 } });
    expect(result.issues).toEqual([{ message: 'expected an integer from 1000 to 120000', path: ['dida', 'timeoutMs'] }]);
    expect(validate({ x: 1 }).issues).toEqual([{ message: 'unknown key "x"', path: [] }]);
  });

  it('every issue of a row is reported at once', () => {
    expect(issuesOf({ locale: 'de', poll: 'no', backoff: [], dida: { timeoutMs: 0 } })).toEqual([
      'locale: expected one of "zh", "en"',
      'backoff: expected a non-empty list',
      'poll: expected true or false',
      'dida.timeoutMs: expected an integer from 1000 to 120000',
    ]);
  });
});

describe('RowConfig.safeParse and the standard schema', () => {
  it('declares version 1 by dida-todo', () => {
    expect(RowConfig['~standard'].version).toBe(1);
    expect(RowConfig['~standard'].vendor).toBe('dida-todo');
  });

  it('answers success with the data, or the issues', () => {
    const ok = RowConfig.safeParse({ locale: 'en' });
    expect(ok.success).toBe(true);
    expect(ok.success && ok.data.locale).toBe('en');
    expect(ok.success && ok.data.maxAutoContinue).toBe(5);
    const bad = RowConfig.safeParse({ locale: 'xx', maxAutoContinue: 99 });
    expect(bad.success).toBe(false);
    expect(!bad.success && bad.issues.map((i) => i.message)).toEqual(['expected one of "zh", "en"', 'expected an integer from 0 to 50']);
  });
});
