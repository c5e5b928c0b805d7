// `node scripts/demo.mjs --no-color` as a newcomer runs it: real dsh, simulator, scripted model, end to end.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureDsh, repoRoot } from './harness/dsh-run';

const BOUND_MS = 5 * 60_000;

function runDemo(args: string[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string; timedOut: boolean }> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env };
    // The scripted model, whatever the machine has: a real key would switch the demo to the real model.
    delete env.DEEPSEEK_API_KEY;
    delete env.DEEPSEEK_BASE_URL;
    // The narration follows the language: English here, whatever this machine's locale.
    env.LANG = 'C.UTF-8';
    delete env.LC_ALL;
    delete env.LC_MESSAGES;
    for (const key of Object.keys(env)) if (key.startsWith('VITEST') || key === 'NODE_OPTIONS') delete env[key];
    const child = spawn(process.execPath, [path.join(repoRoot, 'scripts', 'demo.mjs'), ...args], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, BOUND_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, timedOut });
    });
  });
}

describe('npm run demo', () => {
  beforeAll(async () => {
    // Install (or find) dsh first so the demo's own bound covers the demo, not a cold install.
    await ensureDsh();
  });

  it('runs the whole loop in a real dsh and prints it as Dida shows it', async () => {
    const run = await runDemo(['--no-color']);
    const context = `exit ${run.code ?? run.signal}${run.timedOut ? ' (timed out)' : ''}\n--- stdout\n${run.stdout.slice(-4000)}\n--- stderr\n${run.stderr.slice(-3000)}`;
    expect(run.code, context).toBe(0);
    expect(run.stdout).toContain('🧑‍🔬 待验收：整理发布说明');
    expect(run.stdout).toContain('返工：整理发布说明');
    expect(run.stdout).toContain('💬 已完成：收集变更');
    expect(run.stdout).toContain('(+6 min)');
    expect(run.stdout).toContain('Demo finished');
    expect(run.stdout).not.toContain('\u001b[');
  }, BOUND_MS + 30_000);
});
