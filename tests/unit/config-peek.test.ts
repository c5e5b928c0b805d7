// The first-load layer's cheap reading of config.yaml must never say "not bound" where the config parser binds: a
// property over generated YAML forms of the same bindings (block and flow styles, every quoting, escapes, comments
// after spaces or tabs, CRLF, a BOM, anchors and aliases, tags, folded and block scalars, extra keys, odd paths).
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { configMayBind, peekConfig } from '../../src/store/config-peek';
import { defaultConfig, type DidaTodoConfig } from '../../src/store/config-schema';
import { parseConfigText } from '../../src/store/config-check';
import { findBinding, withBinding } from '../../src/store/config-bindings';
import { serializeConfig } from '../../src/store/config-store';

/** Generated files per run of the property (`DIDA_TODO_CONFIG_PEEK_RUNS=20000` for a longer sweep). */
const RUNS = Number(process.env.DIDA_TODO_CONFIG_PEEK_RUNS ?? 400);

/** Characters path segments are made of: the plain ones and every YAML indicator. */
const SEGMENT_CHARS = [...'abcxyz019-_.', ' ', '#', ':', ',', '[', ']', '{', '}', "'", '"', '&', '*', '!', '|', '>', '%', '@', '`', '\\', '?', '=', 'é', '中', '\t'];

type Style = 'plain' | 'single' | 'double' | 'literal' | 'folded' | 'foldedPlain' | 'foldedDouble' | 'tagged';

interface Binding {
  cwd: string;
  projectId: string;
  label?: string;
  tag?: string;
}

/** Renders `value` as a YAML scalar in `style`; `indent` is the column continuation lines start at. */
function scalar(g: fc.GeneratorValue, value: string, style: Style, indent: string, eol: string): string {
  switch (style) {
    case 'plain':
      return value;
    case 'single':
      return `'${value.replace(/'/g, "''")}'`;
    case 'double': {
      const escaped = [...value]
        .map((ch) => {
          if (ch === '"' || ch === '\\') return `\\${ch}`;
          const how = g(() => fc.constantFrom('as is', 'as is', 'x', 'u', 'slash'));
          const code = ch.codePointAt(0)!;
          if (how === 'x' && code < 0x100) return `\\x${code.toString(16).padStart(2, '0')}`;
          if (how === 'u' && code < 0x10000) return `\\u${code.toString(16).padStart(4, '0')}`;
          if (how === 'slash' && ch === '/') return '\\/';
          if (ch === '\t') return '\\t';
          return ch;
        })
        .join('');
      return `"${escaped}"`;
    }
    case 'literal':
      return `|-${eol}${indent}  ${value}`;
    case 'folded':
      return `>-${eol}${indent}  ${value}`;
    case 'foldedPlain': {
      // A plain scalar over two lines reads as the two parts joined by one space.
      const at = value.indexOf(' ', 1);
      return at > 0 && at < value.length - 1 ? `${value.slice(0, at)}${eol}${indent}  ${value.slice(at + 1)}` : value;
    }
    case 'foldedDouble': {
      const at = value.indexOf(' ', 1);
      const quoted = (s: string) => s.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
      return at > 0 && at < value.length - 1 ? `"${quoted(value.slice(0, at))}${eol}${indent}  ${quoted(value.slice(at + 1))}"` : `"${quoted(value)}"`;
    }
    case 'tagged':
      return `!!str ${value}`;
  }
}

/** A comment after a value: nothing, or `#` after spaces or tabs. */
function trailer(g: fc.GeneratorValue): string {
  return g(() => fc.constantFrom('', '', ' # note', '\t# tab then comment', '  \t # mixed', '\t#'));
}

function key(g: fc.GeneratorValue, name: string): string {
  return g(() => fc.constantFrom(name, name, name, `"${name}"`, `'${name}'`));
}

/** A path: absolute, with odd segments (`.`, `..`, empty), odd characters, and maybe a trailing slash; sometimes `/`. */
function cwdPath(g: fc.GeneratorValue, index: number): string {
  if (g(() => fc.integer({ min: 0, max: 40 })) === 0) return '/';
  const segments = [`b${index}`];
  const count = g(() => fc.integer({ min: 0, max: 3 }));
  for (let i = 0; i < count; i++) {
    const kind = g(() => fc.integer({ min: 0, max: 9 }));
    if (kind === 0) segments.push(g(() => fc.constantFrom('.', '..', '')));
    else segments.push(g(() => fc.array(fc.constantFrom(...SEGMENT_CHARS), { minLength: 1, maxLength: 6 })).join(''));
  }
  return `/${segments.join('/')}${g(() => fc.constantFrom('', '', '', '/'))}`;
}

interface Generated {
  text: string;
  form: string;
}

/** One config.yaml in a random form, with `bindings` as its bindings. */
function render(g: fc.GeneratorValue, bindings: Binding[]): Generated {
  const eol = g(() => fc.constantFrom('\n', '\n', '\r\n'));
  const form = g(() => fc.constantFrom('block', 'block', 'flowItems', 'flowSequence', 'flowDocument'));
  const lines: string[] = [];
  const comment = () => {
    if (g(() => fc.integer({ min: 0, max: 4 })) === 0) lines.push(g(() => fc.constantFrom('# a comment', '  # indented', '\t# after a tab', '#')));
  };
  // An alias: the first binding's cwd is written once, as hostLabel's anchored value, and referred to.
  // (A document that is one flow mapping has no block keys beside it.)
  const alias = form !== 'flowDocument' && bindings.length > 0 && g(() => fc.integer({ min: 0, max: 4 })) === 0;
  if (g(() => fc.boolean())) lines.push('---');
  comment();
  if (form !== 'flowDocument') {
    if (g(() => fc.boolean())) lines.push(`${key(g, 'version')}: 1${trailer(g)}`);
    if (g(() => fc.boolean())) lines.push(`locale: ${g(() => fc.constantFrom('zh', 'en', "'en'", '"zh"'))}${trailer(g)}`);
    if (alias) lines.push(`hostLabel: &home ${scalar(g, bindings[0]!.cwd, g(() => fc.constantFrom<Style>('plain', 'single', 'double')), '', eol)}`);
    if (g(() => fc.boolean())) lines.push(g(() => fc.constantFrom('poll:\n  enabled: true\n  intervalMinutes: 5', 'poll: {enabled: false}', 'stopPhrases: [停, stop]', 'stopPhrases:\n  - 停\n  - "stop now"')).replace(/\n/g, eol));
    comment();
  }

  const valueOf = (b: Binding, field: keyof Binding, indent: string, flow: boolean, index: number): string => {
    const value = b[field]!;
    if (field === 'cwd' && alias && index === 0) return '*home';
    const styles: Style[] = flow ? ['plain', 'single', 'double', 'double', 'tagged'] : ['plain', 'plain', 'single', 'double', 'literal', 'folded', 'foldedPlain', 'foldedDouble', 'tagged'];
    return scalar(g, value, g(() => fc.constantFrom(...styles)), indent, eol);
  };
  const fields = (b: Binding) => g(() => fc.shuffledSubarray(Object.keys(b) as Array<keyof Binding>, { minLength: Object.keys(b).length })).filter((f) => b[f] !== undefined);

  if (form === 'block' || form === 'flowItems') {
    lines.push(`${key(g, 'bindings')}:${trailer(g)}`);
    const seqIndent = g(() => fc.constantFrom('', '  ', '    '));
    bindings.forEach((b, index) => {
      comment();
      if (form === 'flowItems') {
        const parts = fields(b).map((f) => `${key(g, f)}: ${valueOf(b, f, seqIndent, true, index)}`);
        lines.push(`${seqIndent}- {${parts.join(g(() => fc.constantFrom(', ', ',', ' , ')))}${g(() => fc.constantFrom('', ' ', ', '))}}${trailer(g)}`);
        return;
      }
      const gap = g(() => fc.constantFrom(' ', ' ', '   '));
      const inner = seqIndent + ' '.repeat(1 + gap.length);
      fields(b).forEach((f, i) => {
        const lead = i === 0 ? `${seqIndent}-${gap}` : inner;
        lines.push(`${lead}${key(g, f)}:${g(() => fc.constantFrom(' ', ' ', '\t', '  '))}${valueOf(b, f, inner, false, index)}${trailer(g)}`);
        if (g(() => fc.integer({ min: 0, max: 6 })) === 0) lines.push(`${inner}# between keys`);
      });
    });
  } else {
    const items = bindings.map((b, index) => `{${fields(b).map((f) => `${key(g, f)}: ${valueOf(b, f, '  ', true, index)}`).join(', ')}}`);
    const joiner = g(() => fc.constantFrom(', ', `,${eol}  `));
    if (form === 'flowSequence') lines.push(`bindings: [${items.join(joiner)}]${trailer(g)}`);
    else lines.push(`{${g(() => fc.constantFrom('', 'locale: en, ', `poll: {enabled: true},${eol}  `))}bindings: [${items.join(joiner)}]}`);
  }
  comment();
  if (g(() => fc.integer({ min: 0, max: 5 })) === 0) lines.push('...');
  const text = (g(() => fc.boolean()) ? '\uFEFF' : '') + lines.join(eol) + g(() => fc.constantFrom(eol, '', eol + eol));
  return { text, form: `${form}${alias ? '+alias' : ''}${eol === '\r\n' ? '+crlf' : ''}` };
}

function bindingsOf(g: fc.GeneratorValue): Binding[] {
  const count = g(() => fc.integer({ min: 0, max: 3 }));
  return Array.from({ length: count }, (_, i) => {
    const b: Binding = { cwd: cwdPath(g, i), projectId: g(() => fc.constantFrom('p1', '6a1f0c3b2d4e5f6071829304', 'x y')) };
    if (g(() => fc.boolean())) b.label = g(() => fc.constantFrom('web', '网站 #1', 'a: b'));
    if (g(() => fc.integer({ min: 0, max: 3 })) === 0) b.tag = g(() => fc.constantFrom('web', '#api'));
    return b;
  });
}

async function parsed(text: string): Promise<DidaTodoConfig | undefined> {
  try {
    return await parseConfigText(text, 'config.yaml');
  } catch {
    return undefined;
  }
}

/** Directories to ask about for a parsed config: each bound one, a child of it, its parent, and one elsewhere. */
function questions(config: DidaTodoConfig): string[] {
  const asked = ['/elsewhere/entirely'];
  for (const b of config.bindings) asked.push(b.cwd, path.join(b.cwd, 'src', 'deep'), path.dirname(b.cwd));
  return asked;
}

describe('the first-load layer and the config parser agree on bindings', () => {
  it('never says "not bound" where the parser binds, over generated YAML forms of the same bindings', { timeout: 20_000 + RUNS * 10 }, async () => {
    const reached = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(fc.gen(), async (g) => {
        const { text, form } = render(g, bindingsOf(g));
        const config = await parsed(text);
        if (!config) return;
        for (const cwd of questions(config)) {
          if (!findBinding(config, cwd)) continue;
          reached.set(form, (reached.get(form) ?? 0) + 1);
          expect(configMayBind(text, cwd), `${JSON.stringify(text)} binds ${JSON.stringify(cwd)}`).toBe(true);
        }
      }),
      // Shrinking a failure through the YAML parser takes minutes; the failing text is in the message as it is.
      { numRuns: RUNS, endOnFailure: true },
    );
    // Every form, CRLF line ends and aliases were generated valid and bound something (else the property would say
    // nothing about them).
    const count = (part: string) => [...reached].filter(([form]) => form.split('+').includes(part)).reduce((sum, [, n]) => sum + n, 0);
    for (const part of ['block', 'flowItems', 'flowSequence', 'flowDocument', 'crlf', 'alias']) expect(count(part), part).toBeGreaterThan(0);
  });
});

describe('what dida-todo writes, and plain hand edits', () => {
  it('reads every file `dida-todo bind` writes with certainty, and answers exactly as the parser', { timeout: 20_000 + RUNS * 10 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.gen(), async (g) => {
        let config = defaultConfig();
        for (const b of bindingsOf(g)) config = withBinding(config, { ...b, cwd: path.resolve(b.cwd) });
        if (g(() => fc.boolean())) config.stopPhrases = g(() => fc.constantFrom(['停'], [], ['stop', 'halt now']));
        const text = await serializeConfig(config);
        const reparsed = await parsed(text);
        if (!reparsed) return;
        expect(peekConfig(text).sure, text).toBe(true);
        for (const cwd of questions(reparsed)) expect(configMayBind(text, cwd), `${text} / ${cwd}`).toBe(findBinding(reparsed, cwd) !== undefined);
      }),
      { numRuns: Math.ceil(RUNS / 2), endOnFailure: true },
    );
  });

  it.each([
    ['a flow mapping item', 'bindings:\n  - {cwd: /code/web, projectId: p}\n'],
    ['a flow sequence', 'bindings: [{cwd: /code/web, projectId: p}]\n'],
    ['an alias', 'hostLabel: &h /code/web\nbindings:\n  - cwd: *h\n    projectId: p\n'],
    ['a tag', 'bindings:\n  - cwd: !!str /code/web\n    projectId: p\n'],
    ['an escape YAML does not know', 'bindings:\n  - cwd: "/code/w\\qb"\n    projectId: p\n'],
    ['a quoted key', 'bindings:\n  - "cwd": /code/web\n    projectId: p\n'],
    ['a plain value over two lines', 'bindings:\n  - cwd: /code/my\n      web\n    projectId: p\n'],
    ['a block scalar', 'bindings:\n  - cwd: |-\n      /code/web\n    projectId: p\n'],
    ['a value on the next line', 'bindings:\n  - cwd:\n      /code/web\n    projectId: p\n'],
    ['a document marker', '---\nbindings:\n  - cwd: /code/web\n    projectId: p\n'],
    ['a tab in the indentation', 'bindings:\n\t- cwd: /code/web\n\t  projectId: p\n'],
    ['a lone carriage return', 'bindings:\r  - cwd: /code/web\r    projectId: p\r'],
  ])('is not sure of %s, so any directory may be bound', (_what, text) => {
    expect(peekConfig(text).sure).toBe(false);
    expect(configMayBind(text, '/somewhere/else')).toBe(true);
  });

  it.each([
    ['block style with comments after spaces or tabs', 'bindings: # mine\n- cwd: /code/web\t# tab\n  projectId: p # space\n'],
    ['quoted values', "bindings:\n  - cwd: '/code/it''s'\n    projectId: \"p\"\n  - cwd: \"/code/web\"\n    projectId: q\n"],
    ['CRLF line ends and a BOM', '\uFEFFversion: 1\r\nbindings:\r\n  -   cwd: /code/web/\r\n      projectId: p\r\n'],
    ['flow-style stop phrases and no bindings', 'stopPhrases: [停, "stop it"] # ok\npoll: {enabled: true}\nbindings: []\n'],
  ])('reads %s with certainty', (_what, text) => {
    const peek = peekConfig(text);
    expect(peek.sure).toBe(true);
    expect(configMayBind(text, '/somewhere/else')).toBe(false);
    for (const cwd of peek.cwds) expect(configMayBind(text, path.join(cwd, 'sub'))).toBe(true);
  });

  it('reads the directories exactly: quotes and escapes undone, paths resolved, parents bind their children only by whole names', () => {
    const cwds = peekConfig("bindings:\n  - cwd: '/code/it''s'\n  - cwd: /code/./a//b/../web/ # c\n  - cwd: /srv/a#b\n  - cwd: \"\\x2fcode\\u002fw\\U00000065b\\t\\\"\\\\\\/\"\n").cwds;
    expect(cwds).toEqual(["/code/it's", '/code/a/web', '/srv/a#b', '/code/web\t"\\']);
    const text = 'bindings:\n  - cwd: /code/web\n    projectId: p\n';
    expect(configMayBind(text, '/code/web')).toBe(true);
    expect(configMayBind(text, '/code/web/src/../lib')).toBe(true);
    expect(configMayBind(text, '/code/website')).toBe(false);
    expect(configMayBind(text, '/code')).toBe(false);
    expect(configMayBind('bindings:\n  - cwd: /\n', '/any/where')).toBe(true);
  });
});

describe('the cheap reader stays cheap', () => {
  it('is in the first-load file, which holds no YAML parser (the built one holds it elsewhere)', async () => {
    const root = path.resolve(__dirname, '../..');
    const first = await readFile(path.join(root, 'dsh-plugin/index.mjs'), 'utf8');
    // The first load is one file: no static import of a chunk (see build.mjs).
    expect(first.match(/(?:^|[;\n])\s*import\s*(?:[^'"();]*?from\s*)?["']\.[^"']+["']/g) ?? []).toEqual([]);
    expect(first).not.toMatch(/parseDocument|LineCounter/);
    expect(first).toContain('x:2,u:4,U:8');
    const chunks = await readdir(path.join(root, 'dsh-plugin/chunks'));
    const texts = await Promise.all(chunks.map((c) => readFile(path.join(root, 'dsh-plugin/chunks', c), 'utf8')));
    expect(texts.some((t) => t.includes('parseDocument'))).toBe(true);
  });
});
