// A cheap reading of config.yaml for the first-load layer: whether a directory may be bound, without a YAML parser.
import path from 'node:path';

/** What the cheap reading found in config.yaml's text. */
export interface ConfigPeek {
  /**
   * True when every line is of the plain block form this reader knows (what `dida-todo bind` writes, and hand edits
   * of that form), so `cwds` holds every binding's directory; false for anything else YAML allows (flow collections,
   * anchors, aliases, tags, block or multi-line scalars, quoted keys, document markers…).
   */
  sure: boolean;
  /** The directories the `cwd:` keys name, resolved as the config parser resolves them (when `sure`). */
  cwds: string[];
}

const UNSURE: ConfigPeek = { sure: false, cwds: [] };
/** A plain key as dida-todo and people write them: `name:` followed by a blank or the line's end. */
const KEY = /^([A-Za-z][A-Za-z0-9_]*):(?=[ \t]|$)/;
/** Characters that start something other than a plain scalar (flow, anchor, alias, tag, block scalar, directive…). */
const NOT_PLAIN_FIRST = new Set([...'{}[],#&*!|>%@`']);
/** Characters YAML readers may take as line breaks or refuse (NEL, LS, PS, a BOM past the start, lone controls). */
const ODD_CHARS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F\u0085\u2028\u2029]|\r(?!\n)|(?<!^)\uFEFF/u;

/** YAML's one-character escapes in double quotes. */
const ESCAPES: Record<string, string> = { '0': '\0', a: '\x07', b: '\b', t: '\t', '\t': '\t', n: '\n', v: '\v', f: '\f', r: '\r', e: '\x1b', ' ': ' ', '"': '"', '/': '/', '\\': '\\', N: '\x85', _: '\xa0', L: '\u2028', P: '\u2029' };
const HEX_ESCAPES: Record<string, number> = { x: 2, u: 4, U: 8 };

/** The double-quoted scalar that starts `rest`, escapes undone, and the index of its closing quote. */
function readDoubleQuoted(rest: string): { value: string; end: number } | undefined {
  let value = '';
  for (let i = 1; i < rest.length; i++) {
    const ch = rest[i]!;
    if (ch === '"') return { value, end: i };
    if (ch !== '\\') {
      value += ch;
      continue;
    }
    const code = rest[++i];
    if (code === undefined) return undefined;
    const width = HEX_ESCAPES[code];
    if (width !== undefined) {
      const hex = rest.slice(i + 1, i + 1 + width);
      const point = /^[0-9A-Fa-f]+$/.test(hex) && hex.length === width ? Number.parseInt(hex, 16) : Number.NaN;
      if (!(point <= 0x10ffff)) return undefined;
      value += String.fromCodePoint(point);
      i += width;
    } else if (Object.hasOwn(ESCAPES, code)) value += ESCAPES[code];
    else return undefined;
  }
  return undefined;
}

/** One scalar at the start of `rest` (after `key: ` or `- `): its value, or undefined when it is not of the known form. */
function readScalar(rest: string): string | undefined {
  const first = rest[0];
  let value: string;
  let after: string;
  if (first === '"') {
    // A quote not closed on its line folds over lines: beyond this reader.
    const read = readDoubleQuoted(rest);
    if (!read) return undefined;
    value = read.value;
    after = rest.slice(read.end + 1);
  } else if (first === "'") {
    let end = 1;
    for (;;) {
      end = rest.indexOf("'", end);
      if (end < 0) return undefined;
      if (rest[end + 1] !== "'") break;
      end += 2;
    }
    value = rest.slice(1, end).replace(/''/g, "'");
    after = rest.slice(end + 1);
  } else {
    if (first === undefined || NOT_PLAIN_FIRST.has(first)) return undefined;
    if ((first === '-' || first === '?' || first === ':') && /^.(?:[ \t]|$)/.test(rest)) return undefined;
    const comment = /[ \t]#/.exec(rest);
    value = (comment ? rest.slice(0, comment.index) : rest).replace(/[ \t]+$/, '');
    // `: ` inside a plain value is a nested mapping (or an error), not part of the value.
    if (/:(?:[ \t]|$)/.test(value)) return undefined;
    return value;
  }
  return /^[ \t]*(?:#.*)?$/.test(after) ? value : undefined;
}

/** Whether the flow collection that starts `rest` closes on this line, followed by nothing but a comment. */
function flowOnOneLine(rest: string): boolean {
  let depth = 0;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < rest.length; i++) {
    const ch = rest[i];
    if (quote === '"') {
      if (ch === '\\') i++;
      else if (ch === '"') quote = undefined;
    } else if (quote === "'") {
      if (ch === "'") quote = undefined;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '#' && /[ \t]/.test(rest[i - 1] ?? '')) return false;
    else if (ch === '[' || ch === '{') depth++;
    else if (ch === ']' || ch === '}') {
      depth--;
      if (depth === 0) return /^[ \t]*(?:#.*)?$/.test(rest.slice(i + 1));
    }
  }
  return false;
}

/**
 * Reads config.yaml's text line by line, without a YAML parser. Lines may be blank, comments, `key: scalar`, `key:`
 * (a nested block follows), `- key: scalar`, `- scalar` or `- key:`, with spaces for indentation; a scalar is plain,
 * single-quoted or double-quoted (escapes undone), on its line; a key other than `bindings` and `cwd` may also hold a
 * flow collection closed on its line (`stopPhrases: [停, stop]`), and `bindings` may be `[]`. A line indented deeper
 * than the key (or dash) of a value before it would continue that value. Any other line makes the reading unsure.
 */
export function peekConfig(text: string): ConfigPeek {
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  if (ODD_CHARS.test(body)) return UNSURE;
  const cwds: string[] = [];
  /** A content line indented deeper than this continues the scalar before it (-1: no scalar before). */
  let scalarAt = -1;
  for (const line of body.split(/\r?\n/)) {
    if (/^[ \t]*(?:#.*)?$/.test(line)) continue;
    const indent = /^ */.exec(line)![0].length;
    if (line[indent] === '\t' || (scalarAt >= 0 && indent > scalarAt)) return UNSURE;
    let rest = line.slice(indent);
    let column = indent;
    const dash = /^-( +)/.exec(rest);
    if (dash) {
      column += dash[0].length;
      rest = rest.slice(dash[0].length);
    }
    const key = KEY.exec(rest);
    if (!key) {
      // Only a sequence item may be a bare scalar (`- 停`).
      if (!dash || readScalar(rest) === undefined) return UNSURE;
      scalarAt = indent;
      continue;
    }
    const value = rest.slice(key[0].length).replace(/^[ \t]+/, '');
    if (value === '' || value.startsWith('#')) {
      // `key:` opens a nested block; a cwd whose value sits on the next lines is beyond this reader.
      if (key[1] === 'cwd') return UNSURE;
      scalarAt = -1;
      continue;
    }
    if (value[0] === '[' || value[0] === '{') {
      // A flow collection on one line may stand for any key but the bindings (`[]` is none) and their directories.
      const empty = /^\[[ \t]*\](?:[ \t]+#.*)?[ \t]*$/.test(value);
      if (key[1] === 'cwd' || (key[1] === 'bindings' && !empty) || !flowOnOneLine(value)) return UNSURE;
      scalarAt = column;
      continue;
    }
    const scalar = readScalar(value);
    if (scalar === undefined) return UNSURE;
    if (key[1] === 'cwd' && path.isAbsolute(scalar)) cwds.push(path.resolve(scalar));
    scalarAt = column;
  }
  return { sure: true, cwds };
}

/**
 * Whether the config whose reading is `peek` may bind `cwd`: a directory it names is `cwd` or one of its parents, or
 * the reading is unsure. A false "maybe" costs only an early load of the host, which then reads the file properly; a
 * false "no" cannot happen for a file the config parser accepts.
 */
export function peekMayBind(peek: ConfigPeek, cwd: string): boolean {
  if (!peek.sure) return true;
  const target = path.resolve(cwd);
  return peek.cwds.some((bound) => bound === target || target.startsWith(bound.endsWith(path.sep) ? bound : bound + path.sep));
}

/** `peekMayBind` over the text of config.yaml. */
export function configMayBind(text: string, cwd: string): boolean {
  return peekMayBind(peekConfig(text), cwd);
}
