// Parses `dida-todo` argv into positionals and flags, rejecting unknown flags; renders a command's help.
import type { CliKey, CliText } from './cli-locale';
import { closestWord } from './near-miss';
import { afterLabel, displayWidth, padDisplay } from './terminal-text';

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface FlagSpec {
  /** `string` takes a value (`--port 8080` or `--port=8080`); `boolean` does not. */
  type: 'string' | 'boolean';
  /** Catalog key of the one-line description. */
  description: CliKey;
  /** Placeholder shown in help, e.g. `dir`. */
  valueName?: string;
}

export interface ParsedArgs {
  positionals: string[];
  flags: Record<string, string | boolean | undefined>;
}

const COMMON_FLAGS: Record<string, FlagSpec> = {
  json: { type: 'boolean', description: 'cli.flag.json' },
  help: { type: 'boolean', description: 'cli.flag.help' },
};

/** Parses arguments against the command's flag specs; `--help` and `--json` are always accepted. */
export function parseArgs(argv: readonly string[], specs: Record<string, FlagSpec>, command: string, text: CliText): ParsedArgs {
  const { t } = text;
  const all: Record<string, FlagSpec> = { ...COMMON_FLAGS, ...specs };
  const positionals: string[] = [];
  const flags: Record<string, string | boolean | undefined> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('--')) {
      if (arg.startsWith('-') && arg !== '-' && arg !== '-h') throw unknownOption(arg, arg.replace(/^-+/, '').split('=')[0] as string, all, command, text);
      if (arg === '-h') flags.help = true;
      else positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const key = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
    const spec = Object.hasOwn(all, key) ? all[key] : undefined;
    if (!spec) throw unknownOption(`--${key}`, key, all, command, text);
    if (spec.type === 'boolean') {
      if (eq > 0) throw new UsageError(t('cli.usage.noValue', { option: `--${key}` }));
      flags[key] = true;
      continue;
    }
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined || (eq < 0 && value.startsWith('--'))) {
      throw new UsageError(t('cli.usage.needsValue', { option: `--${key}`, value: spec.valueName ?? 'value' }));
    }
    flags[key] = value;
  }
  return { positionals, flags };
}

/** "Unknown option …", with the closest option of the command when one is near (`--jsno` → `--json`). */
function unknownOption(option: string, key: string, specs: Record<string, FlagSpec>, command: string, text: CliText): UsageError {
  // `-json` is `--json` with one dash; anything else is matched against the command's options.
  const near = option !== `--${key}` && Object.hasOwn(specs, key) ? key : closestWord(key, Object.keys(specs));
  if (near === undefined) return new UsageError(text.t('cli.usage.unknownOption', { option, command }));
  return new UsageError(text.t('cli.usage.unknownOptionNear', { option, command, suggestion: `--${near}` }));
}

/** Reads an integer flag within bounds, or undefined when absent. */
export function intFlag(flags: ParsedArgs['flags'], key: string, min: number, max: number, text: CliText): number | undefined {
  const raw = flags[key];
  if (raw === undefined) return undefined;
  const value = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new UsageError(text.t('cli.usage.wholeNumber', { option: `--${key}`, min, max, value: String(raw) }));
  }
  return value;
}

/** Help of one command: usage, summary, and one row per option, aligned by display width (never glued). */
export function helpText(usage: string, summary: string, specs: Record<string, FlagSpec>, text: CliText): string {
  const entries = Object.entries({ ...specs, ...COMMON_FLAGS }).map(([key, spec]) => ({
    flag: `  --${key}${spec.type === 'string' ? ` <${spec.valueName ?? 'value'}>` : ''}`,
    description: text.t(spec.description),
  }));
  const column = Math.min(32, Math.max(...entries.map((e) => displayWidth(e.flag))) + 2);
  const rows = entries.map(({ flag, description }) =>
    displayWidth(flag) + 2 <= column ? `${padDisplay(flag, column)}${description}` : `${flag}\n${' '.repeat(column)}${description}`,
  );
  return `${afterLabel(text.t('cli.help.usage'), usage)}\n\n${summary}\n\n${text.t('cli.help.options')}\n${rows.join('\n')}\n`;
}
