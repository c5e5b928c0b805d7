// The tool bridge and the request budget: a tool call's Dida requests are foreground, and a call the rate limit stopped
// becomes a result that tells the model when to try again (every other failure still throws).
import { describe, expect, it } from 'vitest';
import type { ToolDefinition } from '../../src/core/tools';
import { DidaError } from '../../src/dida/dida-error';
import { currentRequestPriority } from '../../src/dida/request-budget';
import { bridgeTool } from '../../src/dsh/tool-bridge';

function tool(execute: ToolDefinition['execute']): ToolDefinition {
  return { name: 'todo', description: 'd', parameters: {}, execute };
}

const exec = { agent: { id: 'a1' } } as never;
const context = () => ({ sessionId: 'a1' }) as never;

describe('tool bridge and the request budget', () => {
  it('runs the tool with foreground priority, and only the tool', async () => {
    let inside: string | undefined;
    let after: string | undefined;
    const bridged = bridgeTool(
      tool(async () => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        inside = currentRequestPriority();
        return { code: 'ok', message: 'done' };
      }),
      context,
      () => {
        after = currentRequestPriority();
      },
    );
    expect(await bridged.execute({}, exec)).toEqual({ code: 'ok', message: 'done' });
    expect(inside).toBe('foreground');
    expect(after).toBe('background');
  });

  it('a rate-limited call is a dida_unavailable result naming the seconds to wait', async () => {
    const bridged = bridgeTool(
      tool(async () => {
        throw new DidaError({ code: 'rate_limited', retryAfterMs: 41_200, message: 'budget' });
      }),
      context,
    );
    const result = (await bridged.execute({}, exec)) as { code: string; message: string };
    expect(result.code).toBe('dida_unavailable');
    expect(result.message).toContain('again in 42 seconds');
  });

  it('a 429 without any hint says 30 seconds; other failures are not turned into results', async () => {
    const limited = bridgeTool(
      tool(async () => {
        throw new DidaError({ code: 'rate_limited', status: 429, message: '429' });
      }),
      context,
    );
    expect(((await limited.execute({}, exec)) as { message: string }).message).toContain('again in 30 seconds');
    const broken = bridgeTool(
      tool(async () => {
        throw new DidaError({ code: 'server', status: 500, message: 'boom' });
      }),
      context,
    );
    await expect(broken.execute({}, exec)).rejects.toThrow('boom');
  });
});
