// The stop matrix's rows for a session blocked on dsh asking the person: a question (ask_user_question), a plan review
// (exit_plan_mode) or an approval (a tool call that needs consent) × profile (a headless one-shot and the sdk, where
// dsh has no answerer of its own; web, where its card waits in the browser) × whether the session holds a Work. Each
// cell drives the real adapter (DshHost over a fake dsh context through both seams, a fake clock) against the Dida
// simulator, and asserts what Dida shows while it waits and what continues: the call keeps waiting, Dida's answer
// resumes it, and a session without a Work writes nothing and gets what dsh alone would give.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DshHost } from '../../src/dsh/dsh-host';
import type { ApprovalOutcome, QuestionAnswer, QuestionRequest } from '../../src/runtime/session/session-ports';
import { RowConfig } from '../../src/dsh/row-config';
import { startSimulator, type Simulator } from '../../src/sim/simulator';
import { FakeClock } from '../helpers/dsh-fakes';
import { fakeAgent, fakeHost } from '../helpers/dsh-host-fake';
import { readEngineStateFile } from '../helpers/engine-state-file';

const KINDS = ['question', 'plan', 'approval'] as const;
const PROFILES = ['one-shot', 'sdk', 'web'] as const;
const TITLES = { question: '🙋 在等你回答：整理发布说明', plan: '🙋 在等你看方案：整理发布说明', approval: '🙋 在等你允许：整理发布说明' };
const ANSWERS = { question: '2', plan: '同意', approval: '允许' };

let sim: Simulator;
let dir: string;
let cells = 0;

beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(async () => {
  await sim.close();
  // eslint-disable-next-line no-console
  console.log(`[stop-matrix-desk] ${cells} cells (${KINDS.length} ways dsh asks × ${PROFILES.length} profiles × Work held or not)`);
});
let saved: string | undefined;
beforeEach(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'dida-desk-stops-')));
  saved = process.env.DIDA_TODO_TOKEN;
  process.env.DIDA_TODO_TOKEN = sim.token;
});
afterEach(() => {
  if (saved === undefined) delete process.env.DIDA_TODO_TOKEN;
  else process.env.DIDA_TODO_TOKEN = saved;
  fs.rmSync(dir, { recursive: true, force: true });
});

async function until(what: string, probe: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** dsh's question service as each profile has it: web's provider waits for the browser, the others have none. */
function questionService(web: boolean) {
  const seen: { signal?: AbortSignal } = {};
  return {
    seen,
    ask: (request: QuestionRequest): Promise<QuestionAnswer> => {
      if (!web) return Promise.reject(Object.assign(new Error('no user-questions provider is registered'), { code: 'NO_PROVIDER' }));
      seen.signal = request.signal;
      return new Promise((_, reject) => request.signal?.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { code: 'ASK_ABORTED' }))));
    },
  };
}

describe('the stop matrix: blocked on dsh asking the person', () => {
  for (const kind of KINDS) {
    for (const profile of PROFILES) {
      for (const holds of [true, false]) {
        it(`${kind} · ${profile} · ${holds ? 'a Work held' : 'no Work'}`, async () => {
          cells += 1;
          const list = sim.seedProject({ name: `desk-stops-${cells}` });
          const clock = new FakeClock(Date.now());
          const configPath = path.join(dir, 'config.yaml');
          fs.writeFileSync(configPath, `baseUrl: ${sim.baseUrl}\nhostLabel: desk-host\nbindings:\n  - cwd: ${dir}\n    projectId: ${list.id}\n`);
          const row = RowConfig.safeParse({ configPath, stateDir: path.join(dir, 'state'), progressWindowSeconds: 0, poll: false });
          if (!row.success) throw new Error('row config');
          const service = questionService(profile === 'web');
          const ctx = fakeHost({ userQuestions: service, ...(profile === 'one-shot' ? { headlessStartup: { task: 'x' } } : {}) });
          const host = new DshHost(ctx.ctx as never, row.data, { clock, pid: process.pid, isAlive: () => true, mark: `desk-${cells}` });
          host.start();
          const agent = fakeAgent(`session-${cells}dd`, { cwd: dir });
          ctx.agents.set(agent.id, agent);
          try {
            ctx.emit('agent/created', { agent });
            await host.tracker.get(agent.id)!.ready;
            agent.status = 'running';
            ctx.emit('agent/status', { agent, status: 'running' });
            let taskId: string | undefined;
            if (holds) {
              const todo = ctx.tools.find((t: { name: string }) => t.name === 'todo');
              expect((await todo.execute({ action: 'create', work_title: '整理发布说明', steps: [{ title: '收集改动' }] }, { agent })).code).toBe('ok');
              expect((await todo.execute({ action: 'update', updates: [{ step: '收集改动', status: 'in_progress' }] }, { agent })).code).toBe('ok');
              taskId = sim.listTasks(list.id)[0]!.id;
            }
            const writes = () => Object.entries(sim.counters()).filter(([route]) => !route.startsWith('GET')).reduce((n, [, c]) => n + c, 0);
            const writesBefore = writes();
            let cardSignal: AbortSignal | undefined;
            const approval: { agent: unknown; toolName: string; callId: string; reason: string; signal?: AbortSignal } = { agent, toolName: 'bash', callId: 'c1', reason: 'escalate sandbox' };
            const call: Promise<unknown> =
              kind === 'approval'
                ? Promise.resolve(
                    ctx.waterfall('approval/request', approval, () => {
                      if (profile !== 'web') return Promise.resolve<ApprovalOutcome>('unavailable');
                      // dsh web's answerer: its card waits, withdrawn when the request's signal aborts.
                      cardSignal = approval.signal;
                      return new Promise<ApprovalOutcome>((resolve) => cardSignal?.addEventListener('abort', () => resolve('cancelled')));
                    }),
                  )
                : (ctx.ctx.get('userQuestions') as { ask(r: QuestionRequest): Promise<QuestionAnswer> }).ask({
                    questions: [
                      kind === 'plan'
                        ? { id: 'review', question: 'Approve this plan?', detail: '# Plan', options: [{ label: 'Approve' }, { label: 'Keep planning' }], intent: { kind: 'plan-review', approve: 'Approve' } }
                        : { id: 'q', question: 'Which one?', options: [{ label: 'Alpha' }, { label: 'Beta' }] },
                    ],
                    agent: agent as never,
                  });
            let outcome: { value?: unknown; error?: unknown } | undefined;
            void call.then(
              (value) => (outcome = { value }),
              (error: unknown) => (outcome = { error }),
            );

            if (!holds) {
              // Nothing is written for a session without a Work; the call gets what dsh alone gives it.
              await clock.advance(60_000);
              await new Promise((resolve) => setTimeout(resolve, 50));
              expect(writes() - writesBefore).toBe(0);
              expect(sim.listTasks(list.id)).toEqual([]);
              if (profile === 'web') expect(outcome).toBeUndefined();
              else if (kind === 'approval') expect(outcome).toEqual({ value: 'unavailable' });
              else expect((outcome?.error as { code?: string })?.code).toBe('NO_PROVIDER');
              return;
            }
            // While it waits: the 🙋 with what is asked, the Work still the session's and not paused, the call waiting.
            await until('the 🙋 in Dida', () => sim.listTasks(list.id).some((t) => t.title.startsWith('🙋')));
            const reminder = sim.listTasks(list.id).find((t) => t.title.startsWith('🙋'))!;
            expect(reminder.title).toBe(TITLES[kind]);
            const work = sim.getTask(taskId!)!;
            expect(work.priority).toBeGreaterThan(0);
            const state = readEngineStateFile(path.join(dir, 'state', 'state.json'));
            expect(state.works[taskId!].waiting).toBeUndefined();
            expect(state.works[taskId!].asks).toHaveLength(1);
            expect(state.sessions[agent.id].currentWork).toBe(taskId);
            await clock.advance(60_000);
            expect(outcome).toBeUndefined();
            // The person answers in Dida: the call goes on with it, the 🙋 is completed, the Work is acknowledged.
            sim.addComment(list.id, reminder.id, ANSWERS[kind]);
            await until('the answer to reach the call', async () => {
              await clock.advance(10_000);
              return outcome !== undefined;
            });
            if (kind === 'approval') expect(outcome).toEqual({ value: 'allowed-once' });
            else expect(outcome).toEqual({ value: { answers: [{ id: kind === 'plan' ? 'review' : 'q', selected: [kind === 'plan' ? 'Approve' : 'Beta'] }] } });
            expect(sim.getTask(reminder.id)?.status).toBe(2);
            expect(sim.listComments(taskId!).map((c) => c.title).filter((c) => c.startsWith('收到你的回答'))).toHaveLength(1);
            // dsh web's card was withdrawn (its signal aborted) when Dida answered first.
            if (profile === 'web') expect((kind === 'approval' ? cardSignal : service.seen.signal)?.aborted).toBe(true);
          } finally {
            await ctx.dispose();
          }
        });
      }
    }
  }
});
