// The message catalogs' lookup (src/core/text/locale.ts): placeholders filled, a missing variable left visible, an
// unknown locale or key falling back, and the key differences the parity test relies on.
import { describe, expect, it } from 'vitest';
import { fillTemplate, getLocale, keyDifferences, type LocaleId, type MessageKey } from '../../src/core/text/locale';

describe('fillTemplate', () => {
  it('fills each placeholder, numbers as text, and leaves unknown ones visible', () => {
    expect(fillTemplate('{a} and {b} and {a}', { a: 'x', b: 2 })).toBe('x and 2 and x');
    expect(fillTemplate('{a} {missing}', { a: 0 })).toBe('0 {missing}');
    expect(fillTemplate('no vars {a}')).toBe('no vars {a}');
    expect(fillTemplate('{a-b} {a_b}', { 'a-b': 1, a_b: 2 })).toBe('{a-b} 2');
    expect(fillTemplate('{}', {})).toBe('{}');
  });
});

describe('getLocale', () => {
  it('is Chinese by default and English when asked', () => {
    expect(getLocale().id).toBe('zh');
    expect(getLocale().t('dida.comment.started', { step: 'x' })).toBe('开始处理：x');
    expect(getLocale('en').t('dida.comment.started', { step: 'x' })).toBe('Started: x');
  });

  it('an unknown locale reads the Chinese catalog; an unknown key is itself', () => {
    const odd = getLocale('fr' as LocaleId);
    expect(odd.id).toBe('fr');
    expect(odd.t('dida.comment.started', { step: 'x' })).toBe('开始处理：x');
    expect(getLocale('en').t('no.such.key' as MessageKey)).toBe('no.such.key');
    expect(getLocale('en').t('no.such.{key}' as MessageKey, { key: 'k' })).toBe('no.such.k');
  });
});

describe('keyDifferences', () => {
  it('lists the keys each side lacks', () => {
    expect(keyDifferences({ a: 1, b: 2, c: 3 }, { b: 1, d: 2 })).toEqual({ missingInEn: ['a', 'c'], missingInZh: ['d'] });
    expect(keyDifferences({}, {})).toEqual({ missingInEn: [], missingInZh: [] });
  });
});
