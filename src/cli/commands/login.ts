// `dida-todo login`: checks a Dida token with one read, then saves it (credentials.json, 0600) and the endpoint it
// was checked against (config.yaml), so status, bind and dsh all talk to the same Dida.
import { helpText, intFlag, parseArgs, UsageError, type FlagSpec } from '../cli-args';
import type { CliIo } from '../cli-io';
import { CliFailure, createStyle, describeFailure, EXIT, printJson, withProgress } from '../cli-output';
import { endpointFrom, globalOptions, GLOBAL_FLAGS, openCliRuntime, quickGateway, stringFlag, type CliContext } from '../cli-runtime';
import type { Endpoint } from '../../wiring/runtime';
import { loginChange, saveTokenAndEndpoint } from '../credentials-save';
import { simulatorDownMessage } from '../sim-address';
import { DEFAULT_OAUTH_PORT, DEFAULT_OAUTH_TIMEOUT_SECONDS, OAUTH_BASES } from '../oauth-flow';
import { isDidaError } from '../../dida/dida-error';
import { tokenProblem } from '../../dida/token-source';
import { displayPath } from '../../store/paths';

const FLAGS: Record<string, FlagSpec> = {
  token: { type: 'string', valueName: 'token|-', description: 'cli.login.flag.token' },
  oauth: { type: 'boolean', description: 'cli.login.flag.oauth' },
  'client-id': { type: 'string', valueName: 'id', description: 'cli.login.flag.clientId' },
  'client-secret': { type: 'string', valueName: 'secret', description: 'cli.login.flag.clientSecret' },
  port: { type: 'string', valueName: 'N', description: 'cli.login.flag.port' },
  timeout: { type: 'string', valueName: 'seconds', description: 'cli.login.flag.timeout' },
  ...GLOBAL_FLAGS,
};

const USAGE = 'dida-todo login --token -  |  dida-todo login --oauth --client-id <id> [--client-secret <s>] [--port N] [--timeout S]';

export async function loginCommand(argv: readonly string[], io: CliIo, ctx: CliContext): Promise<number> {
  const { t } = ctx.text;
  const args = parseArgs(argv, FLAGS, 'login', ctx.text);
  if (args.flags.help) {
    io.out(helpText(USAGE, t('cli.login.summary', { port: DEFAULT_OAUTH_PORT, timeout: DEFAULT_OAUTH_TIMEOUT_SECONDS }), FLAGS, ctx.text));
    return EXIT.ok;
  }
  if (args.positionals.length > 0) io.fail(t('cli.login.noArguments', { arg: args.positionals[0] as string }));
  const options = globalOptions(args.flags, ctx);
  const oauth = args.flags.oauth === true;
  const tokenFlag = args.flags.token;
  if (oauth && tokenFlag !== undefined) io.fail(t('cli.login.tokenOrOauth'));
  if (!oauth) {
    for (const key of ['client-id', 'client-secret', 'port', 'timeout']) {
      if (args.flags[key] !== undefined) io.fail(t('cli.login.oauthOnly', { option: `--${key}` }));
    }
    if (typeof tokenFlag !== 'string') io.fail(t('cli.login.passToken'));
  }
  const clientId = oauth ? stringFlag(args.flags, 'client-id', ctx.text) : undefined;
  if (oauth && !clientId) io.fail(t('cli.login.needsClientId'));
  const port = oauth ? (intFlag(args.flags, 'port', 0, 65_535, ctx.text) ?? DEFAULT_OAUTH_PORT) : 0;
  const timeoutSeconds = oauth ? (intFlag(args.flags, 'timeout', 1, 86_400, ctx.text) ?? DEFAULT_OAUTH_TIMEOUT_SECONDS) : 0;

  const runtime = openCliRuntime(ctx, options);
  // config.yaml must be readable: login saves the endpoint in it (a broken file is refused, never overwritten).
  const before = await runtime.config.read();
  // Login means the Dida named on this command line: --base-url, else the real service of --region (or the saved one).
  const endpoint = endpointFrom(options, { region: before.region });

  let token: string;
  if (oauth) {
    const oauthBase = oauthBaseFor(endpoint, ctx);
    const clientSecret = typeof args.flags['client-secret'] === 'string' ? args.flags['client-secret'] : undefined;
    if (clientSecret) ctx.io.hide(clientSecret);
    const { runOAuthFlow } = await import('../oauth-flow');
    token = await runOAuthFlow({
      oauthBase,
      clientId: clientId as string,
      ...(clientSecret ? { clientSecret } : {}),
      port,
      timeoutMs: timeoutSeconds * 1000,
      text: ctx.text,
      hide: (secret) => ctx.io.hide(secret),
      onAuthorizeUrl: (url, redirectUri) => io.err(`${t('cli.oauth.open', { url, seconds: timeoutSeconds, redirect: redirectUri })}\n`),
      onIgnored: () => io.err(`${t('cli.oauth.ignored')}\n`),
    });
  } else {
    token = tokenFlag === '-' ? await readTokenFromStdin(io, ctx) : (tokenFlag as string).trim();
    ctx.io.hide(token);
    const problem = tokenProblem(token);
    if (problem) throw new UsageError(t('cli.login.unusable', { problem }));
  }
  ctx.io.hide(token);
  const problem = tokenProblem(token);
  if (problem) throw new CliFailure(EXIT.failure, 'oauth_token', t('cli.login.oauthUnusable', { problem }));

  const lists = await verifyToken(token, endpoint, io, ctx, runtime.paths.stateDir);
  const saved = await saveTokenAndEndpoint(runtime, ctx, token, before, loginChange(options, endpoint.baseUrl));

  const envWins = (ctx.env.DIDA_TODO_TOKEN ?? '').trim() !== '';
  const home = ctx.env.HOME || undefined;
  const file = runtime.paths.credentialsFile;
  if (options.json) {
    printJson(io, {
      ok: true,
      method: oauth ? 'oauth' : 'token',
      lists,
      credentialsFile: file,
      configFile: runtime.paths.configFile,
      region: endpoint.region,
      baseUrl: endpoint.baseUrl,
      endpointSaved: saved.configChanged,
      previousBaseUrl: saved.previousBaseUrl ?? null,
      activeSource: envWins ? 'env' : 'credentials',
    });
    return EXIT.ok;
  }
  const style = createStyle(io, ctx.env, false);
  const service = endpoint.explicit ? endpoint.baseUrl : endpoint.region === 'ticktick' ? 'TickTick' : t('cli.login.dida');
  io.out(`${style.good(t('cli.login.done'))} ${ctx.text.plural('cli.login.works', lists, { service })}\n`);
  io.out(`${t('cli.login.savedTo', { file: displayPath(file, home) })}\n`);
  io.out(`${t('cli.login.endpoint', { url: endpoint.baseUrl, file: displayPath(runtime.paths.configFile, home) })}\n`);
  if (saved.previousBaseUrl) io.out(`${t('cli.login.switched', { from: saved.previousBaseUrl, to: endpoint.baseUrl })}\n`);
  if (envWins) io.out(`${style.warn(t('cli.login.envWins'))}\n`);
  if (tokenFlag !== undefined && tokenFlag !== '-') io.out(`${style.dim(t('cli.login.stdinTip'))}\n`);
  io.out(`${t('cli.login.next')}\n`);
  return EXIT.ok;
}

function oauthBaseFor(endpoint: Endpoint, ctx: CliContext): string {
  const override = (ctx.env.DIDA_TODO_OAUTH_BASE ?? '').trim();
  if (override === '') return OAUTH_BASES[endpoint.region];
  let url: URL | undefined;
  try {
    url = new URL(override);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new UsageError(ctx.text.t('cli.login.oauthBase', { value: override }));
  return url.origin;
}

async function readTokenFromStdin(io: CliIo, ctx: CliContext): Promise<string> {
  if (!io.readLine) throw new UsageError(ctx.text.t('cli.login.noStdin'));
  const line = (await io.readLine(ctx.text.t('cli.login.prompt'))).trim();
  if (line === '') throw new UsageError(ctx.text.t('cli.login.emptyStdin'));
  return line;
}

/** One read to prove the token works; returns how many lists the account has. Nothing is written here. */
async function verifyToken(token: string, endpoint: Endpoint, io: CliIo, ctx: CliContext, stateDir: string): Promise<number> {
  const { t } = ctx.text;
  const gateway = quickGateway(token, endpoint);
  try {
    const projects = await withProgress(io, t('cli.login.checking', { url: endpoint.baseUrl }), () => gateway.listProjects());
    return projects.length;
  } catch (error) {
    if (isDidaError(error) && error.code === 'auth') {
      const hint = endpoint.explicit ? '' : endpoint.region === 'dida365' ? t('cli.login.hintTicktick') : t('cli.login.hintDida');
      throw new CliFailure(EXIT.noToken, 'auth', t('cli.login.rejected', { url: endpoint.baseUrl, hint }));
    }
    const down = await simulatorDownMessage(error, endpoint.baseUrl, stateDir, ctx.text, ctx.env.HOME || undefined);
    if (down !== undefined) throw new CliFailure(EXIT.failure, 'network', t('cli.login.checkFailed', { reason: down }));
    if (isDidaError(error)) throw new CliFailure(EXIT.failure, error.code, t('cli.login.checkFailed', { reason: describeFailure(error, ctx.text).message }));
    throw error;
  } finally {
    await gateway.close();
  }
}
