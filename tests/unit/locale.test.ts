// Every human-visible string exists in both locales with the same placeholders; the READMEs and their docs/ pages
// mirror each other, stay short where they must, and link only to what exists.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
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
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');
const zhTwin = (page: string) => page.replace(/\.md$/, '.zh.md');

/** Markdown without its fenced code blocks (an indented fence too), so `# comments` in code are not headings. */
function prose(markdown: string): string {
  return markdown.replace(/^( *)(```|~~~)[^\n]*\n[\s\S]*?^\1\2[ \t]*$/gm, '');
}

function headings(markdown: string): Array<{ level: number; text: string }> {
  return [...prose(markdown).matchAll(/^(#{1,6}) +(.+?) *#* *$/gm)].map((m) => ({ level: (m[1] as string).length, text: m[2] as string }));
}

/** The anchors GitHub gives a file's headings: lower case, punctuation and symbols dropped, spaces to hyphens, repeats numbered. */
function anchors(markdown: string): string[] {
  const seen = new Map<string, number>();
  return headings(markdown).map(({ text }) => {
    const plain = text.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/<[^>]+>/g, '');
    const slug = plain.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    return count ? `${slug}-${count}` : slug;
  });
}

/** The relative link targets of a markdown file (images too), outside code. */
function relativeLinks(markdown: string): string[] {
  const text = prose(markdown).replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)(?: +"[^"]*")?\)/g)].map((m) => m[1] as string).filter((target) => !/^[a-z][a-z+.-]*:/i.test(target));
}

/** A README and the docs/ pages it links (in its own language). */
function docSet(readme: string): { readme: string; pages: string[]; files: string[] } {
  const pages = [...new Set(relativeLinks(read(readme)).map((t) => t.split('#')[0] as string).filter((t) => /^docs\/[^/]+\.md$/.test(t)))].filter((page) => (readme === 'README.md') !== page.endsWith('.zh.md'));
  return { readme, pages, files: [readme, ...pages] };
}

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

  it('keep the Chinese README and its pages the mirror of the English ones', () => {
    const en = docSet('README.md');
    const zh = docSet('README.zh.md');
    // Each README links its own language's pages, every bilingual page of docs/ is linked, and each page has its twin.
    expect(en.pages.length).toBeGreaterThan(5);
    expect(en.pages).toContain('docs/sdk.md');
    expect(en.pages.every((page) => !page.endsWith('.zh.md'))).toBe(true);
    expect(zh.pages).toEqual(en.pages.map(zhTwin));
    const bilingual = readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.zh.md')).map((f) => `docs/${f.replace(/\.zh\.md$/, '.md')}`).sort();
    for (const page of bilingual) expect(existsSync(path.join(root, page)), `${page} (twin of its .zh.md)`).toBe(true);
    expect(bilingual).toEqual([...en.pages].sort());
    // The same headings, level by level, in each pair; each page names its twin and the README of its language.
    for (const [enFile, zhFile] of [['README.md', 'README.zh.md'], ...en.pages.map((page) => [page, zhTwin(page)])] as Array<[string, string]>) {
      expect(headings(read(zhFile)).map((h) => h.level), `${zhFile} mirrors ${enFile}`).toEqual(headings(read(enFile)).map((h) => h.level));
    }
    expect(read('README.md')).toContain('English | [中文](README.zh.md)');
    expect(read('README.zh.md')).toContain('[English](README.md) | 中文');
    for (const page of en.pages) {
      const base = path.basename(page, '.md');
      expect(read(page).split('\n')[2], page).toBe(`English | [中文](${base}.zh.md) · [README](../README.md)`);
      expect(read(zhTwin(page)).split('\n')[2], zhTwin(page)).toBe(`[English](${base}.md) | 中文 · [README](../README.zh.md)`);
    }
    for (const set of [en, zh]) {
      const readme = read(set.readme);
      // A README read in two minutes: under 500 words above its links (the steps themselves are in docs/install.md).
      expect(readme.trimEnd().split('\n').length, set.readme).toBeLessThanOrEqual(100);
      if (set.readme === 'README.md') expect(readme.split(/^## More$/m)[0]!.split(/\s+/).filter(Boolean).length).toBeLessThan(500);
      expect(readme, set.readme).not.toContain('install-check');
      // What a person needs before the first link: the two commands, the install in short, what they need, the phone loop.
      for (const needed of ['npm ci && npm run demo', 'npm test', INSTALL.dshPluginAdd('web'), INSTALL.linkFromProfile(), 'dida-todo login --token -', 'dida-todo sim --use', 'dida-todo doctor', 'DEEPSEEK_API_KEY', 'docs/install', 'dsh web: http://127.0.0.1:', 'Choose workspace', '检查todo', '/dida run', 'docs/panel.png']) {
        expect(readme, `${set.readme}: ${needed}`).toContain(needed);
      }
      const all = set.files.map(read).join('\n');
      expect(all).not.toMatch(/<owner>|<repo>|npx dida-todo|--token <t/);
      // The command alone, the files written, the uninstall step, help and exit codes: somewhere in the language's pages.
      for (const needed of ['Add an API key to get started', INSTALL.npmInstallGlobal, `npm install -g ./${PACKED_FILE}`, 'dsh plugin --profile web remove dida-todo', 'rm -f ~/.local/bin/dida-todo', 'config.parsed.json', 'simulator.json', '.address.json', 'dida-todo help <', '130', 'DIDA_TODO_TOKEN', '--region ticktick', 'maxAutoContinue', 'pollIntervalMinutes', 'dida-todo doctor --profile sdk']) {
        expect(all, `${set.readme} and its pages: ${needed}`).toContain(needed);
      }
    }
  });

  it('link only to files and headings that exist', () => {
    const markdownIn = (folder: string) => readdirSync(path.join(root, folder)).filter((f) => f.endsWith('.md')).map((f) => `${folder}/${f}`);
    const files = ['README.md', 'README.zh.md', ...markdownIn('docs'), ...markdownIn('docs/decisions')];
    let anchored = 0;
    for (const file of files) {
      for (const target of relativeLinks(read(file))) {
        const [where = '', anchor] = target.split('#');
        const resolved = where ? path.posix.normalize(path.posix.join(path.posix.dirname(file), decodeURI(where))) : file;
        expect(existsSync(path.join(root, resolved)), `${file} links ${target}`).toBe(true);
        if (anchor !== undefined && resolved.endsWith('.md')) {
          expect(anchors(read(resolved)), `${file} links ${target}`).toContain(decodeURIComponent(anchor));
          anchored++;
        }
      }
    }
    // The check reaches the links into sections (the README's into the pages, the pages' into each other and back).
    expect(anchored).toBeGreaterThan(10);
    expect(anchors('## In an SDK or ACP client (JSON-RPC over stdio)\n## What you see in Dida when …\n## 在 SDK 或 ACP 客户端里（stdio 上的 JSON-RPC）\n## A\n## A')).toEqual(['in-an-sdk-or-acp-client-json-rpc-over-stdio', 'what-you-see-in-dida-when-', '在-sdk-或-acp-客户端里stdio-上的-json-rpc', 'a', 'a-1']);
  });

  it('give the same install commands, from package.json, in a section of docs/install.md CI runs step by step', async () => {
    const enPage = await readFile(path.join(root, 'docs/install.md'), 'utf8');
    const zhPage = await readFile(path.join(root, 'docs/install.zh.md'), 'utf8');
    const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { repository: { url: string } };
    expect(INSTALL.dshPluginAdd('web')).toBe(`dsh plugin --profile web add github:${/github\.com\/(.+?)\.git$/.exec(pkg.repository.url)?.[1]}`);
    // Trailing comments are prose (translated); the commands themselves are the same in both languages.
    const commands = (markdown: string) => installSteps(markdown).map((step) => ({ mode: step.mode, code: step.code.replace(/\s+# [^'\n]*$/gm, '') }));
    const en = commands(enPage);
    expect(commands(zhPage)).toEqual(en);
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
    // The README's install in short runs nothing the checked steps do not (its trailing comments are prose).
    for (const readme of ['README.md', 'README.zh.md']) {
      const block = /^## (?:Install and use|安装与使用)\n[\s\S]*?^```sh\n([\s\S]*?)^```$/m.exec(read(readme))?.[1] ?? '';
      const lines = block.split('\n').map((line) => line.replace(/\s+# .*$/, '').trim()).filter(Boolean);
      expect(lines.length, readme).toBeGreaterThan(2);
      for (const line of lines) for (const part of line.split(' && ')) expect(all, `${readme}: ${part}`).toContain(part);
    }
  });
});
