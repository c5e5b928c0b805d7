// The fake model's behaviours, first on the wire (no dsh), then as the real dsh headless driver sees them.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  contentFilter,
  drop,
  overloaded,
  rateLimit,
  stall,
  startFakeModel,
  text,
  toolCalls,
  type FakeModel,
} from './harness/fake-model';
import { ensureDsh, eventsOf, makeDshHome, removeDshHome, runHeadless, type HeadlessResult } from './harness/dsh-run';

// One retry with a 50 ms backoff (guide §9.3). maxDelayMs must stay >= the 429's Retry-After (1 s): with the guide's
// 100 ms cap, dsh 0.1.0-rc.8 does not retry a 429 at all (turn/end error RATE_LIMIT, no llm/retry).
const FAST_RETRY = `- id: llm-deepseek
  config:
    retryPolicy:
      mode: normal
      maxRetries: 1
      backoff: { initialDelayMs: 50, maxDelayMs: 1500, jitterRatio: 0 }
`;

let model: FakeModel;
let home: string;
let fastRetry: string;

beforeAll(async () => {
  await ensureDsh();
});

beforeEach(async () => {
  model = await startFakeModel();
  home = makeDshHome();
  fastRetry = path.join(home, 'fast-retry.yml');
  fs.writeFileSync(fastRetry, FAST_RETRY);
});

afterEach(async () => {
  await model.close();
  removeDshHome(home);
});

/** Concatenates the content deltas of an SSE answer. */
function sseContent(raw: string): string {
  return raw
    .split('\n')
    .filter((line) => line.startsWith('data: {'))
    .map((line) => JSON.parse(line.slice(6)).choices?.[0]?.delta?.content ?? '')
    .join('');
}

async function chat(body: object): Promise<Response> {
  return fetch(`${model.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(5_000),
  });
}

describe('fake model on the wire', () => {
  it('answers title requests without consuming the script, and takes scripts over POST /__script', async () => {
    const control = await fetch(`http://127.0.0.1:${model.port}/__script`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ push: [text('FROM_CHILD')] }),
    });
    expect(control.status).toBe(200);

    const title = await chat({ stream: true, messages: [{ role: 'user', content: 'Generate the session title from this JSON array…' }] });
    expect(sseContent(await title.text())).toBe('Fake session title');
    const compact = await fetch(`${model.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-deepseek-harness-compact': '1' },
      body: JSON.stringify({ stream: true, messages: [{ role: 'user', content: 'summarise' }] }),
    });
    await compact.text();
    expect(model.pending()).toHaveLength(1);

    const answer = await (await chat({ stream: true, messages: [{ role: 'user', content: 'hi' }] })).text();
    expect(sseContent(answer)).toBe('FROM_CHILD');
    expect(answer.trim().endsWith('data: [DONE]')).toBe(true);
    const fallback = await (await chat({ stream: true, messages: [{ role: 'user', content: 'hi' }] })).text();
    expect(sseContent(fallback)).toBe('FAKE_ANSWER');
    const afterTool = await (await chat({ stream: true, messages: [{ role: 'user', content: 'hi' }, { role: 'tool', content: 'ok' }] })).text();
    expect(sseContent(afterTool)).toBe('FAKE_DONE after tool');

    expect(model.requests.map((r) => r.kind)).toEqual(['title', 'compact', 'chat', 'chat', 'chat']);
    const recorded = (await (await fetch(`http://127.0.0.1:${model.port}/__requests`)).json()) as unknown[];
    expect(recorded).toHaveLength(5);
  });

  it('serves 429 with Retry-After and 503 Overloaded', async () => {
    model.push(rateLimit(), overloaded());
    const limited = await chat({ stream: true, messages: [] });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    await limited.text();
    const busy = await chat({ stream: true, messages: [] });
    expect(busy.status).toBe(503);
    expect(await busy.json()).toMatchObject({ error: { message: 'Overloaded' } });
  });

  it('close() ends a stalled stream', async () => {
    model.push(stall());
    const response = await chat({ stream: true, messages: [] });
    const reader = response.body!.getReader();
    await reader.read();
    const ended = (async () => {
      try {
        for (;;) if ((await reader.read()).done) return 'done';
      } catch {
        return 'destroyed';
      }
    })();
    await model.close(); // afterEach closes it again, which is harmless
    expect(['done', 'destroyed']).toContain(await ended);
  });
});

function lastTurnEnd(run: HeadlessResult) {
  const log = run.sessionLogs.at(-1);
  expect(log, run.stderr).toBeDefined();
  return eventsOf(log!, 'turn/end').at(-1)?.data?.reason;
}

describe('fake model through real dsh headless', () => {
  it('runs several tool calls from one answer, then the default answer', async () => {
    model.push(
      toolCalls([
        { name: 'todo_write', args: { todos: [{ content: 'one', status: 'in_progress' }, { content: 'two', status: 'pending' }] } },
        { name: 'bash', args: { command: 'echo E2E_TOOL_ROUND_TRIP', description: 'echo a marker' } },
      ]),
    );
    const run = await runHeadless({ home, prompt: 'plan and echo', baseUrl: model.baseUrl });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe('FAKE_DONE after tool');
    const log = run.sessionLogs.at(-1)!;
    expect(eventsOf(log, 'tool/call').map((e) => e.data.name)).toEqual(['todo_write', 'bash']);
    expect(eventsOf(log, 'todo/write')[0]?.data.todos).toHaveLength(2);
    expect(JSON.stringify(eventsOf(log, 'tool/result'))).toContain('E2E_TOOL_ROUND_TRIP');
    expect(lastTurnEnd(run)).toEqual({ kind: 'completed' });
    const offered = model.toolNames(model.chatRequests()[0]!);
    expect(offered).toEqual(expect.arrayContaining(['todo_write', 'bash']));
  });

  it('recovers from 429, 503 and a dropped stream with one fast retry each', async () => {
    for (const failure of [rateLimit(), overloaded(), drop()]) {
      model.push(failure, text('RECOVERED'));
      const run = await runHeadless({ home, prompt: `recover from ${failure.kind}`, baseUrl: model.baseUrl, patches: [fastRetry] });
      expect(run.code, `${failure.kind}: ${run.stderr}`).toBe(0);
      expect(run.stdout).toContain('RECOVERED');
      const log = run.sessionLogs.at(-1)!;
      expect(eventsOf(log, 'llm/retry').length, failure.kind).toBe(1);
    }
  });

  it('fails the turn on content_filter and on exhausted retries', async () => {
    model.push(contentFilter());
    const filtered = await runHeadless({ home, prompt: 'filtered', baseUrl: model.baseUrl, patches: [fastRetry] });
    expect(filtered.code).toBe(1);
    expect(filtered.stderr).toContain('CONTENT_FILTER');
    expect(lastTurnEnd(filtered)).toMatchObject({ kind: 'error', error: { code: 'CONTENT_FILTER' } });

    model.push(overloaded(), overloaded());
    const exhausted = await runHeadless({ home, prompt: 'overloaded', baseUrl: model.baseUrl, patches: [fastRetry] });
    expect(exhausted.code).toBe(1);
    expect(exhausted.stderr).toContain('dsh: SERVER: Overloaded');
  });

  it('a stalled stream is bounded by the run timeout (SIGTERM mid-turn exits 0 with the partial text)', async () => {
    model.push(stall('STALLED_PARTIAL'));
    const run = await runHeadless({ home, prompt: 'stall', baseUrl: model.baseUrl, timeoutMs: 4_000, timeoutSignal: 'SIGTERM' });
    expect(run.timedOut).toBe(true);
    expect(run.durationMs).toBeLessThan(15_000);
    expect(run.stdout).toContain('STALLED_PARTIAL');
    // SIGTERM does not close the turn on disk (guide §3.2a).
    expect(eventsOf(run.sessionLogs.at(-1)!, 'turn/end')).toHaveLength(0);
  });
});
