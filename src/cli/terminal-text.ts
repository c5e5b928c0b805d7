// Text that came from Dida, made safe for a terminal, and display-width alignment for CJK and emoji.
import stringWidth from 'string-width';

/**
 * C0 controls (newline and tab included), DEL, C1 controls (the 8-bit CSI/OSC forms) and the bidi controls that
 * can reorder what a terminal shows. Anyone a list is shared with can put them into a title.
 */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * `text` with every control, escape and bidi character shown as a visible escape (`\x1b`, `\n`, `\u202e`), so
 * nothing from Dida can retitle the window, clear the screen, colour the output or reorder a line.
 */
export function safeText(text: string): string {
  return text.replace(UNSAFE, (ch) => {
    switch (ch) {
      case '\n':
        return '\\n';
      case '\r':
        return '\\r';
      case '\t':
        return '\\t';
      default: {
        const code = ch.charCodeAt(0);
        return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
      }
    }
  });
}

/** Columns `text` takes in a terminal (CJK and emoji count two; colour codes count nothing). */
export function displayWidth(text: string): number {
  return stringWidth(text);
}

/** `text` padded with spaces to `width` columns (never cut). */
export function padDisplay(text: string, width: number): string {
  const missing = width - displayWidth(text);
  return missing > 0 ? text + ' '.repeat(missing) : text;
}

/**
 * `text` cut to at most `width` columns, ending in `…` when something was cut; whole characters only (a wide
 * character that would straddle the edge is left out). Returns whether it was cut.
 */
export function fitDisplay(text: string, width: number): { text: string; cut: boolean } {
  if (displayWidth(text) <= width) return { text, cut: false };
  const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  let kept = '';
  let used = 0;
  for (const { segment } of segmenter.segment(text)) {
    const w = displayWidth(segment);
    if (used + w > width - 1) break;
    kept += segment;
    used += w;
  }
  return { text: `${kept}…`, cut: true };
}

/** `label` and `text` with one space between, none after a full-width colon (`修复：dida-todo …`). */
export function afterLabel(label: string, text: string): string {
  return /：$/.test(label) ? `${label}${text}` : `${label} ${text}`;
}
