// The simulator's control API answers only its own clients: the simulator's token, its own Host, no foreign Origin.
import http from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/simulator';

let sim: Simulator;
beforeEach(async () => {
  sim = await startSimulator({ token: 'sim-control-token-0001' });
});
afterEach(async () => {
  await sim.close();
});

/** A raw request, so Host and Origin can be set exactly as a browser or a rebinding page would. */
function send(path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: sim.port, path, method: body === undefined ? 'GET' : 'POST', headers, timeout: 5_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const host = () => `127.0.0.1:${sim.port}`;

describe('simulator control API access', () => {
  it('refuses a request without the token, and a cross-site text/plain POST that would swap the token', async () => {
    expect((await send('/__sim/state', { Host: host() })).status).toBe(401);
    const swap = await send('/__sim/token', { Host: host(), Origin: 'https://evil.example', 'Content-Type': 'text/plain' }, '{"token":"attacker"}');
    expect(swap.status).toBe(403);
    const noOrigin = await send('/__sim/token', { Host: host(), 'Content-Type': 'text/plain' }, '{"token":"attacker"}');
    expect(noOrigin.status).toBe(401);
    expect(sim.token).toBe('sim-control-token-0001');
  });

  it('refuses a foreign Host (DNS rebinding) and a wrong token even with the right Host', async () => {
    const auth = { Authorization: 'Bearer sim-control-token-0001' };
    expect((await send('/__sim/state', { ...auth, Host: `attacker.example:${sim.port}` })).status).toBe(403);
    expect((await send('/__sim/state', { Host: host(), Authorization: 'Bearer nope' })).status).toBe(401);
  });

  it('serves the simulator’s own clients: token, own Host, own Origin or none', async () => {
    const auth = { Authorization: `Bearer ${sim.token}` };
    expect((await send('/__sim/state', { ...auth, Host: host() })).status).toBe(200);
    expect((await send('/__sim/state', { ...auth, Host: `localhost:${sim.port}`, Origin: `http://localhost:${sim.port}` })).status).toBe(200);
    const set = await send('/__sim/token', { ...auth, Host: host(), 'Content-Type': 'application/json' }, '{"token":"sim-next-token-0002"}');
    expect(set.status).toBe(200);
    expect(sim.token).toBe('sim-next-token-0002');
    // After expire-token the API token is rejected, but the control API still knows the simulator's token.
    expect((await send('/__sim/expire-token', { Authorization: 'Bearer sim-next-token-0002', Host: host() }, '')).status).toBe(200);
    expect((await send('/__sim/state', { Authorization: 'Bearer sim-next-token-0002', Host: host() })).status).toBe(200);
  });
});
