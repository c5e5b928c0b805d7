// `dida-todo login`: checks a Dida token with one read, then saves it to credentials.json (0600).
import { helpText, intFlag, parseArgs, UsageError, type FlagSpec } from '../cli-args';
import type { CliIo } from '../cli-io';
import { CliFailure, createStyle, EXIT, printJson, withProgress } from '../cli-output';
import { endpointOf, globalOptions, GLOBAL_FLAGS, openCliRuntime, quickGateway, stringFlag, type CliContext, type Endpoint } from '../cli-runtime';
import { DEFAULT_OAUTH_PORT, DEFAULT_OAUTH_TIMEOUT_SECONDS, OAUTH_BASES } from '../oauth-flow';
import { isDidaError } from '../../dida/dida-error';
import { tokenProblem } from '../../dida/token-source';
import { writeFileAtomic } from '../../store/atomic-file';
import { displayPath } from '../../store/paths';

const FLAGS: Record<string, FlagSpec> = {
  token: { type: 'string', valueName: 'token', description: 'Personal API token (Dida: avatar → Settings → Account → API Token); "-" reads it from stdin.' },
  oauth: { type: 'boolean', description: 'Log in through the browser with your own registered Dida app (OAuth + PKCE).' },
  'client-id': { type: 'string', valueName: 'id', description: 'OAuth: client id of your app (developer.dida365.com/manage).' },
  'client-secret': { type: 'string', valueName: 'secret', description: 'OAuth: client secret (omit for a public PKCE client).' },
  port: { type: 'string', valueName: 'N', description: `OAuth: callback port on 127.0.0.1 (default ${DEFAULT_OAUTH_PORT}; 0 = any free port).` },
  timeout: { type: 'string', valueName: 'seconds', description: `OAuth: how long to wait for the browser (default ${DEFAULT_OAUTH_TIMEOUT_SECONDS}).` },
  ...GLOBAL_FLAGS,
};

const USAGE = 'dida-todo login --token <token|->  |  dida-todo login --oauth --client-id <id> [--client-secret <s>] [--port N] [--timeout S]';
const SUMMARY = `Checks a Dida token with one read (GET /project) and saves it to credentials.json (mode 600).
Nothing is written when the check fails. With --region the region is also saved in config.yaml.
OAuth: register http://127.0.0.1:<port>/callback as the redirect URI of your app.`;

export async function loginCommand(argv: readonly string[], io: CliIo, ctx: CliContext): Promise<number> {
  const args = parseArgs(argv, FLAGS, 'login');
  if (args.flags.help) {
    io.out(helpText(USAGE, SUMMARY, FLAGS));
    return EXIT.ok;
  }
  if (args.positionals.length > 0) io.fail(`\`dida-todo login\` takes no arguments, got "${args.positionals[0]}"; pass the token as --token <token>.`);
  const options = globalOptions(args.flags, ctx);
  const oauth = args.flags.oauth === true;
  const tokenFlag = args.flags.token;
  if (oauth && tokenFlag !== undefined) io.fail('Use either --token or --oauth, not both.');
  if (!oauth) {
    for (const key of ['client-id', 'client-secret', 'port', 'timeout']) {
      if (args.flags[key] !== undefined) io.fail(`Option --${key} only applies with --oauth.`);
    }
    if (typeof tokenFlag !== 'string') {
      io.fail('Pass --token <token> (Dida: avatar → Settings → Account → API Token), --token - to read it from stdin, or --oauth --client-id <id>.');
    }
  }
  const clientId = oauth ? stringFlag(args.flags, 'client-id') : undefined;
  if (oauth && !clientId) io.fail('Option --oauth needs --client-id <id> (the client id of the app you registered at developer.dida365.com/manage).');
  const port = oauth ? (intFlag(args.flags, 'port', 0, 65_535) ?? DEFAULT_OAUTH_PORT) : 0;
  const timeoutSeconds = oauth ? (intFlag(args.flags, 'timeout', 1, 86_400) ?? DEFAULT_OAUTH_TIMEOUT_SECONDS) : 0;

  const runtime = openCliRuntime(ctx, options);
  const endpoint = await endpointOf(runtime, options);

  let token: string;
  if (oauth) {
    const oauthBase = oauthBaseFor(endpoint, ctx.env);
    const clientSecret = typeof args.flags['client-secret'] === 'string' ? args.flags['client-secret'] : undefined;
    if (clientSecret) ctx.io.hide(clientSecret);
    const { runOAuthFlow } = await import('../oauth-flow');
    token = await runOAuthFlow({
      oauthBase,
      clientId: clientId as string,
      ...(clientSecret ? { clientSecret } : {}),
      port,
      timeoutMs: timeoutSeconds * 1000,
      hide: (secret) => ctx.io.hide(secret),
      onAuthorizeUrl: (url, redirectUri) => {
        io.err(
          `Open this address in a browser where you are signed in to Dida and allow access:\n\n  ${url}\n\nWaiting up to ${timeoutSeconds} s for Dida to send the browser back to ${redirectUri} …\n`,
        );
      },
    });
  } else {
    token = tokenFlag === '-' ? await readTokenFromStdin(io) : (tokenFlag as string).trim();
    ctx.io.hide(token);
    const problem = tokenProblem(token);
    if (problem) {
      throw new UsageError(`That token is unusable (${problem}); copy the personal API token again from Dida (avatar → Settings → Account → API Token). Nothing was saved.`);
    }
  }
  ctx.io.hide(token);
  const problem = tokenProblem(token);
  if (problem) throw new CliFailure(EXIT.failure, 'oauth_token', `Dida issued a token that is unusable (${problem}); nothing was saved.`);

  const lists = await verifyToken(token, endpoint, io);

  if (options.region) {
    const region = options.region;
    await runtime.config.update((config) => (config.region === region ? config : { ...config, region }));
  }
  const file = runtime.paths.credentialsFile;
  await writeFileAtomic(file, `${JSON.stringify({ version: 1, token, savedAt: new Date().toISOString() }, null, 2)}\n`, { mode: 0o600, dirMode: 0o700 });

  const envWins = (ctx.env.DIDA_TODO_TOKEN ?? '').trim() !== '';
  const shown = displayPath(file, ctx.env.HOME || undefined);
  if (options.json) {
    printJson(io, {
      ok: true,
      method: oauth ? 'oauth' : 'token',
      lists,
      credentialsFile: file,
      region: endpoint.region,
      baseUrl: endpoint.baseUrl,
      activeSource: envWins ? 'env' : 'credentials',
    });
  } else {
    const style = createStyle(io, ctx.env, false);
    io.out(`${style.good('Logged in.')} The token works: this ${endpoint.region === 'ticktick' ? 'TickTick' : 'Dida'} account has ${lists} list${lists === 1 ? '' : 's'}.\n`);
    io.out(`Saved to ${shown} (mode 600).\n`);
    if (envWins) io.out(style.warn('Note: DIDA_TODO_TOKEN is set in this environment and is used instead of the saved token.\n'));
    io.out('Next: run `dida-todo bind <list name>` in a project directory.\n');
  }
  return EXIT.ok;
}

function oauthBaseFor(endpoint: Endpoint, env: NodeJS.ProcessEnv): string {
  const override = (env.DIDA_TODO_OAUTH_BASE ?? '').trim();
  if (override === '') return OAUTH_BASES[endpoint.region];
  let url: URL | undefined;
  try {
    url = new URL(override);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new UsageError(`DIDA_TODO_OAUTH_BASE must be an http(s) URL such as https://dida365.com, got "${override}".`);
  }
  return url.origin;
}

async function readTokenFromStdin(io: CliIo): Promise<string> {
  if (!io.readLine) throw new UsageError('`--token -` reads the token from standard input, but there is none; pipe the token in or pass it as --token <token>.');
  if (io.stderrIsTTY) io.err('Paste the Dida token and press Enter: ');
  const line = (await io.readLine()).trim();
  if (line === '') throw new UsageError('No token arrived on standard input; pipe the token in, e.g. `pbpaste | dida-todo login --token -`.');
  return line;
}

/** One read to prove the token works; returns how many lists the account has. Nothing is written here. */
async function verifyToken(token: string, endpoint: Endpoint, io: CliIo): Promise<number> {
  const gateway = quickGateway(token, endpoint);
  try {
    const projects = await withProgress(io, `Checking the token with ${endpoint.baseUrl}`, () => gateway.listProjects());
    return projects.length;
  } catch (error) {
    if (isDidaError(error) && error.code === 'auth') {
      const hint = endpoint.explicit
        ? ''
        : endpoint.region === 'dida365'
          ? ' (a TickTick token needs --region ticktick)'
          : ' (a Dida365 token needs --region dida365)';
      throw new CliFailure(
        EXIT.noToken,
        'auth',
        `Dida rejected this token (401 from ${endpoint.baseUrl}); copy the personal API token again from Dida (avatar → Settings → Account → API Token)${hint}. Nothing was saved.`,
      );
    }
    if (isDidaError(error)) throw new CliFailure(EXIT.failure, error.code, `Could not check the token: ${error.message} Nothing was saved.`);
    throw error;
  } finally {
    await gateway.close();
  }
}
