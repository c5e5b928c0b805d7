// Shared output of the CLI commands: exit codes, one-line failures in the person's language, JSON, colours, progress
// and token redaction.
import { isDidaError, type DidaError } from '../dida/dida-error';
import { isWorkError } from '../core/work/engine-context';
import type { ConfigError } from '../store/config-check';
import { displayPath } from '../store/paths';
import { UsageError } from './cli-args';
import type { CliIo } from './cli-io';
import type { CliKey, CliText } from './cli-locale';
import { safeText } from './terminal-text';

/** Exit codes of every `dida-todo` command. */
export const EXIT = {
  ok: 0,
  /** Operational failure: Dida unreachable or erroring, a local file unreadable or unwritable, OAuth failed. */
  failure: 1,
  /** Usage error: unknown option, missing argument, an argument that cannot work (ambiguous list name…). */
  usage: 2,
  /** Not logged in: no token, an unusable token, or a token Dida rejected. */
  noToken: 3,
  /** The directory is not bound to a (still open) Dida list. */
  notBound: 4,
  /** Stopped by Ctrl+C (SIGINT), as shells report it (128 + 2). */
  interrupted: 130,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A failure with its exit code, a stable code for `--json`, and one sentence saying what to do. */
export class CliFailure extends Error {
  override readonly name = 'CliFailure';
  constructor(
    readonly exitCode: ExitCode,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface FailureInfo {
  exitCode: ExitCode;
  code: string;
  message: string;
}

const FS_CODES = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOSPC', 'EDQUOT', 'ENOTDIR', 'EISDIR', 'EEXIST', 'EIO', 'EMFILE', 'ENFILE']);

/**
 * Maps any thrown value to an exit code and one line of advice in the person's language. Text that may have come
 * from Dida or a file (server answers, paths) is made terminal-safe.
 */
export function describeFailure(error: unknown, text: CliText): FailureInfo {
  const { t } = text;
  if (error instanceof CliFailure) return { exitCode: error.exitCode, code: error.code, message: oneLine(error.message) };
  if (error instanceof UsageError) return { exitCode: EXIT.usage, code: 'usage', message: oneLine(error.message) };
  if (isDidaError(error)) {
    return { exitCode: error.code === 'auth' ? EXIT.noToken : EXIT.failure, code: error.code, message: oneLine(didaMessage(error, text)) };
  }
  if (isWorkError(error)) {
    const message = oneLine(safeText(error.forPeople ?? error.message));
    switch (error.code) {
      case 'not_bound':
        return { exitCode: EXIT.notBound, code: error.code, message };
      case 'invalid_argument':
      case 'list_ambiguous':
      case 'list_near_miss':
      case 'list_missing':
      case 'list_closed':
        return { exitCode: EXIT.usage, code: error.code, message };
      default:
        return { exitCode: EXIT.failure, code: error.code, message };
    }
  }
  const named = error as { name?: unknown; code?: unknown; message?: unknown; file?: unknown; dir?: unknown; path?: unknown } | undefined;
  if (named && typeof named === 'object') {
    if (named.name === 'TokenError') {
      // The token source's own advice names the command-line form; the person is pointed at the stdin form instead.
      const message = String(named.message).replace(/`dida-todo login --token <token>`/g, '`dida-todo login --token -`');
      return { exitCode: EXIT.noToken, code: 'token_invalid', message: oneLine(safeText(message)) };
    }
    if (named.name === 'ConfigError') return { exitCode: EXIT.failure, code: 'config_invalid', message: configErrorMessage(error as ConfigError, text) };
    if (named.name === 'StateError') return { exitCode: EXIT.failure, code: String(named.code ?? 'state_error'), message: oneLine(safeText(String(named.message))) };
    if (named.name === 'LockTimeoutError') return { exitCode: EXIT.failure, code: 'lock_timeout', message: t('cli.error.lockTimeout') };
    if (named.name === 'InputAborted') {
      const interrupted = (named as { interrupted?: unknown }).interrupted === true;
      return { exitCode: interrupted ? EXIT.interrupted : EXIT.usage, code: interrupted ? 'interrupted' : 'aborted', message: t('cli.error.inputAborted') };
    }
    if (named.name === 'FileSaveError' && typeof named.file === 'string' && typeof named.dir === 'string') {
      return { exitCode: EXIT.failure, code: 'file_not_saved', message: fileNotSaved(named.file, named.dir, String(named.code), text) };
    }
    if (typeof named.code === 'string' && FS_CODES.has(named.code)) {
      const where = typeof named.path === 'string' ? named.path : '';
      return { exitCode: EXIT.failure, code: 'file_error', message: t('cli.error.fileSystem', { path: safeText(where), code: named.code, fix: fsFix(named.code, where, text) }) };
    }
  }
  const message = error instanceof Error ? error.message : String(error);
  return { exitCode: EXIT.failure, code: 'internal', message: oneLine(safeText(message)) };
}

/**
 * config.yaml's problems in the person's language: the file, each problem's line and key, the closest valid key for
 * a misspelt one, and that dida-todo does not fall back to defaults until it is fixed.
 */
export function configErrorMessage(error: ConfigError, text: CliText, home?: string): string {
  const { t } = text;
  const parts = error.issues.map((issue) => {
    const where = [issue.line !== undefined ? t('cli.config.line', { line: issue.line }) : '', issue.path !== '(root)' ? `\`${issue.path}\`` : '']
      .filter(Boolean)
      .join(' ');
    const what = issue.unknownKey !== undefined ? t('cli.config.unknownKey', { key: safeText(issue.unknownKey) }) : safeText(issue.problem);
    const hint = issue.suggestion ? t('cli.config.didYouMean', { key: issue.suggestion }) : '';
    return where ? t('cli.config.issue', { where, what: `${what}${hint}` }) : `${what}${hint}`;
  });
  const detail = parts.length > 0 ? parts.join('; ') : safeText(error.detail);
  const fix = error.fix.startsWith('Upgrade') ? t('cli.config.fixUpgrade') : error.issues.some((i) => i.path.startsWith('bindings')) ? t('cli.config.fixBind') : t('cli.config.fixFile');
  return oneLine(t('cli.config.invalid', { file: safeText(displayPath(error.file, home)), detail, fix }));
}

/** "Could not save <file> (<code>); nothing was written … <fix>" in the person's language. */
export function fileNotSaved(file: string, dir: string, code: string, text: CliText): string {
  return text.t('cli.error.notSaved', { file: safeText(file), code, fix: fsFix(code, dir, text) });
}

export function fsFix(code: string, dir: string, text: CliText): string {
  const d = safeText(dir);
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return text.t('cli.fix.writable', { dir: d });
    case 'EROFS':
      return text.t('cli.fix.readOnlyFs', { dir: d });
    case 'ENOSPC':
    case 'EDQUOT':
      return text.t('cli.fix.diskFull');
    case 'ENOTDIR':
    case 'EEXIST':
      return text.t('cli.fix.notAFolder', { dir: d });
    default:
      return text.t('cli.fix.checkFolder', { dir: d });
  }
}

const DIDA_KEYS: Record<DidaError['code'], CliKey> = {
  auth: 'cli.dida.auth',
  forbidden: 'cli.dida.forbidden',
  not_found: 'cli.dida.notFound',
  rate_limited: 'cli.dida.rateLimited',
  server: 'cli.dida.server',
  timeout: 'cli.dida.timeout',
  network: 'cli.dida.network',
  invalid_response: 'cli.dida.invalidResponse',
};

/** A Dida failure in the person's language: what happened, where, and the server's own words made terminal-safe. */
export function didaMessage(error: DidaError, text: CliText): string {
  const detail = networkDetail(error);
  const base = text.t(DIDA_KEYS[error.code], { route: error.route ?? '', status: error.status ?? '', detail });
  return error.bodyExcerpt ? `${base} ${text.t('cli.dida.serverSaid', { excerpt: safeText(error.bodyExcerpt) })}` : base;
}

function networkDetail(error: DidaError): string {
  const cause = (error as { cause?: { code?: unknown; cause?: { code?: unknown } } }).cause;
  const code = cause?.cause?.code ?? cause?.code;
  if (typeof code === 'string') return code;
  const match = /\(([^)]*)\)/.exec(error.message);
  return safeText(match?.[1] ?? error.code);
}

/** Collapses whitespace so a message is exactly one line. */
export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

export function printJson(io: CliIo, value: unknown): void {
  io.out(`${JSON.stringify(value, null, 2)}\n`);
}

/** Colour helpers; identity functions when colours are off. */
export interface Style {
  readonly enabled: boolean;
  good(text: string): string;
  warn(text: string): string;
  bad(text: string): string;
  bold(text: string): string;
  dim(text: string): string;
}

/**
 * Colours are off for `--json`. Otherwise FORCE_COLOR decides when set (`0`/`false` off, anything else on), then
 * NO_COLOR and TERM=dumb turn them off, else they are on only when stdout is a terminal.
 */
export function colorsWanted(isTTY: boolean | undefined, env: NodeJS.ProcessEnv, json = false): boolean {
  if (json) return false;
  const force = env.FORCE_COLOR;
  if (force !== undefined && force !== '') return !['0', 'false'].includes(force.trim().toLowerCase());
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return isTTY === true && env.TERM !== 'dumb';
}

export function createStyle(io: CliIo, env: NodeJS.ProcessEnv, json: boolean): Style {
  const enabled = colorsWanted(io.stdoutIsTTY, env, json);
  const wrap = (open: number, close: number) => (text: string) => (enabled ? `\u001b[${open}m${text}\u001b[${close}m` : text);
  return { enabled, good: wrap(32, 39), warn: wrap(33, 39), bad: wrap(31, 39), bold: wrap(1, 22), dim: wrap(2, 22) };
}

/**
 * Runs `fn`; when it takes longer than `delayMs`, tells stderr what is going on (redrawn in place on a
 * terminal, one line otherwise) so a slow network never looks like a hang.
 */
export async function withProgress<T>(io: CliIo, label: string, fn: () => Promise<T>, delayMs = 1000): Promise<T> {
  let shown = false;
  const timer = setTimeout(() => {
    shown = true;
    io.err(io.stderrIsTTY ? `${label}…` : `${label}…\n`);
  }, delayMs);
  try {
    return await fn();
  } finally {
    clearTimeout(timer);
    if (shown && io.stderrIsTTY) io.err('\r\u001b[K');
  }
}

/** An io whose output never contains a registered secret (a token, an OAuth code). */
export interface GuardedIo extends CliIo {
  hide(secret: string): void;
}

export function guardIo(io: CliIo): GuardedIo {
  const secrets = new Set<string>();
  const scrub = (text: string) => {
    let result = text;
    for (const secret of secrets) result = result.split(secret).join('<redacted>');
    return result;
  };
  return {
    out: (text) => io.out(scrub(text)),
    err: (text) => io.err(scrub(text)),
    fail: (message) => io.fail(scrub(message)),
    get stdoutIsTTY() {
      return io.stdoutIsTTY;
    },
    get stderrIsTTY() {
      return io.stderrIsTTY;
    },
    get stdinIsTTY() {
      return io.stdinIsTTY;
    },
    ...(io.readLine ? { readLine: (prompt?: string) => io.readLine!(prompt) } : {}),
    hide(secret: string) {
      const s = secret.trim();
      if (s.length >= 4) secrets.add(s);
    },
  };
}
