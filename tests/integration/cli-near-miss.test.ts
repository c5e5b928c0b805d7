// The built `dida-todo` with a person's slips: near-miss commands and options, `help <command>`, and Ctrl+C.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { withLock } from '../../src/store/file-lock';
import { exists, makeCliHome, oneErrorLine, type CliHome } from '../helpers/cli-harness';

let sim: Simulator;
let h: CliHome;

beforeEach(async () => {
  sim = await startSimulator();
  h = await makeCliHome();
});

afterEach(async () => {
  await sim.close();
  await h.cleanup();
});

/** Every file below `dir` (relative names), temp files included. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}

describe('near misses', () => {
  it('a misspelt command gets the closest one, in the person’s language; a far one gets none', async () => {
    const typo = await h.run(['stauts']);
    expect(typo.code).toBe(2);
    expect(oneErrorLine(typo)).toBe('dida-todo: Unknown command "stauts"; did you mean `status`? Run `dida-todo --help` to see the commands.');
    const zh = await h.run(['bnid'], { env: { LANG: 'zh_CN.UTF-8' } });
    expect(oneErrorLine(zh)).toContain('你是想用 `bind` 吗？');
    const far = await h.run(['xyzzy']);
    expect(far.code).toBe(2);
    expect(oneErrorLine(far)).not.toContain('did you mean');
  });

  it('a misspelt option gets the closest option of that command; one dash too few is named', async () => {
    const typo = await h.run(['status', '--jsno']);
    expect(typo.code).toBe(2);
    expect(oneErrorLine(typo)).toContain('Unknown option "--jsno" for `dida-todo status`; did you mean `--json`?');
    const bind = await h.run(['bind', 'Work', '--crate']);
    expect(oneErrorLine(bind)).toContain('did you mean `--create`?');
    const dash = await h.run(['lists', '-json']);
    expect(oneErrorLine(dash)).toContain('did you mean `--json`?');
    const far = await h.run(['status', '--frobnicate']);
    expect(oneErrorLine(far)).not.toContain('did you mean');
  });

  it('`help <command>` prints that command’s help, as `<command> --help` does', async () => {
    const help = await h.run(['help', 'bind']);
    const flag = await h.run(['bind', '--help']);
    expect(help.code).toBe(0);
    expect(help.out).toBe(flag.out);
    expect(help.out).toContain('dida-todo bind "<list name>"');
    const general = await h.run(['help']);
    expect(general.out).not.toBe(help.out);
    const unknown = await h.run(['help', 'stauts']);
    expect(unknown.code).toBe(2);
    expect(oneErrorLine(unknown)).toContain('did you mean `status`?');
  });
});

describe('Ctrl+C', () => {
  it('while waiting for Dida: exits 130 at once, says so, and leaves no file behind', async () => {
    sim.setLatency(20_000);
    const run = h.start(['status', '--base-url', sim.baseUrl], { env: { DIDA_TODO_TOKEN: sim.token } });
    await run.waitFor(/Contacting/);
    expect(sim.totalRequests()).toBe(1);
    run.signal('SIGINT');
    const result = await run.result;
    expect(result.code).toBe(130);
    expect(result.err).toMatch(/dida-todo: interrupted \(Ctrl\+C\)/);
    expect((await filesUnder(h.configDir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect((await filesUnder(h.stateDir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('at the hidden token prompt: exits 130 and saves nothing', async () => {
    const run = h.start(['login', '--token', '-', '--base-url', sim.baseUrl], { tty: true });
    await run.waitFor(/Paste the Dida API token/);
    run.write('\u0003');
    const result = await run.result;
    expect(result.code).toBe(130);
    expect(result.out).toContain('Stopped at your request; nothing was saved.');
    expect(await exists(h.credentialsFile)).toBe(false);
    expect(sim.totalRequests()).toBe(0);
  });

  it('while the token and config.yaml are saved: waits until both are, then exits 130 — never one without the other', async () => {
    let release = () => {};
    let held = () => {};
    const heldNow = new Promise<void>((resolve) => (held = resolve));
    // Another dida-todo process holds config.yaml's lock: login has written credentials.json and waits for it.
    const holder = withLock(path.join(h.stateDir, 'locks'), 'config', async () => {
      held();
      await new Promise<void>((resolve) => (release = resolve));
    });
    await heldNow;
    const run = h.start(['login', '--token', '-', '--base-url', sim.baseUrl], { stdin: `${sim.token}\n` });
    for (let i = 0; i < 100 && !(await exists(h.credentialsFile)); i++) await new Promise((r) => setTimeout(r, 50));
    expect(await exists(h.credentialsFile)).toBe(true);
    expect(await exists(h.configFile)).toBe(false);
    run.signal('SIGINT');
    await run.waitFor(/finishing the save in progress/);
    // Still running: it does not leave credentials.json saved without the Dida address it was checked against.
    expect(await Promise.race([run.result.then(() => 'ended'), new Promise((r) => setTimeout(() => r('running'), 300))])).toBe('running');
    release();
    await holder;
    const result = await run.result;
    expect(result.code).toBe(130);
    expect(JSON.parse(await readFile(h.credentialsFile, 'utf8')).token).toBe(sim.token);
    expect(await readFile(h.configFile, 'utf8')).toContain(`baseUrl: ${sim.baseUrl}`);
    expect((await filesUnder(h.configDir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('`sim` stops on Ctrl+C as it says, and exits 0', async () => {
    const run = h.start(['sim', '--port', '0']);
    await run.waitFor(/Press Ctrl\+C/);
    run.signal('SIGINT');
    const result = await run.result;
    expect(result.code).toBe(0);
    expect(result.err).not.toContain('interrupted');
  });
});
