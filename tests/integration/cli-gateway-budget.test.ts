// The official `dida` CLI gateway behind the machine's request budget: every command takes a stamp, and a 429 the CLI
// reports pauses the budget, which the command's retry then waits for.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCliGateway } from '../../src/dida/cli-gateway';
import { createRequestBudget, emptyBudgetRecord, type BudgetStorePort } from '../../src/dida/request-budget';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { installFakeDida, type FakeDidaInstall } from '../helpers/fake-dida-install';

let sim: Simulator;
let fake: FakeDidaInstall;

beforeAll(async () => {
  sim = await startSimulator();
  fake = await installFakeDida({ baseUrl: sim.baseUrl, token: sim.token });
});
afterAll(async () => {
  await fake?.cleanup();
  await sim?.close();
});

describe('the CLI gateway and the request budget', () => {
  it('counts each dida command, and a 429 it reports pauses the budget before the retry', async () => {
    const record = emptyBudgetRecord();
    const store: BudgetStorePort = { transact: async (change) => change(record) };
    const gate = createRequestBudget({ store, limits: () => ({ perMinute: 60, perFiveMinutes: 240 }) });
    const gateway = createCliGateway({ command: fake.command, env: fake.env, gate });
    sim.seedProject({ name: 'cli' });
    await gateway.listProjects();
    await gateway.listProjects();
    expect(record.stamps).toHaveLength(2);
    sim.injectFault({ route: 'GET /project', kind: 'status', status: 429 });
    const lists = await gateway.listProjects();
    expect(lists.map((p) => p.name)).toContain('cli');
    // The refused command and its retry both counted; the retry came after the pause, which its success ended.
    expect(record.stamps).toHaveLength(4);
    expect((record.stamps[3] as number) - (record.stamps[2] as number)).toBeGreaterThanOrEqual(1_900);
    expect(record.strikes).toBeUndefined();
  });
});
