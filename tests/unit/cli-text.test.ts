// The CLI's two catalogs, how its language is chosen, the terminal-safe printer and display-width alignment.
import { describe, expect, it } from 'vitest';
import en from '../../locale/cli.en.json';
import zh from '../../locale/cli.zh.json';
import { cliCatalogDifferences, cliText, pickCliLocale } from '../../src/cli/cli-locale';
import { displayWidth, fitDisplay, padDisplay, safeText } from '../../src/cli/terminal-text';

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe('CLI catalogs', () => {
  it('have the same keys, all under cli.', () => {
    expect(cliCatalogDifferences()).toEqual({ missingInEn: [], missingInZh: [] });
    for (const key of Object.keys(en)) expect(key).toMatch(/^cli\./);
  });

  it('use the same placeholders for each key, and plural keys come in pairs', () => {
    for (const key of Object.keys(en) as Array<keyof typeof en>) {
      expect(placeholders(zh[key]), key).toEqual(placeholders(en[key]));
      expect(zh[key].trim(), key).not.toBe('');
      if (key.endsWith('.one')) expect(Object.hasOwn(en, key.replace(/\.one$/, '.other')), key).toBe(true);
    }
  });

  it('the Chinese catalog calls the token one thing, API 口令, and uses the same settings path as the English one', () => {
    const all = Object.values(zh).join('\n');
    expect(all).not.toMatch(/令牌|密钥|口令(?<!API 口令)/);
    expect(all).toContain('API 口令');
    for (const [key, value] of Object.entries(en)) {
      if (value.includes('avatar → Settings → Account & Security → API Token')) expect(zh[key as keyof typeof zh], key).toContain('头像 → 设置 → 账户与安全 → API 口令');
    }
  });

  it('fills placeholders and picks the plural form', () => {
    const t = cliText('en');
    expect(t.plural('cli.status.lists', 1)).toBe('1 list');
    expect(t.plural('cli.status.lists', 3)).toBe('3 lists');
    expect(cliText('zh').plural('cli.status.lists', 3)).toBe('3 个列表');
    expect(t.t('cli.usage.unknownCommand', { command: 'x' })).toBe('Unknown command "x"; run `dida-todo --help` to see the commands.');
  });

  it('follows config.yaml, then LC_ALL, LC_MESSAGES and LANG; English otherwise', () => {
    expect(pickCliLocale('zh', { LANG: 'en_US.UTF-8' })).toBe('zh');
    expect(pickCliLocale('en', { LANG: 'zh_CN.UTF-8' })).toBe('en');
    expect(pickCliLocale(undefined, { LANG: 'zh_CN.UTF-8' })).toBe('zh');
    expect(pickCliLocale(undefined, { LANG: 'zh_TW.UTF-8', LC_ALL: 'C' })).toBe('en');
    expect(pickCliLocale(undefined, { LC_MESSAGES: 'zh_CN', LANG: 'en_GB' })).toBe('zh');
    expect(pickCliLocale(undefined, { LANG: ' ' })).toBe('en');
    expect(pickCliLocale(undefined, {})).toBe('en');
  });
});

describe('terminal-safe printer', () => {
  it('shows control, escape and bidi characters escaped and leaves other text alone', () => {
    expect(safeText('\u001b]0;title\u0007\u001b[2J\u001b[31mred')).toBe('\\x1b]0;title\\x07\\x1b[2J\\x1b[31mred');
    expect(safeText('a\nb\tc\rd\u007f\u009b\u202e\u2066')).toBe('a\\nb\\tc\\rd\\x7f\\x9b\\u202e\\u2066');
    expect(safeText('整理发布说明 🚀 naïve')).toBe('整理发布说明 🚀 naïve');
    expect(safeText('\u0000')).toBe('\\x00');
  });
});

describe('display width', () => {
  it('counts CJK and emoji as two columns and colour codes as none', () => {
    expect(displayWidth('工作清单')).toBe(8);
    expect(displayWidth('🚀 Go')).toBe(5);
    expect(displayWidth('\u001b[1mWork\u001b[22m')).toBe(4);
    expect(padDisplay('工作', 6)).toBe('工作  ');
    expect(displayWidth(padDisplay('🚀', 5))).toBe(5);
  });

  it('cuts to a width at whole characters and says it cut', () => {
    expect(fitDisplay('short', 10)).toEqual({ text: 'short', cut: false });
    const cut = fitDisplay('很长的名字很长的名字', 9);
    expect(cut).toEqual({ text: '很长的名…', cut: true });
    expect(displayWidth(cut.text)).toBeLessThanOrEqual(9);
    expect(fitDisplay('👩‍👩‍👧 family reunion', 6).text).toBe('👩‍👩‍👧 fa…');
  });
});
