// `dida-todo sim` started again with the same --data comes back on the same port with the same token; a port that
// is taken is said plainly; a simulator that is not running is named as such by status, bind, lists and login.
import { readFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { failureLine, makeCliHome, modeOf, type CliHome, type LiveRun } from '../helpers/cli-harness';

let h: CliHome;
let data: string;
const running: LiveRun[] = [];

beforeEach(async () => {
  h = await makeCliHome();
  data = path.join(h.home, '.local', 'share', 'dida-todo-sim.json');
});

afterEach(async () => {
  for (const run of running.splice(0)) {
    run.signal('SIGINT');
    await run.result;
  }
  await h.cleanup();
});

/** Starts `dida-todo sim …` and waits until it listens; returns its address and token. */
async function startSim(argv: string[]): Promise<{ run: LiveRun; url: string; token: string }> {
  const run = h.start(['sim', ...argv]);
  running.push(run);
  await run.waitFor(/Press Ctrl\+C|dida-todo: /);
  const out = run.out();
  const url = /listening at (\S+)/.exec(out)?.[1];
  const token = /token: (\S+)/.exec(out)?.[1];
  if (!url || !token) throw new Error(`the simulator did not start:\n${out}\n${run.err()}`);
  return { run, url, token };
}

async function stopSim(run: LiveRun): Promise<void> {
  running.splice(running.indexOf(run), 1);
  run.signal('SIGINT');
  expect((await run.result).code).toBe(0);
}

describe('sim --data keeps its address', () => {
  it('started again with the same --data: same port, same token, and the saved setup keeps working', async () => {
    const first = await startSim(['--use', '--data', data]);
    expect(first.run.out()).toContain('Its address and token are kept in ~/.local/share/dida-todo-sim.json.address.json');
    expect((await h.run(['bind', 'Inbox list', '--json'])).code).toBe(0);
    await stopSim(first.run);

    const address = `${data}.address.json`;
    expect(JSON.parse(await readFile(address, 'utf8'))).toMatchObject({ port: Number(new URL(first.url).port), token: first.token });
    expect(await modeOf(address)).toBe(0o600);

    // No --use: nothing is saved again, and dida-todo (like a running dsh) still reaches it with what it had.
    const second = await startSim(['--data', data]);
    expect(second.url).toBe(first.url);
    expect(second.token).toBe(first.token);
    expect(second.run.out()).toContain('Same address and token as last time');
    const status = await h.run(['status', '--json']);
    expect(status.json()).toMatchObject({ ok: true, baseUrl: first.url, reachability: { ok: true, lists: 1 } });
    await stopSim(second.run);
    // With --use on the same address: it says a running dsh keeps working, and does not also ask for a restart.
    const third = await startSim(['--use', '--data', data]);
    expect(third.url).toBe(first.url);
    expect(third.run.out()).toContain('keep working without a restart');
    expect(third.run.out()).not.toContain('restart a running dsh');
    expect(first.run.out()).toContain('restart a running dsh');
  });

  it('--port and --token win over the saved ones, and are kept from then on', async () => {
    const first = await startSim(['--data', data]);
    await stopSim(first.run);
    const forced = await startSim(['--data', data, '--port', '0', '--token', 'sim-chosen-token-123']);
    expect(forced.token).toBe('sim-chosen-token-123');
    expect(forced.run.out()).not.toContain('Same address and token');
    await stopSim(forced.run);
    const again = await startSim(['--data', data]);
    expect(again.url).toBe(forced.url);
    expect(again.token).toBe('sim-chosen-token-123');
  });

  it('a saved port taken by another program is said plainly, with what to do; a second copy of the same simulator too', async () => {
    const first = await startSim(['--data', data]);
    const port = Number(new URL(first.url).port);
    const twice = await h.run(['sim', '--data', data]);
    expect(twice.code).toBe(1);
    expect(failureLine(twice)).toContain(`A simulator with this data is already running at ${first.url}`);
    await stopSim(first.run);

    const squatter = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', () => resolve()));
    try {
      const taken = await h.run(['sim', '--data', data]);
      expect(taken.code).toBe(1);
      const line = failureLine(taken);
      expect(line).toContain(`Port ${port} on 127.0.0.1, where this simulator listened last time (~/.local/share/dida-todo-sim.json.address.json), is taken by another program`);
      expect(line).toContain('--port 0');
      const flag = await h.run(['sim', '--port', String(port)]);
      expect(failureLine(flag)).toBe(`dida-todo: Port ${port} on 127.0.0.1 is taken by another program; pass another --port (or none for a free one).`);
    } finally {
      await new Promise<void>((resolve) => squatter.close(() => resolve()));
    }
  });
});

describe('a simulator that is not running', () => {
  it('status, bind, lists and login say the simulator at the saved address is not running, and how to start it', async () => {
    const sim = await startSim(['--use', '--data', data]);
    await stopSim(sim.run);
    const expected = `The simulator at ${sim.url} is not running (start it with \`dida-todo sim --data ~/.local/share/dida-todo-sim.json\`: it comes back on that address with the same token`;

    const status = await h.run(['status']);
    expect(status.code).toBe(1);
    expect(failureLine(status)).toContain(expected);
    expect(status.out).toContain(expected);
    for (const argv of [['bind', 'Work'], ['lists']]) {
      const result = await h.run(argv);
      expect(result.code, argv.join(' ')).toBe(1);
      const line = failureLine(result);
      expect(line, argv.join(' ')).toContain(expected);
      expect(line).not.toContain('check the network');
    }
    const login = await h.run(['login', '--token', '-', '--base-url', sim.url], { stdin: `${sim.token}\n` });
    expect(login.code).toBe(1);
    expect(failureLine(login)).toContain(expected);

    // Started as it says: everything works again, nothing to redo.
    await startSim(['--data', data]);
    expect((await h.run(['lists'])).code).toBe(0);
  });

  it('without --data it says to start one with --use (a new address), in Chinese too', async () => {
    const sim = await startSim(['--use']);
    await stopSim(sim.run);
    const status = await h.run(['status']);
    expect(failureLine(status)).toContain(`The simulator at ${sim.url} is not running (start it with \`dida-todo sim --use --data ~/.local/share/dida-todo-sim.json\``);
    const zh = await h.run(['lists'], { env: { LANG: 'zh_CN.UTF-8' } });
    expect(failureLine(zh)).toContain(`${sim.url} 上的模拟器没有在运行`);
  });

  it('a Dida address that is not this machine keeps the network advice', async () => {
    const result = await h.run(['lists', '--base-url', 'http://dida.invalid/open/v1'], { env: { DIDA_TODO_TOKEN: 'some-token-0123456789' } });
    expect(result.code).toBe(1);
    expect(failureLine(result)).toMatch(/Could not reach Dida .*check the network connection/);
  });
});
