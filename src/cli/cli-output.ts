// Shared output of the CLI commands: exit codes, one-line failures, JSON, colours, progress and token redaction.
import { isDidaError } from '../dida/dida-error';
import { isWorkError } from '../core/engine-context';
import { UsageError } from './cli-args';
import type { CliIo } from './cli-io';

/** Exit codes of every `dida-todo` command. */
export const EXIT = {
  ok: 0,
  /** Operational failure: Dida unreachable or erroring, a local file unreadable, OAuth failed. */
  failure: 1,
  /** Usage error: unknown option, missing argument, an argument that cannot work (ambiguous list name…). */
  usage: 2,
  /** Not logged in: no token, an unusable token, or a token Dida rejected. */
  noToken: 3,
  /** The directory is not bound to a (still open) Dida list. */
  notBound: 4,
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

/** Maps any thrown value to an exit code and one line of advice. */
export function describeFailure(error: unknown): FailureInfo {
  if (error instanceof CliFailure) return { exitCode: error.exitCode, code: error.code, message: oneLine(error.message) };
  if (error instanceof UsageError) return { exitCode: EXIT.usage, code: 'usage', message: oneLine(error.message) };
  if (isDidaError(error)) {
    if (error.code === 'auth') {
      return { exitCode: EXIT.noToken, code: 'auth', message: oneLine(error.message) };
    }
    return { exitCode: EXIT.failure, code: error.code, message: oneLine(error.message) };
  }
  if (isWorkError(error)) {
    switch (error.code) {
      case 'not_bound':
        return { exitCode: EXIT.notBound, code: error.code, message: oneLine(error.message) };
      case 'invalid_argument':
      case 'list_ambiguous':
      case 'list_missing':
      case 'list_closed':
        return { exitCode: EXIT.usage, code: error.code, message: oneLine(error.message) };
      default:
        return { exitCode: EXIT.failure, code: error.code, message: oneLine(error.message) };
    }
  }
  const named = error as { name?: unknown; code?: unknown; message?: unknown } | undefined;
  if (named && typeof named === 'object') {
    if (named.name === 'TokenError') return { exitCode: EXIT.noToken, code: 'token_invalid', message: oneLine(String(named.message)) };
    if (named.name === 'ConfigError') return { exitCode: EXIT.failure, code: 'config_invalid', message: oneLine(String(named.message)) };
    if (named.name === 'StateError') return { exitCode: EXIT.failure, code: String(named.code ?? 'state_error'), message: oneLine(String(named.message)) };
    if (named.name === 'LockTimeoutError') {
      return { exitCode: EXIT.failure, code: 'lock_timeout', message: oneLine(`${String(named.message)} Another dida-todo process may be busy; try again.`) };
    }
  }
  const message = error instanceof Error ? error.message : String(error);
  return { exitCode: EXIT.failure, code: 'internal', message: oneLine(message) };
}

/** Collapses whitespace so a message is exactly one line. */
export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

export function printJson(io: CliIo, value: unknown): void {
  io.out(`${JSON.stringify(value, null, 2)}\n`);
}

/** Colour helpers; identity functions unless stdout is a terminal, `--json` is off and NO_COLOR is unset. */
export interface Style {
  readonly enabled: boolean;
  good(text: string): string;
  warn(text: string): string;
  bad(text: string): string;
  bold(text: string): string;
  dim(text: string): string;
}

export function createStyle(io: CliIo, env: NodeJS.ProcessEnv, json: boolean): Style {
  const enabled = io.stdoutIsTTY === true && !json && !(env.NO_COLOR !== undefined && env.NO_COLOR !== '') && env.TERM !== 'dumb';
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
    ...(io.readLine ? { readLine: () => io.readLine!() } : {}),
    hide(secret: string) {
      const s = secret.trim();
      if (s.length >= 4) secrets.add(s);
    },
  };
}
