// The simulator's rate-limit variant over real HTTP: per-token windows, the 429 beyond them with and without
// Retry-After and with a JSON or an empty body; and the HTTP gateway behind the request budget never meeting it.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpGateway } from '../../src/dida/http-gateway';
import { accountKey, createRequestBudget } from '../../src/dida/request-budget';
import { SIM_VARIANTS, simVariantFromEnv, simVariantQuirks } from '../../src/sim/sim-variants';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { budgetStore } from '../../src/store/budget-store';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function limitedSim(quirks: Record<string, unknown>): Promise<Simulator> {
  const sim = await startSimulator({ quirks: { ...SIM_VARIANTS['rate-limit'], ...quirks } });
  cleanups.push(() => sim.close());
  return sim;
}

async function get(sim: Simulator, token = sim.token): Promise<{ status: number; text: string; retryAfter: string | null }> {
  const res = await fetch(`${sim.baseUrl}/project`, { headers: { Authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(5000) });
  return { status: res.status, text: await res.text(), retryAfter: res.headers.get('retry-after') };
}

describe('the rate-limit variant', () => {
  it('is selectable by name and limits 100 a minute and 300 in five minutes per token', () => {
    expect(simVariantFromEnv({ DIDA_SIM_VARIANT: 'rate-limit' }).name).toBe('rate-limit');
    const quirks = simVariantQuirks('rate-limit');
    expect([quirks.rateLimitPerMinute, quirks.rateLimitPerFiveMinutes, quirks.rateLimitWindowMs]).toEqual([100, 300, 60_000]);
    expect(simVariantQuirks('kind').rateLimitPerMinute).toBe(0);
  });

  it('answers the request over the window with 429, alternating Retry-After and body, and counts only what it let through', async () => {
    const sim = await limitedSim({ rateLimitPerMinute: 3, rateLimitPerFiveMinutes: 100, rateLimitWindowMs: 60_000 });
    for (let i = 0; i < 3; i++) expect((await get(sim)).status).toBe(200);
    const refused = [await get(sim), await get(sim), await get(sim), await get(sim)];
    expect(refused.map((r) => r.status)).toEqual([429, 429, 429, 429]);
    // Retry-After: sent, omitted, sent, omitted; body: JSON, JSON, empty, empty.
    expect(refused.map((r) => r.retryAfter !== null)).toEqual([true, false, true, false]);
    expect(Number(refused[0]!.retryAfter)).toBeGreaterThan(50);
    expect(Number(refused[0]!.retryAfter)).toBeLessThanOrEqual(60);
    expect(JSON.parse(refused[0]!.text)).toMatchObject({ errorCode: 'too_many_requests' });
    expect(refused.map((r) => r.text === '')).toEqual([false, false, true, true]);
    expect(sim.rateLimitRefusals()).toBe(4);
    // Requests of another token have their own windows.
    sim.setToken('other-token-0000000000');
    expect((await get(sim)).status).toBe(200);
  });

  it('the window slides: once the oldest request leaves it, one more goes through', async () => {
    const sim = await limitedSim({ rateLimitPerMinute: 2, rateLimitPerFiveMinutes: 100, rateLimitWindowMs: 300 });
    expect((await get(sim)).status).toBe(200);
    expect((await get(sim)).status).toBe(200);
    expect((await get(sim)).status).toBe(429);
    await new Promise((resolve) => setTimeout(resolve, 350));
    expect((await get(sim)).status).toBe(200);
  });

  it('the five-minute window holds even when each minute has room', async () => {
    const sim = await limitedSim({ rateLimitPerMinute: 100, rateLimitPerFiveMinutes: 4, rateLimitWindowMs: 60_000, rateLimitRetryAfter: 'send', rateLimitBody: 'empty' });
    for (let i = 0; i < 4; i++) expect((await get(sim)).status).toBe(200);
    const refused = await get(sim);
    expect(refused.status).toBe(429);
    expect(refused.text).toBe('');
    expect(Number(refused.retryAfter)).toBeGreaterThan(250);
  });

  it('rejects a rate-limit quirk that makes no sense, naming it', async () => {
    await expect(startSimulator({ quirks: { rateLimitWindowMs: 0 } })).rejects.toThrow(/rateLimitWindowMs must be a positive integer/);
    await expect(startSimulator({ quirks: { rateLimitRetryAfter: 'sometimes' as never } })).rejects.toThrow(/rateLimitRetryAfter must be one of send, omit, alternate/);
  });
});

describe('the HTTP gateway behind the request budget', () => {
  it('a burst well over the limit goes out at the budget: no request meets a 429, none is lost', async () => {
    // A "minute" of 400 ms: Dida allows 10 of them per minute, the budget 6 (background: 4).
    const sim = await limitedSim({ rateLimitPerMinute: 10, rateLimitPerFiveMinutes: 30, rateLimitWindowMs: 400 });
    const dir = await mkdtemp(path.join(os.tmpdir(), 'dida-sim-budget-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const gate = createRequestBudget({ store: budgetStore(dir, path.join(dir, 'locks'), accountKey(sim.baseUrl, sim.token)), limits: () => ({ perMinute: 6, perFiveMinutes: 24 }), minuteMs: 400 });
    const gateway = createHttpGateway({ token: sim.token, baseUrl: sim.baseUrl, retry: { retries: 0 }, gate });
    const results = await Promise.all(Array.from({ length: 12 }, () => gateway.listProjects()));
    expect(results).toHaveLength(12);
    expect(sim.counters()['GET /project']).toBe(12);
    expect(sim.rateLimitRefusals()).toBe(0);
  });

  it('control: the same burst without the budget meets the limit', async () => {
    const sim = await limitedSim({ rateLimitPerMinute: 10, rateLimitPerFiveMinutes: 30, rateLimitWindowMs: 400 });
    const gateway = createHttpGateway({ token: sim.token, baseUrl: sim.baseUrl, retry: { retries: 0 } });
    const results = await Promise.allSettled(Array.from({ length: 12 }, () => gateway.listProjects()));
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(2);
    expect(sim.rateLimitRefusals()).toBe(2);
  });

  it('a read that met a 429 waits for the pause through the gate and is retried once it is over', async () => {
    const sim = await limitedSim({ rateLimitPerMinute: 1, rateLimitPerFiveMinutes: 100, rateLimitWindowMs: 300, rateLimitRetryAfter: 'omit' });
    const dir = await mkdtemp(path.join(os.tmpdir(), 'dida-sim-budget-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    // A budget above what Dida allows (as when another machine shares the account): the 429 comes, the gateway obeys it.
    const gate = createRequestBudget({ store: budgetStore(dir, path.join(dir, 'locks'), 'bbbbbbbbbbbbbbbb'), limits: () => ({ perMinute: 100, perFiveMinutes: 500 }) });
    const gateway = createHttpGateway({ token: sim.token, baseUrl: sim.baseUrl, retry: { retries: 2 }, gate });
    await gateway.listProjects();
    await gateway.listProjects();
    expect(sim.rateLimitRefusals()).toBe(1);
    expect(sim.counters()['GET /project']).toBe(3);
  });
});
