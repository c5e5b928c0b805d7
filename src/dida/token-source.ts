// Finds the Dida token: explicit setting or DIDA_TODO_TOKEN, then our credentials file, then the dida CLI's file (read only).
import { readFile, stat } from 'node:fs/promises';
import * as z from 'zod/mini';
import { describeIssues } from '../common/schema-issues';

export type TokenSource = 'setting' | 'env' | 'credentials' | 'dida-cli';

export interface ResolvedToken {
  token: string;
  source: TokenSource;
  /** The file the token came from, for status output (never the token itself). */
  file?: string;
  /** Set when the credentials file can be read by other users. */
  warning?: string;
}

export interface TokenLookup {
  /** Token from the plugin row config or a CLI flag. */
  setting?: string | undefined;
  env?: { DIDA_TODO_TOKEN?: string | undefined };
  credentialsFile: string;
  didaCliConfigFile: string;
}

export class TokenError extends Error {
  override readonly name = 'TokenError';
  readonly code = 'token_invalid' as const;
  constructor(
    message: string,
    readonly file?: string,
  ) {
    super(message);
  }
}

export const CredentialsSchema = z.strictObject({
  version: z._default(z.literal(1), 1),
  token: z.string().check(z.minLength(1)),
  savedAt: z.optional(z.string()),
});
export type Credentials = z.infer<typeof CredentialsSchema>;

const DidaCliConfigSchema = z.looseObject({ access_token: z.optional(z.nullable(z.string())) });

/** Checks the shape of a token (not its validity, which only Dida can tell); returns a reason or undefined. */
export function tokenProblem(token: string): string | undefined {
  const t = token.trim();
  if (t === '') return 'the token is empty';
  if (/[\s\u0000-\u001f\u007f]/.test(t)) return 'the token contains spaces or control characters';
  if (t.length < 10) return 'the token is shorter than 10 characters';
  if (t.length > 4096) return 'the token is longer than 4096 characters';
  return undefined;
}

/**
 * Returns the first token found, or undefined when there is none. A malformed token or unreadable
 * file is a TokenError naming where it came from; the official CLI's file is only ever read.
 */
export async function resolveToken(lookup: TokenLookup): Promise<ResolvedToken | undefined> {
  const fromSetting = lookup.setting?.trim();
  if (fromSetting) return checked({ token: fromSetting, source: 'setting' }, 'the dida token setting');
  const fromEnv = lookup.env?.DIDA_TODO_TOKEN?.trim();
  if (fromEnv) return checked({ token: fromEnv, source: 'env' }, 'the DIDA_TODO_TOKEN environment variable');

  const credentials = await readCredentials(lookup.credentialsFile);
  if (credentials) {
    const mode = (await stat(lookup.credentialsFile)).mode & 0o777;
    const warning =
      (mode & 0o077) !== 0
        ? `${lookup.credentialsFile} can be read by other users (mode ${mode.toString(8)}); run chmod 600 on it.`
        : undefined;
    return checked({ token: credentials.token.trim(), source: 'credentials', file: lookup.credentialsFile, ...(warning ? { warning } : {}) }, lookup.credentialsFile);
  }

  const cli = await readJson(lookup.didaCliConfigFile);
  if (cli !== undefined) {
    const parsed = DidaCliConfigSchema.safeParse(cli, { reportInput: true });
    const token = parsed.success ? parsed.data.access_token?.trim() : undefined;
    if (token) return checked({ token, source: 'dida-cli', file: lookup.didaCliConfigFile }, lookup.didaCliConfigFile);
  }
  return undefined;
}

/** Reads our credentials file; undefined when it does not exist; TokenError when it is malformed. */
export async function readCredentials(file: string): Promise<Credentials | undefined> {
  const json = await readJson(file);
  if (json === undefined) return undefined;
  const parsed = CredentialsSchema.safeParse(json, { reportInput: true });
  if (!parsed.success) {
    throw new TokenError(`${file} is not a valid credentials file ${describeIssues(parsed.error.issues)}; run \`dida-todo login --token <token>\` to write it again.`, file);
  }
  return parsed.data;
}

async function readJson(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new TokenError(`Cannot read ${file}: ${(error as Error).message}.`, file);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new TokenError(`${file} is not valid JSON; fix it or run \`dida-todo login --token <token>\` to write it again.`, file);
  }
}

function checked(found: ResolvedToken, where: string): ResolvedToken {
  const problem = tokenProblem(found.token);
  if (problem) throw new TokenError(`The token from ${where} is unusable: ${problem}. Run \`dida-todo login --token <token>\` with the personal API token from Dida (Settings → Account → API Token).`, found.file);
  return found;
}
