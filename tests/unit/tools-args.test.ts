// Argument validation of the tools (core/tools/tool-args), the shared runner (tool-runner) and the result text the model
// reads (tool-types renderResult): each bad input gets its own error naming the argument, domain outcomes become results,
// other faults throw, and a long result is cut with its open fence closed again.
import { describe, expect, it } from 'vitest';
import { validateArgs } from '../../src/core/tools/tool-args';
import { boundOrResult, isResult, runTool, UNBOUND_MESSAGE } from '../../src/core/tools/tool-runner';
import { renderResult, type ParameterSpec, type ToolContext, type ToolResult } from '../../src/core/tools/tool-types';
import { TODO_PARAMETERS } from '../../src/core/tools/tool-specs';
import { fenceUntrusted } from '../../src/core/text/text-guard';
import { WorkError } from '../../src/core/work/engine-context';
import { DidaError } from '../../src/dida/dida-error';
import { defaultConfig } from '../../src/store/config-schema';

const PARAMS: Record<string, ParameterSpec> = {
  name: { type: 'string', required: true },
  colour: { type: 'string', enum: ['red', 'green'] },
  count: { type: 'integer' },
  ratio: { type: 'number' },
  flag: { type: 'boolean' },
  tags: { type: 'array', items: { type: 'string' } },
  loose: { type: 'array' },
  item: { type: 'object', additionalProperties: false, properties: { id: { type: 'string', required: true }, n: { type: 'integer' } } },
  open: { type: 'object' },
};

function problems(args: Record<string, unknown>, params: Record<string, ParameterSpec> = PARAMS): string | undefined {
  const r = validateArgs(args, params, 'probe');
  if (r) expect(r.code).toBe('invalid_argument');
  return r?.message;
}

describe('validateArgs', () => {
  it('accepts good arguments and absent optional ones', () => {
    expect(problems({ name: 'a' })).toBeUndefined();
    expect(problems({ name: 'a', colour: 'green', count: 3, ratio: 0.5, flag: false, tags: ['x', 'y'], loose: [1, 'b'], item: { id: 'i', n: 2 }, open: { any: 1 } })).toBeUndefined();
    // null counts as absent
    expect(problems({ name: 'a', colour: null, count: null })).toBeUndefined();
  });

  it('names a missing required argument with its type', () => {
    expect(problems({})).toBe('Invalid arguments for probe: name is required (a string).');
    expect(problems({ name: null })).toBe('Invalid arguments for probe: name is required (a string).');
    expect(problems({}, { action: { type: 'string', required: true, enum: ['a', 'b'] } })).toBe('Invalid arguments for probe: action is required (one of "a", "b").');
    expect(problems({}, { n: { type: 'integer', required: true } })).toBe('Invalid arguments for probe: n is required (a whole number).');
    expect(problems({}, { n: { type: 'number', required: true } })).toBe('Invalid arguments for probe: n is required (a number).');
  });

  it('names a wrong string and a value outside the enum (with what it got, capped)', () => {
    expect(problems({ name: 5 })).toBe('Invalid arguments for probe: name must be a string.');
    expect(problems({ name: 'a', colour: 7 })).toBe('Invalid arguments for probe: colour must be one of "red", "green".');
    expect(problems({ name: 'a', colour: 'blue' })).toBe('Invalid arguments for probe: colour must be one of "red", "green", got "blue".');
    const long = 'z'.repeat(100);
    expect(problems({ name: 'a', colour: long })).toBe(`Invalid arguments for probe: colour must be one of "red", "green", got ${JSON.stringify(long).slice(0, 40)}.`);
  });

  it('tells numbers from whole numbers and refuses what is not a finite number', () => {
    expect(problems({ name: 'a', count: 2.5 })).toBe('Invalid arguments for probe: count must be a whole number.');
    expect(problems({ name: 'a', count: '3' })).toBe('Invalid arguments for probe: count must be a whole number.');
    expect(problems({ name: 'a', count: Number.POSITIVE_INFINITY })).toBe('Invalid arguments for probe: count must be a whole number.');
    expect(problems({ name: 'a', ratio: 2.5 })).toBeUndefined();
    expect(problems({ name: 'a', ratio: -3 })).toBeUndefined();
    expect(problems({ name: 'a', ratio: Number.NaN })).toBe('Invalid arguments for probe: ratio must be a number.');
    expect(problems({ name: 'a', ratio: '1' })).toBe('Invalid arguments for probe: ratio must be a number.');
    expect(problems({ name: 'a', count: 0 })).toBeUndefined();
  });

  it('names a wrong boolean', () => {
    expect(problems({ name: 'a', flag: 'true' })).toBe('Invalid arguments for probe: flag must be true or false.');
    expect(problems({ name: 'a', flag: 1 })).toBe('Invalid arguments for probe: flag must be true or false.');
    expect(problems({ name: 'a', flag: true })).toBeUndefined();
  });

  it('checks arrays: the type, at most 200 entries, and each entry by its index', () => {
    expect(problems({ name: 'a', tags: 'x' })).toBe('Invalid arguments for probe: tags must be an array.');
    expect(problems({ name: 'a', tags: { 0: 'x' } })).toBe('Invalid arguments for probe: tags must be an array.');
    expect(problems({ name: 'a', tags: ['x', 3, 'y', false] })).toBe('Invalid arguments for probe: tags[1] must be a string; tags[3] must be a string.');
    expect(problems({ name: 'a', tags: Array(200).fill('x') })).toBeUndefined();
    expect(problems({ name: 'a', tags: Array(201).fill('x') })).toBe('Invalid arguments for probe: tags has 201 entries; at most 200 are allowed.');
    // Entries past the 200th are not checked one by one (the count is the error).
    const bad = [...Array(200).fill('x'), 5];
    expect(problems({ name: 'a', tags: bad })).toBe('Invalid arguments for probe: tags has 201 entries; at most 200 are allowed.');
    // An array with no item spec takes anything.
    expect(problems({ name: 'a', loose: [1, {}, null] })).toBeUndefined();
  });

  it('checks objects: the type, each field, and unknown fields when they are not allowed', () => {
    expect(problems({ name: 'a', item: 'x' })).toBe('Invalid arguments for probe: item must be an object.');
    expect(problems({ name: 'a', item: ['i'] })).toBe('Invalid arguments for probe: item must be an object.');
    expect(problems({ name: 'a', item: {} })).toBe('Invalid arguments for probe: item.id is required (a string).');
    expect(problems({ name: 'a', item: { id: 'i', n: 1.5 } })).toBe('Invalid arguments for probe: item.n must be a whole number.');
    expect(problems({ name: 'a', item: { id: 'i', extra: 1 } })).toBe('Invalid arguments for probe: item.extra is not a known field.');
    // Without additionalProperties: false any field is fine, and no properties means none are checked.
    expect(problems({ name: 'a', open: { extra: 1, more: 'x' } })).toBeUndefined();
    expect(problems({ name: 'a', open: [] })).toBe('Invalid arguments for probe: open must be an object.');
  });

  it('checks nested specs of the todo tool by their path', () => {
    const r = validateArgs({ action: 'create', steps: [{ title: 'a' }, { status: 'done' }, { title: 'b', colour: 1 }] }, TODO_PARAMETERS, 'todo');
    expect(r?.message).toBe(
      'Invalid arguments for todo: steps[1].title is required (a string); steps[1].status must be one of "pending", "in_progress", got "done"; steps[2].colour is not a known field.',
    );
  });

  it('names unknown top-level arguments and reports at most four problems', () => {
    // A wrong name is answered with the right ones.
    expect(problems({ name: 'a', shade: 1 })).toBe('Invalid arguments for probe: shade is not an argument of probe (its arguments are name, colour, count, ratio, flag, tags, loose, item, open).');
    const many = problems({ name: 1, colour: 'x', count: 'x', flag: 'x', ratio: 'x' });
    expect(many).toBe('Invalid arguments for probe: name must be a string; colour must be one of "red", "green", got "x"; count must be a whole number; ratio must be a number.');
  });

  it('refuses arguments that are not an object', () => {
    for (const bad of [null, 'action', 3, ['list']]) {
      expect(validateArgs(bad as unknown as Record<string, unknown>, PARAMS, 'probe')).toEqual({ code: 'invalid_argument', message: 'probe takes an object of arguments.' });
    }
  });
});

describe('renderResult', () => {
  it('shows the code of a result that is not ok, and the detail after a blank line', () => {
    expect(renderResult({ code: 'ok', message: 'Done.' })).toBe('Done.');
    expect(renderResult({ code: 'not_bound', message: 'Bind first.' })).toBe('[not_bound] Bind first.');
    expect(renderResult({ code: 'ok', message: 'Done.', detail: 'the list' })).toBe('Done.\n\nthe list');
    expect(renderResult({ code: 'ok', message: 'Done.', detail: '' })).toBe('Done.');
  });

  it('keeps a result of exactly 8,000 characters whole and cuts one longer, saying how long it was', () => {
    const exact = 'a'.repeat(8000);
    expect(renderResult({ code: 'ok', message: exact })).toBe(exact);
    const long = 'b'.repeat(9000);
    const out = renderResult({ code: 'ok', message: long });
    const marker = '\n… (9000 characters in all; the rest is left out — ask for less at a time)';
    expect(out.endsWith(marker)).toBe(true);
    expect(out).toBe(`${'b'.repeat(8000 - marker.length - 60)}${marker}`);
    expect(out.length).toBeLessThanOrEqual(8000);
  });

  it('closes a fence the cut left open, dropping a marker line cut in half', () => {
    const fenced = fenceUntrusted('work', 'x'.repeat(9000));
    const nonce = /nonce=([0-9a-f]+)>>>/.exec(fenced)![1];
    const out = renderResult({ code: 'ok', message: 'Here.', detail: fenced });
    expect(out).toContain(`<<<DIDA_DATA label=work nonce=${nonce}>>>`);
    const close = `\n<<<END_DIDA_DATA nonce=${nonce}>>>\n… (`;
    expect(out).toContain(close);
    expect(out.indexOf(close)).toBeGreaterThan(out.indexOf('xxx'));
    expect(out.split('<<<END_DIDA_DATA').length).toBe(2);
    expect(out.length).toBeLessThanOrEqual(8000);

    // A fence whose own end falls in the kept part is not closed a second time; the later open one is.
    const first = fenceUntrusted('a', 'short');
    const second = fenceUntrusted('b', 'y'.repeat(9000));
    const n2 = /nonce=([0-9a-f]+)>>>/.exec(second)![1];
    const both = renderResult({ code: 'ok', message: 'Two.', detail: `${first}\n${second}` });
    expect(both.split('<<<END_DIDA_DATA').length).toBe(3);
    expect(both).toContain(`${first}\n`);
    expect(both).toContain(`\n<<<END_DIDA_DATA nonce=${n2}>>>\n… (`);

    // A fence closed within the kept part and then plain text: nothing is added.
    const closed = renderResult({ code: 'ok', message: 'Closed.', detail: `${first}\n${'q'.repeat(9000)}` });
    expect(closed.split('<<<END_DIDA_DATA').length).toBe(2);
    expect(closed).toMatch(/q\n… \(/);
  });

  it('drops a closing line the cut left in half and writes it whole', () => {
    const build = (n: number) => {
      const fence = fenceUntrusted('w', 'x'.repeat(n));
      return { fence, text: `Here.\n\n${fence}\n${'r'.repeat(2000)}` };
    };
    // Place the closing line of the fence so that the cut (8,000 less the marker and 60) ends ten characters into it.
    const probe = build(5000);
    const marker = `\n… (${probe.text.length} characters in all; the rest is left out — ask for less at a time)`;
    const cutAt = 8000 - marker.length - 60;
    const { fence, text } = build(5000 + (cutAt - 10) - (probe.text.indexOf('\n<<<END_DIDA_DATA') + 1));
    const nonce = /nonce=([0-9a-f]+)>>>/.exec(fence)![1];
    expect(text.indexOf('\n<<<END_DIDA_DATA') + 1).toBe(cutAt - 10);
    const out = renderResult({ code: 'ok', message: 'Here.', detail: text.slice('Here.\n\n'.length) });
    expect(out).toContain(`x\n\n<<<END_DIDA_DATA nonce=${nonce}>>>\n… (${text.length} characters in all`);
    expect(out.split('<<<END_DIDA').length).toBe(2);
  });
});

describe('runTool', () => {
  const params: Record<string, ParameterSpec> = { action: { type: 'string', required: true } };

  it('does not run the body when the arguments are invalid', async () => {
    let ran = false;
    const r = await runTool('probe', params, {}, async () => {
      ran = true;
      return { code: 'ok', message: 'ran' };
    });
    expect(ran).toBe(false);
    expect(r).toEqual({ code: 'invalid_argument', message: 'Invalid arguments for probe: action is required (a string).' });
  });

  it('returns what the body returns', async () => {
    const result: ToolResult = { code: 'ok', message: 'fine', detail: 'd' };
    expect(await runTool('probe', params, { action: 'x' }, async () => result)).toBe(result);
  });

  it('turns a domain outcome and a rejected token into results; other faults throw', async () => {
    const work = await runTool('probe', params, { action: 'x' }, async () => {
      throw new WorkError('step_not_found', 'No step s9.');
    });
    expect(work).toEqual({ code: 'step_not_found', message: 'No step s9.' });
    const auth = await runTool('probe', params, { action: 'x' }, async () => {
      throw new DidaError({ code: 'auth', message: 'no token' });
    });
    expect(auth).toEqual({
      code: 'dida_unavailable',
      message: 'Dida cannot be used: the Dida token was rejected; run `dida-todo login --token <token>` again. Tell the person; do not retry.',
    });
    const down = new DidaError({ code: 'network', message: 'down' });
    await expect(runTool('probe', params, { action: 'x' }, async () => Promise.reject(down))).rejects.toBe(down);
    const plain = new Error('boom');
    await expect(runTool('probe', params, { action: 'x' }, async () => Promise.reject(plain))).rejects.toBe(plain);
    // An error that only looks like an auth error is not one.
    const lookalike = Object.assign(new Error('x'), { code: 'auth' });
    await expect(runTool('probe', params, { action: 'x' }, async () => Promise.reject(lookalike))).rejects.toBe(lookalike);
  });
});

describe('boundOrResult and isResult', () => {
  function ctxWith(bindings: Array<{ cwd: string; projectId: string }>, cwd: string): ToolContext {
    const config = { ...defaultConfig(), bindings };
    return {
      sessionId: 's',
      cwd,
      queueGranted: false,
      config: { read: async () => config, update: async () => config },
      engine: async () => Promise.reject(new Error('not used')),
      gateway: async () => Promise.reject(new Error('not used')),
      tokenSource: async () => undefined,
    };
  }

  it('finds the binding of the directory or a parent, else answers not_bound with how to bind', async () => {
    const bound = await boundOrResult(ctxWith([{ cwd: '/w/p', projectId: 'p'.repeat(24) }], '/w/p/src'));
    expect(isResult(bound)).toBe(false);
    expect((bound as { projectId: string }).projectId).toBe('p'.repeat(24));
    const none = await boundOrResult(ctxWith([{ cwd: '/w/other', projectId: 'p'.repeat(24) }], '/w/p'));
    expect(isResult(none)).toBe(true);
    expect(none).toEqual({ code: 'not_bound', message: UNBOUND_MESSAGE });
    expect(UNBOUND_MESSAGE).toContain('dida_todo_setup with action "bind"');
    expect(UNBOUND_MESSAGE).toContain('`dida-todo bind <list name>`');
  });

  it('tells a result from a binding and from other values', () => {
    expect(isResult({ code: 'ok', message: 'm' })).toBe(true);
    expect(isResult({ code: 'ok', message: 'm', projectId: 'p' })).toBe(false);
    expect(isResult({ code: 'ok' })).toBe(false);
    expect(isResult({ message: 'm' })).toBe(false);
    expect(isResult(null)).toBe(false);
    expect(isResult(undefined)).toBe(false);
    expect(isResult('code message')).toBe(false);
  });
});
