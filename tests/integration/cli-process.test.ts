// The built `dida-todo` executable as a real child process: help, status --json, login with the token on stdin.
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/simulator';

const root = path.resolve(__dirname, '../..');
let out: string;
let cli: string;
let sim: Simulator;
let env: Record<string, string>;

beforeAll(async () => {
  out = await mkdtemp(path.join(os.tmpdir(), 'dida-todo-cli-build-'));
  await promisify(execFile)(process.execPath, ['build.mjs', '--outdir', path.join(out, 'plugin')], { cwd: root });
  cli = path.join(out, 'plugin', 'cli.mjs');
  sim = await startSimulator();
  sim.seedProject({ name: 'Work' });
  env = {
    PATH: process.env.PATH ?? '',
    HOME: path.join(out, 'home'),
    XDG_CONFIG_HOME: path.join(out, 'config'),
    XDG_STATE_HOME: path.join(out, 'state'),
  };
}, 60_000);

afterAll(async () => {
  await sim?.close();
  if (out) await rm(out, { recursive: true, force: true });
});

function run(args: string[], stdin?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd: out, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    if (stdin !== undefined) child.stdin.write(stdin);
    else child.stdin.end();
  });
}

describe('built dida-todo executable', () => {
  it('prints help listing the commands', async () => {
    const result = await run(['--help']);
    expect(result.code).toBe(0);
    for (const command of ['login', 'logout', 'status', 'bind', 'unbind', 'lists', 'sim']) expect(result.stdout).toMatch(new RegExp(`^  ${command}\\s`, 'm'));
    const bindHelp = await run(['bind', '--help']);
    expect(bindHelp.code).toBe(0);
    expect(bindHelp.stdout).toMatch(/--cwd <dir>/);
  });

  it('status --json without a token: JSON on stdout, one line on stderr, exit 3', async () => {
    const result = await run(['status', '--json', '--base-url', sim.baseUrl]);
    expect(result.code).toBe(3);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, exitCode: 3, token: null, reachability: { checked: false } });
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stdout).not.toMatch(/\u001b\[/);
  });

  it('logs in with the token piped on stdin (left open), then status --json sees the saved token', async () => {
    const login = await run(['login', '--token', '-', '--base-url', sim.baseUrl], `${sim.token}\n`);
    expect(login.code).toBe(0);
    expect(login.stdout + login.stderr).not.toContain(sim.token);
    expect(JSON.parse(await readFile(path.join(env.XDG_CONFIG_HOME as string, 'dida-todo', 'credentials.json'), 'utf8')).token).toBe(sim.token);
    const status = await run(['status', '--json', '--cwd', out, '--base-url', sim.baseUrl]);
    expect(status.code).toBe(4);
    expect(JSON.parse(status.stdout)).toMatchObject({ ok: false, exitCode: 4, token: { source: 'credentials' }, reachability: { ok: true, lists: 1 }, binding: null });
    expect(status.stdout + status.stderr).not.toContain(sim.token);
  });

  // The built executable takes the config lock (the lock queue loads as its own chunk).
  it('binds a directory from the built executable (takes the config lock)', async () => {
    const bound = await run(['bind', 'Work', '--cwd', out, '--base-url', sim.baseUrl]);
    expect(bound.stderr).toBe('');
    expect(bound.code).toBe(0);
    const status = await run(['status', '--json', '--cwd', out, '--base-url', sim.baseUrl]);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ ok: true, binding: { list: 'open' } });
  });
});

describe('dida-todo sim', () => {
  it('serves GET /open/v1/project to its Bearer token, answers 401 without it, and stops on SIGTERM', async () => {
    const child = spawn(process.execPath, [cli, 'sim', '--json', '--port', '0'], { cwd: out, env, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let buffer = '';
        const timer = setTimeout(() => reject(new Error(`no address printed: ${buffer}`)), 15_000);
        child.stdout.on('data', (chunk) => {
          buffer += chunk;
          const nl = buffer.indexOf('\n');
          if (nl >= 0) {
            clearTimeout(timer);
            resolve(buffer.slice(0, nl));
          }
        });
      });
      const { baseUrl, token } = JSON.parse(line) as { baseUrl: string; token: string };
      expect(new URL(baseUrl).hostname).toBe('127.0.0.1');
      const ok = await fetch(`${baseUrl}/project`, { headers: { authorization: `Bearer ${token}` } });
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual([]);
      const denied = await fetch(`${baseUrl}/project`);
      expect(denied.status).toBe(401);
      expect(denied.headers.get('www-authenticate')).toContain('Bearer');
      await denied.arrayBuffer();
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    expect(child.exitCode).toBe(0);
  });
});
