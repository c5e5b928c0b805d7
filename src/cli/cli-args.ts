// Parses `dida-todo` argv into a command, positionals and flags, rejecting unknown flags with a clear message.

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface FlagSpec {
  /** `string` takes a value (`--port 8080` or `--port=8080`); `boolean` does not. */
  type: 'string' | 'boolean';
  description: string;
  valueName?: string;
}

export interface ParsedArgs {
  positionals: string[];
  flags: Record<string, string | boolean | undefined>;
}

/** Parses arguments against the command's flag specs; `--help` and `--json` are always accepted. */
export function parseArgs(argv: readonly string[], specs: Record<string, FlagSpec>, command: string): ParsedArgs {
  const all: Record<string, FlagSpec> = {
    help: { type: 'boolean', description: 'Show this help.' },
    json: { type: 'boolean', description: 'Print machine-readable JSON.' },
    ...specs,
  };
  const positionals: string[] = [];
  const flags: Record<string, string | boolean | undefined> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('--')) {
      if (arg.startsWith('-') && arg !== '-' && arg !== '-h') throw new UsageError(`Unknown option "${arg}" for \`dida-todo ${command}\`; see \`dida-todo ${command} --help\`.`);
      if (arg === '-h') flags.help = true;
      else positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const key = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
    const spec = all[key];
    if (!spec) throw new UsageError(`Unknown option "--${key}" for \`dida-todo ${command}\`; see \`dida-todo ${command} --help\`.`);
    if (spec.type === 'boolean') {
      if (eq > 0) throw new UsageError(`Option --${key} takes no value.`);
      flags[key] = true;
      continue;
    }
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined || (eq < 0 && value.startsWith('--'))) {
      throw new UsageError(`Option --${key} needs a value (${spec.valueName ?? 'value'}).`);
    }
    flags[key] = value;
  }
  return { positionals, flags };
}

/** Reads an integer flag within bounds, or undefined when absent. */
export function intFlag(flags: ParsedArgs['flags'], key: string, min: number, max: number): number | undefined {
  const raw = flags[key];
  if (raw === undefined) return undefined;
  const value = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new UsageError(`Option --${key} must be a whole number from ${min} to ${max}, got "${String(raw)}".`);
  }
  return value;
}

export function helpText(usage: string, summary: string, specs: Record<string, FlagSpec>): string {
  const rows = Object.entries({ ...specs, json: { type: 'boolean', description: 'Print machine-readable JSON.' } as FlagSpec, help: { type: 'boolean', description: 'Show this help.' } as FlagSpec }).map(
    ([key, spec]) => `  --${key}${spec.type === 'string' ? ` <${spec.valueName ?? 'value'}>` : ''}`.padEnd(26) + spec.description,
  );
  return `Usage: ${usage}\n\n${summary}\n\nOptions:\n${rows.join('\n')}\n`;
}
