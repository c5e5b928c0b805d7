// What one finished `dida` command printed, read as the Open API's answer or as a DidaError: the CLI's own error lines,
// its exit status, the no-token text of each CLI version, and `--json` output checked against the wire schemas.
import type * as z from 'zod/mini';
import { describeIssues } from '../common/schema-issues';
import type { CliRunResult } from './cli-process';
import { DidaError, adviceFor, codeForAnswer } from './dida-error';

const EXCERPT_CHARS = 300;

/** Text the CLI prints when it has no token; older versions exit 1, newer ones exit 0. */
const NO_TOKEN = /未找到\s*access\s*token|请先运行\s*[`'"]?dida auth login|未登录/i;
/** `DIDA API 错误 <status>: <body>`, printed on stderr by the CLI for a non-2xx answer. */
const API_ERROR = /DIDA API 错误\s*(\d{3})\s*[:：]?\s*([\s\S]*)/;
/** Node/undici network failures the CLI's top-level catch prints. */
const NETWORK_FAILURE = /fetch failed|ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|socket hang up|UND_ERR/i;
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]/g;

export type Schema = z.ZodMiniType;

export interface CommandSpec<S extends Schema | undefined> {
  args: string[];
  /** The matching Open API route template, for error fields. */
  route: string;
  /** Validates `--json` output; undefined for text commands (complete, delete). */
  schema: S;
  idempotent: boolean;
}

export type Parsed<S> = S extends Schema ? z.output<S> | undefined : undefined;

/** Turns one finished command into data or a DidaError. Exported for unit tests. */
export function interpret<S extends Schema | undefined>(spec: CommandSpec<S>, label: string, result: CliRunResult): Parsed<S> {
  const stdout = result.stdout.replace(ANSI, '');
  const stderr = result.stderr.replace(ANSI, '');
  const route = spec.route;

  // stdout is only searched on failure: on success it may hold user text that merely looks like an error.
  const api = API_ERROR.exec(stderr) ?? (result.exitCode !== 0 ? API_ERROR.exec(stdout) : null);
  if (api) {
    const status = Number(api[1]);
    const code = codeForAnswer(status, (api[2] ?? '').trim());
    const body = excerpt(api[2] ?? '');
    return fail({
      code,
      status,
      route,
      ...(code === 'not_found' ? { notFoundSignal: status === 404 ? ('status' as const) : ('error_body' as const) } : {}),
      bodyExcerpt: body,
      message: `\`${label}\` failed: Dida answered ${status}: ${adviceFor(code)}.${body ? ` Server said: ${body}` : ''}`,
    });
  }

  if (result.exitCode !== 0) {
    if (NO_TOKEN.test(stdout) || NO_TOKEN.test(stderr)) return fail(noToken(label, route));
    const output = excerpt(stderr) ?? excerpt(stdout);
    const how = result.exitCode === null ? `was killed by ${result.exitSignal ?? 'a signal'}` : `exited with code ${result.exitCode}`;
    const transient = result.exitCode === null || NETWORK_FAILURE.test(stderr) || NETWORK_FAILURE.test(stdout);
    return fail({
      code: transient ? 'network' : 'invalid_response',
      route,
      bodyExcerpt: output,
      message: transient
        ? `\`${label}\` ${how}${output ? `: ${output}` : ''}; ${adviceFor('network')}.`
        : `\`${label}\` ${how}${output ? `: ${output}` : ''}; check that \`dida\` is @suibiji/dida-cli (\`dida task comment --help\` must work) or switch to the HTTP gateway.`,
    });
  }

  if (spec.schema === undefined) {
    // Text commands (complete, delete) print a Chinese confirmation; the newer CLI reports a missing token with exit 0.
    if (NO_TOKEN.test(stdout) || NO_TOKEN.test(stderr)) return fail(noToken(label, route));
    return undefined as Parsed<S>;
  }

  const trimmed = stdout.trim();
  if (trimmed === '' || trimmed === 'null' || trimmed === 'undefined') {
    if (NO_TOKEN.test(stderr)) return fail(noToken(label, route));
    return undefined as Parsed<S>;
  }
  const json = parseJson(trimmed);
  if (json === NOT_JSON) {
    // Only non-JSON output is checked for the no-token text, so a task titled 未登录 is never mistaken for it.
    if (NO_TOKEN.test(stdout) || NO_TOKEN.test(stderr)) return fail(noToken(label, route));
    return fail({
      code: 'invalid_response',
      route,
      bodyExcerpt: excerpt(trimmed),
      message: `\`${label}\` printed output that is not JSON (${trimmed.length} characters; it may have been cut off, or \`dida\` is not @suibiji/dida-cli).`,
    });
  }
  const parsed = spec.schema.safeParse(json, { reportInput: true });
  if (!parsed.success) {
    return fail({
      code: 'invalid_response',
      route,
      bodyExcerpt: excerpt(trimmed),
      message: `\`${label}\` printed JSON with an unexpected shape ${describeIssues(parsed.error.issues)}.`,
    });
  }
  return parsed.data as Parsed<S>;
}

function noToken(label: string, route: string): DidaErrorArgs {
  return {
    code: 'auth',
    route,
    message: `\`${label}\` reports that the Dida CLI is not logged in; run \`dida auth login\` (or \`dida auth token <token>\`), or switch to the HTTP gateway.`,
  };
}

type DidaErrorArgs = ConstructorParameters<typeof DidaError>[0];

function fail(init: DidaErrorArgs): never {
  throw new DidaError(init);
}

const NOT_JSON = Symbol('not json');

function parseJson(textOut: string): unknown {
  try {
    return JSON.parse(textOut);
  } catch {
    // Tolerate a notice printed before the JSON document: retry from the first line that opens one.
    const start = textOut.search(/^[[{]/m);
    if (start <= 0) return NOT_JSON;
    try {
      return JSON.parse(textOut.slice(start));
    } catch {
      return NOT_JSON;
    }
  }
}

function excerpt(value: string): string | undefined {
  const trimmed = value.trim().replace(/Bearer\s+\S+/gi, 'Bearer <token>');
  if (trimmed === '') return undefined;
  return trimmed.length > EXCERPT_CHARS ? `${trimmed.slice(0, EXCERPT_CHARS)}…` : trimmed;
}
