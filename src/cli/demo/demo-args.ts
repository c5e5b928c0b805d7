// Arguments of `npm run demo` (scripts/demo.mjs → src/cli/demo/main.ts), validated before anything is started or written.
import { cliText, type CliText } from '../cli-locale';

export class DemoUsageError extends Error {
  override readonly name = 'DemoUsageError';
}

export interface DemoOptions {
  /** Run against the real Dida (needs `list` and a token) instead of the local simulator. */
  real: boolean;
  /** `--list <name>`: the dedicated real Dida list the demo may write to (required with --real). */
  list?: string;
  /** The Dida token for --real (from DIDA_TODO_TOKEN). */
  token?: string;
  /** A real DeepSeek key (DEEPSEEK_API_KEY): the real model replaces the scripted one. */
  apiKey?: string;
  /** Colours: true/false when forced by a flag, undefined = only on a terminal (and NO_COLOR unset). */
  color?: boolean;
  /** Keep the temporary dsh home and project directory (their path is printed). */
  keep: boolean;
  /** Show dsh's own stderr. */
  verbose: boolean;
  help: boolean;
}

export function demoUsage(text: CliText): string {
  return text.t('cli.demo.usage');
}

/** Parses and validates the demo's arguments; throws DemoUsageError with one line saying what to do. */
export function parseDemoArgs(argv: readonly string[], env: NodeJS.ProcessEnv, text: CliText = cliText('en')): DemoOptions {
  const { t } = text;
  const options: DemoOptions = { real: false, keep: false, verbose: false, help: false };
  let list: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const eq = arg.indexOf('=');
    const key = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    switch (key) {
      case '--help':
      case '-h':
        options.help = true;
        break;
      case '--real':
        options.real = true;
        break;
      case '--no-color':
        options.color = false;
        break;
      case '--color':
        options.color = true;
        break;
      case '--keep':
        options.keep = true;
        break;
      case '--verbose':
        options.verbose = true;
        break;
      case '--list': {
        const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
        if (value === undefined || (eq < 0 && value.startsWith('--'))) throw new DemoUsageError(t('cli.demo.args.listValue'));
        list = value;
        break;
      }
      default:
        throw new DemoUsageError(t('cli.demo.args.unknown', { option: arg }));
    }
    if (eq > 0 && key !== '--list') throw new DemoUsageError(t('cli.demo.args.noValue', { option: key }));
  }
  if (options.help) return options;
  if (list !== undefined) {
    list = list.trim();
    if (!options.real) throw new DemoUsageError(t('cli.demo.args.listOnlyReal'));
    if (list === '') throw new DemoUsageError(t('cli.demo.args.listEmpty'));
    options.list = list;
  }
  if (options.real) {
    if (!options.list) {
      throw new DemoUsageError(t('cli.demo.args.realNeedsList'));
    }
    const token = env.DIDA_TODO_TOKEN?.trim();
    if (!token) {
      throw new DemoUsageError(t('cli.demo.args.realNeedsToken'));
    }
    options.token = token;
  }
  const apiKey = env.DEEPSEEK_API_KEY?.trim();
  if (apiKey) options.apiKey = apiKey;
  return options;
}
