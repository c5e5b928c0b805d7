// Arguments of `npm run demo` (scripts/demo.mjs → src/demo/main.ts), validated before anything is started or written.

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

export const DEMO_USAGE = `Usage: npm run demo [-- options]      (or: node scripts/demo.mjs [options])

Shows the whole dida-todo loop as a Dida user sees it: a local Dida simulator with a seeded list, the real dsh
(installed once into a cache outside the repository) running headless with a scripted model, the progress
comments, the completed task, the acceptance todo, and a rework request. Everything temporary is removed.

Options:
  --real               Use your real Dida account instead of the simulator (needs --list and DIDA_TODO_TOKEN).
  --list <name>        With --real: a dedicated Dida list for the demo (created when missing; must have no open tasks).
  --no-color           Plain text even on a terminal (colours are used only on a terminal anyway).
  --color              Colours even when not on a terminal.
  --keep               Keep the temporary dsh home and project directory (the path is printed).
  --verbose            Show dsh's own log output.
  --help               Show this help.

Environment:
  DIDA_TODO_TOKEN      Your Dida API token (only with --real).
  DEEPSEEK_API_KEY     When set, the real DeepSeek model is used instead of the scripted one (results vary).
  DIDA_TODO_E2E_CACHE  Where dsh is installed and cached (default ~/.cache/dida-todo-e2e).
`;

/** Parses and validates the demo's arguments; throws DemoUsageError with one line saying what to do. */
export function parseDemoArgs(argv: readonly string[], env: NodeJS.ProcessEnv): DemoOptions {
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
        if (value === undefined || (eq < 0 && value.startsWith('--'))) throw new DemoUsageError('--list needs a value: the name of a dedicated Dida list, e.g. --list "dida-todo 演示".');
        list = value;
        break;
      }
      default:
        throw new DemoUsageError(`Unknown option "${arg}"; run \`npm run demo -- --help\` to see the options.`);
    }
    if (eq > 0 && key !== '--list') throw new DemoUsageError(`Option ${key} takes no value.`);
  }
  if (options.help) return options;
  if (list !== undefined) {
    list = list.trim();
    if (!options.real) throw new DemoUsageError('--list only applies with --real (the simulator demo always uses its own list "dida-todo 演示").');
    if (list === '') throw new DemoUsageError('--list needs a non-empty list name.');
    options.list = list;
  }
  if (options.real) {
    if (!options.list) {
      throw new DemoUsageError('--real needs --list <name>: a dedicated Dida list the demo may write to (created when missing), e.g. --real --list "dida-todo 演示".');
    }
    const token = env.DIDA_TODO_TOKEN?.trim();
    if (!token) {
      throw new DemoUsageError('--real needs your Dida API token in DIDA_TODO_TOKEN (Dida: avatar → Settings → Account → API Token).');
    }
    options.token = token;
  }
  const apiKey = env.DEEPSEEK_API_KEY?.trim();
  if (apiKey) options.apiKey = apiKey;
  return options;
}
