// The CLI gateway against a misbehaving fake `dida`: missing command, no login, hangs, floods, garbage, aborts.
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCliGateway, type CliGatewayOptions } from '../../src/dida/cli-gateway';
import { DidaError } from '../../src/dida/dida-error';
import { installFakeDida, type FakeDidaInstall } from '../helpers/fake-dida-install';

// No API command reaches this address in these tests; port 9 (discard) is never served.
const UNUSED_BASE_URL = 'http://127.0.0.1:9/open/v1';

let fake: FakeDidaInstall;
let loggedOut: FakeDidaInstall;
let scratch: string;

beforeAll(async () => {
  fake = await installFakeDida({ baseUrl: UNUSED_BASE_URL, token: 'fake-token-0123456789' });
  loggedOut = await installFakeDida({ baseUrl: UNUSED_BASE_URL });
  scratch = await mkdtemp(join(tmpdir(), 'cli-gateway-process-'));
});
afterAll(async () => {
  await fake?.cleanup();
  await loggedOut?.cleanup();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

function gatewayWith(env: Record<string, string>, options: CliGatewayOptions = {}, install = fake) {
  return createCliGateway({ command: install.command, env: { ...install.env, ...env }, readRetries: 0, ...options });
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (error: unknown) => error,
  );
}

async function didaFailure(promise: Promise<unknown>, code: DidaError['code']): Promise<DidaError> {
  const error = await failure(promise);
  expect(error).toBeInstanceOf(DidaError);
  expect((error as DidaError).code).toBe(code);
  return error as DidaError;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function pidFile(name: string): string {
  return join(scratch, `${name}.pid`);
}

describe('CLI gateway process handling', () => {
  it('reports a missing command as network, naming the command and how to fix it', async () => {
    const missing = join(scratch, 'no-such-dir', 'dida');
    const error = await didaFailure(createCliGateway({ command: missing }).listProjects(), 'network');
    expect(error.message).toContain(missing);
    expect(error.message).toContain('npm install -g @suibiji/dida-cli');
    expect(error.message).toContain('HTTP gateway');
    expect(error.retryable).toBe(true);
  });

  it('does not retry a missing command even for reads', async () => {
    const started = Date.now();
    await didaFailure(createCliGateway({ command: 'dida-todo-missing-command-xyz', readRetries: 3, retryDelayMs: 2_000 }).listProjects(), 'network');
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('treats the no-token text with exit 0 as auth', async () => {
    const gateway = createCliGateway({ command: loggedOut.command, env: loggedOut.env });
    const error = await didaFailure(gateway.listProjects(), 'auth');
    expect(error.message).toContain('dida auth login');
    await didaFailure(gateway.completeTask('0123456789abcdef01234567', '0123456789abcdef01234568'), 'auth');
  });

  it('treats the no-token text with exit 1 (older CLI) as auth', async () => {
    await didaFailure(gatewayWith({ FAKE_DIDA_MODE: 'no-token-exit-1' }).getProjectData('0123456789abcdef01234567'), 'auth');
  });

  it('kills a hanging child at the deadline and throws timeout', async () => {
    const file = pidFile('timeout');
    // The deadline leaves a loaded machine time to start the child (a Node process) and let it write its pid.
    const gateway = gatewayWith({ FAKE_DIDA_SLEEP_MS: '30000', FAKE_DIDA_PID_FILE: file }, { timeoutMs: 2_500 });
    const error = await didaFailure(gateway.listProjects(), 'timeout');
    expect(error.message).toContain('2500 ms');
    const pid = Number(readFileSync(file, 'utf8'));
    expect(isAlive(pid)).toBe(false);
  });

  it('escalates to SIGKILL when the child ignores SIGTERM', async () => {
    const file = pidFile('sigkill');
    const gateway = gatewayWith(
      { FAKE_DIDA_SLEEP_MS: '30000', FAKE_DIDA_PID_FILE: file, FAKE_DIDA_IGNORE_SIGTERM: '1' },
      { timeoutMs: 2_500, killGraceMs: 300 },
    );
    await didaFailure(gateway.getTask('0123456789abcdef01234567', '0123456789abcdef01234568'), 'timeout');
    expect(isAlive(Number(readFileSync(file, 'utf8')))).toBe(false);
  });

  it('kills the child on abort and rejects with the abort reason', async () => {
    const file = pidFile('abort');
    const gateway = gatewayWith({ FAKE_DIDA_SLEEP_MS: '30000', FAKE_DIDA_PID_FILE: file });
    const controller = new AbortController();
    const reason = new Error('caller gave up');
    const pending = gateway.listProjects({ signal: controller.signal });
    const deadline = Date.now() + 10_000;
    while (!existsSync(file) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    controller.abort(reason);
    expect(await failure(pending)).toBe(reason);
    expect(isAlive(Number(readFileSync(file, 'utf8')))).toBe(false);
  });

  it('does not start the command when the signal is already aborted', async () => {
    const log = join(scratch, 'pre-aborted.log');
    const gateway = gatewayWith({ FAKE_DIDA_ARGV_LOG: log });
    const reason = new Error('already cancelled');
    expect(await failure(gateway.createTask({ projectId: '0123456789abcdef01234567', title: 't' }, { signal: AbortSignal.abort(reason) }))).toBe(reason);
    expect(existsSync(log)).toBe(false);
  });

  it('stops a child whose output exceeds the cap and throws invalid_response', async () => {
    const gateway = gatewayWith({ FAKE_DIDA_MODE: 'huge-output', FAKE_DIDA_HUGE_BYTES: String(4 * 1024 * 1024) }, { maxOutputBytes: 256 * 1024 });
    const error = await didaFailure(gateway.listProjects(), 'invalid_response');
    expect(error.message).toContain(String(256 * 1024));
  });

  it('throws invalid_response for output that is not JSON', async () => {
    const error = await didaFailure(gatewayWith({ FAKE_DIDA_MODE: 'malformed-json' }).getTask('0123456789abcdef01234567', '0123456789abcdef01234568'), 'invalid_response');
    expect(error.message).toContain('not JSON');
    expect(error.route).toBe('GET /project/{pid}/task/{tid}');
  });

  it('throws invalid_response naming the bad paths for JSON of the wrong shape', async () => {
    const error = await didaFailure(gatewayWith({ FAKE_DIDA_MODE: 'wrong-shape' }).getTask('0123456789abcdef01234567', '0123456789abcdef01234568'), 'invalid_response');
    expect(error.message).toMatch(/at id: expected string/);
    expect(error.message).toMatch(/at projectId/);
  });

  it('reports an unexplained non-zero exit as invalid_response with the stderr excerpt', async () => {
    const error = await didaFailure(gatewayWith({ FAKE_DIDA_MODE: 'crash' }).listProjects(), 'invalid_response');
    expect(error.message).toContain('exited with code 1');
    expect(error.message).toContain('TypeError');
  });

  it('reports a CLI that cannot reach Dida as network', async () => {
    // The fake points at a closed port, so its fetch fails and the CLI prints "错误: fetch failed".
    await didaFailure(gatewayWith({}).listProjects(), 'network');
  });

  it('close() stops running commands', async () => {
    const file = pidFile('close');
    const gateway = gatewayWith({ FAKE_DIDA_SLEEP_MS: '30000', FAKE_DIDA_PID_FILE: file });
    const pending = failure(gateway.listProjects());
    const deadline = Date.now() + 10_000;
    while (!existsSync(file) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await gateway.close();
    await gateway.close();
    const error = await pending;
    expect(error).toBeInstanceOf(DidaError);
    expect(isAlive(Number(readFileSync(file, 'utf8')))).toBe(false);
  });

  it('answers preference from the process time zone and members as empty without running the command', async () => {
    const log = join(scratch, 'local.log');
    const gateway = gatewayWith({ FAKE_DIDA_ARGV_LOG: log });
    expect((await gateway.getPreference()).timeZone).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone);
    expect((await createCliGateway({ timeZone: 'Asia/Shanghai' }).getPreference()).timeZone).toBe('Asia/Shanghai');
    expect(await gateway.listMembers('0123456789abcdef01234567')).toEqual([]);
    expect(existsSync(log)).toBe(false);
    expect(gateway.kind).toBe('cli');
  });
});
