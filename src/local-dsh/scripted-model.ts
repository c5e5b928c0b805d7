// An OpenAI-compatible streaming fake model for keyless dsh end-to-end tests (dsh-plugin-guide §9.3).
//
// dsh's shipped DeepSeek adapter POSTs `${DEEPSEEK_BASE_URL}/chat/completions` with `stream: true`; point it here with
// `DEEPSEEK_BASE_URL = model.baseUrl` (…/v1) and any `DEEPSEEK_API_KEY`.
//
// Answers come from a FIFO script of behaviours: `model.push(text('hi'), toolCall('todo_write', {...}))` from the test,
// or `POST /__script` with `{"push":[…]}` / `{"set":[…]}` (JSON behaviours as built by the helpers below) from a child.
// Title-generation and compaction requests never consume the script. With an empty script the answer is
// `FAKE_DONE after tool` right after a tool result, else `FAKE_ANSWER`.
// Every request is recorded in `model.requests` (also `GET /__requests`).
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ToolCallSpec {
  name: string;
  args: unknown;
  /** Call id on the wire; generated when omitted. */
  id?: string;
}

export type Behaviour =
  | { kind: 'text'; text: string; delayMs?: number }
  | { kind: 'toolCalls'; calls: ToolCallSpec[]; text?: string; delayMs?: number }
  | { kind: 'rateLimit'; retryAfterSeconds?: number; delayMs?: number }
  | { kind: 'overloaded'; status?: number; delayMs?: number }
  | { kind: 'contentFilter'; text?: string; delayMs?: number }
  | { kind: 'drop'; text?: string; delayMs?: number }
  | { kind: 'reset'; delayMs?: number }
  | { kind: 'stall'; text?: string; keepaliveMs?: number; delayMs?: number }
  | { kind: 'httpError'; status: number; message: string; type: string; delayMs?: number };

/** Plain text answer, `finish_reason: stop`. */
export const text = (msg: string, opts: { delayMs?: number } = {}): Behaviour => ({ kind: 'text', text: msg, ...opts });
/** One tool call, `finish_reason: tool_calls`. */
export const toolCall = (name: string, args: unknown, opts: { id?: string; delayMs?: number } = {}): Behaviour => ({
  kind: 'toolCalls',
  calls: [{ name, args, ...(opts.id !== undefined ? { id: opts.id } : {}) }],
  ...(opts.delayMs !== undefined ? { delayMs: opts.delayMs } : {}),
});
/** Several tool calls in one answer (optionally preceded by some text). */
export const toolCalls = (calls: ToolCallSpec[], opts: { text?: string; delayMs?: number } = {}): Behaviour => ({ kind: 'toolCalls', calls, ...opts });
/** HTTP 429 with `Retry-After` (default 1 s). */
export const rateLimit = (retryAfterSeconds = 1): Behaviour => ({ kind: 'rateLimit', retryAfterSeconds });
/** HTTP 503 (or another status such as 529) `Overloaded`. */
export const overloaded = (status = 503): Behaviour => ({ kind: 'overloaded', status });
/** Any error answer, e.g. 402 `Insufficient Balance` (dsh's QUOTA) or 401 (AUTH). */
export const httpError = (status: number, message: string, type = 'invalid_request_error'): Behaviour => ({ kind: 'httpError', status, message, type });
/** Some text, then `finish_reason: content_filter`. */
export const contentFilter = (partial = 'FAKE_PARTIAL '): Behaviour => ({ kind: 'contentFilter', text: partial });
/** Partial text, then the socket is destroyed (no `[DONE]`). */
export const drop = (partial = 'FAKE_PARTIAL '): Behaviour => ({ kind: 'drop', text: partial });
/** Headers and one delta, then SSE keepalive comments until the client (or `close()`) ends it. */
export const stall = (partial = 'FAKE_STALL ', keepaliveMs = 500): Behaviour => ({ kind: 'stall', text: partial, keepaliveMs });

export type RequestKind = 'chat' | 'title' | 'compact';

export interface RecordedRequest {
  /** Arrival order, from 0. */
  index: number;
  kind: RequestKind;
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The parsed JSON body (undefined when it was not JSON). */
  body: any;
  /** The behaviour that answered a `chat` request (`default` = built-in answer on an empty script). */
  behaviour: Behaviour | 'default' | 'title';
  time: number;
}

export const DEFAULT_ANSWER = 'FAKE_ANSWER';
export const DEFAULT_AFTER_TOOL = 'FAKE_DONE after tool';
export const FAKE_TITLE = 'Fake session title';
const TITLE_PREFIX = 'Generate the session title';
const RUNTIME_CONTEXT_PREFIX = 'Current runtime context';

export interface FakeModel {
  /** e.g. `http://127.0.0.1:40123/v1`, the value for `DEEPSEEK_BASE_URL`. */
  readonly baseUrl: string;
  readonly port: number;
  /** Every request received, in arrival order. */
  readonly requests: RecordedRequest[];
  /** Appends behaviours to the FIFO script. */
  push(...behaviours: Behaviour[]): void;
  /** Replaces the script. */
  setScript(behaviours: Behaviour[]): void;
  /** Behaviours not consumed yet. */
  pending(): Behaviour[];
  /** Requests that consumed (or would have consumed) the script: everything but title and compaction. */
  chatRequests(): RecordedRequest[];
  /** Tool names offered in a request body. */
  toolNames(request: RecordedRequest): string[];
  /** Resolves when `predicate(requests)` holds; rejects after `timeoutMs`. */
  waitFor(predicate: (requests: RecordedRequest[]) => boolean, timeoutMs?: number): Promise<void>;
  /** Stops listening and destroys every open socket. */
  close(): Promise<void>;
}

function messageText(message: any): string {
  const content = message?.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part: any) => (typeof part === 'string' ? part : (part?.text ?? ''))).join('');
  return '';
}

function classify(headers: http.IncomingHttpHeaders, body: any): RequestKind {
  if (String(headers['x-deepseek-harness-compact'] ?? '') === '1') return 'compact';
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  if (messages.some((m) => messageText(m).trimStart().startsWith(TITLE_PREFIX))) return 'title';
  return 'chat';
}

/** True when the conversation's latest real message is a tool result (runtime-context snapshots are skipped). */
function afterToolResult(body: any): boolean {
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role === 'user' && messageText(m).trimStart().startsWith(RUNTIME_CONTEXT_PREFIX)) continue;
    if (m?.role === 'system') continue;
    return m?.role === 'tool';
  }
  return false;
}

function isBehaviour(value: unknown): value is Behaviour {
  const kinds = ['text', 'toolCalls', 'rateLimit', 'overloaded', 'contentFilter', 'drop', 'reset', 'stall'];
  return typeof value === 'object' && value !== null && kinds.includes((value as { kind?: string }).kind ?? '');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startFakeModel(options: { script?: Behaviour[]; modelName?: string } = {}): Promise<FakeModel> {
  const script: Behaviour[] = [...(options.script ?? [])];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const waiters = new Set<() => void>();
  let closed = false;
  let counter = 0;
  const modelName = options.modelName ?? 'deepseek-v4-flash';

  const notify = () => {
    for (const waiter of [...waiters]) waiter();
  };

  const chunk = (id: string, delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({
      id,
      object: 'chat.completion.chunk',
      created: Math.floor(Date.now() / 1000),
      model: modelName,
      choices: [{ index: 0, delta, finish_reason: finish }],
    })}\n\n`;
  const usage = (id: string) =>
    `data: ${JSON.stringify({
      id,
      object: 'chat.completion.chunk',
      created: Math.floor(Date.now() / 1000),
      model: modelName,
      choices: [],
      usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
    })}\n\n`;

  const sseHead = (res: http.ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  };

  const streamText = (res: http.ServerResponse, id: string, msg: string, finish: string) => {
    sseHead(res);
    res.write(chunk(id, { role: 'assistant', content: '' }));
    // Split into a few deltas so the client sees a real stream.
    const parts = msg.match(/[\s\S]{1,16}/g) ?? [];
    for (const part of parts) res.write(chunk(id, { content: part }));
    res.write(chunk(id, {}, finish));
    res.write(usage(id));
    res.end('data: [DONE]\n\n');
  };

  const jsonError = (res: http.ServerResponse, status: number, headers: Record<string, string>, message: string, type: string) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify({ error: { message, type, code: null } }));
  };

  async function answer(req: http.IncomingMessage, res: http.ServerResponse, behaviour: Behaviour | 'default', body: any) {
    const id = `chatcmpl-fake-${++counter}`;
    if (behaviour === 'default') {
      streamText(res, id, afterToolResult(body) ? DEFAULT_AFTER_TOOL : DEFAULT_ANSWER, 'stop');
      return;
    }
    if (behaviour.delayMs) await sleep(behaviour.delayMs);
    if (closed || res.destroyed) return;
    switch (behaviour.kind) {
      case 'text':
        streamText(res, id, behaviour.text, 'stop');
        return;
      case 'toolCalls': {
        sseHead(res);
        res.write(chunk(id, { role: 'assistant', content: behaviour.text ?? '' }));
        behaviour.calls.forEach((call, index) => {
          const callId = call.id ?? `call_fake_${counter}_${index}`;
          const args = typeof call.args === 'string' ? call.args : JSON.stringify(call.args ?? {});
          res.write(chunk(id, { tool_calls: [{ index, id: callId, type: 'function', function: { name: call.name, arguments: '' } }] }));
          const half = Math.ceil(args.length / 2);
          for (const piece of [args.slice(0, half), args.slice(half)]) {
            if (piece) res.write(chunk(id, { tool_calls: [{ index, function: { arguments: piece } }] }));
          }
        });
        res.write(chunk(id, {}, 'tool_calls'));
        res.write(usage(id));
        res.end('data: [DONE]\n\n');
        return;
      }
      case 'rateLimit':
        jsonError(res, 429, { 'retry-after': String(behaviour.retryAfterSeconds ?? 1) }, 'Rate limit reached for requests', 'rate_limit_error');
        return;
      case 'overloaded':
        jsonError(res, behaviour.status ?? 503, {}, 'Overloaded', 'overloaded_error');
        return;
      case 'httpError':
        jsonError(res, behaviour.status, {}, behaviour.message, behaviour.type);
        return;
      case 'contentFilter':
        sseHead(res);
        res.write(chunk(id, { role: 'assistant', content: behaviour.text ?? '' }));
        res.write(chunk(id, {}, 'content_filter'));
        res.write(usage(id));
        res.end('data: [DONE]\n\n');
        return;
      case 'drop':
        sseHead(res);
        res.write(chunk(id, { role: 'assistant', content: behaviour.text ?? '' }));
        await sleep(50);
        req.socket.destroy();
        return;
      case 'reset':
        req.socket.destroy();
        return;
      case 'stall': {
        sseHead(res);
        res.write(chunk(id, { role: 'assistant', content: behaviour.text ?? '' }));
        const every = behaviour.keepaliveMs ?? 500;
        // Bounded by the client: ends when the socket closes, or when the fake model is closed.
        while (!closed && !res.destroyed && !res.writableEnded && !req.socket.destroyed) {
          res.write(': keepalive\n\n');
          await sleep(every);
        }
        return;
      }
    }
  }

  async function readBody(req: http.IncomingMessage): Promise<string> {
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    return Buffer.concat(parts).toString('utf8');
  }

  const server = http.createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const raw = await readBody(req);
      let body: any;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        body = undefined;
      }

      if (url.pathname === '/__script') {
        if (req.method === 'GET') {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ pending: script }));
          return;
        }
        if (req.method === 'DELETE') {
          script.length = 0;
          res.writeHead(204).end();
          return;
        }
        const list: unknown = body?.set ?? body?.push ?? body;
        if (req.method !== 'POST' || !Array.isArray(list) || !list.every(isBehaviour)) {
          jsonError(res, 400, {}, 'expected POST {"push":[behaviour…]} or {"set":[behaviour…]}', 'invalid_request_error');
          return;
        }
        if (body?.set) script.length = 0;
        script.push(...list);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ pending: script.length }));
        return;
      }
      if (url.pathname === '/__requests' && req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(requests));
        return;
      }
      if (req.method !== 'POST' || !url.pathname.endsWith('/chat/completions')) {
        jsonError(res, 404, {}, `no route ${req.method} ${url.pathname}`, 'invalid_request_error');
        return;
      }

      const kind = classify(req.headers, body);
      const behaviour: RecordedRequest['behaviour'] = kind === 'chat' ? (script.shift() ?? 'default') : 'title';
      requests.push({ index: requests.length, kind, method: req.method, path: url.pathname, headers: req.headers, body, behaviour, time: Date.now() });
      notify();
      if (behaviour === 'title') {
        if (body?.stream === false) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              id: `chatcmpl-fake-${++counter}`,
              object: 'chat.completion',
              created: Math.floor(Date.now() / 1000),
              model: modelName,
              choices: [{ index: 0, message: { role: 'assistant', content: FAKE_TITLE }, finish_reason: 'stop' }],
              usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
            }),
          );
        } else {
          streamText(res, `chatcmpl-fake-${++counter}`, FAKE_TITLE, 'stop');
        }
        return;
      }
      await answer(req, res, behaviour, body);
    } catch (error) {
      if (!res.headersSent) jsonError(res, 500, {}, `fake model failure: ${String(error)}`, 'server_error');
      else res.destroy();
    }
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    push: (...behaviours) => {
      script.push(...behaviours);
    },
    setScript: (behaviours) => {
      script.length = 0;
      script.push(...behaviours);
    },
    pending: () => [...script],
    chatRequests: () => requests.filter((r) => r.kind === 'chat'),
    toolNames: (request) =>
      (Array.isArray(request.body?.tools) ? request.body.tools : []).map((t: any) => t?.function?.name ?? t?.name).filter(Boolean),
    waitFor: (predicate, timeoutMs = 10_000) =>
      new Promise<void>((resolve, reject) => {
        if (predicate(requests)) return resolve();
        const check = () => {
          if (predicate(requests)) {
            cleanup();
            resolve();
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`fake model: condition not met within ${timeoutMs} ms (${requests.length} requests so far)`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
      }),
    close: async () => {
      closed = true;
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
