// Every human-visible string exists in both locales with the same placeholders; the READMEs mirror each other.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import en from '../../locale/en.json';
import zh from '../../locale/zh.json';
import { catalogDifferences, getLocale } from '../../src/core/locale';

const root = path.resolve(import.meta.dirname, '../..');
const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe('locales', () => {
  it('have the same keys', () => {
    expect(catalogDifferences()).toEqual({ missingInEn: [], missingInZh: [] });
  });

  it('use the same placeholders for each key', () => {
    for (const key of Object.keys(zh) as Array<keyof typeof zh>) {
      expect(placeholders(en[key]), key).toEqual(placeholders(zh[key]));
    }
  });

  it('fill placeholders and leave unknown ones visible', () => {
    const t = getLocale('zh').t;
    expect(t('dida.acceptance.title', { title: '发布' })).toBe('🧑‍🔬 待验收：发布');
    expect(getLocale('en').t('dida.rework.title', { title: 'Ship' })).toBe('Rework: Ship');
    expect(t('dida.comment.started')).toBe('开始处理：{step}');
  });

  it('keep the Chinese README the mirror of the English one', async () => {
    const headings = async (file: string) => (await readFile(path.join(root, file), 'utf8')).split('\n').filter((l) => /^#{1,3} /.test(l)).length;
    const enReadme = await readFile(path.join(root, 'README.md'), 'utf8');
    const zhReadme = await readFile(path.join(root, 'README.zh.md'), 'utf8');
    expect(enReadme).toContain('[中文](README.zh.md)');
    expect(zhReadme).toContain('[English](README.md)');
    expect(await headings('README.zh.md')).toBe(await headings('README.md'));
    for (const command of ['npm ci && npm run demo', 'npm test', 'dsh plugin --profile web add github:<owner>/<repo>', 'dsh plugin --profile web remove dida-todo']) {
      expect(enReadme).toContain(command);
      expect(zhReadme).toContain(command);
    }
  });
});
