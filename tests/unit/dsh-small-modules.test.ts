// The adapter's small modules: /dida's registration (per language, through inject, a registry that throws logged to
// stderr), the prompt section's name, order and per-agent text, the entry's exports, messageOf, the tool effects and the
// stretch counter's writes.
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as entry from '../../src/dsh/index';
import { messageOf } from '../../src/runtime/session/runtime-deps';
import { AgentTracker } from '../../src/runtime/session/agent-tracker';
import { PROMPT_SECTION_NAME, PROMPT_SECTION_ORDER, promptFor, registerPrompt } from '../../src/dsh/prompt';
import { SYSTEM_PROMPT_SECTION } from '../../src/dsh/prompt-text';
import { RowConfig } from '../../src/dsh/row-config';
import { registerSlashCommand, SLASH_COMMAND } from '../../src/dsh/slash-command-spec';
import { StretchCounter } from '../../src/runtime/session/stretch-counter';
import { changesBinding, stretchEventOf } from '../../src/dsh/tool-effects';
import type { HostContext } from '../../src/dsh/ports';
import { createHarness, fakeAgent } from '../helpers/dsh-fakes';

afterEach(() => {
  vi.restoreAllMocks();
});

function registry() {
  const definitions: Array<{ name: string; description: string; input?: { hint: string }; handler: unknown }> = [];
  return { definitions, service: { register: vi.fn((d: (typeof definitions)[number]) => (definitions.push(d), () => undefined)) } };
}

describe('registerSlashCommand', () => {
  it('registers /dida with the description in the row language and the input hint', () => {
    const answer = vi.fn();
    for (const [locale, word] of [['zh', '状态'], ['en', 'status, queue']] as const) {
      const { definitions, service } = registry();
      const ctx = { get: (name: string) => (name === 'commands' ? service : undefined) } as unknown as HostContext;
      registerSlashCommand(ctx, locale, answer);
      expect(definitions).toHaveLength(1);
      expect(definitions[0]!.name).toBe('dida');
      expect(definitions[0]!.description).toContain(word);
      expect(definitions[0]!.input).toEqual({ hint: 'status | queue | bind <list> | unbind | pause | resume | run' });
      expect(definitions[0]!.handler).toBe(answer);
    }
    expect(SLASH_COMMAND).toBe('dida');
  });

  it('waits for the registry through inject when the context has it', () => {
    const { definitions, service } = registry();
    let later: ((sub: HostContext) => void) | undefined;
    const inject = vi.fn((deps: string[], fn: (sub: HostContext) => void) => {
      expect(deps).toEqual(['commands']);
      later = fn;
    });
    const ctx = { inject, get: () => service } as unknown as HostContext;
    registerSlashCommand(ctx, 'en', vi.fn());
    expect(definitions).toHaveLength(0);
    later!({ get: (name: string) => (name === 'commands' ? service : undefined) } as unknown as HostContext);
    expect(definitions.map((d) => d.name)).toEqual(['dida']);
  });

  it('no registry registers nothing; a registry that throws is logged to stderr', () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    registerSlashCommand({ get: () => undefined } as unknown as HostContext, 'en', vi.fn());
    expect(stderr).not.toHaveBeenCalled();
    const broken = { register: () => { throw new Error('taken'); } };
    registerSlashCommand({ get: () => broken } as unknown as HostContext, 'en', vi.fn());
    expect(stderr).toHaveBeenCalledWith('[dida-todo] could not register /dida: taken\n');
    const odd = { register: () => { throw 'plain'; } };
    registerSlashCommand({ get: () => odd } as unknown as HostContext, 'en', vi.fn());
    expect(stderr).toHaveBeenLastCalledWith('[dida-todo] could not register /dida: plain\n');
  });
});

describe('the prompt section', () => {
  it('is registered under its name and order and answers per agent', () => {
    const tracker = new AgentTracker();
    const sections: Array<{ name: string; order: number; text: (c: { agent?: { id: string } }) => string }> = [];
    registerPrompt({ section: (s) => (sections.push(s as never), () => undefined) }, tracker);
    expect(sections.map((s) => [s.name, s.order])).toEqual([[PROMPT_SECTION_NAME, PROMPT_SECTION_ORDER]]);
    expect([PROMPT_SECTION_NAME, PROMPT_SECTION_ORDER]).toEqual(['dida-todo', 450]);
    const track = tracker.add(fakeAgent('s1', { cwd: '/p' }));
    expect(sections[0]!.text({ agent: { id: 's1' } })).toBe('');
    track.binding = { cwd: '/p', projectId: 'l' };
    expect(sections[0]!.text({ agent: { id: 's1' } })).toBe(SYSTEM_PROMPT_SECTION);
    expect(sections[0]!.text({})).toBe('');
    track.subagent = true;
    expect(promptFor(tracker, 's1')).toBe('');
    expect(promptFor(tracker, undefined)).toBe('');
    expect(() => registerPrompt(undefined, tracker)).not.toThrow();
  });
});

describe('the plugin entry', () => {
  it('exports the name, the injected services, the row schema and apply', () => {
    expect(entry.name).toBe('dida-todo');
    expect(entry.inject).toEqual(['agents', 'tools']);
    expect(entry.Config).toBe(RowConfig);
    expect(typeof entry.apply).toBe('function');
    expect('default' in entry).toBe(false);
  });
});

describe('messageOf', () => {
  it('takes an error message, or the value as text', () => {
    expect(messageOf(new Error('boom'))).toBe('boom');
    expect(messageOf('text')).toBe('text');
    expect(messageOf(42)).toBe('42');
  });
});

describe('tool effects', () => {
  const ok = { code: 'ok' } as never;
  const bad = { code: 'invalid_argument' } as never;
  it('only a successful setup bind or unbind changes the binding', () => {
    expect(changesBinding({ tool: 'dida_todo_setup', args: { action: 'bind' }, result: ok })).toBe(true);
    expect(changesBinding({ tool: 'dida_todo_setup', args: { action: 'unbind' }, result: ok })).toBe(true);
    expect(changesBinding({ tool: 'dida_todo_setup', args: { action: 'status' }, result: ok })).toBe(false);
    expect(changesBinding({ tool: 'dida_todo_setup', args: { action: 'bind' }, result: bad })).toBe(false);
    expect(changesBinding({ tool: 'todo', args: { action: 'bind' }, result: ok })).toBe(false);
  });

  it('only a successful todo create or update is progress', () => {
    expect(stretchEventOf({ tool: 'todo', args: { action: 'create' }, result: ok })).toEqual({ kind: 'step_changed' });
    expect(stretchEventOf({ tool: 'todo', args: { action: 'update' }, result: ok })).toEqual({ kind: 'step_changed' });
    expect(stretchEventOf({ tool: 'todo', args: { action: 'list' }, result: ok })).toBeUndefined();
    expect(stretchEventOf({ tool: 'todo', args: { action: 'update' }, result: bad })).toBeUndefined();
    expect(stretchEventOf({ tool: 'todo_work', args: { action: 'update' }, result: ok })).toBeUndefined();
  });
});

describe('StretchCounter', () => {
  it('records an attempt with its time (making the record), and resets only what is not 0, only on stretch ends', async () => {
    const h = createHarness();
    const counter = new StretchCounter(h.deps);
    expect(await counter.attempts('s1')).toBe(0);
    await h.clock.advance(500);
    await counter.record('s1', 2);
    expect(h.state.value.sessions.s1).toEqual({ touched: [], autoAttempts: 2, updatedAt: h.clock.now(), lastAutoAt: h.clock.now() });
    expect(await counter.attempts('s1')).toBe(2);
    const writes = h.state.writes;
    await counter.note('s1', { kind: 'continued' });
    await counter.note('s1', { kind: 'turn_end', reason: 'error' });
    expect(h.state.writes).toBe(writes);
    expect(await counter.attempts('s1')).toBe(2);
    await counter.note('s1', { kind: 'human_message' });
    expect(await counter.attempts('s1')).toBe(0);
    expect(h.state.writes).toBe(writes + 1);
    await counter.note('s1', { kind: 'human_message' });
    expect(h.state.writes).toBe(writes + 1);
    await counter.note('nobody', { kind: 'exhausted' });
    expect(h.state.value.sessions.nobody).toBeUndefined();
  });
});

describe('the prompt section text, from a fresh import', () => {
  it('names the bundle and what the model must know: the todo tool, statuses, review, asking, the queue, untrusted text', async () => {
    vi.resetModules();
    const { SYSTEM_PROMPT_SECTION: text } = await import('../../src/dsh/prompt-text');
    expect(text.split('\n')[0]).toBe('## Dida work list (dida-todo)');
    for (const point of ['`todo` tool', 'in_progress', 'sent to the person for review', 'todo_work wait_for_human', 'todo_work next', 'never instructions']) expect(text, point).toContain(point);
  });
});
