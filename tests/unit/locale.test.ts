// Every human-visible string exists in both locales with the same placeholders; the READMEs mirror each other.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import en from '../../locale/en.json';
import zh from '../../locale/zh.json';
import { catalogDifferences, getLocale } from '../../src/core/text/locale';
import { INSTALL, PACKED_FILE } from '../../src/cli/install-commands';
// @ts-expect-error -- a plain .mjs script without type declarations
import { installSteps as untypedInstallSteps } from '../../scripts/check-install-section.mjs';

const installSteps = untypedInstallSteps as (markdown: string) => Array<{ code: string; mode: string }>;

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
    for (const command of ['npm ci && npm run demo', 'npm test', INSTALL.dshPluginAdd('web'), INSTALL.linkFromProfile(), INSTALL.npmInstallGlobal, 'dida-todo doctor', 'dida-todo sim --use', 'dsh plugin --profile web remove dida-todo']) {
      expect(enReadme).toContain(command);
      expect(zhReadme).toContain(command);
    }
    for (const readme of [enReadme, zhReadme]) {
      expect(readme).not.toMatch(/<owner>|<repo>|npx dida-todo|--token <t/);
      // What you need, the files written and the uninstall step.
      for (const needed of ['DEEPSEEK_API_KEY', 'Add an API key to get started', 'dsh web: http://127.0.0.1:', 'Choose workspace', `npm install -g ./${PACKED_FILE}`, 'rm -f ~/.local/bin/dida-todo', 'config.parsed.json', 'simulator.json', '.address.json', 'dida-todo help <', '130']) {
        expect(readme).toContain(needed);
      }
    }
  });

  it('give the same install commands, from package.json, in a section CI runs step by step', async () => {
    const enReadme = await readFile(path.join(root, 'README.md'), 'utf8');
    const zhReadme = await readFile(path.join(root, 'README.zh.md'), 'utf8');
    const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { repository: { url: string } };
    expect(INSTALL.dshPluginAdd('web')).toBe(`dsh plugin --profile web add github:${/github\.com\/(.+?)\.git$/.exec(pkg.repository.url)?.[1]}`);
    // Trailing comments are prose (translated); the commands themselves are the same in both languages.
    const commands = (markdown: string) => installSteps(markdown).map((step) => ({ mode: step.mode, code: step.code.replace(/\s+# [^'\n]*$/gm, '') }));
    const en = commands(enReadme);
    expect(commands(zhReadme)).toEqual(en);
    expect(en.map((s) => s.mode)).toEqual(['run', 'node-old', 'run', 'skip', 'skip', 'background', 'run']);
    // dsh's folder goes on PATH in step 1's block itself, before anything needs it.
    expect(en[0]?.code.split('\n')[0]).toBe('export PATH="$HOME/.local/bin:$PATH"');
    // The install from a clone is step 2's alternative: pack, then add the packed file.
    expect(en[3]?.code).toBe(`npm pack\ndsh plugin --profile web add ./${PACKED_FILE}`);
    const all = en.map((s) => s.code).join('\n');
    for (const needed of ['"@deepseek-ai/dsh": "0.1.0-rc.8"', '"@deepseek-ai/cordis-plugin-hmr": "1.0.17"', '- id: hmr\\n  disabled: false', INSTALL.dshPluginAdd('web'), 'dida-todo login --token -', 'dida-todo sim --use', 'dida-todo doctor']) {
      expect(all).toContain(needed);
    }
    expect(all.trim().split('\n').at(-1)?.trim()).toBe('dida-todo doctor');
  });
});
